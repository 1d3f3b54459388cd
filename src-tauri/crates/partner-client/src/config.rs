//! One connection's settings: where the service is, who the client is, and how patient to be.
//!
//! The defaults are the ones a person at a desk wants: a request gives up after 30 seconds, a
//! connection attempt after 10, idempotent calls are tried three times with a short exponential
//! backoff, and a token is replaced a minute before either deadline.

use crate::error::{ClientError, Result};
use crate::network::NetworkOptions;
use partner_api::Secret;
use std::time::Duration;
use url::Url;

/// Where the local sandbox listens unless told otherwise.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:7001";

#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// The service's base URL (`{base_url}` of the spec), without the `/partner/v2` part.
    pub base_url: Url,
    pub client_id: String,
    pub client_secret: Secret,
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    /// How long before either deadline a token is replaced.
    pub refresh_margin: Duration,
    /// Trust, proxy and client certificate (see [`crate::network`]).
    pub network: NetworkOptions,
    /// Every write refused before sending (see [`crate::writes`]).
    pub read_only: bool,
}

impl ConnectionConfig {
    /// Checks the base URL (http or https, a host, no credentials, no query) and the client id.
    pub fn new(
        base_url: &str,
        client_id: impl Into<String>,
        client_secret: Secret,
    ) -> Result<Self> {
        let client_id = client_id.into();
        if client_id.trim().is_empty() {
            return Err(ClientError::input("the client id is empty"));
        }
        if client_id.contains(':') {
            // HTTP Basic cannot carry a user name with a colon.
            return Err(ClientError::input("the client id may not contain `:`"));
        }
        if client_secret.is_empty() {
            return Err(ClientError::input("the client secret is empty"));
        }
        Ok(Self {
            base_url: parse_base_url(base_url)?,
            client_id,
            client_secret,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            refresh_margin: Duration::from_secs(60),
            network: NetworkOptions::default(),
            read_only: false,
        })
    }
}

/// Parses and normalises a base URL: a trailing `/` is dropped so paths join cleanly.
pub fn parse_base_url(raw: &str) -> Result<Url> {
    let url = Url::parse(raw.trim())
        .map_err(|e| ClientError::input(format!("the base URL is not a valid URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(ClientError::input(
            "the base URL must be an http:// or https:// address with a host",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ClientError::input(
            "the base URL may not carry credentials; give the client id and secret separately",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ClientError::input(
            "the base URL may not have a query or a fragment",
        ));
    }
    let mut url = url;
    let trimmed = url.path().trim_end_matches('/').to_string();
    url.set_path(&trimmed);
    Ok(url)
}

/// Retries of calls that are safe to repeat (GET and token issuance).
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Waits a read makes when the service says when to come back (429 or 503 with
    /// `Retry-After`), at most this many times…
    pub max_told_waits: u32,
    /// …and this long in all; a longer wait is the caller's to decide (the error says it).
    pub max_told_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            max_told_waits: 5,
            max_told_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            max_told_waits: 0,
            ..Self::default()
        }
    }

    /// The wait before attempt `attempt` (2 for the first retry), doubling each time.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(2).min(16);
        self.initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            parse_base_url("http://127.0.0.1:7001/").unwrap().as_str(),
            "http://127.0.0.1:7001/"
        );
        assert_eq!(
            parse_base_url("https://svc.test/api/").unwrap().as_str(),
            "https://svc.test/api"
        );
        assert!(parse_base_url("ftp://x").is_err());
        assert!(parse_base_url("not a url").is_err());
        assert!(parse_base_url("http://user:pw@host").is_err());
        assert!(parse_base_url("http://host/?q=1").is_err());
    }

    #[test]
    fn config_checks_and_hides_the_secret() {
        let config =
            ConnectionConfig::new("http://127.0.0.1:1", "c1", Secret::new("s3cr3t")).unwrap();
        assert!(!format!("{config:?}").contains("s3cr3t"));
        assert!(ConnectionConfig::new("http://h", "", Secret::new("s")).is_err());
        assert!(ConnectionConfig::new("http://h", "a:b", Secret::new("s")).is_err());
        assert!(ConnectionConfig::new("http://h", "a", Secret::new("")).is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff(2), Duration::from_millis(200));
        assert_eq!(policy.backoff(3), Duration::from_millis(400));
        assert_eq!(policy.backoff(30), Duration::from_secs(2));
    }
}

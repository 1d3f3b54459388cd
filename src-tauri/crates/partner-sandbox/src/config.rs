//! What a sandbox is started with.
//!
//! Everything is plain data so the CLI, the desktop app and the tests build it the same way;
//! secrets in it are [`Secret`]s, so a `Debug` print of a config never shows one. The delivery
//! rules ([`DeliveryConfig`]) are here with the rest, not in `dispatch`, which applies them: the
//! dispatcher writes through the data file, which reaches this module (the clients' credentials,
//! through `tokens`), so a config that needed the dispatcher closed a circle.

use partner_api::delivery;
use partner_api::Secret;
use rand::distr::{Alphanumeric, SampleString};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Default body limit of every endpoint: 1 MiB. Bigger bodies are a 413.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// How long a request body may take to arrive once its headers have.
pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a client may take to send a request's head (request line and headers).
pub const DEFAULT_HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Transactions seeded by `--demo` when no other number is asked for.
pub const DEFAULT_DEMO_TRANSACTIONS: usize = 600;

/// A partner's API client: the two halves of its API key.
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    pub client_id: String,
    pub client_secret: Secret,
}

impl ClientCredentials {
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<Secret>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }

    /// A fresh client with a random id and secret (the demo client of a sandbox started
    /// without `--client`).
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        let id = format!(
            "demo-{}",
            Alphanumeric.sample_string(&mut rng, 8).to_lowercase()
        );
        let secret = Alphanumeric.sample_string(&mut rng, 40);
        Self::new(id, Secret::new(secret))
    }

    /// Checks the shape of an id and secret (what `--client ID:SECRET` may hold).
    pub fn check(&self) -> Result<(), String> {
        let id = &self.client_id;
        if id.is_empty() || id.len() > 128 {
            return Err("a client id needs 1 to 128 characters".into());
        }
        if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err("a client id may hold only letters, digits, `-`, `_` and `.`".into());
        }
        let secret = self.client_secret.expose();
        if secret.is_empty() || secret.len() > 256 {
            return Err("a client secret needs 1 to 256 characters".into());
        }
        if secret.chars().any(|c| c.is_control()) {
            return Err("a client secret may not hold control characters".into());
        }
        Ok(())
    }
}

/// Parses `ID:SECRET`. The error never repeats the secret.
impl FromStr for ClientCredentials {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let Some((id, secret)) = raw.split_once(':') else {
            return Err("expected ID:SECRET".into());
        };
        let client = Self::new(id, Secret::new(secret));
        client.check()?;
        Ok(client)
    }
}

/// Demo data to seed at start: products for the first client and transactions on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoData {
    /// How many transactions to create (at least a few hundred make sorting and paging
    /// worth showing; the benchmark loads 100,000).
    pub transactions: usize,
}

impl Default for DemoData {
    fn default() -> Self {
        Self {
            transactions: DEFAULT_DEMO_TRANSACTIONS,
        }
    }
}

#[derive(Clone)]
pub struct SandboxConfig {
    /// The partners' API clients. Empty: one demo client is generated at start.
    pub clients: Vec<ClientCredentials>,
    /// Seed deterministic demo data for the first client.
    pub demo: Option<DemoData>,
    /// Also accept `http://` callbacks to loopback addresses (local demos and tests).
    pub allow_http_callbacks: bool,
    /// Required on `/sandbox/v1/` when set; must be set when bound to a non-loopback address.
    pub admin_token: Option<Secret>,
    /// The address partners reach the sandbox at, for `resourceRef` in notifications;
    /// default `http://<bound address>`.
    pub public_url: Option<String>,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// How long a request body may take to arrive: a client that stalls mid-body gets a 400
    /// error body and its connection back, instead of holding a handler forever.
    pub body_timeout: std::time::Duration,
    /// How long a request's head (request line and headers) may take to arrive: a client that
    /// sends headers slowly, or opens a connection and says nothing, is disconnected instead of
    /// holding the connection forever.
    pub header_read_timeout: std::time::Duration,
    /// Webhook delivery rules (retry delay, attempt timeout, attempts).
    pub delivery: DeliveryConfig,
    /// Keep the data in this SQLite file across restarts (`None`: in memory, gone at the
    /// stop). Created when missing; a file the sandbox cannot use is refused at start and
    /// left as it is. See the `data_file` module for what it holds (never a client secret:
    /// salted digests only) and [`crate::reset_data_file`] to start over.
    pub data_file: Option<std::path::PathBuf>,
    /// The key `data_file` is encrypted with (SQLCipher): the console's data key, which the
    /// caller resolves (`partner_local::data_key`). Required with `data_file`; a file that does
    /// not open with it is refused at start and left as it is.
    pub data_key: Option<partner_seal::DataKey>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            clients: Vec::new(),
            demo: None,
            allow_http_callbacks: false,
            admin_token: None,
            public_url: None,
            body_limit: DEFAULT_BODY_LIMIT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            delivery: DeliveryConfig::default(),
            data_file: None,
            data_key: None,
        }
    }
}

impl fmt::Debug for SandboxConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxConfig")
            .field("clients", &self.clients)
            .field("demo", &self.demo)
            .field("allow_http_callbacks", &self.allow_http_callbacks)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "[redacted]"),
            )
            .field("public_url", &self.public_url)
            .field("body_limit", &self.body_limit)
            .field("body_timeout", &self.body_timeout)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("delivery", &self.delivery)
            .field("data_file", &self.data_file)
            // A `DataKey` shows its fingerprint alone.
            .field("data_key", &self.data_key)
            .finish()
    }
}

/// How many notifications may wait for delivery at once by default (in an attempt or before a
/// retry). Each is a task holding its body, and a receiver that is down keeps each for about
/// two minutes (three 30 s attempts, 20 s apart), so a flood of events to dead receivers would
/// otherwise grow memory without end. Past it a notification is discarded at once, recorded
/// with the reason.
pub const DEFAULT_MAX_PENDING: usize = 100_000;

/// The delivery rules of the spec, adjustable for demos and tests
/// (`--retry-delay`, `--attempt-timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryConfig {
    /// Wait after a failed attempt before the next one (spec: 20 s). Sandbox-clock time.
    pub retry_delay: Duration,
    /// How long one attempt may take before it fails (spec: 30 s). Real time.
    pub attempt_timeout: Duration,
    /// Attempts before the notification is discarded (spec: 3). Zero is taken as one.
    pub max_attempts: u32,
    /// Notifications waiting for delivery at once; past it a new one is discarded unsent
    /// (see [`DEFAULT_MAX_PENDING`]).
    pub max_pending: usize,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            retry_delay: delivery::RETRY_DELAY,
            attempt_timeout: delivery::ATTEMPT_TIMEOUT,
            max_attempts: delivery::MAX_ATTEMPTS,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_flag_parses_and_never_echoes_the_secret() {
        let client: ClientCredentials = "acme:s3cret:with:colons".parse().unwrap();
        assert_eq!(client.client_id, "acme");
        assert_eq!(client.client_secret.expose(), "s3cret:with:colons");
        assert!(!format!("{client:?}").contains("s3cret"));
        let err = "no-colon-s3cret".parse::<ClientCredentials>().unwrap_err();
        assert!(!err.contains("s3cret"));
        assert!(":s3cret".parse::<ClientCredentials>().is_err());
        assert!("acme:".parse::<ClientCredentials>().is_err());
        assert!("ac me:x".parse::<ClientCredentials>().is_err());
    }

    #[test]
    fn generated_clients_are_valid_and_differ() {
        let a = ClientCredentials::generate();
        let b = ClientCredentials::generate();
        assert!(a.check().is_ok());
        assert_ne!(a.client_id, b.client_id);
    }
}

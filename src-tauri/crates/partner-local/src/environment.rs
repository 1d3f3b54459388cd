//! A connection named by the environment, as the `partner` command reads it:
//! `PARTNER_BASE_URL`, `PARTNER_CLIENT_ID` and `PARTNER_CLIENT_SECRET`.
//!
//! Scripted demos and CI start the app with these set; the app then adds that connection (or
//! reuses the saved one to the same service and client), keeps the secret in the keychain and
//! opens it. This module decides what to do; it never writes the secret anywhere but the
//! keychain, and never prints it.

use crate::settings::{Environment, SavedConnection, Settings};
use partner_api::Secret;

pub const BASE_URL_VARIABLE: &str = "PARTNER_BASE_URL";
pub const CLIENT_ID_VARIABLE: &str = "PARTNER_CLIENT_ID";
pub const CLIENT_SECRET_VARIABLE: &str = "PARTNER_CLIENT_SECRET";

/// The connection the variables name.
#[derive(Debug, Clone)]
pub struct ConnectionFromEnvironment {
    pub base_url: url::Url,
    pub client_id: String,
    pub client_secret: Secret,
}

/// Reads the three variables: `Ok(None)` when none is set, an error naming what is missing
/// or wrong when only some are (never quoting the secret).
pub fn read() -> Result<Option<ConnectionFromEnvironment>, String> {
    let get = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    parse(
        get(BASE_URL_VARIABLE),
        get(CLIENT_ID_VARIABLE),
        get(CLIENT_SECRET_VARIABLE),
    )
}

/// [`read`] over given values.
pub fn parse(
    base_url: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
) -> Result<Option<ConnectionFromEnvironment>, String> {
    match (base_url, client_id, client_secret) {
        (None, None, None) => Ok(None),
        (Some(base_url), Some(client_id), Some(secret)) => {
            let base_url = partner_client::parse_base_url(base_url.trim())
                .map_err(|e| format!("{BASE_URL_VARIABLE}: {e}"))?;
            Ok(Some(ConnectionFromEnvironment {
                base_url,
                client_id: client_id.trim().to_string(),
                client_secret: Secret::new(secret),
            }))
        }
        (base_url, client_id, secret) => {
            let missing: Vec<&str> = [
                (BASE_URL_VARIABLE, base_url.is_none()),
                (CLIENT_ID_VARIABLE, client_id.is_none()),
                (CLIENT_SECRET_VARIABLE, secret.is_none()),
            ]
            .into_iter()
            .filter(|(_, missing)| *missing)
            .map(|(name, _)| name)
            .collect();
            Err(format!(
                "{} must be set too to start with a connection from the environment",
                missing.join(" and ")
            ))
        }
    }
}

impl ConnectionFromEnvironment {
    /// The saved connection this one is (same service and client), or a new one to save.
    /// Returns the connection and whether it is new.
    pub fn adopt(&self, settings: &Settings) -> (SavedConnection, bool) {
        let base_url = self.base_url.as_str().trim_end_matches('/').to_string();
        if let Some(saved) = settings.connection_to(&base_url, &self.client_id) {
            return (saved.clone(), false);
        }
        let host = self.base_url.host_str().unwrap_or("service");
        let environment = if matches!(self.base_url.host(), Some(url::Host::Domain("localhost")))
            || host.starts_with("127.")
            || host == "[::1]"
        {
            Environment::Sandbox
        } else {
            Environment::Production
        };
        (
            SavedConnection {
                id: uuid::Uuid::new_v4().to_string(),
                label: format!("{} ({host})", self.client_id),
                base_url,
                client_id: self.client_id.clone(),
                environment,
                sorts_tried: Default::default(),
                read_only: false,
                network: crate::ConnectionNetwork::default(),
            },
            true,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_set_is_no_connection_and_some_set_is_an_error_naming_the_rest() {
        assert!(parse(None, None, None).expect("none").is_none());
        let error = parse(
            Some("http://127.0.0.1:7001".into()),
            None,
            Some("s3cr3t-value".into()),
        )
        .expect_err("partial");
        assert!(error.contains("PARTNER_CLIENT_ID"), "{error}");
        assert!(!error.contains("s3cr3t-value"));
    }

    #[test]
    fn the_same_service_and_client_is_reused_and_another_is_added() {
        let found = parse(
            Some("http://127.0.0.1:7001/".into()),
            Some("demo-1".into()),
            Some("Zq9-env-secret-value".into()),
        )
        .expect("parse")
        .expect("some");
        let mut settings = Settings::default();
        let (first, new) = found.adopt(&settings);
        assert!(new);
        assert_eq!(first.environment, Environment::Sandbox);
        assert_eq!(first.base_url, "http://127.0.0.1:7001");
        settings.connections.push(first.clone());
        let (again, new) = found.adopt(&settings);
        assert!(!new);
        assert_eq!(again.id, first.id);
        let debug = format!("{found:?}");
        assert!(!debug.contains("Zq9-env-secret-value"), "{debug}");
    }
}

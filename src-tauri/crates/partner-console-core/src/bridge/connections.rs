//! The connections list: a saved connection as the UI sees it (never its secret), the embedded sandbox's row, and the form that adds one.

use partner_local::Environment;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A saved connection as the UI sees it: the client secret stays in the keychain.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionView {
    pub id: String,
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    /// The environment the console treats the connection as: production when the label or the
    /// service says so (`Environment::with_service_saying`); the banner's colour and every
    /// "are you sure" follow it.
    pub environment: Environment,
    /// The environment the connection was saved with (the user's label).
    pub labelled: Environment,
    /// What the service says its tokens' environment is (the introspection's `environment`,
    /// as sent); none until it was asked, or when it did not say.
    #[serde(default)]
    pub service_environment: Option<String>,
    /// The in-process sandbox started at first run.
    pub embedded: bool,
}

impl ConnectionView {
    /// The view once the service has said its environment.
    pub fn with_service_environment(mut self, said: Option<String>) -> Self {
        self.environment = self.labelled.with_service_saying(said.as_deref());
        self.service_environment = said;
        self
    }
}

impl ConnectionView {
    /// The embedded sandbox's row (always in the list; no base URL until it has started).
    pub fn embedded(base_url: Option<&str>) -> Self {
        Self {
            id: partner_local::settings::EMBEDDED_CONNECTION_ID.into(),
            label: EMBEDDED_LABEL.into(),
            base_url: base_url.unwrap_or_default().to_string(),
            client_id: EMBEDDED_CLIENT_ID.into(),
            environment: Environment::Sandbox,
            labelled: Environment::Sandbox,
            service_environment: None,
            embedded: true,
        }
    }
}

impl From<&partner_local::SavedConnection> for ConnectionView {
    fn from(saved: &partner_local::SavedConnection) -> Self {
        Self {
            id: saved.id.clone(),
            label: saved.label.clone(),
            base_url: saved.base_url.clone(),
            client_id: saved.client_id.clone(),
            environment: saved.environment,
            labelled: saved.environment,
            service_environment: None,
            embedded: false,
        }
    }
}

/// The embedded sandbox's own client.
pub const EMBEDDED_CLIENT_ID: &str = "console-embedded";

/// The embedded sandbox's label in the connections list.
pub const EMBEDDED_LABEL: &str = "Embedded sandbox";

/// The form of a new connection. The secret goes straight to the keychain.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewConnection {
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub environment: Environment,
}

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
    /// How it reaches the service from a company network (paths and names only).
    pub network: NetworkView,
    /// Every write refused before sending.
    pub read_only: bool,
}

/// A connection's company-network settings as the UI sees them: the proxy password and the
/// client certificate's private key stay in the keychain.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NetworkView {
    pub proxy_url: Option<String>,
    pub proxy_user: Option<String>,
    pub ca_cert_file: Option<String>,
    pub client_cert_file: Option<String>,
    /// "via proxy host:port · extra CA · client cert"; empty when the machine's own network
    /// (its trust store, its HTTPS_PROXY) is used.
    pub summary: String,
}

impl From<&partner_local::ConnectionNetwork> for NetworkView {
    fn from(network: &partner_local::ConnectionNetwork) -> Self {
        let mut parts = Vec::new();
        if let Some(proxy) = &network.proxy_url {
            let address = url::Url::parse(proxy)
                .ok()
                .and_then(|url| {
                    let host = url.host_str()?.to_string();
                    Some(match url.port_or_known_default() {
                        Some(port) => format!("{host}:{port}"),
                        None => host,
                    })
                })
                .unwrap_or_else(|| proxy.clone());
            parts.push(format!("via proxy {address}"));
        }
        if network.ca_cert_file.is_some() {
            parts.push("extra CA".to_string());
        }
        if network.client_cert_file.is_some() {
            parts.push("client cert".to_string());
        }
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        Self {
            proxy_url: network.proxy_url.clone(),
            proxy_user: network.proxy_user.clone(),
            ca_cert_file: path(&network.ca_cert_file),
            client_cert_file: path(&network.client_cert_file),
            summary: parts.join(" · "),
        }
    }
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
            network: NetworkView::default(),
            read_only: false,
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
            network: NetworkView::from(&saved.network),
            read_only: saved.read_only,
        }
    }
}

/// The embedded sandbox's own client.
pub const EMBEDDED_CLIENT_ID: &str = "console-embedded";

/// The embedded sandbox's label in the connections list.
pub const EMBEDDED_LABEL: &str = "Embedded sandbox";

/// The form of a new connection. The secret goes straight to the keychain.
// Its Debug print leaves the secret out (below).
#[derive(Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewConnection {
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub environment: Environment,
    /// The "Company network" part of the form; none when it was left closed.
    #[serde(default)]
    #[ts(optional)]
    pub network: Option<NetworkForm>,
    /// Every write refused before sending, from the start.
    #[serde(default)]
    #[ts(optional)]
    pub read_only: Option<bool>,
}

/// A connection's company-network settings as typed in the form. Blank text is "none".
/// The secrets (the proxy password, the client key file's content) go to the keychain; when
/// a saved connection's settings are changed, a blank secret keeps the saved one unless
/// `forgetProxyPassword` says to remove it.
// Its Debug print leaves the proxy password out (below).
#[derive(Clone, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkForm {
    pub proxy_url: Option<String>,
    pub proxy_user: Option<String>,
    pub proxy_password: Option<String>,
    /// Remove the saved proxy password (changing a saved connection only).
    pub forget_proxy_password: bool,
    pub ca_cert_file: Option<String>,
    pub client_cert_file: Option<String>,
    /// Read now; its content is kept in the keychain and the path is not kept.
    pub client_key_file: Option<String>,
}

/// What a Debug print shows of a secret typed in a form: whether there is one.
fn secret_shown(secret: Option<&str>) -> &'static str {
    match secret {
        Some(_) => "[redacted]",
        None => "none",
    }
}

impl std::fmt::Debug for NewConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewConnection")
            .field("label", &self.label)
            .field("base_url", &self.base_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &secret_shown(Some(&self.client_secret)))
            .field("environment", &self.environment)
            .field("network", &self.network)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl std::fmt::Debug for NetworkForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkForm")
            .field("proxy_url", &self.proxy_url)
            .field("proxy_user", &self.proxy_user)
            .field(
                "proxy_password",
                &secret_shown(self.proxy_password.as_deref()),
            )
            .field("forget_proxy_password", &self.forget_proxy_password)
            .field("ca_cert_file", &self.ca_cert_file)
            .field("client_cert_file", &self.client_cert_file)
            .field("client_key_file", &self.client_key_file)
            .finish()
    }
}

/// New company-network settings for a saved connection.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NetworkChange {
    pub id: String,
    pub network: NetworkForm,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_connection_s_debug_print_holds_no_secret() {
        let form: NewConnection = serde_json::from_value(serde_json::json!({
            "label": "Staging",
            "baseUrl": "https://partner.example",
            "clientId": "client-1",
            "clientSecret": "s3cret-client-value",
            "environment": "sandbox",
            "network": {"proxyUrl": "http://proxy:3128", "proxyUser": "me", "proxyPassword": "pr0xy-pass"}
        }))
        .expect("the form");
        let shown = format!("{form:?}");
        assert!(!shown.contains("s3cret-client-value"), "{shown}");
        assert!(!shown.contains("pr0xy-pass"), "{shown}");
        assert!(
            shown.contains("client-1") && shown.contains("[redacted]"),
            "{shown}"
        );
    }
}

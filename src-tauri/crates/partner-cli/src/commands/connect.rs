//! What every client subcommand shares: where the service is, who is calling, and the secret.
//!
//! The client secret never comes from the command line (argv is visible to every user of the
//! machine through `ps`): it comes from `PARTNER_CLIENT_SECRET`, or from the OS keychain entry
//! the console (or `partner token login`) stored for this base URL and client id.

use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_api::Secret;
use partner_client::{
    client_secret, parse_base_url, ClientCertificate, ConnectionConfig, KeyringStore,
    NetworkOptions, PartnerClient, ProxyOptions, SecretSlot, SecretStore, DEFAULT_BASE_URL,
};
use std::io::Read;
use std::path::PathBuf;

/// The environment variable that may hold the client secret.
pub const SECRET_ENV: &str = "PARTNER_CLIENT_SECRET";

#[derive(Debug, Clone, ClapArgs)]
pub struct ConnectionArgs {
    /// The service's base URL.
    #[arg(long, env = "PARTNER_BASE_URL", default_value = DEFAULT_BASE_URL, global = true)]
    pub base_url: String,
    /// The API client id (the secret comes from PARTNER_CLIENT_SECRET or the keychain).
    #[arg(long, env = "PARTNER_CLIENT_ID", global = true)]
    pub client_id: Option<String>,
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// The environment variable that may hold the proxy password.
pub const PROXY_PASSWORD_ENV: &str = "PARTNER_PROXY_PASSWORD";

/// How the calls reach the service from a company network. Without these, the system's trust
/// store and HTTPS_PROXY/HTTP_PROXY/NO_PROXY are used; a saved connection's own settings apply
/// under --connection, and these options override them.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct NetworkArgs {
    /// A proxy for these calls (http://host:port), in place of HTTPS_PROXY/HTTP_PROXY.
    #[arg(long, env = "PARTNER_PROXY", global = true, value_name = "URL")]
    pub proxy: Option<String>,
    /// The proxy's user name; its password comes from PARTNER_PROXY_PASSWORD or the keychain.
    #[arg(long, env = "PARTNER_PROXY_USER", global = true, value_name = "USER")]
    pub proxy_user: Option<String>,
    /// A CA certificate (PEM file) trusted beside the system's trust store.
    #[arg(long, env = "PARTNER_CA_CERT", global = true, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// A client certificate (PEM file) shown to the service (mutual TLS).
    #[arg(long, env = "PARTNER_CLIENT_CERT", global = true, value_name = "FILE")]
    pub client_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM file); without it, the key kept in the
    /// keychain for this connection.
    #[arg(long, env = "PARTNER_CLIENT_KEY", global = true, value_name = "FILE")]
    pub client_key: Option<PathBuf>,
}

impl NetworkArgs {
    /// These options over a saved connection's (each given option wins).
    fn over(&self, saved: &partner_local::ConnectionNetwork) -> Self {
        Self {
            proxy: self.proxy.clone().or_else(|| saved.proxy_url.clone()),
            proxy_user: self.proxy_user.clone().or_else(|| saved.proxy_user.clone()),
            ca_cert: self.ca_cert.clone().or_else(|| saved.ca_cert_file.clone()),
            client_cert: self
                .client_cert
                .clone()
                .or_else(|| saved.client_cert_file.clone()),
            client_key: self.client_key.clone(),
        }
    }

    /// The client's network options; the proxy password and the client key come from the
    /// environment or a file, else from the keychain entries of `base_url` and `client_id`.
    pub fn options(&self, base_url: &url::Url, client_id: &str) -> Result<NetworkOptions> {
        let keychain = KeyringStore::default();
        let proxy = match &self.proxy {
            None => None,
            Some(url) => {
                let password = match env_secret(PROXY_PASSWORD_ENV)? {
                    Some(password) => Some(password),
                    None if self.proxy_user.is_some() => keychain
                        .get(&SecretSlot::proxy_password(base_url, client_id))
                        .ok()
                        .flatten(),
                    None => None,
                };
                Some(ProxyOptions::new(url, self.proxy_user.clone(), password)?)
            }
        };
        let client_certificate = match (&self.client_cert, &self.client_key) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(CliError::Usage(
                    "--client-key was given without --client-cert".into(),
                ))
            }
            (Some(cert), Some(key)) => Some(ClientCertificate::from_files(cert, key)?),
            (Some(cert), None) => {
                let slot = SecretSlot::client_certificate_key(base_url, client_id);
                match keychain.get(&slot) {
                    Ok(Some(key)) => Some(ClientCertificate {
                        certificate_file: cert.clone(),
                        private_key: key,
                    }),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "no private key for the client certificate {}: give it with --client-key FILE",
                            cert.display()
                        )))
                    }
                }
            }
        };
        Ok(NetworkOptions {
            proxy,
            extra_ca_file: self.ca_cert.clone(),
            client_certificate,
        })
    }
}

fn env_secret(name: &str) -> Result<Option<Secret>> {
    match std::env::var_os(name) {
        None => Ok(None),
        Some(value) => {
            let value = value
                .into_string()
                .map_err(|_| CliError::Usage(format!("{name} is not valid UTF-8")))?;
            Ok(Some(Secret::new(value)).filter(|s| !s.is_empty()))
        }
    }
}

/// The connection `partner --connection NAME` (or `PARTNER_CONNECTION`) names, set once by
/// `main` from the top-level option, which clap keeps on the top-level command.
static NAMED_CONNECTION: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Uses the saved connection `name` for every client call of this run.
pub fn use_named_connection(name: String) {
    let _ = NAMED_CONNECTION.set(name);
}

/// The connection named by `--connection`, if one was.
pub fn named_connection() -> Option<&'static str> {
    NAMED_CONNECTION
        .get()
        .map(String::as_str)
        .filter(|n| !n.trim().is_empty())
}

impl ConnectionArgs {
    /// These arguments with a saved connection's base URL and client id filled in, when one
    /// is named.
    /// A named connection takes the place of --base-url and --client-id (and their variables).
    pub fn resolved(&self) -> Result<Self> {
        let Some(name) = NAMED_CONNECTION.get().filter(|n| !n.trim().is_empty()) else {
            return Ok(self.clone());
        };
        let saved = super::connections::named(name)?;
        Ok(Self {
            network: self.network.over(&saved.network),
            base_url: saved.base_url,
            client_id: Some(saved.client_id),
        })
    }

    pub fn client_id(&self) -> Result<&str> {
        self.client_id
            .as_deref()
            .filter(|id| !id.trim().is_empty())
            .ok_or_else(|| {
                CliError::Usage(
                    "give the API client id with --client-id or PARTNER_CLIENT_ID".into(),
                )
            })
    }

    /// The client secret: `PARTNER_CLIENT_SECRET` first, then the keychain.
    pub fn secret(&self) -> Result<Secret> {
        if let Some(secret) = std::env::var_os(SECRET_ENV) {
            let secret = secret
                .into_string()
                .map_err(|_| CliError::Usage(format!("{SECRET_ENV} is not valid UTF-8")))?;
            if !secret.is_empty() {
                return Ok(Secret::new(secret));
            }
        }
        let base_url = parse_base_url(&self.base_url)?;
        let client_id = self.client_id()?;
        match client_secret(&KeyringStore::default(), &base_url, client_id) {
            Ok(Some(secret)) => Ok(secret),
            Ok(None) => Err(CliError::Usage(format!(
                "no client secret for {client_id} at {base_url}: set {SECRET_ENV}, or store it with `partner token login`"
            ))),
            Err(error) => Err(CliError::Usage(format!(
                "no client secret: {SECRET_ENV} is not set and the keychain could not be read ({error})"
            ))),
        }
    }

    pub fn config(&self) -> Result<ConnectionConfig> {
        let this = self.resolved()?;
        let secret = this.secret()?;
        let mut config = ConnectionConfig::new(&this.base_url, this.client_id()?, secret)?;
        config.network = this.network.options(&config.base_url, &config.client_id)?;
        config.read_only = this.saved()?.is_some_and(|saved| saved.read_only);
        Ok(config)
    }

    /// The desktop app's saved connection to this service and client, however it was named
    /// here (--connection, or the URL and client id): its read-only mark and its name apply
    /// to the CLI's calls too.
    /// A settings file the app cannot read is said once (`--connection` reports it as an
    /// error) and read as no saved connection, so calls by URL and client id still work.
    fn saved(&self) -> Result<Option<partner_local::SavedConnection>> {
        let base_url = parse_base_url(&self.base_url)?;
        let client_id = self.client_id()?;
        match super::connections::saved_settings() {
            Ok(settings) => Ok(settings
                .connection_to(base_url.as_str(), client_id)
                .cloned()),
            Err(error) => {
                tracing::warn!(%error, "the saved connections could not be read");
                Ok(None)
            }
        }
    }

    /// Records `client`'s writes in the audit log the app shares, under the saved
    /// connection's name or the base URL.
    fn journal(&self, client: &PartnerClient) -> Result<()> {
        let this = self.resolved()?;
        let name = match this.saved()? {
            Some(saved) => saved.label,
            None => this.base_url.clone(),
        };
        // The data key is looked up at the first write: a command that only reads never asks
        // the secret store for it.
        let journal = partner_local::AuditLog::lazy_journal(name, "cli", || {
            partner_local::AuditLog::in_data_dir(super::data_key::resolve()?.key)
        });
        client.journal_writes(Some(std::sync::Arc::new(journal)));
        Ok(())
    }

    /// Whether these arguments name a production connection: the saved connection's
    /// environment, or for one named only by URL and client id the app's rule for a
    /// connection it adopts (loopback is a sandbox, anything else production). What asks
    /// before it acts on production data (a local copy, a final response) asks by this.
    pub fn environment(&self) -> Result<partner_local::Environment> {
        let resolved = self.resolved()?;
        let base_url = parse_base_url(&resolved.base_url)?;
        let settings = super::connections::saved_settings()?;
        let (saved, _) = partner_local::environment::ConnectionFromEnvironment {
            base_url,
            client_id: resolved.client_id()?.to_string(),
            client_secret: Secret::new(String::new()),
        }
        .adopt(&settings);
        Ok(saved.environment)
    }

    /// A client for these arguments, its calls shown as `--verbose`/`--curl` ask.
    pub fn client(&self) -> Result<PartnerClient> {
        let client = PartnerClient::new(self.config()?)?;
        crate::call_lines::watch(&client);
        self.journal(&client)?;
        Ok(client)
    }
}

/// Reads one secret from standard input (trailing newline dropped), for keys and tokens that
/// must not appear in argv.
pub fn secret_from_stdin(what: &str) -> Result<Secret> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(CliError::Output)?;
    let text = text.trim_end_matches(['\r', '\n']);
    if text.is_empty() {
        return Err(CliError::Usage(format!("no {what} on standard input")));
    }
    Ok(Secret::new(text))
}

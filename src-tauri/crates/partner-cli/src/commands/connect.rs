//! What every client subcommand shares: where the service is, who is calling, and the secret.
//!
//! The client secret never comes from the command line (argv is visible to every user of the
//! machine through `ps`): it comes from `PARTNER_CLIENT_SECRET`, or from the OS keychain entry
//! the console (or `partner token login`) stored for this base URL and client id.

use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_api::Secret;
use partner_client::{
    client_secret, parse_base_url, ConnectionConfig, KeyringStore, PartnerClient, DEFAULT_BASE_URL,
};
use std::io::Read;

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
        Ok(ConnectionConfig::new(
            &this.base_url,
            this.client_id()?,
            secret,
        )?)
    }

    /// A client for these arguments, its calls shown as `--verbose`/`--curl` ask.
    pub fn client(&self) -> Result<PartnerClient> {
        let client = PartnerClient::new(self.config()?)?;
        crate::call_lines::watch(&client);
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

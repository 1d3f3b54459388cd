//! `partner token issue|introspect|revoke|login`.
//!
//! `issue` prints a token because that is what it is asked for (to use with curl); tokens to
//! introspect or revoke are read from `PARTNER_TOKEN` or standard input, never from argv.

use super::connect::{secret_from_stdin, ConnectionArgs, SECRET_ENV};
use super::render::{print_one, OutputFormat};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::Secret;
use partner_client::{
    parse_base_url, save_client_secret, KeyringStore, SecretStore as _, TokenState,
};
use serde::Serialize;
use std::io::Write;

/// The environment variable that may hold a token to introspect or revoke.
pub const TOKEN_ENV: &str = "PARTNER_TOKEN";

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue an access token and print it.
    Issue {
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Introspect a token (PARTNER_TOKEN, or --stdin; otherwise a freshly issued one).
    Introspect {
        /// Read the token from standard input.
        #[arg(long)]
        stdin: bool,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Revoke a token (PARTNER_TOKEN, or --stdin).
    Revoke {
        /// Read the token from standard input.
        #[arg(long)]
        stdin: bool,
    },
    /// Store the client secret (PARTNER_CLIENT_SECRET, or standard input) in the OS keychain
    /// for this base URL and client id, after checking it works.
    Login,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IssuedToken {
    access_token: String,
    token_type: &'static str,
    idle_deadline: Option<String>,
    max_deadline: Option<String>,
}

impl super::render::Row for IssuedToken {
    const HEADERS: &'static [&'static str] =
        &["accessToken", "tokenType", "idleDeadline", "maxDeadline"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.access_token.clone(),
            self.token_type.to_string(),
            self.idle_deadline.clone().unwrap_or_default(),
            self.max_deadline.clone().unwrap_or_default(),
        ]
    }
}

fn given_token(stdin: bool) -> Result<Option<Secret>> {
    if let Ok(token) = std::env::var(TOKEN_ENV) {
        if !token.is_empty() {
            return Ok(Some(Secret::new(token)));
        }
    }
    if stdin {
        return secret_from_stdin("token").map(Some);
    }
    Ok(None)
}

pub async fn run(args: Args) -> Result<()> {
    match args.command {
        TokenCommand::Issue { output } => {
            let client = args.connection.client()?;
            let token = client.tokens().bearer().await?;
            let (idle, max) = match client.tokens().state() {
                TokenState::Active {
                    idle_deadline,
                    max_deadline,
                } => (
                    Some(idle_deadline.to_rfc3339()),
                    Some(max_deadline.to_rfc3339()),
                ),
                _ => (None, None),
            };
            if output == OutputFormat::Table {
                // Just the token, so `TOKEN=$(partner token issue)` works.
                let mut out = std::io::stdout();
                writeln!(out, "{}", token.expose()).map_err(CliError::Output)?;
                return Ok(());
            }
            print_one(
                output,
                &IssuedToken {
                    access_token: token.expose().to_string(),
                    token_type: "Bearer",
                    idle_deadline: idle,
                    max_deadline: max,
                },
            )
        }
        TokenCommand::Introspect { stdin, output } => {
            let client = args.connection.client()?;
            let introspection = match given_token(stdin)? {
                Some(token) => client.tokens().introspect_token(&token).await?,
                None => client.tokens().introspect().await?,
            };
            print_one(output, &introspection)
        }
        TokenCommand::Revoke { stdin } => {
            let token = given_token(stdin)?.ok_or_else(|| {
                CliError::Usage(format!(
                    "give the token to revoke in {TOKEN_ENV} or on standard input with --stdin"
                ))
            })?;
            let client = args.connection.client()?;
            client.tokens().revoke_token(&token).await?;
            eprintln!("revoked");
            Ok(())
        }
        TokenCommand::Login => {
            let secret = match std::env::var(SECRET_ENV) {
                Ok(secret) if !secret.is_empty() => Secret::new(secret),
                _ => secret_from_stdin("client secret")?,
            };
            // The secret is kept only once signed in, but the store is checked before: a
            // sign-in whose secret the store then loses would be for nothing.
            super::keychain::ready(&KeyringStore::default(), "client secrets")?;
            let connection = args.connection.resolved()?;
            let client_id = connection.client_id()?.to_string();
            let mut config = partner_client::ConnectionConfig::new(
                &connection.base_url,
                &client_id,
                secret.clone(),
            )?;
            config.network = connection
                .network
                .options(&config.base_url, &config.client_id)?;
            let network = config.network.clone();
            let client = partner_client::PartnerClient::new(config)?;
            crate::call_lines::watch(&client);
            client.tokens().ensure_fresh().await?;
            client.sign_out().await?;
            let base_url = parse_base_url(&connection.base_url)?;
            let keychain = KeyringStore::default();
            save_client_secret(&keychain, &base_url, &client_id, &secret)?;
            eprintln!("the client secret for {client_id} at {base_url} is in the keychain");
            // The proxy password and the client key that just worked are kept beside it, so
            // later calls need only --proxy-user and --client-cert.
            if let Some(password) = network.proxy.as_ref().and_then(|p| p.password.as_ref()) {
                keychain.set(
                    &partner_client::SecretSlot::proxy_password(&base_url, &client_id),
                    password,
                )?;
                eprintln!("the proxy password is in the keychain");
            }
            if let Some(certificate) = &network.client_certificate {
                keychain.set(
                    &partner_client::SecretSlot::client_certificate_key(&base_url, &client_id),
                    &certificate.private_key,
                )?;
                eprintln!("the client certificate's private key is in the keychain");
            }
            Ok(())
        }
    }
}

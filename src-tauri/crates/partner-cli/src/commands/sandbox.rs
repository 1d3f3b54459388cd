//! `partner sandbox`: runs the local sandbox until Ctrl-C or SIGTERM.
//!
//! The first line on stdout is `listening on http://HOST:PORT` with the real port (so a
//! script that passed port 0 can read it); a generated demo client's id and secret follow,
//! because the user asked for them by not naming a client. Nothing else goes to stdout.
//!
//! With `--data FILE` the sandbox keeps its data in that file across restarts (the sandbox
//! crate's persistent mode); without `--client`, the file's first client comes back with a
//! new secret (printed), since the file keeps only a digest of the old one. The file is
//! encrypted with the console's data key (`super::data_key`); a plain file of an earlier
//! version is encrypted as it opens.

use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{ClientCredentials, DemoData, Sandbox, SandboxConfig};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::TcpListener;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:7001")]
    pub addr: String,
    /// A partner's API client as ID:SECRET (repeatable). Without one, a demo client is made
    /// and its id and secret printed.
    #[arg(long = "client", value_name = "ID:SECRET", value_parser = parse_client)]
    pub clients: Vec<ClientCredentials>,
    /// Seed deterministic demo data for the first client.
    #[arg(long)]
    pub demo: bool,
    /// How many demo transactions to seed (implies --demo).
    #[arg(long, value_name = "N")]
    pub demo_transactions: Option<usize>,
    /// Also accept http:// callbacks to loopback addresses (local demos and tests).
    #[arg(long)]
    pub allow_http_callbacks: bool,
    /// Token the /sandbox/v1/ controls require; needed when --addr is not a loopback address.
    #[arg(long, env = "PARTNER_SANDBOX_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Wait between webhook delivery attempts (sandbox clock), e.g. 20s, 500ms.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = humantime::parse_duration)]
    pub retry_delay: Duration,
    /// How long one webhook delivery attempt may take, e.g. 30s.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub attempt_timeout: Duration,
    /// Address partners reach the sandbox at, used in notifications' resourceRef
    /// (default: http://<listening address>).
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Keep the data in this SQLite file across restarts (created when missing). Without it
    /// everything is in memory and gone at the stop.
    #[arg(long = "data", value_name = "FILE")]
    pub data_file: Option<PathBuf>,
}

fn parse_client(raw: &str) -> std::result::Result<ClientCredentials, String> {
    raw.parse()
}

impl Args {
    fn config(&self) -> SandboxConfig {
        let demo = match (self.demo, self.demo_transactions) {
            (_, Some(transactions)) => Some(DemoData { transactions }),
            (true, None) => Some(DemoData::default()),
            (false, None) => None,
        };
        SandboxConfig {
            clients: self.clients.clone(),
            demo,
            allow_http_callbacks: self.allow_http_callbacks,
            admin_token: self.admin_token.clone().map(partner_api::Secret::new),
            public_url: self.public_url.clone(),
            data_file: self.data_file.clone(),
            delivery: DeliveryConfig {
                retry_delay: self.retry_delay,
                attempt_timeout: self.attempt_timeout,
                ..DeliveryConfig::default()
            },
            ..SandboxConfig::default()
        }
    }
}

pub async fn run(args: Args) -> Result<()> {
    let mut config = args.config();
    // A data file is encrypted with the console's data key (the app's too), looked for as the
    // capture store's: a `data.key` beside the file, else the secret store.
    let data_key = match &config.data_file {
        Some(file) => Some(
            tokio::task::spawn_blocking({
                let folder = match file.parent() {
                    Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                move || super::data_key::resolve_in(&folder)
            })
            .await
            .map_err(|e| CliError::Usage(format!("the data key could not be looked up ({e})")))?
            .map_err(CliError::Local)?,
        ),
        None => None,
    };
    config.data_key = data_key.as_ref().map(|resolved| resolved.key.clone());
    let generated_client = config.clients.is_empty();
    let listener = TcpListener::bind(&args.addr)
        .await
        .map_err(|source| CliError::Bind {
            addr: args.addr.clone(),
            source,
        })?;
    let stop = super::signal::stop_signal()?;
    let handle = match Sandbox::start(config, listener).await {
        Ok(handle) => handle,
        // Which key was tried, and where it lives (never the key).
        Err(error) => {
            if let (partner_sandbox::Error::DataFileKey { .. }, Some(key)) = (&error, &data_key) {
                eprintln!(
                    "the data key {} is in {} (PARTNER_DATA_KEY or PARTNER_DATA_KEY_FILE name another)",
                    key.key.fingerprint(),
                    key.home
                );
            }
            return Err(error.into());
        }
    };
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{}", handle.local_addr()).map_err(CliError::Output)?;
        if generated_client {
            let client = handle.demo_client();
            writeln!(out, "client id: {}", client.client_id).map_err(CliError::Output)?;
            writeln!(out, "client secret: {}", client.client_secret.expose())
                .map_err(CliError::Output)?;
        }
        out.flush().map_err(CliError::Output)?;
    }
    stop.await;
    tracing::info!("stopping the sandbox");
    handle.shutdown().await;
    Ok(())
}

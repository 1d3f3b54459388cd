//! `partner connections list`: the connections saved in the desktop app (its settings file in
//! the shared data folder), which `--connection NAME` names. Secrets stay in the keychain.

use super::render::{ListWriter, OutputFormat, Row};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_local::{SavedConnection, Settings, SettingsFile};
use serde::Serialize;

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: ConnectionsCommand,
}

#[derive(Debug, Subcommand)]
enum ConnectionsCommand {
    /// The connections saved in the desktop app, with their environment.
    List {
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
}

/// A saved connection as `list` prints it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    environment: partner_local::Environment,
    base_url: String,
    client_id: String,
    /// The app opens this one at its next start.
    last_active: bool,
    /// Every write refused before sending.
    read_only: bool,
}

impl Row for Listed {
    const HEADERS: &'static [&'static str] = &[
        "name",
        "environment",
        "baseUrl",
        "clientId",
        "lastActive",
        "readOnly",
    ];

    fn cells(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            match self.environment {
                partner_local::Environment::Sandbox => "sandbox".into(),
                partner_local::Environment::Production => "production".into(),
            },
            self.base_url.clone(),
            self.client_id.clone(),
            if self.last_active { "yes" } else { "" }.into(),
            if self.read_only { "read-only" } else { "" }.into(),
        ]
    }
}

pub async fn run(args: Args) -> Result<()> {
    match args.command {
        ConnectionsCommand::List { output } => {
            let settings = saved_settings()?;
            let rows: Vec<Listed> = settings
                .connections
                .iter()
                .map(|c| Listed {
                    name: c.label.clone(),
                    environment: c.environment,
                    base_url: c.base_url.clone(),
                    client_id: c.client_id.clone(),
                    last_active: settings.last_active.as_deref() == Some(c.id.as_str()),
                    read_only: c.read_only,
                })
                .collect();
            let mut writer = ListWriter::new(output)?;
            for row in &rows {
                writer.item(row)?;
            }
            writer.finish()?;
            Ok(())
        }
    }
}

/// The app's settings, read only (a file the app cannot use is reported, not moved: that is
/// the app's to do at its next start).
pub(crate) fn saved_settings() -> Result<Settings> {
    let file = SettingsFile::in_data_dir().map_err(|e| CliError::Usage(e.to_string()))?;
    match std::fs::read(file.path()) {
        Ok(bytes) => partner_local::settings::parse(&bytes).map_err(|problem| {
            CliError::Usage(format!(
                "the desktop app's settings {} {problem}",
                file.path().display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(e) => Err(CliError::Usage(format!(
            "could not read the desktop app's settings {}: {e}",
            file.path().display()
        ))),
    }
}

/// The saved connection called `name` (its name, or its id).
pub fn named(name: &str) -> Result<SavedConnection> {
    let settings = saved_settings()?;
    let wanted = name.trim();
    if wanted == partner_local::settings::EMBEDDED_CONNECTION_ID
        || wanted.eq_ignore_ascii_case("embedded sandbox")
    {
        return Err(CliError::Usage(
            "the embedded sandbox runs inside the desktop app on a port of its own each run: run `partner sandbox --data FILE` for a sandbox the CLI can reach".into(),
        ));
    }
    let found: Vec<&SavedConnection> = settings
        .connections
        .iter()
        .filter(|c| c.id == wanted || c.label.eq_ignore_ascii_case(wanted))
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let known: Vec<&str> = settings.connections.iter().map(|c| c.label.as_str()).collect();
            Err(CliError::Usage(if known.is_empty() {
                format!("no connection is called `{wanted}`: the desktop app has saved none")
            } else {
                format!(
                    "no connection is called `{wanted}`; the saved ones: {}",
                    known.join(", ")
                )
            }))
        }
        _ => Err(CliError::Usage(format!(
            "more than one connection is called `{wanted}`: give its id (`partner connections list --output json`)"
        ))),
    }
}

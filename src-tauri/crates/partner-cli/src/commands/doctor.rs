//! `partner doctor`: checks the way to the service one step at a time (address, proxy, TCP,
//! TLS with the certificate chain, HTTP, a token, one list call of each kind) and says for the
//! first step that fails what to do; the text is made for a support ticket. The check itself is
//! `partner_client::check_connection`, the same the desktop app's "Check connection" runs, on
//! the same connection flags and network options as every other command.

use super::connect::ConnectionArgs;
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, ValueEnum};
use partner_client::{check_connection, StepOutcome};
use std::io::Write;

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// text: each step as it ends; json: the whole report at the end.
    #[arg(long, value_enum, default_value_t = DoctorOutput::Text)]
    pub output: DoctorOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorOutput {
    Text,
    Json,
}

pub async fn run(args: Args) -> Result<()> {
    let config = args.connection.config()?;
    let text = args.output == DoctorOutput::Text;
    if text {
        super::render::print_line(format_args!(
            "Connection check of {} (client {})",
            config.base_url, config.client_id
        ))?;
    }
    let report = check_connection(&config, |step| {
        if text {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{step}").and_then(|()| out.flush());
        }
    })
    .await;
    if !text {
        let json = serde_json::to_string_pretty(&report).map_err(|e| CliError::Output(e.into()))?;
        super::render::print_line(json)?;
    }
    if report.all_passed() {
        return Ok(());
    }
    let failed: Vec<&str> = report
        .steps
        .iter()
        .filter(|s| s.outcome == StepOutcome::Failed)
        .map(|s| s.name.as_str())
        .collect();
    Err(CliError::DoctorFailed(if failed.is_empty() {
        "a step did not pass (above)".into()
    } else {
        format!("{} failed (above, with what to do)", failed.join(", "))
    }))
}

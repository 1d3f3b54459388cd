//! `partner version`: the version and build; with `--check`, whether the release page offers a
//! newer one. `partner` never asks by itself: `--check` fetches the update manifest the desktop
//! app reads (`partner_local::updates`: the release page's `latest.json`, or
//! `PARTNER_UPDATE_URL`) once, on demand, and compares versions. It installs nothing: the app
//! updates itself (and this command with it, the two being one package), or the release page
//! and the package managers do.

use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, ValueEnum};
use partner_local::updates::{self, UpdateFailure};

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Ask the release page whether a newer version exists (exit 0 either way; 3 when it cannot
    /// be reached, 1 when its answer is not a manifest). Honours PARTNER_UPDATE_URL, and
    /// PARTNER_NO_UPDATE_CHECK, which refuses it (2).
    #[arg(long)]
    pub check: bool,
    /// text: sentences; json: {current, latest, newer, notes, date, manifest}.
    #[arg(long, value_enum, default_value_t = VersionOutput::Text)]
    pub output: VersionOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VersionOutput {
    Text,
    Json,
}

pub async fn run(args: Args, version: &str) -> Result<()> {
    let current = env!("CARGO_PKG_VERSION");
    if !args.check {
        return match args.output {
            VersionOutput::Text => super::render::print_line(format_args!("partner {version}")),
            VersionOutput::Json => super::render::print_line(
                serde_json::json!({ "current": current, "build": version }),
            ),
        };
    }
    if let Err(off) = updates::asked_check(&updates::process_env) {
        return Err(CliError::Usage(off.explained().to_string()));
    }
    let url = updates::manifest_url(&updates::process_env).map_err(CliError::Usage)?;
    let found = updates::check(&url, current).await.map_err(|failure| {
        let problem = failure.problem(None, current);
        let message = format!("{} {}", problem.message, problem.hint);
        CliError::VersionCheck {
            message,
            unreachable: matches!(failure, UpdateFailure::Unreachable(_)),
        }
    })?;
    match args.output {
        VersionOutput::Json => super::render::print_line(
            serde_json::to_string(&found).map_err(|e| CliError::Usage(e.to_string()))?,
        ),
        VersionOutput::Text if found.newer => {
            let date = found
                .date
                .as_deref()
                .map(|d| format!(", published {}", d.get(..10).unwrap_or(d)))
                .unwrap_or_default();
            let mut text = format!(
                "A newer version is available: {} (you have {current}{date}).",
                found.latest
            );
            if let Some(notes) = &found.notes {
                text.push_str("\nWhat's new:");
                for line in notes.lines() {
                    text.push_str("\n  ");
                    text.push_str(line);
                }
            }
            text.push_str("\nThe desktop app installs it (Display > About and updates), or get it from the release page.");
            super::render::print_line(text)
        }
        VersionOutput::Text => super::render::print_line(format_args!(
            "partner {current} is the newest version (the release page offers {}).",
            found.latest
        )),
    }
}

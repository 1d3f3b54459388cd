//! `partner listen`: runs the webhook listener in the foreground and prints each capture
//! ([`serve`], printed by [`printer`]); its subcommands work on the capture store, one module
//! each: `export` / `import` move a store to and from files (`export --redact`, [`evidence`],
//! writes a redacted evidence bundle for a support ticket instead), `clear` deletes captures,
//! `captures` lists them with the desktop inspector's filters and search, `runs` lists the
//! listener's runs, `missed` / `recover` find and resend the notifications the service gave up
//! on (a team workspace's servers do both when one is in effect), `replay` sends captures
//! again to a receiver. This module holds the options' shape and
//! sends each subcommand to its module.
//!
//! Every subcommand uses the same store as the desktop app by default
//! (`$XDG_DATA_HOME/partner-console/captures.sqlite3`). A store has one writer at a time
//! (`partner_listener::writer_lock`): `partner listen`, `import` and `clear --yes` take its
//! lock and are refused, naming the holder, while the app or another `partner listen` has it;
//! `export`, `captures` and `clear` without `--yes` only read, so they work beside a running
//! listener. Every subcommand that selects captures reads its filter options through one
//! function (`store_args::FilterArgs::filter`), so `--verdict` or `--since` mean the same
//! everywhere.

mod captures;
mod clear;
mod evidence;
mod export;
mod import;
mod keys;
pub mod missed;
mod printer;
mod replay;
mod runs;
pub mod serve;

use crate::commands::store_args::default_db;
use crate::error::Result;
use clap::{Args as ClapArgs, Subcommand};

#[derive(Debug, ClapArgs)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
    #[command(flatten)]
    pub serve: serve::ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Write the captures of a store out as JSON Lines or HAR 1.2, or (--redact) as an
    /// evidence bundle for a support ticket.
    Export(Box<export::ExportArgs>),
    /// Add the captures of a JSON Lines export to a store (to the team workspace's captures
    /// when one is in effect; those it holds already are skipped).
    Import(import::ImportArgs),
    /// Delete captures (all, or those the filters select). Without --yes, only says how many
    /// it would delete.
    Clear(clear::ClearArgs),
    /// List captures, newest first, with the inspector's filters and search. Reads the store
    /// only, so it works while a listener runs.
    Captures(captures::CapturesArgs),
    /// List the notifications the service gave up on while the listener was down: worked out
    /// from the API (the transactions changed since --since and their events) and compared
    /// with the captures. Reads the store only.
    Missed(missed::MissedArgs),
    /// Send the missed notifications again (the same check as `missed` first): each built as
    /// the service would have sent it, signed with its subscription's key (the keychain, or
    /// --key), marked `Svc-Replay: recovery`, to the listener or --to URL.
    Recover(missed::RecoverArgs),
    /// Send captures again to a receiver: those the filters select from the store (a receiver
    /// fixed after an outage gets them again), or every one of a file (--from, JSON Lines or
    /// HAR: fixtures for a contract test in CI), paced (--rate, --concurrency), each answer
    /// checked (--expect, --max-time), with a JUnit report (--junit). Exit status 1 when one
    /// did not pass.
    Replay(Box<replay::ReplayArgs>),
    /// List the listener's runs on a store (when each started and stopped), one JSON object a
    /// line, oldest first. Reads the store only (it is encrypted at rest, so other tools cannot).
    Runs(runs::RunsArgs),
}

pub async fn run(args: Args) -> Result<()> {
    match args.action {
        Some(Action::Export(export_args)) if export_args.redact => {
            if let Some(workspace) = crate::commands::workspace::Workspace::from_env()? {
                return evidence::run_on_workspace(&workspace, *export_args).await;
            }
            evidence::run(*export_args).await
        }
        Some(Action::Export(export_args)) => export::run(*export_args).await,
        Some(Action::Import(import_args)) => import::run(import_args).await,
        Some(Action::Clear(clear_args)) => clear::run(clear_args).await,
        Some(Action::Captures(captures_args)) => captures::run(captures_args).await,
        Some(Action::Missed(missed_args)) => {
            if let Some(workspace) = crate::commands::workspace::Workspace::from_env()? {
                return missed::run_on_workspace(&workspace, missed_args).await;
            }
            let mut missed_args = missed_args;
            let db = match missed_args.db.take() {
                Some(db) => db,
                None => default_db()?,
            };
            missed::run(missed_args, db).await
        }
        Some(Action::Recover(recover_args)) => {
            if let Some(workspace) = crate::commands::workspace::Workspace::from_env()? {
                return missed::run_recover_on_workspace(&workspace, recover_args).await;
            }
            let mut recover_args = recover_args;
            let db = match recover_args.missed.db.take() {
                Some(db) => db,
                None => default_db()?,
            };
            missed::run_recover(recover_args, db).await
        }
        Some(Action::Replay(replay_args)) => replay::run(*replay_args).await,
        Some(Action::Runs(runs_args)) => runs::run(runs_args),
        None => serve::run(args.serve).await,
    }
}

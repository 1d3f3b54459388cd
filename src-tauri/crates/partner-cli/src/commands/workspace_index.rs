//! `partner transactions sync|find` on a team workspace (`PARTNER_WORKSPACE`): the team's
//! support index, synced by its servers once for everyone, asked with the same filters and
//! printed the same way as this machine's own copy (`local_index`).
//!
//! Nothing of the service's connection is needed here: the servers hold it. `sync` asks the
//! servers to sync now (after any sync already running) and says what it did; `find` never
//! reaches the service, only the workspace.

use super::local_index::{print_counts, print_found, FindArgs, SyncArgs};
use super::workspace::Workspace;
use crate::error::{CliError, Result};
use partner_index::{Counts, Found, SyncEnd, SyncReport};
use serde_json::json;
use std::io::Write as _;

pub async fn sync(workspace: &Workspace, args: &SyncArgs) -> Result<()> {
    eprintln!(
        "asking {} to sync the team's support index…",
        workspace.describe()
    );
    let report: SyncReport = workspace
        .post("/api/v1/transactions/sync", &json!({}))
        .await?;
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
        writeln!(out).map_err(CliError::Output)?;
    }
    let state = &report.state;
    match report.end {
        SyncEnd::Complete => {
            eprintln!(
                "{} transactions and {} products in the workspace's index, as of {}; {} stored now, {} changed since the last sync",
                state.transactions,
                state.products,
                state.as_of.map(|t| t.to_rfc3339()).unwrap_or_default(),
                report.filled,
                report.changes.len()
            );
            Ok(())
        }
        SyncEnd::Cancelled => Err(CliError::Workspace {
            message: format!(
                "the sync stopped (the server is stopping): {} of {} transactions stored; it goes on from there next time",
                state.fill_position.max(state.transactions),
                state
                    .fill_total
                    .map_or_else(|| "?".to_string(), |t| t.to_string())
            ),
            status: 1,
        }),
    }
}

pub async fn find(workspace: &Workspace, args: &FindArgs) -> Result<()> {
    let filter = args.filter();
    if args.counts {
        let counts: Counts = workspace
            .post("/api/v1/transactions/counts", &json!({ "filter": filter }))
            .await?;
        return print_counts(&counts, args);
    }
    let found: Found = workspace
        .post(
            "/api/v1/transactions/find",
            &json!({ "filter": filter, "limit": args.limit, "offset": args.offset }),
        )
        .await?;
    print_found(&found, args)
}

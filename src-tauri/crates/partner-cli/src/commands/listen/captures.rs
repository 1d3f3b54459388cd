//! `partner listen captures`: a page of captures, newest first, with the desktop inspector's
//! filters and search, answered by the store (`StoreReader::page`); a table, or one JSON object
//! a line with the fields of `partner listen --json`. Reads the store only; with a
//! team workspace in effect (`PARTNER_WORKSPACE`, or `partner workspace login`), the
//! workspace's captures instead (`commands::workspace`).

use super::printer::capture_json;
use crate::commands::store_args::{invalid, store_path, FilterArgs};
use crate::commands::workspace::Workspace;
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::{CapturePage, CaptureQuery, Grouping, HitCount, MAX_PAGE_LIMIT};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct CapturesArgs {
    /// The capture store to read (it changes nothing but, after a crash, writes in what the
    /// listener acknowledged). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Rows to list.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: u64,
    /// Rows to skip first (newest first).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,
    /// One row per notification (its newest matching attempt, with how many attempts match).
    #[arg(long)]
    pub grouped: bool,
    /// One JSON object per line (the fields of `partner listen --json`) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `partner listen captures`: a page of the store, read only; or of the team workspace, when
/// one is in effect (`--db` then has no say).
pub async fn run(args: CapturesArgs) -> Result<()> {
    if args.limit > MAX_PAGE_LIMIT {
        return Err(invalid(format!(
            "--limit {} is over the most one page lists ({MAX_PAGE_LIMIT}); page with --offset",
            args.limit
        )));
    }
    let query = CaptureQuery {
        filter: args.filter.filter()?,
        grouping: if args.grouped {
            Grouping::ByNotification
        } else {
            Grouping::EveryAttempt
        },
        offset: args.offset,
        limit: args.limit,
        count: HitCount::UpToCap,
    };
    let page: CapturePage = match Workspace::from_env()? {
        Some(workspace) => workspace.captures_page(&query, None).await?,
        None => crate::commands::store_args::open_reader(store_path(args.db)?)?.page(&query)?,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for row in &page.items {
            let mut object = capture_json(&row.capture);
            if args.grouped {
                object["groupAttempts"] = row.group_attempts.into();
            }
            writeln!(out, "{object}").map_err(CliError::Output)?;
        }
    } else {
        let dash = || "-".to_string();
        let rows: Vec<Vec<String>> = page
            .items
            .iter()
            .map(|row| {
                let c = &row.capture;
                let attempts = if args.grouped {
                    row.group_attempts.to_string()
                } else {
                    c.attempt.to_string()
                };
                vec![
                    c.id.to_string(),
                    c.received_at
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    c.verdict.as_str().to_string(),
                    c.fields.event_type.clone().unwrap_or_else(dash),
                    c.fields.resource_type.clone().unwrap_or_else(dash),
                    c.fields.event_id.clone().unwrap_or_else(dash),
                    c.response.status.to_string(),
                    attempts,
                ]
            })
            .collect();
        let attempt_header = if args.grouped { "attempts" } else { "attempt" };
        crate::commands::render::write_table(
            &mut out,
            &[
                "id",
                "received",
                "verdict",
                "event type",
                "resource type",
                "event id",
                "status",
                attempt_header,
            ],
            &rows,
        )?;
        let unit = if args.grouped {
            "notifications"
        } else {
            "captures"
        };
        let total = if page.total_capped {
            format!("{}+", page.total)
        } else {
            page.total.to_string()
        };
        let first = if page.items.is_empty() {
            0
        } else {
            args.offset + 1
        };
        writeln!(
            out,
            "{first}-{} of {total} {unit}, newest first",
            args.offset + page.items.len() as u64
        )
        .map_err(CliError::Output)?;
        if page.unsearched > 0 {
            writeln!(
                out,
                "still indexing for search: {} older captures not searched yet; run the search \
                 again once `partner listen` (or the app) has indexed them",
                page.unsearched
            )
            .map_err(CliError::Output)?;
        }
    }
    out.flush().map_err(CliError::Output)
}

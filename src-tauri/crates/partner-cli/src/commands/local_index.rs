//! `partner transactions sync|find|forget`: the connection's local index (`partner-index`),
//! the same code and the same file as the desktop app's.
//!
//! - The index of a connection is named by its base URL and client id (`partner_index::index_id`)
//!   and lives in the console's data folder; its key is in the OS keychain.
//! - `sync` on a production connection makes a local copy of lenders' and borrowers' data, so it
//!   refuses without `--yes` (before anything is sent or written). The environment is the saved
//!   connection's; a connection named only by URL and client id is judged the way the app judges
//!   one it adopts from the environment (loopback is a sandbox, anything else production).
//! - Ctrl-C or SIGTERM stops a sync between batches; what was stored stays and the next run
//!   resumes (exit status 130).
//! - `find` never sends a request: it answers from the file, and says "as of" when.

use super::connect::ConnectionArgs;
use super::render::{ListWriter, OutputFormat};
use crate::error::{CliError, Result};
use chrono::{DateTime, Utc};
use clap::Args as ClapArgs;
use partner_api::read::{self, Document};
use partner_client::KeyringStore;
use partner_index::{Counts, Filter, Found, Index, LoanField, SyncPhase};
use partner_local::Environment;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, Clone, ClapArgs)]
pub struct SyncArgs {
    /// Make the local copy even though the connection is a production one (it holds lenders'
    /// and borrowers' data).
    #[arg(long)]
    pub yes: bool,
    /// The sync's report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, ClapArgs)]
pub struct FindArgs {
    /// created, processing or completed.
    #[arg(long, value_parser = parse_status)]
    pub status: Option<String>,
    /// A product's id or name.
    #[arg(long)]
    pub product: Option<String>,
    #[arg(long)]
    pub request_type: Option<String>,
    /// processing, completed, failed, canceled or inputRequired.
    #[arg(long, value_parser = parse_status)]
    pub response_status: Option<String>,
    /// Created at or after: an RFC 3339 time, or a duration back from now (2h, 3days).
    #[arg(long, value_name = "TIME", value_parser = super::listen::missed::parse_instant)]
    pub created_since: Option<DateTime<Utc>>,
    /// Created before (same forms).
    #[arg(long, value_name = "TIME", value_parser = super::listen::missed::parse_instant)]
    pub created_before: Option<DateTime<Utc>>,
    /// Updated at or after (same forms).
    #[arg(long, value_name = "TIME", value_parser = super::listen::missed::parse_instant)]
    pub updated_since: Option<DateTime<Utc>>,
    /// Updated before (same forms).
    #[arg(long, value_name = "TIME", value_parser = super::listen::missed::parse_instant)]
    pub updated_before: Option<DateTime<Utc>>,
    /// The response's partnerStatus.
    #[arg(long)]
    pub partner_status: Option<String>,
    /// The response's referenceNumber.
    #[arg(long)]
    pub reference: Option<String>,
    /// Part of the requesting party's name.
    #[arg(long)]
    pub requesting_party: Option<String>,
    /// A field of the request's loan, e.g. `--loan loanNumber=LN-000123` (repeatable).
    #[arg(long, value_name = "FIELD=VALUE", value_parser = parse_loan_field)]
    pub loan: Vec<LoanField>,
    /// Words that must all appear in the request or the response.
    #[arg(long)]
    pub text: Option<String>,
    /// Transactions shown at most (newest first).
    #[arg(long, default_value_t = 50)]
    pub limit: u64,
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
    /// The transactions as a JSON array (the service's objects).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// The transactions as CSV, the shape of `list --output csv`.
    #[arg(long)]
    pub csv: bool,
    /// How many match per status and per product, instead of the transactions.
    #[arg(long)]
    pub counts: bool,
}

/// A status as the service writes it: the spec shows a few values, a service may send others,
/// and the index filters on whatever it kept.
fn parse_status(text: &str) -> std::result::Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("a status is not empty".into());
    }
    Ok(text.to_owned())
}

fn parse_loan_field(text: &str) -> std::result::Result<LoanField, String> {
    let (field, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not FIELD=VALUE"))?;
    Ok(LoanField {
        field: field.trim().to_string(),
        value: value.to_string(),
    })
}

/// The connection's index file and whether it is a production connection.
struct Target {
    data_dir: PathBuf,
    index_id: String,
    environment: Environment,
}

fn target(connection: &ConnectionArgs) -> Result<Target> {
    let resolved = connection.resolved()?;
    let base_url = partner_client::parse_base_url(&resolved.base_url)?;
    let client_id = resolved.client_id()?.to_string();
    Ok(Target {
        data_dir: partner_local::paths::data_dir()?,
        index_id: partner_index::index_id(&base_url, &client_id),
        environment: connection.environment()?,
    })
}

/// The index if a sync has made one (never creates a file).
fn existing(target: &Target, keychain: &KeyringStore) -> Result<Index> {
    let path = partner_index::index_path(&target.data_dir, &target.index_id)?;
    if !path.exists() {
        return Err(CliError::Usage(
            "this connection has no local copy yet: run `partner transactions sync` first".into(),
        ));
    }
    Ok(Index::open(&target.data_dir, &target.index_id, keychain)?)
}

pub async fn sync(connection: &ConnectionArgs, args: &SyncArgs) -> Result<()> {
    let target = target(connection)?;
    if target.environment == Environment::Production && !args.yes {
        return Err(CliError::Usage(
            "this is a production connection: a sync makes a local copy of lenders' and borrowers' data on this machine (encrypted, its key in the keychain). Run again with --yes to make it".into(),
        ));
    }
    let client = connection.client()?;
    let keychain = KeyringStore::default();
    // A new copy's key goes to the keychain: a store that lost it would leave an encrypted
    // copy nobody can open.
    super::keychain::ready(&keychain, "the local copy's keys")?;
    let index = Index::open(&target.data_dir, &target.index_id, &keychain)?;
    let on_stop = super::signal::cancel_on_stop()?;
    let cancel = on_stop.token.clone();
    let terminal = std::io::stderr().is_terminal();
    let mut last_line = std::time::Instant::now();
    let mut noted: Option<String> = None;
    let waits = super::listing::tell_waits(&client);
    let report = partner_index::sync(
        &client,
        &index,
        |progress| {
            // A fallback (the service refused a sort the sync walks by) is said once, plainly.
            if progress.note.is_some() && progress.note != noted {
                noted = progress.note.clone();
                if let Some(note) = &noted {
                    eprintln!("{}{note}", if terminal { "\r\x1b[2K" } else { "" });
                }
            }
            let due = last_line.elapsed() >= std::time::Duration::from_millis(250)
                || progress.total == Some(progress.done);
            if !due {
                return;
            }
            last_line = std::time::Instant::now();
            let what = match progress.phase {
                SyncPhase::Products => "products",
                SyncPhase::Fill => "transactions",
                SyncPhase::Refresh => "changed transactions",
            };
            let line = match progress.total {
                Some(total) => format!("{what}: {} of {total}", progress.done),
                None => format!("{what}: {}", progress.done),
            };
            if terminal {
                eprint!("\r\x1b[2K{line}");
            } else {
                eprintln!("{line}");
            }
        },
        &cancel,
    )
    .await;
    drop(on_stop);
    waits.abort();
    if terminal {
        eprint!("\r\x1b[2K");
    }
    let report = report?;
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
        writeln!(out).map_err(CliError::Output)?;
    }
    let state = &report.state;
    match report.end {
        partner_index::SyncEnd::Complete => {
            eprintln!(
                "{} transactions and {} products in the local copy, as of {}; {} stored now, {} changed since the last sync",
                state.transactions,
                state.products,
                state.as_of.map(|t| t.to_rfc3339()).unwrap_or_default(),
                report.filled,
                report.changes.len()
            );
            Ok(())
        }
        partner_index::SyncEnd::Cancelled => {
            eprintln!(
                "stopped: {} of {} transactions stored; run `partner transactions sync` again to go on from there",
                state.fill_position.max(state.transactions),
                state
                    .fill_total
                    .map_or_else(|| "?".to_string(), |t| t.to_string())
            );
            Err(CliError::Cancelled)
        }
    }
}

pub fn find(connection: &ConnectionArgs, args: &FindArgs) -> Result<()> {
    let target = target(connection)?;
    let index = existing(&target, &KeyringStore::default())?;
    let filter = args.filter();
    if args.counts {
        return print_counts(&index.counts(&filter)?, args);
    }
    print_found(&index.find(&filter, args.limit, args.offset)?, args)
}

impl FindArgs {
    /// The question these arguments ask.
    pub fn filter(&self) -> Filter {
        Filter {
            status: self.status.clone(),
            product: self.product.clone(),
            request_type: self.request_type.clone(),
            response_status: self.response_status.clone(),
            created_since: self.created_since,
            created_before: self.created_before,
            updated_since: self.updated_since,
            updated_before: self.updated_before,
            partner_status: self.partner_status.clone(),
            reference_number: self.reference.clone(),
            requesting_party: self.requesting_party.clone(),
            loan: self.loan.clone(),
            text: self.text.clone(),
        }
    }
}

fn as_of(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(
        || "never completed a sync".to_string(),
        |t| format!("as of {}", t.to_rfc3339()),
    )
}

/// `find --counts`'s output, whichever index answered (this machine's or a workspace's).
pub fn print_counts(counts: &Counts, args: &FindArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, counts)
            .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
        writeln!(out).map_err(CliError::Output)?;
    } else {
        for (status, n) in &counts.by_status {
            writeln!(out, "status\t{status}\t{n}").map_err(CliError::Output)?;
        }
        for (id, name, n) in &counts.by_product {
            writeln!(out, "product\t{name} ({id})\t{n}").map_err(CliError::Output)?;
        }
    }
    eprintln!("{} match, {}", counts.total, as_of(counts.as_of));
    Ok(())
}

/// `find`'s output, whichever index answered: a table, or the service's objects as a JSON
/// array or as CSV (the shape of `list --output csv`).
pub fn print_found(found: &Found, args: &FindArgs) -> Result<()> {
    if args.json || args.csv {
        let rows = found
            .items
            .iter()
            .map(serde_json::to_value)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        if args.csv {
            out =
                partner_client::listing_export::write_csv(out, &rows).map_err(CliError::Output)?;
        } else {
            serde_json::to_writer_pretty(&mut out, &rows)
                .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
            writeln!(out).map_err(CliError::Output)?;
        }
        out.flush().map_err(CliError::Output)?;
    } else {
        let mut writer = ListWriter::<Document<read::TransactionView>>::new(OutputFormat::Table)?;
        for item in &found.items {
            writer.item(item)?;
        }
        writer.finish()?;
    }
    eprintln!(
        "{} of {}{} matching (from {}), {}",
        found.items.len(),
        found.total,
        if found.total_capped { "+" } else { "" },
        found.offset,
        as_of(found.as_of)
    );
    Ok(())
}

pub fn forget(connection: &ConnectionArgs) -> Result<()> {
    let target = target(connection)?;
    partner_index::forget(&target.data_dir, &target.index_id, &KeyringStore::default())?;
    eprintln!("the local copy of this connection's transactions and its key are gone");
    Ok(())
}

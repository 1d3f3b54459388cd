//! `partner listen import`: adds the captures of a JSON Lines export to a store (created if
//! missing), as its writer (refused while a listener holds it), and returns once the search
//! index covers what it imported (`Store::wait_until_searchable`), so the next search is
//! answered from the index.
//!
//! With a team workspace in effect, the captures go to the workspace instead
//! (`POST /api/v1/captures/import`, developer and up, in the team's audit log): the file is read
//! here a line at a time and sent in parts ([`PART_CAPTURES`] captures or [`PART_BYTES`] of lines,
//! whichever comes first), so a file of any size takes two parts' memory. The workspace gives
//! them ids of its own and skips those it holds already (see `partner_server::import`). As
//! locally, a line that is not a capture stops the import naming it, and what was sent before
//! it stays imported; `--db` names this machine's store and is refused there.

use crate::commands::store_args::{invalid, open_writer, store_path};
use crate::commands::workspace::Workspace;
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::export::import_jsonl;
use partner_listener::{Capture, ImportReport};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct ImportArgs {
    /// The capture store to add to (created if missing). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// A JSON Lines export.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
}

/// What `import` calls itself in a store's lock file (a refused second writer names it).
const HOLDER_IMPORT: &str = "partner listen import";

/// The most captures one part sent to a workspace holds.
const PART_CAPTURES: usize = 200;
/// The most bytes of lines one part sent to a workspace holds (its server takes 64 MB a call).
const PART_BYTES: usize = 16 << 20;

pub async fn run(args: ImportArgs) -> Result<()> {
    let file = std::fs::File::open(&args.from)
        .map_err(|e| invalid(format!("could not open {}: {e}", args.from.display())))?;
    if let Some(workspace) = Workspace::from_env()? {
        if args.db.is_some() {
            return Err(CliError::Usage(
                "--db does not apply to a team workspace: the captures go to the workspace's \
                 (unset PARTNER_WORKSPACE, or `partner workspace logout`, to import into this \
                 machine's store)"
                    .into(),
            ));
        }
        return import_into_workspace(&workspace, std::io::BufReader::new(file)).await;
    }
    let store = open_writer(&store_path(args.db)?, HOLDER_IMPORT)?;
    let stop = crate::commands::signal::stop_signal()?;
    let report = import_jsonl(&store, std::io::BufReader::new(file)).await?;
    eprintln!(
        "partner: imported {} captures, skipped {} already present",
        report.imported, report.skipped
    );
    // The store this leaves answers searches from its index at once: an import indexes what
    // it brings as it goes, and when the indexer was far behind (a store being re-indexed
    // after a migration) this waits for it to reach the last capture.
    let started = std::time::Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut first: Option<u64> = None;
    let searchable = store
        .wait_until_searchable(
            |left| {
                let total = *first.get_or_insert(left);
                if terminal && left > 0 {
                    eprint!(
                        "\rpartner: indexing for search: {} of {total}   ",
                        total - left
                    );
                }
            },
            stop,
        )
        .await?;
    if terminal && first.unwrap_or(0) > 0 {
        eprintln!();
    }
    if !searchable {
        eprintln!("partner: stopped while indexing for search; the next `partner listen` (or the app) finishes it, and until then a search looks at the newest captures not indexed and says how many older ones it left out");
        return Err(CliError::Cancelled);
    }
    if first.unwrap_or(0) == 0 {
        eprintln!("partner: indexed for search as it was imported");
    } else {
        eprintln!(
            "partner: indexed for search in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The file's captures sent to the workspace in parts (see the module's notes).
async fn import_into_workspace(workspace: &Workspace, input: impl BufRead) -> Result<()> {
    let stop = crate::commands::signal::cancel_on_stop()?;
    let terminal = std::io::stderr().is_terminal();
    let mut report = ImportReport {
        imported: 0,
        skipped: 0,
        cancelled: false,
    };
    let mut part: Vec<Capture> = Vec::with_capacity(PART_CAPTURES);
    let mut part_bytes = 0;
    let mut failure = None;
    let mut lines = partner_listener::export::jsonl_captures(input);
    loop {
        let mut ended = false;
        while part.len() < PART_CAPTURES && part_bytes < PART_BYTES {
            match lines.next() {
                None => {
                    ended = true;
                    break;
                }
                Some(Ok(line)) => {
                    part_bytes += line.bytes;
                    part.push(line.capture);
                }
                Some(Err(error)) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        if !part.is_empty() {
            let sent = tokio::select! {
                sent = workspace.captures_import(&part) => sent?,
                () = stop.token.cancelled() => {
                    report.cancelled = true;
                    break;
                }
            };
            report.imported += sent.imported;
            report.skipped += sent.skipped;
            part.clear();
            part_bytes = 0;
            if terminal {
                eprint!(
                    "\rpartner: sent {} captures to the workspace   ",
                    report.imported + report.skipped
                );
            }
        }
        if failure.is_some() || ended {
            break;
        }
    }
    if terminal {
        eprint!("\r\x1b[2K");
    }
    eprintln!(
        "partner: imported {} captures into the workspace {}, skipped {} already there",
        report.imported,
        workspace.describe(),
        report.skipped
    );
    if let Some(failure) = failure {
        return Err(failure.into());
    }
    if report.cancelled {
        eprintln!("partner: stopped; the parts sent before stay imported");
        return Err(CliError::Cancelled);
    }
    Ok(())
}

//! `partner listen import`: adds the captures of a JSON Lines export to a store (created if
//! missing), as its writer (refused while a listener holds it), and returns once the search
//! index covers what it imported (`Store::wait_until_searchable`), so the next search is
//! answered from the index.

use crate::commands::store_args::{invalid, open_writer, store_path};
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::export::import_jsonl;
use std::io::IsTerminal;
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

pub async fn run(args: ImportArgs) -> Result<()> {
    let file = std::fs::File::open(&args.from)
        .map_err(|e| invalid(format!("could not open {}: {e}", args.from.display())))?;
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

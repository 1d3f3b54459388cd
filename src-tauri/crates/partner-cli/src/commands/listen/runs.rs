//! `partner listen runs`: the listener's runs on a store (when each started and stopped), one
//! JSON object a line, oldest first. Reads the store only (it is encrypted at rest, so other
//! tools cannot).

use crate::commands::store_args::{invalid, store_path};
use crate::error::Result;
use clap::Args as ClapArgs;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct RunsArgs {
    /// The capture store to read. Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

/// `partner listen runs`: the store's listener runs, one JSON object a line.
pub fn run(args: RunsArgs) -> Result<()> {
    let store = crate::commands::store_args::open_reader(store_path(args.db)?)?;
    for run in store.listener_runs()? {
        let line = serde_json::to_string(&run).map_err(|e| invalid(e.to_string()))?;
        crate::commands::render::print_line(format_args!("{line}"))?;
    }
    Ok(())
}

//! `partner listen clear`: deletes captures (all, or those the filters select). Without
//! `--yes` it only counts them, reading the store (so it works beside a running listener);
//! with it, it deletes as the store's writer.

use crate::commands::store_args::{open_writer, store_path, FilterArgs};
use crate::commands::workspace::Workspace;
use crate::error::Result;
use clap::Args as ClapArgs;
use partner_listener::{CaptureFilter, CapturePage, CaptureQuery, Grouping, HitCount};
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct ClearArgs {
    /// The capture store to clear. Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Delete them. Without it, only say how many would be deleted.
    #[arg(long)]
    pub yes: bool,
}

/// What `clear --yes` calls itself in a store's lock file (a refused second writer names it).
const HOLDER_CLEAR: &str = "partner listen clear";

/// Counts first, read only (so a dry run works beside a running listener); deletes only with
/// `--yes`, through the store's writer (so it needs the writer lock).
pub async fn run(args: ClearArgs) -> Result<()> {
    let filter = args.filter.filter()?;
    if let Some(workspace) = Workspace::from_env()? {
        return clear_workspace(&workspace, &args, filter).await;
    }
    let db = store_path(args.db)?;
    let which = args.filter.describe();
    if !args.yes {
        let count = crate::commands::store_args::open_reader(db.clone())?.count(&filter)?;
        return crate::commands::render::print_line(format_args!(
            "would delete {count} {which} from {}; run again with --yes to delete them",
            db.display()
        ));
    }
    if !db.exists() {
        return Err(partner_listener::Error::NoStore(db).into());
    }
    let store = open_writer(&db, HOLDER_CLEAR)?;
    let deleted = store.clear(&filter).await?;
    crate::commands::render::print_line(format_args!(
        "deleted {deleted} {which} from {}",
        db.display()
    ))
}

/// The same on the team workspace (`PARTNER_WORKSPACE`, or the saved login): counted as a
/// read, deleted by the workspace as the member (a role that may not clear is refused there,
/// named, and audited).
async fn clear_workspace(
    workspace: &Workspace,
    args: &ClearArgs,
    filter: CaptureFilter,
) -> Result<()> {
    let which = args.filter.describe();
    if !args.yes {
        let query = CaptureQuery {
            filter,
            grouping: Grouping::EveryAttempt,
            offset: 0,
            limit: 0,
            count: HitCount::UpToCap,
        };
        let page: CapturePage = workspace.captures_page(&query, None).await?;
        let count = if page.total_capped {
            format!("{}+", page.total)
        } else {
            page.total.to_string()
        };
        return crate::commands::render::print_line(format_args!(
            "would delete {count} {which} from the workspace {}; run again with --yes to delete them",
            workspace.describe()
        ));
    }
    let cleared = workspace.captures_clear(&filter).await?;
    crate::commands::render::print_line(format_args!(
        "deleted {cleared} {which} from the workspace {}",
        workspace.describe()
    ))
}

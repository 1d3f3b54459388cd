//! `partner link`: the `partner-console://` link the desktop app opens (and its "Copy link"
//! makes) for a transaction, one of its events, or a product, on a saved connection. The shape
//! is `partner_local::links`'s, so the app reads what this prints.

use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_local::links::Link;
use partner_local::settings::EMBEDDED_CONNECTION_ID;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The desktop app's embedded sandbox instead of a saved connection.
    #[arg(long)]
    pub embedded: bool,
    #[command(subcommand)]
    pub target: Target,
}

#[derive(Debug, Subcommand)]
pub enum Target {
    /// A transaction, or one of its events with --event.
    Transaction {
        id: String,
        #[arg(long, value_name = "EVENT_ID")]
        event: Option<String>,
    },
    /// A product.
    Product { id: String },
}

pub fn run(args: Args) -> Result<()> {
    let connection = if args.embedded {
        EMBEDDED_CONNECTION_ID.to_string()
    } else {
        let name = super::connect::named_connection().ok_or_else(|| {
            CliError::Usage(
                "a link opens a connection the desktop app has: name it with --connection NAME (see `partner connections`), or use --embedded".into(),
            )
        })?;
        super::connections::named(name)?.id
    };
    let link = match &args.target {
        Target::Transaction { id, event } => Link::transaction(&connection, id, event.as_deref()),
        Target::Product { id } => Link::product(&connection, id),
    };
    super::render::print_line(link.to_url())
}

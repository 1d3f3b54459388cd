//! `partner transactions list|get|events`, and `sync|find|forget` over the local index
//! (see `local_index`).

use super::connect::ConnectionArgs;
use super::listing::{run_list, ListArgs};
use super::render::{print_one, ListWriter, OutputFormat};
use crate::error::Result;
use clap::{Args as ClapArgs, Subcommand};
use partner_api::read::{self, Document};

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(subcommand)]
    pub command: TransactionsCommand,
}

#[derive(Debug, Subcommand)]
pub enum TransactionsCommand {
    /// List transactions (the sandbox sorts by id, status, created, updated, requestType; another
    /// service by the keys it takes, which --sort sends as given).
    List(ListArgs),
    /// Show one transaction.
    Get {
        id: String,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// List a transaction's events, or show one with EVENT_ID.
    Events {
        id: String,
        event_id: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Copy the connection's transactions and products to an encrypted local index (resumable;
    /// later runs fetch only what changed). Asks --yes on a production connection.
    Sync(super::local_index::SyncArgs),
    /// Answer from the local index, newest first, without asking the service.
    Find(Box<super::local_index::FindArgs>),
    /// Delete the connection's local index and its key.
    Forget,
}

pub async fn run(args: Args) -> Result<()> {
    match &args.command {
        TransactionsCommand::Sync(sync) => {
            return super::local_index::sync(&args.connection, sync).await
        }
        TransactionsCommand::Find(find) => return super::local_index::find(&args.connection, find),
        TransactionsCommand::Forget => return super::local_index::forget(&args.connection),
        _ => {}
    }
    let client = args.connection.client()?;
    match args.command {
        TransactionsCommand::Sync(_)
        | TransactionsCommand::Find(_)
        | TransactionsCommand::Forget => Ok(()),
        TransactionsCommand::List(list) => run_list::<read::Transaction>(&client, &list).await,
        TransactionsCommand::Get { id, output } => {
            print_one(output, &client.get_transaction(&id).await?)
        }
        TransactionsCommand::Events {
            id,
            event_id: Some(event_id),
            output,
        } => print_one(output, &client.get_event(&id, &event_id).await?),
        TransactionsCommand::Events {
            id,
            event_id: None,
            output,
        } => {
            let events = client.list_events(&id).await?;
            let mut writer = ListWriter::<Document<read::TransactionEvent>>::new(output)?;
            for event in &events {
                writer.item(event)?;
            }
            writer.finish()?;
            Ok(())
        }
    }
}

//! `partner transactions list|get|events`.

use super::connect::ConnectionArgs;
use super::listing::{run_list, ListArgs};
use super::render::{print_one, ListWriter, OutputFormat};
use crate::error::Result;
use clap::{Args as ClapArgs, Subcommand};
use partner_api::{Transaction, TransactionEvent};

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(subcommand)]
    pub command: TransactionsCommand,
}

#[derive(Debug, Subcommand)]
pub enum TransactionsCommand {
    /// List transactions (sortable by id, status, created, updated, requestType).
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
}

pub async fn run(args: Args) -> Result<()> {
    let client = args.connection.client()?;
    match args.command {
        TransactionsCommand::List(list) => run_list::<Transaction>(&client, &list).await,
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
            let mut writer = ListWriter::<TransactionEvent>::new(output)?;
            for event in &events {
                writer.item(event)?;
            }
            writer.finish()?;
            Ok(())
        }
    }
}

//! `partner transactions list|get|events|respond`, and `sync|find|forget` over the local index
//! (see `local_index`); with a team workspace set, `sync`, `find` and `respond` go through it
//! (`workspace_index`, and the server's respond call).
//!
//! `respond` sends a response the user wrote as JSON, checked first by
//! `TransactionResponse::from_json` (nothing the user wrote is dropped on the way). A final
//! status locks the transaction for good, so it is never sent without a yes: asked on a
//! terminal, else `--yes`; on a production connection the user types (or gives `--confirm`)
//! the transaction's id, so a command copied from a sandbox session cannot lock a real one.

use super::connect::ConnectionArgs;
use super::listing::{run_list, ListArgs};
use super::render::{print_one, ListWriter, OutputFormat};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::read::{self, Document};
use partner_api::{ResponseStatus, TransactionResponse};
use partner_local::Environment;
use std::io::{IsTerminal, Read, Write};

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
    /// Answer a transaction as the partner with a response written as JSON (FILE, or - for
    /// standard input): status, partnerStatus, referenceNumber, respondingParty, loan,
    /// resources, errors. A final status (completed, failed, canceled) locks the transaction:
    /// it asks first (or takes --yes); on a production connection, --confirm with its id.
    /// With PARTNER_WORKSPACE set, sent through the team's servers (support and up; a final
    /// status then always takes --confirm).
    Respond {
        id: String,
        /// The response as JSON; - reads standard input.
        #[arg(long, value_name = "FILE")]
        file: std::path::PathBuf,
        /// Send a final status without asking (sandbox connections).
        #[arg(long)]
        yes: bool,
        /// The transaction's id again, to send a final status on a production connection.
        #[arg(long, value_name = "TRANSACTION_ID")]
        confirm: Option<String>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Copy the connection's transactions and products to an encrypted local index (resumable;
    /// later runs fetch only what changed). Asks --yes on a production connection. With
    /// PARTNER_WORKSPACE set, asks the team's servers to sync the team's index instead.
    Sync(super::local_index::SyncArgs),
    /// Answer from the local index, newest first, without asking the service (with
    /// PARTNER_WORKSPACE set, from the team's index).
    Find(Box<super::local_index::FindArgs>),
    /// Delete the connection's local index and its key.
    Forget,
}

pub async fn run(args: Args) -> Result<()> {
    // With a workspace, the team's index answers (its servers hold the service connection).
    if let Some(workspace) = super::workspace::Workspace::from_env()? {
        match &args.command {
            TransactionsCommand::Sync(sync) => {
                return super::workspace_index::sync(&workspace, sync).await
            }
            TransactionsCommand::Find(find) => {
                return super::workspace_index::find(&workspace, find).await
            }
            TransactionsCommand::Respond {
                id,
                file,
                yes,
                confirm,
                output,
            } => {
                // Which environment the workspace's connection is, this machine cannot tell:
                // a final status is asked for as on a production connection (--confirm ID).
                let response = read_response(file)?;
                let ask = Ask {
                    yes: *yes,
                    confirm: confirm.as_deref(),
                    terminal: file.as_os_str() != "-" && std::io::stdin().is_terminal(),
                };
                ask.final_status(id, response.status, Environment::Production)?;
                let path = format!(
                    "/api/v1/transactions/{}/respond",
                    url::form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>()
                );
                let answered: Document<read::TransactionView> =
                    workspace.post(&path, &response).await?;
                return print_one(*output, &answered);
            }
            _ => {}
        }
    }
    match &args.command {
        TransactionsCommand::Sync(sync) => {
            return super::local_index::sync(&args.connection, sync).await
        }
        TransactionsCommand::Find(find) => return super::local_index::find(&args.connection, find),
        TransactionsCommand::Forget => return super::local_index::forget(&args.connection),
        _ => {}
    }
    if let TransactionsCommand::Respond {
        id,
        file,
        yes,
        confirm,
        output,
    } = &args.command
    {
        let response = read_response(file)?;
        let ask = Ask {
            yes: *yes,
            confirm: confirm.as_deref(),
            terminal: file.as_os_str() != "-" && std::io::stdin().is_terminal(),
        };
        ask.final_status(id, response.status, args.connection.environment()?)?;
        let client = args.connection.client()?;
        return print_one(
            *output,
            &client.respond_to_transaction(id, &response).await?,
        );
    }
    let client = args.connection.client()?;
    match args.command {
        TransactionsCommand::Sync(_)
        | TransactionsCommand::Find(_)
        | TransactionsCommand::Forget
        | TransactionsCommand::Respond { .. } => Ok(()),
        TransactionsCommand::List(list) => run_list::<read::TransactionView>(&client, &list).await,
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
            let mut writer = ListWriter::<Document<read::EventView>>::new(output)?;
            for event in &events {
                writer.item(event)?;
            }
            writer.finish()?;
            Ok(())
        }
    }
}

/// The response in FILE (or standard input for `-`), checked before anything is sent.
fn read_response(file: &std::path::Path) -> Result<TransactionResponse> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| {
            CliError::Usage(format!(
                "could not read the response from standard input ({e})"
            ))
        })?;
        text
    } else {
        std::fs::read_to_string(file).map_err(|e| {
            CliError::Usage(format!(
                "could not read the response from {} ({e})",
                file.display()
            ))
        })?
    };
    TransactionResponse::from_json(&text)
        .map_err(|why| CliError::Usage(format!("the response was not sent: {why}")))
}

/// How the user said yes to a final status.
struct Ask<'a> {
    yes: bool,
    confirm: Option<&'a str>,
    /// A person at a terminal can be asked (standard input is not the response).
    terminal: bool,
}

impl Ask<'_> {
    /// Ok when `status` is not final, or the user said yes to it in the way `environment`
    /// asks for; otherwise nothing is sent and the error says how to send it.
    fn final_status(
        &self,
        id: &str,
        status: ResponseStatus,
        environment: Environment,
    ) -> Result<()> {
        if !status.is_final() {
            return Ok(());
        }
        let locks = format!(
            "`{status}` is final: it locks transaction {id}'s request and response for good"
        );
        if let Some(confirm) = self.confirm {
            if confirm.trim() == id {
                return Ok(());
            }
            return Err(CliError::Usage(format!(
                "{locks}; --confirm names {confirm:?}, not this transaction, so nothing was sent"
            )));
        }
        let production = environment == Environment::Production;
        if self.yes && !production {
            return Ok(());
        }
        if !self.terminal {
            return Err(CliError::Usage(if production {
                format!("{locks}. This is a production connection: run again with --confirm {id} to send it")
            } else {
                format!("{locks}. Run again with --yes to send it")
            }));
        }
        let question = if production {
            format!(
                "{locks}.\nThis is a production connection. Type the transaction's id to send it: "
            )
        } else {
            format!("{locks}.\nSend it? [y/N] ")
        };
        let answer = ask(&question)?;
        let agreed = if production {
            answer.trim() == id
        } else {
            matches!(answer.trim(), "y" | "Y" | "yes")
        };
        if agreed {
            Ok(())
        } else {
            Err(CliError::Usage("nothing was sent".into()))
        }
    }
}

/// Asks on standard error and reads one line of standard input.
fn ask(question: &str) -> Result<String> {
    let mut err = std::io::stderr();
    err.write_all(question.as_bytes())
        .and_then(|()| err.flush())
        .map_err(CliError::Output)?;
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(CliError::Output)?;
    Ok(answer)
}

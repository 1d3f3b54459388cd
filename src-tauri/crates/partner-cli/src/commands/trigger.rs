//! `partner trigger`: plays the lender against a sandbox, as `stripe trigger` plays Stripe's
//! side: starts a transaction, updates one, or adds an event, through the sandbox's own lender
//! endpoints (`/sandbox/v1/…`), and prints what was created and the notifications it queued.
//! It also makes the sandbox misbehave on demand (`fault`, `faults`, `clear-faults`,
//! `revoke-tokens`), for a partner's own tests of their client's waits and retries.
//!
//! The notifications are those the sandbox recorded between a look at its deliveries before
//! the change and one after it (the lender endpoints answer once the change and its delivery
//! records are durable), so another client changing the same sandbox at the same moment can
//! add its own to the list. The admin token, where the sandbox has one, comes from
//! `PARTNER_SANDBOX_ADMIN_TOKEN`, never from the command line.

use super::connect::ConnectionArgs;
use super::render::OutputFormat;
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::{DeliveryRecord, NewEvent, NewTransaction, Secret, TransactionUpdate};
use partner_client::{ClientError, SandboxControl};
use partner_sandbox::faults::FaultEndpoint;
use serde::Serialize;
use std::collections::HashSet;

/// The variable that may hold the sandbox's admin token.
pub const ADMIN_TOKEN_ENV: &str = "PARTNER_SANDBOX_ADMIN_TOKEN";

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    what: Trigger,
    #[command(flatten)]
    connection: ConnectionArgs,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table, global = true)]
    output: OutputFormat,
}

#[derive(Debug, Subcommand)]
enum Trigger {
    /// The lender starts a transaction on a product (fires the transaction's `created` and its
    /// request event's `created`).
    TransactionCreated {
        /// The product's id.
        #[arg(long)]
        product: String,
        /// The loan, as a JSON object.
        #[arg(long, value_name = "JSON", value_parser = parse_object)]
        loan: Option<serde_json::Value>,
        #[arg(long, default_value = "NEW_REQUEST")]
        request_type: String,
    },
    /// The lender updates a transaction's request (fires `updated` and an event's `created`).
    TransactionUpdated {
        /// The transaction's id.
        #[arg(long)]
        transaction: String,
        /// The new loan, as a JSON object.
        #[arg(long, value_name = "JSON", value_parser = parse_object)]
        loan: Option<serde_json::Value>,
    },
    /// A fault on demand: the next N calls (--count) to an endpoint, or a share of them
    /// (--share), answered with a status, slowed, or dropped, until used up or cleared.
    Fault(FaultArgs),
    /// The faults in force, each with how many calls it has faulted.
    Faults,
    /// End every fault.
    ClearFaults,
    /// Revoke every token of every client now: each client's next call is refused once.
    RevokeTokens,
    /// The lender adds a custom event to a transaction (fires the event's `created`).
    Event {
        #[arg(long)]
        transaction: String,
        /// A URN of the lender's own, e.g. `urn:acme:note`.
        #[arg(long = "type", value_name = "URN")]
        event_type: String,
        #[arg(long)]
        text: String,
    },
}

#[derive(Debug, ClapArgs)]
struct FaultArgs {
    /// Which calls: any, token, introspection, revocation, products, transactions (events and
    /// responses included).
    #[arg(long, default_value = "any", value_parser = FaultEndpoint::from_name)]
    endpoint: FaultEndpoint,
    /// Answer with this status (400-599) and the service's error body.
    #[arg(long)]
    status: Option<u16>,
    /// With --status: the Retry-After to send, in seconds (clients heed it on a 429 or 503).
    #[arg(long, value_name = "SECONDS")]
    retry_after: Option<u64>,
    /// Wait this long first (e.g. 800ms, 5s; at most 60s).
    #[arg(long, value_parser = humantime::parse_duration)]
    latency: Option<std::time::Duration>,
    /// Close the connection without an answer.
    #[arg(long, conflicts_with = "status")]
    drop: bool,
    /// How many calls to fault, then the fault is gone.
    #[arg(long, default_value_t = 1)]
    count: u32,
    /// Fault only this share of the matching calls (0 < share ≤ 1), until --count have been.
    #[arg(long)]
    share: Option<f64>,
}

impl FaultArgs {
    /// The sandbox's `NewFault`.
    fn body(&self) -> serde_json::Value {
        let mut body = serde_json::json!({ "endpoint": self.endpoint.name(), "drop": self.drop });
        let fields = [
            ("status", self.status.map(serde_json::Value::from)),
            (
                "retryAfterSeconds",
                self.retry_after.map(serde_json::Value::from),
            ),
            (
                "latencyMs",
                self.latency.map(|d| {
                    serde_json::Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                }),
            ),
            ("count", Some(serde_json::Value::from(self.count))),
            ("share", self.share.map(serde_json::Value::from)),
        ];
        for (name, value) in fields {
            if let Some(value) = value {
                body[name] = value;
            }
        }
        body
    }
}

/// A fault as the sandbox answered it, in one line (`Fault::describe`).
fn fault_line(fault: &serde_json::Value) -> String {
    match serde_json::from_value::<partner_sandbox::faults::Fault>(fault.clone()) {
        Ok(read) => format!("fault {}: {}", read.id, read.describe()),
        Err(_) => fault.to_string(),
    }
}

/// The fault subcommands: what the sandbox answered, as lines or as its JSON.
async fn fault_control(
    control: &SandboxControl,
    what: &Trigger,
    format: OutputFormat,
) -> Result<Option<()>> {
    let answer = match what {
        Trigger::Fault(args) => control.add_fault(&args.body()).await,
        Trigger::Faults => control.faults().await,
        Trigger::ClearFaults => control.clear_faults().await,
        Trigger::RevokeTokens => control.revoke_all_tokens().await,
        _ => return Ok(None),
    }
    .map_err(worded)?;
    let text = match (what, &answer) {
        (_, answer) if matches!(format, OutputFormat::Json) => {
            serde_json::to_string_pretty(answer).unwrap_or_default()
        }
        (Trigger::Fault(_), fault) => {
            format!("{} (in force from the next call)", fault_line(fault))
        }
        (Trigger::Faults, serde_json::Value::Array(faults)) if faults.is_empty() => {
            "no faults in force".to_string()
        }
        (Trigger::Faults, serde_json::Value::Array(faults)) => {
            faults.iter().map(fault_line).collect::<Vec<_>>().join("\n")
        }
        (Trigger::ClearFaults, cleared) => format!("{} fault(s) ended", cleared["cleared"]),
        (_, revoked) => format!("{} live token(s) revoked", revoked["cleared"]),
    };
    super::render::print_line(text)?;
    Ok(Some(()))
}

fn parse_object(raw: &str) -> std::result::Result<serde_json::Value, String> {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => {
            Err("give a JSON object, e.g. '{\"loanNumber\":\"L-1\",\"amount\":325000}'".into())
        }
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

/// What a trigger did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Triggered {
    /// What the lender created or changed: a transaction or an event, as the sandbox answered.
    created: serde_json::Value,
    /// The notifications the change queued.
    notifications: Vec<DeliveryRecord>,
}

/// The sandbox's own endpoints at `base_url` (`partner_client::SandboxControl`), with its admin
/// token from `PARTNER_SANDBOX_ADMIN_TOKEN` when set; `partner listen export
/// --deliveries-from` reads its delivery records through it too.
pub(crate) fn sandbox_control(base_url: &str) -> Result<SandboxControl> {
    Ok(SandboxControl::new(
        base_url,
        admin_token().map(Secret::new),
    )?)
}

/// `PARTNER_SANDBOX_ADMIN_TOKEN`, when set and not empty.
pub(crate) fn admin_token() -> Option<String> {
    std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty())
}

/// A 404 for the path itself (not for an id) says the service is no sandbox of ours.
fn worded(error: ClientError) -> CliError {
    CliError::Client(match error {
        ClientError::NotFound { message } if message.contains("Not Found") => {
            ClientError::NotFound {
                message: format!(
                    "{message} (is this a sandbox? `partner trigger` plays the lender of `partner sandbox` only)"
                ),
            }
        }
        other => other,
    })
}

pub async fn run(args: Args) -> Result<()> {
    let connection = args.connection.resolved()?;
    let control = sandbox_control(&connection.base_url)?;
    if fault_control(&control, &args.what, args.output)
        .await?
        .is_some()
    {
        return Ok(());
    }
    let before: HashSet<String> = control
        .deliveries(None)
        .await
        .map_err(worded)?
        .into_iter()
        .map(|d| d.id)
        .collect();
    let created = match args.what {
        Trigger::TransactionCreated {
            product,
            loan,
            request_type,
        } => {
            let body = NewTransaction {
                product_id: product,
                request_type,
                loan,
                options: None,
            };
            control.create_transaction(&body).await.map_err(worded)?
        }
        Trigger::TransactionUpdated { transaction, loan } => {
            let body = TransactionUpdate {
                loan: Some(loan.unwrap_or_else(
                    || serde_json::json!({ "note": "updated by partner trigger" }),
                )),
                options: None,
            };
            control
                .update_transaction(&transaction, &body)
                .await
                .map_err(worded)?
        }
        Trigger::Event {
            transaction,
            event_type,
            text,
        } => {
            let body = NewEvent {
                event_type,
                text,
                comments: None,
            };
            control
                .add_event(&transaction, &body)
                .await
                .map_err(worded)?
        }
        Trigger::Fault(_) | Trigger::Faults | Trigger::ClearFaults | Trigger::RevokeTokens => {
            return Ok(())
        }
    };
    let notifications: Vec<DeliveryRecord> = control
        .deliveries(None)
        .await
        .map_err(worded)?
        .into_iter()
        .filter(|d| !before.contains(&d.id))
        .collect();
    print(
        args.output,
        &Triggered {
            created,
            notifications,
        },
    )
}

fn print(format: OutputFormat, triggered: &Triggered) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut out, triggered)
                .map_err(|e| CliError::Output(e.into()))?;
            writeln!(out).map_err(CliError::Output)?;
        }
        OutputFormat::Table | OutputFormat::Csv => {
            let id = triggered.created["id"].as_str().unwrap_or("?");
            let what = if triggered.created.get("status").is_some() {
                "transaction"
            } else {
                "event"
            };
            writeln!(out, "{what} {id}").map_err(CliError::Output)?;
            if triggered.notifications.is_empty() {
                writeln!(out, "no notifications queued (no subscription matches)")
                    .map_err(CliError::Output)?;
            }
            for n in &triggered.notifications {
                writeln!(
                    out,
                    "queued  {} {} {}  →  {}  (subscription {}, event {})",
                    n.resource_type,
                    n.resource_id,
                    n.event_type,
                    n.url,
                    n.subscription_id,
                    n.event_id
                )
                .map_err(CliError::Output)?;
            }
        }
    }
    out.flush().map_err(CliError::Output)
}

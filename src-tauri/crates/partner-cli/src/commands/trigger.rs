//! `partner trigger`: plays the lender against a sandbox, as `stripe trigger` plays Stripe's
//! side: starts a transaction, updates one, or adds an event, through the sandbox's own lender
//! endpoints (`/sandbox/v1/…`), and prints what was created and the notifications it queued.
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
use partner_api::{ApiError, NewEvent, NewTransaction, TransactionUpdate};
use partner_sandbox::dispatch::DeliveryRecord;
use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;

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

/// The sandbox's own endpoints (`/sandbox/v1/…`); `partner listen export --deliveries-from`
/// reads its delivery records through it too.
pub(crate) struct Lender {
    http: reqwest::Client,
    base_url: String,
    admin_token: Option<String>,
}

impl Lender {
    /// The sandbox at `base_url`; its admin token, if any, from `PARTNER_SANDBOX_ADMIN_TOKEN`.
    pub(crate) fn new(base_url: &str) -> Result<Self> {
        partner_client::parse_base_url(base_url)?;
        Ok(Self {
            http: reqwest::Client::new(),
            base_url: base_url.to_string(),
            admin_token: admin_token(),
        })
    }

    /// The sandbox's delivery records of one eventId.
    pub(crate) async fn deliveries_of(&self, event_id: &str) -> Result<Vec<DeliveryRecord>> {
        let path = format!("/sandbox/v1/deliveries?eventId={}", segment(event_id));
        let found = self.call(reqwest::Method::GET, &path, None::<&()>).await?;
        serde_json::from_value(found).map_err(|e| {
            CliError::Client(partner_client::ClientError::Server {
                status: 200,
                message: format!("the sandbox's deliveries are not as expected: {e}"),
                raw_body: None,
            })
        })
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<serde_json::Value> {
        let url = format!("{}{path}", self.base_url.trim_end_matches('/'));
        let mut request = self
            .http
            .request(method, &url)
            .timeout(Duration::from_secs(30));
        if let Some(token) = &self.admin_token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|e| {
            CliError::Client(partner_client::ClientError::Network {
                message: format!("the sandbox at {} did not answer: {e}", self.base_url),
            })
        })?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| {
            CliError::Client(partner_client::ClientError::Network {
                message: format!("the sandbox's answer broke off: {e}"),
            })
        })?;
        if !status.is_success() {
            let words = serde_json::from_slice::<ApiError>(&bytes)
                .map(|e| format!("{}: {}", e.summary, e.details))
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
            let hint = if status == reqwest::StatusCode::NOT_FOUND && words.contains("Not Found") {
                " (is this a sandbox? `partner trigger` plays the lender of `partner sandbox` only)"
            } else {
                ""
            };
            let message = format!("{words}{hint}");
            return Err(CliError::Client(if status.is_client_error() {
                partner_client::ClientError::InvalidRequest {
                    status: status.as_u16(),
                    message,
                }
            } else {
                partner_client::ClientError::Server {
                    status: status.as_u16(),
                    message,
                    raw_body: None,
                }
            }));
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            CliError::Client(partner_client::ClientError::Server {
                status: status.as_u16(),
                message: format!("the sandbox answered something unexpected: {e}"),
                raw_body: None,
            })
        })
    }

    async fn deliveries(&self) -> Result<Vec<DeliveryRecord>> {
        let all = self
            .call(reqwest::Method::GET, "/sandbox/v1/deliveries", None::<&()>)
            .await?;
        serde_json::from_value(all).map_err(|e| {
            CliError::Client(partner_client::ClientError::Server {
                status: 200,
                message: format!("the sandbox's deliveries are not as expected: {e}"),
                raw_body: None,
            })
        })
    }
}

/// `PARTNER_SANDBOX_ADMIN_TOKEN`, when set and not empty.
pub(crate) fn admin_token() -> Option<String> {
    std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty())
}

fn segment(id: &str) -> String {
    // An id goes into the path as one segment, whatever it holds.
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub async fn run(args: Args) -> Result<()> {
    let connection = args.connection.resolved()?;
    let lender = Lender::new(&connection.base_url)?;
    let before: HashSet<String> = lender
        .deliveries()
        .await?
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
            lender
                .call(
                    reqwest::Method::POST,
                    "/sandbox/v1/transactions",
                    Some(&body),
                )
                .await?
        }
        Trigger::TransactionUpdated { transaction, loan } => {
            let body = TransactionUpdate {
                loan: Some(loan.unwrap_or_else(
                    || serde_json::json!({ "note": "updated by partner trigger" }),
                )),
                options: None,
            };
            let path = format!("/sandbox/v1/transactions/{}", segment(&transaction));
            lender
                .call(reqwest::Method::PATCH, &path, Some(&body))
                .await?
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
            let path = format!("/sandbox/v1/transactions/{}/events", segment(&transaction));
            lender
                .call(reqwest::Method::POST, &path, Some(&body))
                .await?
        }
    };
    let notifications: Vec<DeliveryRecord> = lender
        .deliveries()
        .await?
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

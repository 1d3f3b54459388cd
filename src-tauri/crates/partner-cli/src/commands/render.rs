//! `--output table|json|csv` for every client subcommand.
//!
//! JSON lists are written as they arrive, so `--all` over 100,000 transactions streams without
//! holding them. JSON is always an array of the API's own objects, so a script reads the same
//! shape whether it asked for one page or all of them; the "items N-M of TOTAL" summary goes to
//! stderr. CSV is those same objects flattened by `partner_client::listing_export`, the rule the
//! desktop app's export follows too (one column per top-level field, known only once every row
//! is in, so a CSV list waits for its last row, as a table does, whose columns must be
//! measured). A table shows the few columns of [`Row`], a summary for a terminal.

use crate::error::{CliError, Result};
use clap::ValueEnum;
use partner_api::read::{self, Document, Open};
use partner_api::Introspection;
use partner_client::{listing_export, Rotation};
use serde::Serialize;
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
    Csv,
}

/// A value shown as one row of a table.
pub trait Row {
    const HEADERS: &'static [&'static str];
    fn cells(&self) -> Vec<String>;
}

// Tables read the tolerant views (`partner_api::read`): a field the service did not send is an
// empty cell, a value the console does not know is shown as sent.

fn instant_cell(at: Option<chrono::DateTime<chrono::Utc>>) -> String {
    at.map(|at| at.to_rfc3339()).unwrap_or_default()
}

impl<T: Row> Row for Document<T> {
    const HEADERS: &'static [&'static str] = T::HEADERS;
    fn cells(&self) -> Vec<String> {
        self.view().cells()
    }
}

impl Row for read::TransactionView {
    const HEADERS: &'static [&'static str] = &[
        "id",
        "status",
        "requestType",
        "product",
        "response",
        "created",
        "updated",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.id.clone(),
            self.status
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            self.request_type().unwrap_or_default().to_owned(),
            self.product_name().unwrap_or_default().to_owned(),
            self.response_status()
                .map(ToString::to_string)
                .unwrap_or_default(),
            instant_cell(self.created),
            instant_cell(self.updated),
        ]
    }
}

/// The local index's records (the sandbox's strict shape, see `partner-index`).
impl Row for partner_api::Transaction {
    const HEADERS: &'static [&'static str] = <read::TransactionView as Row>::HEADERS;
    fn cells(&self) -> Vec<String> {
        vec![
            self.id.clone(),
            self.status.to_string(),
            self.request.request_type.clone(),
            self.product.name.clone(),
            self.response
                .as_ref()
                .map(|r| r.status.to_string())
                .unwrap_or_default(),
            self.created.to_rfc3339(),
            self.updated.to_rfc3339(),
        ]
    }
}

impl Row for read::ProductView {
    const HEADERS: &'static [&'static str] = &[
        "id",
        "name",
        "listingName",
        "status",
        "environment",
        "subscriptions",
        "created",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.id.clone(),
            self.name.clone().unwrap_or_default(),
            self.listing_name.clone().unwrap_or_default(),
            self.status.clone().unwrap_or_default(),
            self.environment.clone().unwrap_or_default(),
            self.webhooks
                .iter()
                .map(|w| {
                    format!(
                        "{} {}",
                        w.subscription_id.as_deref().unwrap_or("-"),
                        w.resource.as_ref().map(Open::as_str).unwrap_or("-")
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            instant_cell(self.created),
        ]
    }
}

impl Row for read::EventView {
    const HEADERS: &'static [&'static str] = &["id", "type", "from", "sent", "text"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.id.clone(),
            self.event_type.clone().unwrap_or_default(),
            self.from.clone().unwrap_or_default(),
            instant_cell(self.sent),
            self.text.clone().unwrap_or_default(),
        ]
    }
}

impl Row for Introspection {
    const HEADERS: &'static [&'static str] = &[
        "active",
        "client_id",
        "scope",
        "token_type",
        "exp",
        "environment",
        "identity_type",
        "encompass_client_id",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.active.to_string(),
            self.client_id.clone(),
            self.scope.clone(),
            self.token_type.clone(),
            self.exp.to_string(),
            self.environment.clone(),
            self.identity_type.clone(),
            self.encompass_client_id.clone(),
        ]
    }
}

impl Row for Rotation {
    const HEADERS: &'static [&'static str] =
        &["product", "subscription", "replacedAt", "generated"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.product.id.clone(),
            self.subscription_id.clone(),
            self.replaced_at.to_rfc3339(),
            self.generated.to_string(),
        ]
    }
}

/// A subscription's events in a table cell: `created,updated`.
pub fn events_cell(events: &[partner_api::EventType]) -> String {
    events
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

impl Row for read::SubscriptionView {
    const HEADERS: &'static [&'static str] = &["subscription", "url", "resource", "events"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.subscription_id.clone().unwrap_or_default(),
            self.url.clone().unwrap_or_default(),
            self.resource
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            self.events
                .iter()
                .map(Open::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ]
    }
}

/// Writes a list item by item in the chosen format.
pub struct ListWriter<T> {
    format: OutputFormat,
    out: std::io::BufWriter<std::io::Stdout>,
    rows: Vec<Vec<String>>,
    objects: Vec<serde_json::Value>,
    count: usize,
    _items: std::marker::PhantomData<T>,
}

impl<T: Row + Serialize> ListWriter<T> {
    pub fn new(format: OutputFormat) -> Result<Self> {
        let mut writer = Self {
            format,
            out: std::io::BufWriter::new(std::io::stdout()),
            rows: Vec::new(),
            objects: Vec::new(),
            count: 0,
            _items: std::marker::PhantomData,
        };
        match format {
            OutputFormat::Json => writer.out.write_all(b"[").map_err(CliError::Output)?,
            OutputFormat::Csv | OutputFormat::Table => {}
        }
        Ok(writer)
    }

    pub fn item(&mut self, item: &T) -> Result<()> {
        match self.format {
            OutputFormat::Json => {
                if self.count > 0 {
                    self.out.write_all(b",").map_err(CliError::Output)?;
                }
                self.out.write_all(b"\n  ").map_err(CliError::Output)?;
                serde_json::to_writer(&mut self.out, item)
                    .map_err(|e| CliError::Output(e.into()))?;
            }
            OutputFormat::Csv => self.objects.push(json_object(item)?),
            OutputFormat::Table => self.rows.push(item.cells()),
        }
        self.count += 1;
        Ok(())
    }

    pub fn finish(mut self) -> Result<usize> {
        match self.format {
            OutputFormat::Json => {
                let end: &[u8] = if self.count > 0 { b"\n]\n" } else { b"]\n" };
                self.out.write_all(end).map_err(CliError::Output)?;
            }
            OutputFormat::Csv => {
                listing_export::write_csv(&mut self.out, &self.objects)
                    .map_err(CliError::Output)?;
            }
            OutputFormat::Table => write_table(&mut self.out, T::HEADERS, &self.rows)?,
        }
        self.out.flush().map_err(CliError::Output)?;
        Ok(self.count)
    }
}

/// One piece of text and a line end on stdout: what `println!` does, except that a closed pipe
/// (`partner link … | head -c 5`) is an error `main` ends with quietly, never a panic.
pub fn print_line(text: impl std::fmt::Display) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(CliError::Output)
}

/// Lines on stdout for a command that goes on after printing them (a scenario's steps), so it
/// still ends as it should (its sandbox and listener stopped) when the reader has gone: the
/// first write that fails is kept, later lines are dropped, and [`finish`](Self::finish) gives
/// the failure back for `main` (quiet for a closed pipe).
#[derive(Default)]
pub struct StdoutLines {
    failed: Option<std::io::Error>,
}

impl StdoutLines {
    pub fn line(&mut self, text: impl std::fmt::Display) {
        if self.failed.is_none() {
            if let Err(CliError::Output(error)) = print_line(text) {
                self.failed = Some(error);
            }
        }
    }

    pub fn finish(self) -> Result<()> {
        self.failed
            .map_or(Ok(()), |error| Err(CliError::Output(error)))
    }
}

/// Rows as a table, or (`json`) one JSON object per line: how the commands that report one
/// outcome per item (`listen missed`, `recover`, `replay`) print them.
pub fn write_lines<T: Row + Serialize>(items: &[T], json: bool) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout());
    if json {
        for item in items {
            serde_json::to_writer(&mut out, item).map_err(|e| CliError::Output(e.into()))?;
            out.write_all(b"\n").map_err(CliError::Output)?;
        }
    } else {
        let rows: Vec<Vec<String>> = items.iter().map(Row::cells).collect();
        write_table(&mut out, T::HEADERS, &rows)?;
    }
    out.flush().map_err(CliError::Output)
}

/// One value: a JSON object, a `key  value` table, or a one-row CSV of its fields.
pub fn print_one<T: Row + Serialize>(format: OutputFormat, item: &T) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout());
    match format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut out, item).map_err(|e| CliError::Output(e.into()))?;
            out.write_all(b"\n").map_err(CliError::Output)?;
        }
        OutputFormat::Csv => {
            listing_export::write_csv(&mut out, &[json_object(item)?]).map_err(CliError::Output)?;
        }
        OutputFormat::Table => {
            let rows: Vec<Vec<String>> = T::HEADERS
                .iter()
                .zip(item.cells())
                .map(|(k, v)| vec![(*k).to_string(), v])
                .collect();
            write_aligned(&mut out, &rows)?;
        }
    }
    out.flush().map_err(CliError::Output)
}

pub fn write_table(out: &mut impl Write, headers: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let mut all = Vec::with_capacity(rows.len() + 1);
    all.push(headers.iter().map(|h| h.to_uppercase()).collect::<Vec<_>>());
    all.extend(rows.iter().cloned());
    write_aligned(out, &all)
}

/// Columns padded to their widest cell, two spaces apart; control characters are shown as
/// spaces so a value cannot break the layout of a terminal.
fn write_aligned(out: &mut impl Write, rows: &[Vec<String>]) -> Result<()> {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| clean(c)).collect())
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        writeln!(out, "{}", line.trim_end()).map_err(CliError::Output)?;
    }
    Ok(())
}

fn json_object<T: Serialize>(item: &T) -> Result<serde_json::Value> {
    serde_json::to_value(item).map_err(|e| CliError::Output(e.into()))
}

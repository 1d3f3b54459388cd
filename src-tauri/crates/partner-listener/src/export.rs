//! Export of captures as JSON Lines (lossless: import gives the same captures back) and as
//! HAR 1.2 (for browser dev tools and HTTP tooling; one entry per capture, the listener's answer
//! as the response).
//!
//! JSON Lines is one `Capture` per line with the body in Base64, so bodies that are not UTF-8 and
//! bodies whose exact bytes matter (all of them: signatures) survive the round trip.
//!
//! Both formats stream ([`export_with`]): captures are read from the store and written one at a
//! time, the HAR too (its envelope is written first, then each entry, then the closing), so a
//! store of a million captures exports in the memory of one. Why not build the HAR document and
//! serialise it: that holds every capture, and its JSON tree, at once. The caller gets its
//! progress every [`PROGRESS_EVERY`] captures and may stop the export there.

use crate::capture::Capture;
use crate::store::{CaptureFilter, ImportReport, Store, StoreReader};
use crate::{Error, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::ops::ControlFlow;

/// Output formats of `partner listen export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    JsonLines,
    Har,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "jsonl" => Ok(ExportFormat::JsonLines),
            "har" => Ok(ExportFormat::Har),
            other => Err(Error::InvalidInput(format!(
                "unknown export format {other:?}: use jsonl or har"
            ))),
        }
    }
}

/// How often [`export_with`] reports its progress, in captures.
pub const PROGRESS_EVERY: u64 = 1000;

/// What [`export_with`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReport {
    /// Captures written.
    pub written: u64,
    /// The progress callback asked to stop before the last capture.
    pub cancelled: bool,
}

/// Writes the captures matching `filter` in `format`; returns how many were written.
pub fn export(
    store: &StoreReader,
    filter: &CaptureFilter,
    format: ExportFormat,
    out: &mut dyn Write,
) -> Result<u64> {
    export_with(store, filter, format, out, &mut |_| {
        ControlFlow::Continue(())
    })
    .map(|r| r.written)
}

/// Writes the captures matching `filter` in `format`, oldest first, one at a time (memory stays
/// bounded by one capture however many there are, for HAR as for JSON Lines), calling
/// `progress` with the number written so far every [`PROGRESS_EVERY`] captures and once at the
/// end.
///
/// When `progress` answers [`ControlFlow::Break`], the export stops there and the report says
/// `cancelled`; what was written is still a whole document (the HAR's envelope is closed, the
/// JSON Lines end at a line's end), holding the captures written before the stop, so a caller
/// that wants nothing on a cancel deletes the file itself.
pub fn export_with(
    store: &StoreReader,
    filter: &CaptureFilter,
    format: ExportFormat,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64) -> ControlFlow<()>,
) -> Result<ExportReport> {
    let mut report = ExportReport {
        written: 0,
        cancelled: false,
    };
    if format == ExportFormat::Har {
        out.write_all(har_opening().as_bytes())?;
    }
    let walked = store.for_each(filter, |capture| {
        match format {
            ExportFormat::JsonLines => {
                serde_json::to_writer(&mut *out, &capture)?;
                out.write_all(b"\n")?;
            }
            ExportFormat::Har => {
                if report.written > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut *out, &har_entry(&capture))?;
            }
        }
        report.written += 1;
        if report.written.is_multiple_of(PROGRESS_EVERY) && progress(report.written).is_break() {
            report.cancelled = true;
            // Ends the walk over the store; told apart from a real error by `cancelled`.
            return Err(Error::InvalidInput("the export was cancelled".into()));
        }
        Ok(())
    });
    match walked {
        Err(error) if !report.cancelled => return Err(error),
        _ => {}
    }
    if format == ExportFormat::Har {
        out.write_all(b"\n]}}\n")?;
    }
    out.flush()?;
    if !report.cancelled {
        // The last call says the export is complete (its answer no longer matters).
        let _ = progress(report.written);
    }
    Ok(report)
}

/// The start of a HAR 1.2 document up to the opening of `entries`, which
/// [`export_with`] then fills one entry at a time and closes with `]}}`.
fn har_opening() -> String {
    let creator = json!({ "name": "partner-listener", "version": env!("CARGO_PKG_VERSION") });
    format!("{{\"log\":{{\"version\":\"1.2\",\"creator\":{creator},\"entries\":[")
}

/// One capture per line, oldest first.
pub fn write_jsonl(
    store: &StoreReader,
    filter: &CaptureFilter,
    out: &mut dyn Write,
) -> Result<u64> {
    export(store, filter, ExportFormat::JsonLines, out)
}

/// Reads JSON Lines written by [`write_jsonl`]; blank lines are skipped, a bad line is an error
/// naming its number.
pub fn read_jsonl(input: impl BufRead) -> Result<Vec<Capture>> {
    let mut captures = Vec::new();
    for (index, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let capture = serde_json::from_str::<Capture>(&line).map_err(|e| Error::Import {
            line: index + 1,
            reason: e.to_string(),
        })?;
        captures.push(capture);
    }
    Ok(captures)
}

/// Captures an import hands the writer at once: large enough that a transaction's commit
/// (one fsync) is shared by many rows, small enough that live captures queued behind a batch
/// wait a few tens of milliseconds at most, and that memory stays flat whatever the file size.
pub const IMPORT_BATCH: usize = 2000;

/// Reads JSON Lines into the store (captures keep their ids; taken ids are skipped).
pub async fn import_jsonl(store: &Store, input: impl BufRead) -> Result<ImportReport> {
    import_jsonl_with(store, input, &mut |_| ControlFlow::Continue(())).await
}

/// [`import_jsonl`] that reports progress and can be cancelled: after each batch of
/// [`IMPORT_BATCH`] captures is committed, `progress` gets the number of lines read so far;
/// [`ControlFlow::Break`] stops the import there. What was committed before stays imported
/// (the report counts it and says `cancelled`); nothing after is read.
///
/// Streams: one batch is parsed while the writer commits the one before, so memory holds two
/// batches whatever the file's size. A bad line stops the import with [`Error::Import`]; the
/// captures before it stay imported.
pub async fn import_jsonl_with(
    store: &Store,
    input: impl BufRead,
    progress: &mut (dyn FnMut(u64) -> ControlFlow<()> + Send),
) -> Result<ImportReport> {
    let mut report = ImportReport {
        imported: 0,
        skipped: 0,
        cancelled: false,
    };
    let mut lines = input.lines().enumerate();
    let mut lines_read = 0u64;
    let mut in_flight: Option<(tokio::sync::oneshot::Receiver<Result<ImportReport>>, u64)> = None;
    loop {
        let mut batch = Vec::with_capacity(IMPORT_BATCH);
        let mut failure = None;
        while batch.len() < IMPORT_BATCH {
            let Some((index, line)) = lines.next() else {
                break;
            };
            lines_read = index as u64 + 1;
            let line = match line {
                Ok(line) => line,
                Err(error) => {
                    failure = Some(Error::Io(error));
                    break;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Capture>(&line) {
                Ok(capture) => batch.push(capture),
                Err(e) => {
                    failure = Some(Error::Import {
                        line: index + 1,
                        reason: e.to_string(),
                    });
                    break;
                }
            }
        }
        if let Some((pending, done)) = in_flight.take() {
            let part = pending.await.map_err(|_| Error::WriterStopped)??;
            report.imported += part.imported;
            report.skipped += part.skipped;
            if progress(done).is_break() {
                report.cancelled = true;
                return Ok(report);
            }
        }
        if let Some(failure) = failure {
            if !batch.is_empty() {
                store.import(batch).await?;
            }
            return Err(failure);
        }
        if batch.is_empty() {
            return Ok(report);
        }
        in_flight = Some((store.start_import(batch)?, lines_read));
    }
}

fn status_text(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

/// A HAR 1.2 document of the captures.
pub fn har(captures: &[Capture]) -> Value {
    let entries: Vec<Value> = captures.iter().map(har_entry).collect();
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "partner-listener", "version": env!("CARGO_PKG_VERSION") },
            "entries": entries,
        }
    })
}

fn har_entry(capture: &Capture) -> Value {
    let host = capture.header("host").unwrap_or("localhost");
    let url = format!("http://{host}{}", capture.path);
    let query: Vec<Value> = url::Url::parse(&url)
        .map(|u| {
            u.query_pairs()
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect()
        })
        .unwrap_or_default();
    let headers: Vec<Value> = capture
        .headers
        .iter()
        .map(|h| json!({ "name": h.name, "value": h.value }))
        .collect();
    let mime = capture
        .header("content-type")
        .unwrap_or("application/octet-stream");
    let mut request = json!({
        "method": capture.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers,
        "queryString": query,
        "headersSize": -1,
        "bodySize": capture.body_size,
    });
    if let Some(body) = &capture.body {
        let post_data = match std::str::from_utf8(body) {
            Ok(text) => json!({ "mimeType": mime, "params": [], "text": text }),
            // HAR has no encoding field for request bodies; `_encoding` is the usual extension.
            Err(_) => {
                json!({ "mimeType": mime, "params": [], "text": STANDARD.encode(body), "_encoding": "base64" })
            }
        };
        request["postData"] = post_data;
    }
    let time_ms = capture.processing_micros as f64 / 1000.0;
    json!({
        "startedDateTime": capture.received_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "time": time_ms + capture.response.delay_ms as f64,
        "request": request,
        "response": {
            "status": capture.response.status,
            "statusText": status_text(capture.response.status),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [ { "name": "content-type", "value": "text/plain; charset=utf-8" } ],
            "content": {
                "size": capture.response.body.len(),
                "mimeType": "text/plain; charset=utf-8",
                "text": capture.response.body,
            },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": capture.response.body.len(),
        },
        "cache": {},
        "timings": {
            "send": 0,
            "wait": time_ms + capture.response.delay_ms as f64,
            "receive": 0,
        },
        "serverIPAddress": "127.0.0.1",
        "comment": format!("verdict: {}, attempt {}", capture.verdict, capture.attempt),
        "_capture": {
            "id": capture.id,
            "verdict": capture.verdict,
            "matchedKey": capture.matched_key,
            "subscriptionId": capture.subscription_id,
            "eventId": capture.fields.event_id,
            "attempt": capture.attempt,
            "notificationId": capture.notification_id,
            "peer": capture.peer,
            "replay": capture.replay,
        },
    })
}

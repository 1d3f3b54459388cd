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
    let mut writer = ExportWriter::start(format, out)?;
    let mut cancelled = false;
    let walked = store.for_each(filter, |capture| {
        writer.write(&capture)?;
        if writer.written.is_multiple_of(PROGRESS_EVERY) && progress(writer.written).is_break() {
            cancelled = true;
            // Ends the walk over the store; told apart from a real error by `cancelled`.
            return Err(Error::InvalidInput("the export was cancelled".into()));
        }
        Ok(())
    });
    match walked {
        Err(error) if !cancelled => return Err(error),
        _ => {}
    }
    let written = writer.finish()?;
    if !cancelled {
        // The last call says the export is complete (its answer no longer matters).
        let _ = progress(written);
    }
    Ok(ExportReport { written, cancelled })
}

/// An export written one capture at a time, from whatever source walks the captures (the local
/// store in [`export_with`], a team workspace's pages in `partner listen export`): the format's
/// envelope opened at the start and closed by [`ExportWriter::finish`], so every source writes
/// the same document.
pub struct ExportWriter<'w> {
    format: ExportFormat,
    out: &'w mut dyn Write,
    written: u64,
}

impl std::fmt::Debug for ExportWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportWriter")
            .field("format", &self.format)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl<'w> ExportWriter<'w> {
    /// Opens the document (HAR's envelope; nothing for JSON Lines).
    pub fn start(format: ExportFormat, out: &'w mut dyn Write) -> Result<Self> {
        if format == ExportFormat::Har {
            out.write_all(har_opening().as_bytes())?;
        }
        Ok(Self {
            format,
            out,
            written: 0,
        })
    }

    /// Writes one capture (the next, oldest first).
    pub fn write(&mut self, capture: &Capture) -> Result<()> {
        match self.format {
            ExportFormat::JsonLines => {
                serde_json::to_writer(&mut *self.out, capture)?;
                self.out.write_all(b"\n")?;
            }
            ExportFormat::Har => {
                if self.written > 0 {
                    self.out.write_all(b",")?;
                }
                self.out.write_all(b"\n")?;
                serde_json::to_writer(&mut *self.out, &har_entry(capture))?;
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Closes the document; the number of captures written.
    pub fn finish(self) -> Result<u64> {
        if self.format == ExportFormat::Har {
            self.out.write_all(b"\n]}}\n")?;
        }
        self.out.flush()?;
        Ok(self.written)
    }
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

/// One capture read from a JSON Lines file: where it was and how long its line was.
#[derive(Debug)]
pub struct JsonLine {
    /// The line's number, from 1.
    pub number: usize,
    /// The line's length in bytes (what a sender may bound its parts by).
    pub bytes: usize,
    pub capture: Capture,
}

/// The captures of JSON Lines written by [`write_jsonl`], one at a time, so a reader holds
/// only what it is working on. Blank lines are skipped; a line that is not a capture is an
/// [`Error::Import`] naming its number, and an input that cannot be read an [`Error::Io`].
/// The one reading of the format: [`read_jsonl`], [`import_jsonl_with`] and the CLI's import
/// into a team workspace all take their captures from here.
pub fn jsonl_captures(input: impl BufRead) -> impl Iterator<Item = Result<JsonLine>> {
    input.lines().enumerate().filter_map(|(index, line)| {
        let line = match line {
            Ok(line) => line,
            Err(error) => return Some(Err(Error::Io(error))),
        };
        if line.trim().is_empty() {
            return None;
        }
        Some(
            serde_json::from_str::<Capture>(&line)
                .map(|capture| JsonLine {
                    number: index + 1,
                    bytes: line.len(),
                    capture,
                })
                .map_err(|e| Error::Import {
                    line: index + 1,
                    reason: e.to_string(),
                }),
        )
    })
}

/// Reads JSON Lines written by [`write_jsonl`] at once (see [`jsonl_captures`]).
pub fn read_jsonl(input: impl BufRead) -> Result<Vec<Capture>> {
    jsonl_captures(input)
        .map(|line| line.map(|line| line.capture))
        .collect()
}

/// Reads the requests of a HAR 1.2 document as captures, to send them again: those
/// [`har`] wrote (their `_capture` extension gives back the id, verdict and attempt), or any
/// tool's. A request's body is its `postData.text` (base64 when `_encoding` says so); the
/// notification's fields are read from it as the listener reads them. A capture of another
/// tool's HAR has no verdict the console gave it: without the key it is `unknown-subscription`
/// (or `missing-signature`), which is what the console can tell before verifying.
pub fn read_har(input: impl std::io::Read) -> Result<Vec<Capture>> {
    let document: Value = serde_json::from_reader(input)
        .map_err(|e| Error::InvalidInput(format!("not a HAR document (JSON): {e}")))?;
    let entries = document
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::InvalidInput("not a HAR document: no log.entries".into()))?;
    let mut captures = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let bad = |why: &str| Error::Import {
            line: index + 1,
            reason: format!("HAR entry {}: {why}", index + 1),
        };
        let request = entry.get("request").ok_or_else(|| bad("no request"))?;
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
        let url = text(request.get("url")).ok_or_else(|| bad("no request.url"))?;
        let path = url::Url::parse(&url)
            .map(|u| match u.query() {
                Some(query) => format!("{}?{query}", u.path()),
                None => u.path().to_string(),
            })
            .map_err(|e| bad(&format!("request.url is not a URL: {e}")))?;
        let headers: Vec<crate::capture::Header> = request
            .get("headers")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|h| {
                        Some(crate::capture::Header::new(
                            h.get("name")?.as_str()?,
                            h.get("value")?.as_str()?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let body = match request.get("postData") {
            Some(post) => {
                let body_text = text(post.get("text")).unwrap_or_default();
                if post.get("_encoding").and_then(Value::as_str) == Some("base64") {
                    Some(
                        STANDARD
                            .decode(body_text.as_bytes())
                            .map_err(|e| bad(&format!("postData.text is not base64: {e}")))?,
                    )
                } else {
                    Some(body_text.into_bytes())
                }
            }
            None => None,
        };
        let extension = entry.get("_capture");
        let header = |name: &str| {
            headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| h.value.clone())
        };
        let verdict = extension
            .and_then(|c| c.get("verdict"))
            .and_then(Value::as_str)
            .and_then(crate::Verdict::parse)
            .unwrap_or(
                if header(partner_api::signature::SIGNATURE_HEADER).is_some() {
                    crate::Verdict::UnknownSubscription
                } else {
                    crate::Verdict::MissingSignature
                },
            );
        let fields = body
            .as_deref()
            .map(|b| crate::verdict::NotificationFields::read(b).0)
            .unwrap_or_default();
        let received_at = text(entry.get("startedDateTime"))
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_else(chrono::Utc::now);
        let number = |name: &str| extension.and_then(|c| c.get(name)).and_then(Value::as_i64);
        captures.push(Capture {
            id: number("id").unwrap_or(index as i64 + 1),
            received_at,
            method: text(request.get("method")).unwrap_or_else(|| "POST".into()),
            path,
            body_size: body.as_ref().map_or(0, |b| b.len() as u64),
            body,
            peer: None,
            verdict,
            matched_key: None,
            subscription_id: header(partner_api::signature::SUBSCRIPTION_HEADER),
            fields,
            attempt: number("attempt")
                .and_then(|a| u32::try_from(a).ok())
                .unwrap_or(1),
            notification_id: None,
            response: crate::capture::ResponseRecord {
                status: entry
                    .pointer("/response/status")
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(0),
                body: String::new(),
                from_test_mode: false,
                delay_ms: 0,
            },
            processing_micros: 0,
            replay: header(crate::outbound::REPLAY_HEADER)
                .is_some_and(|v| crate::outbound::marks_replay(&v)),
            headers,
        });
    }
    Ok(captures)
}

/// Captures an import hands the writer at once: large enough that a transaction's commit
/// (one fsync) and FTS5's segment of the search index are shared by many rows, small enough
/// that memory stays flat whatever the file size and that live captures queued behind a batch
/// wait a fraction of a second at most (the batch is indexed for search in its transaction:
/// about 0.3 s for 2,000 on this project's 2-core machine, `benches/query.rs`).
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
    let mut lines = jsonl_captures(input);
    let mut lines_read = 0u64;
    let mut in_flight: Option<(tokio::sync::oneshot::Receiver<Result<ImportReport>>, u64)> = None;
    loop {
        let mut batch = Vec::with_capacity(IMPORT_BATCH);
        let mut failure = None;
        while batch.len() < IMPORT_BATCH {
            match lines.next() {
                None => break,
                Some(Ok(line)) => {
                    lines_read = line.number as u64;
                    batch.push(line.capture);
                }
                Some(Err(error)) => {
                    failure = Some(error);
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

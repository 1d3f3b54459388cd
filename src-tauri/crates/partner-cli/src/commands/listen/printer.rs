//! How `partner listen` prints its captures: one line of text (or one JSON object with
//! `--json`) per capture and per forward, written by a thread of its own as captures are
//! committed. `partner listen captures --json` prints a capture with the same fields
//! ([`capture_json`]).

use partner_listener::{Capture, LiveEvent, OutboundRecord, Verdict};
use std::io::Write;

/// One line (or JSON object) per capture, as captures are committed.
///
/// A capture after a quiet moment is printed at once. Under a flood the thread gathers what
/// arrived every [`PRINT_INTERVAL`] and writes it in one call: woken and writing once per
/// capture, it took about a tenth of the listener's CPU (`partner listen` under wrk, in
/// BENCHMARKS.md), for lines no one reads faster than that.
pub(super) fn print_captures(mut feed: tokio::sync::broadcast::Receiver<LiveEvent>, json: bool) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut lines = String::new();
    // Adds an event's line; false once the feed is closed.
    let take = |event: Result<LiveEvent, RecvError>, lines: &mut String| {
        let line = match event {
            Ok(LiveEvent::Captured(capture)) => capture_line(&capture, json),
            Ok(LiveEvent::Outbound(record)) => outbound_line(&record, json),
            Err(RecvError::Lagged(missed)) => {
                eprintln!("partner: {missed} captures were not printed (output too slow); they are in the store");
                return true;
            }
            Err(RecvError::Closed) => return false,
        };
        lines.push_str(&line);
        lines.push('\n');
        true
    };
    loop {
        // Quiet: wait for the next event.
        let mut open = take(feed.blocking_recv(), &mut lines);
        // Busy: what else is there now, then every interval, until an interval brings nothing.
        loop {
            while open {
                let event = match feed.try_recv() {
                    Ok(event) => Ok(event),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Lagged(missed)) => Err(RecvError::Lagged(missed)),
                    Err(TryRecvError::Closed) => Err(RecvError::Closed),
                };
                open = take(event, &mut lines);
            }
            if lines.is_empty() {
                break;
            }
            if write_lines(&mut lines).is_err() || !open {
                return;
            }
            std::thread::sleep(PRINT_INTERVAL);
        }
        if !open {
            return;
        }
    }
}

/// How long the printer gathers captures under a flood before it writes them.
const PRINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// Writes the lines gathered so far to stdout in one call, and empties them.
fn write_lines(lines: &mut String) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    lines.clear();
    written
}

fn capture_line(capture: &Capture, json: bool) -> String {
    if json {
        capture_json(capture).to_string()
    } else {
        let dash = || "-".to_string();
        let mut line = format!(
            "{} {:<20} {:<7} {} {} {}",
            capture.received_at.format("%H:%M:%S%.3f"),
            capture.verdict.as_str(),
            capture.fields.event_type.clone().unwrap_or_else(dash),
            capture.fields.resource_type.clone().unwrap_or_else(dash),
            capture.fields.resource_id.clone().unwrap_or_else(dash),
            capture.response.status,
        );
        if capture.attempt > 1 {
            line.push_str(&format!(" (attempt {})", capture.attempt));
        }
        if capture.verdict == Verdict::WrongPath {
            line.push_str(&format!(" at {}", capture.path));
        }
        let departures = departures(capture);
        if !departures.is_empty() {
            line.push_str(&format!(" [{}]", departures.join("; ")));
        }
        line
    }
}

/// A capture as `partner listen --json` prints it.
pub(super) fn capture_json(capture: &Capture) -> serde_json::Value {
    serde_json::json!({
            "kind": "capture",
            "id": capture.id,
            "receivedAt": capture.received_at,
            "subscriptionId": capture.subscription_id,
            "eventId": capture.fields.event_id,
            "eventType": capture.fields.event_type,
            "resourceType": capture.fields.resource_type,
            "resourceId": capture.fields.resource_id,
            "verdict": capture.verdict,
            "matchedKey": capture.matched_key,
            "status": capture.response.status,
            "attempt": capture.attempt,
            "replay": capture.replay,
            "path": capture.path,
            "departures": departures(capture),
    })
}

/// How a notification departs from the shape the spec shows (no `meta`, an `eventTime` in
/// another form, a type the spec does not show), in words; nothing for a request that is not a
/// notification at all, whose verdict already says so.
fn departures(capture: &Capture) -> Vec<String> {
    if !capture.fields.is_notification() {
        return Vec::new();
    }
    capture
        .fields
        .departures()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn outbound_line(record: &OutboundRecord, json: bool) -> String {
    if json {
        serde_json::json!({
            "kind": record.kind,
            "captureId": record.capture_id,
            "url": record.url,
            "status": record.status,
            "elapsedMs": record.elapsed_ms,
            "error": record.error,
        })
        .to_string()
    } else {
        match (&record.status, &record.error) {
            (Some(status), _) => format!(
                "  -> {} {}: {status} ({} ms)",
                record.kind.as_str(),
                record.url,
                record.elapsed_ms
            ),
            (None, error) => format!(
                "  -> {} {}: failed: {}",
                record.kind.as_str(),
                record.url,
                error.as_deref().unwrap_or("no answer")
            ),
        }
    }
}

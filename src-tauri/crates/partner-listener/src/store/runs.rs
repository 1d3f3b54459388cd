//! The store's records besides captures: the run log (`listener_runs`: when a listener started
//! and stopped serving this store, from which `crate::runs` tells when it was down) and the
//! outbound records of forwards and replays (`outbound`).
//!
//! Written as jobs of the writer thread (so in order with the captures), read on a read
//! connection. Kept apart from the captures' writer and planner: they write tables of their own
//! and read the captures only for a run's last capture, so they need nothing but the row mapping.

use super::rows::{from_micros, headers_json, outbound_from_row};
use crate::capture::OutboundRecord;
use crate::runs::ListenerRun;
use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

/// Runs kept in `listener_runs`; older ones are dropped when a run starts.
const RUNS_KEPT: i64 = 200;

/// Records a run's start at `at` and drops the oldest runs past the last [`RUNS_KEPT`];
/// returns the run's id.
pub(super) fn record_start(conn: &mut Connection, at: DateTime<Utc>) -> Result<i64> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO listener_runs (started_at_us, stopped_at_us) VALUES (?1, NULL)",
        [at.timestamp_micros()],
    )?;
    let id = tx.last_insert_rowid();
    tx.execute(
        "DELETE FROM listener_runs WHERE id <= ?1",
        [id.saturating_sub(RUNS_KEPT)],
    )?;
    tx.commit()?;
    Ok(id)
}

/// Records that the run `run_id` stopped cleanly at `at`.
pub(super) fn record_stop(conn: &Connection, run_id: i64, at: DateTime<Utc>) -> Result<()> {
    conn.execute(
        "UPDATE listener_runs SET stopped_at_us = ?2 WHERE id = ?1",
        [run_id, at.timestamp_micros()],
    )?;
    Ok(())
}

/// The listener's runs on this store, oldest first (none in a store made before runs were
/// kept), each with its last capture (see [`crate::runs`]).
pub(super) fn listener_runs(conn: &Connection) -> Result<Vec<ListenerRun>> {
    let has_runs: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = 'listener_runs')",
        [],
        |row| row.get(0),
    )?;
    if !has_runs {
        return Ok(Vec::new());
    }
    let mut select = conn.prepare(
        "SELECT id, started_at_us, stopped_at_us FROM listener_runs \
         ORDER BY started_at_us, id",
    )?;
    let rows: Vec<(i64, i64, Option<i64>)> = select
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut last_capture = conn.prepare_cached(
        "SELECT MAX(received_at_us) FROM captures \
         WHERE received_at_us >= ?1 AND received_at_us < ?2",
    )?;
    let mut runs = Vec::with_capacity(rows.len());
    for (index, &(id, started, stopped)) in rows.iter().enumerate() {
        let next_start = rows.get(index + 1).map_or(i64::MAX, |next| next.1);
        let last: Option<i64> = last_capture.query_row([started, next_start], |row| row.get(0))?;
        runs.push(ListenerRun {
            id,
            started_at: from_micros(started),
            stopped_at: stopped.map(from_micros),
            last_capture_at: last.map(from_micros),
        });
    }
    Ok(runs)
}

/// Records a forward or replay and returns it with its id.
pub(super) fn insert_outbound(conn: &Connection, record: OutboundRecord) -> Result<OutboundRecord> {
    let mut record = record;
    conn.execute(
        "INSERT INTO outbound (capture_id, kind, url, sent_at, request_headers, \
             request_body, status, response_headers, response_body, elapsed_ms, error) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            record.capture_id,
            record.kind.as_str(),
            record.url,
            record.sent_at.to_rfc3339(),
            headers_json(&record.request_headers)?,
            record.request_body,
            record.status,
            headers_json(&record.response_headers)?,
            record.response_body,
            record.elapsed_ms as i64,
            record.error,
        ],
    )?;
    record.id = conn.last_insert_rowid();
    Ok(record)
}

/// Forwards and replays of a capture, oldest first.
pub(super) fn outbound_of(conn: &Connection, capture_id: i64) -> Result<Vec<OutboundRecord>> {
    let mut stmt = conn.prepare(
        "SELECT id, capture_id, kind, url, sent_at, request_headers, request_body, status, \
         response_headers, response_body, elapsed_ms, error FROM outbound \
         WHERE capture_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([capture_id], outbound_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

//! A capture and an outbound record as table rows: the column list, the insert statements and
//! the mapping of a row back to its value.
//!
//! One home for the row shape, so the writer (inserts, imports), the query planner (pages) and
//! the run log's outbound records read and write the same columns in the same order.

use crate::capture::{Capture, Header, OutboundKind, OutboundRecord, ResponseRecord};
use crate::verdict::{MatchedKey, NotificationFields, Verdict};
use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, Row};

pub(super) const CAPTURE_COLUMNS: &str =
    "id, received_at, method, path, headers, body, body_size, peer, \
    verdict, matched_key, subscription_id, event_id, event_time, event_type, instance_id, \
    resource_id, resource_type, resource_ref, attempt, notification_id, response_status, \
    response_body, response_from_test_mode, response_delay_ms, processing_micros, replay";

/// The formatted columns of a capture row.
pub(super) struct RowText {
    received_at: String,
    headers: String,
}

impl RowText {
    pub(super) fn of(capture: &Capture) -> Result<Self> {
        Ok(Self {
            received_at: capture
                .received_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            headers: headers_json(&capture.headers)?,
        })
    }

    /// The bytes of the headers' column (a capture's size counts them, [`super::sizes`]).
    pub(super) fn headers_len(&self) -> usize {
        self.headers.len()
    }
}

/// An instant kept as microseconds since the Unix epoch (the store's `*_us` columns).
pub(super) fn from_micros(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

pub(super) fn headers_json(headers: &[Header]) -> Result<String> {
    Ok(serde_json::to_string(headers)?)
}

/// The statement that writes a capture row, made at compile time (the writer binds it for
/// every capture).
macro_rules! insert_sql {
    ($verb:literal) => {
        concat!(
            $verb,
            " INTO captures (id, received_at, received_at_us, method, path, headers, body, \
             body_size, peer, verdict, matched_key, subscription_id, event_id, event_time, \
             event_type, instance_id, resource_id, resource_type, resource_ref, attempt, \
             notification_id, response_status, response_body, response_from_test_mode, \
             response_delay_ms, processing_micros, replay) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
             ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, \
             ?25, ?26, ?27)"
        )
    };
}

pub(super) fn insert_row(
    conn: &Connection,
    c: &Capture,
    text: &RowText,
    id: Option<i64>,
) -> Result<i64> {
    insert_with(conn, insert_sql!("INSERT"), c, text, id)?;
    Ok(conn.last_insert_rowid())
}

/// Inserts an imported capture with its own id; `false` when the id is taken.
pub(super) fn insert_row_or_ignore(conn: &Connection, c: &Capture, text: &RowText) -> Result<bool> {
    Ok(insert_with(conn, insert_sql!("INSERT OR IGNORE"), c, text, Some(c.id))? == 1)
}

fn insert_with(
    conn: &Connection,
    sql: &str,
    c: &Capture,
    text: &RowText,
    id: Option<i64>,
) -> Result<usize> {
    Ok(conn.prepare_cached(sql)?.execute(params![
        id,
        text.received_at,
        c.received_at.timestamp_micros(),
        c.method,
        c.path,
        text.headers,
        c.body,
        c.body_size as i64,
        c.peer,
        c.verdict.as_str(),
        c.matched_key.map(MatchedKey::as_str),
        c.subscription_id,
        c.fields.event_id,
        c.fields.event_time,
        c.fields.event_type,
        c.fields.instance_id,
        c.fields.resource_id,
        c.fields.resource_type,
        c.fields.resource_ref,
        c.attempt,
        c.notification_id,
        c.response.status,
        c.response.body,
        c.response.from_test_mode,
        c.response.delay_ms as i64,
        c.processing_micros as i64,
        c.replay,
    ])?)
}

fn conversion_error(column: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, message.into())
}

fn parse_headers(column: usize, text: &str) -> rusqlite::Result<Vec<Header>> {
    serde_json::from_str(text).map_err(|e| conversion_error(column, e.to_string()))
}

fn parse_time(column: usize, text: &str) -> rusqlite::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| conversion_error(column, e.to_string()))
}

pub(super) fn capture_from_row(row: &Row<'_>) -> rusqlite::Result<Capture> {
    let verdict: String = row.get(8)?;
    let matched_key: Option<String> = row.get(9)?;
    Ok(Capture {
        id: row.get(0)?,
        received_at: parse_time(1, &row.get::<_, String>(1)?)?,
        method: row.get(2)?,
        path: row.get(3)?,
        headers: parse_headers(4, &row.get::<_, String>(4)?)?,
        body: row.get(5)?,
        body_size: row.get::<_, i64>(6)? as u64,
        peer: row.get(7)?,
        verdict: Verdict::parse(&verdict)
            .ok_or_else(|| conversion_error(8, format!("unknown verdict {verdict}")))?,
        matched_key: matched_key.as_deref().and_then(MatchedKey::parse),
        subscription_id: row.get(10)?,
        fields: NotificationFields {
            event_id: row.get(11)?,
            event_time: row.get(12)?,
            event_type: row.get(13)?,
            instance_id: row.get(14)?,
            resource_id: row.get(15)?,
            resource_type: row.get(16)?,
            resource_ref: row.get(17)?,
        },
        attempt: row.get(18)?,
        notification_id: row.get(19)?,
        response: ResponseRecord {
            status: row.get(20)?,
            body: row.get(21)?,
            from_test_mode: row.get(22)?,
            delay_ms: row.get::<_, i64>(23)? as u64,
        },
        processing_micros: row.get::<_, i64>(24)? as u64,
        replay: row.get(25)?,
    })
}

pub(super) fn outbound_from_row(row: &Row<'_>) -> rusqlite::Result<OutboundRecord> {
    let kind: String = row.get(2)?;
    Ok(OutboundRecord {
        id: row.get(0)?,
        capture_id: row.get(1)?,
        kind: OutboundKind::parse(&kind)
            .ok_or_else(|| conversion_error(2, format!("unknown kind {kind}")))?,
        url: row.get(3)?,
        sent_at: parse_time(4, &row.get::<_, String>(4)?)?,
        request_headers: parse_headers(5, &row.get::<_, String>(5)?)?,
        request_body: row.get(6)?,
        status: row.get(7)?,
        response_headers: parse_headers(8, &row.get::<_, String>(8)?)?,
        response_body: row.get(9)?,
        elapsed_ms: row.get::<_, i64>(10)? as u64,
        error: row.get(11)?,
    })
}

//! Notes: a member's words on a transaction or a capture, seen by every member, with who wrote
//! them and when. Writing one is audited; reading is not (every read would drown the log).

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;

/// What a note is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Capture,
    Transaction,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Capture => "capture",
            TargetKind::Transaction => "transaction",
        }
    }
}

/// One note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub id: i64,
    pub target_kind: String,
    pub target_id: String,
    pub author: String,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// The most a note holds.
pub const MAX_NOTE_CHARS: usize = 10_000;

/// Writes a note as `author`.
pub async fn add(
    pool: &PgPool,
    kind: TargetKind,
    target_id: &str,
    author: &str,
    text: &str,
) -> Result<Note> {
    let text = text.trim();
    let target_id = target_id.trim();
    if text.is_empty() || text.chars().count() > MAX_NOTE_CHARS || text.contains('\0') {
        return Err(Error::Invalid(format!(
            "a note is 1 to {MAX_NOTE_CHARS} characters of text"
        )));
    }
    if target_id.is_empty() || target_id.contains('\0') {
        return Err(Error::Invalid(
            "a note needs the id of what it is on".into(),
        ));
    }
    Ok(sqlx::query_as(
        "INSERT INTO notes (target_kind, target_id, author, text) VALUES ($1, $2, $3, $4) \
         RETURNING id, target_kind, target_id, author, at, text",
    )
    .bind(kind.as_str())
    .bind(target_id)
    .bind(author)
    .bind(text)
    .fetch_one(pool)
    .await?)
}

/// The notes on one target, oldest first.
pub async fn on(pool: &PgPool, kind: TargetKind, target_id: &str) -> Result<Vec<Note>> {
    Ok(sqlx::query_as(
        "SELECT id, target_kind, target_id, author, at, text FROM notes \
         WHERE target_kind = $1 AND target_id = $2 ORDER BY id",
    )
    .bind(kind.as_str())
    .bind(target_id.trim().replace('\0', ""))
    .fetch_all(pool)
    .await?)
}

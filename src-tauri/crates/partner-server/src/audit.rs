//! The team's audit log: every write a member makes, and every refusal, under their name.
//!
//! A refusal is recorded too: "a viewer tried to replay" is what an admin reading the log after
//! an incident needs, and a role that keeps being refused is a member who needs another one.

use crate::error::Result;
use crate::members::Member;
use crate::roles::Action;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgExecutor;

/// How an audited call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Done,
    Refused,
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Refused => "refused",
            Outcome::Failed => "failed",
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub member: String,
    pub role: String,
    pub action: String,
    pub target: String,
    pub outcome: String,
    pub detail: String,
}

/// Records one call.
pub async fn record<'e>(
    executor: impl PgExecutor<'e>,
    member: &Member,
    action: Action,
    target: &str,
    outcome: Outcome,
    detail: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO audit (member, role, action, target, outcome, detail) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&member.name)
    .bind(member.role.as_str())
    .bind(action.as_str())
    .bind(target)
    .bind(outcome.as_str())
    .bind(detail)
    .execute(executor)
    .await?;
    Ok(())
}

/// The newest entries, newest first; `before` pages by id.
pub async fn list<'e>(
    executor: impl PgExecutor<'e>,
    limit: i64,
    before: Option<i64>,
) -> Result<Vec<AuditEntry>> {
    Ok(sqlx::query_as(
        "SELECT id, at, member, role, action, target, outcome, detail FROM audit \
         WHERE $2::bigint IS NULL OR id < $2 ORDER BY id DESC LIMIT $1",
    )
    .bind(limit.clamp(1, 1000))
    .bind(before)
    .fetch_all(executor)
    .await?)
}

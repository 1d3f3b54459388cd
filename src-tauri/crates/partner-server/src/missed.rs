//! The missed-notification check on a team workspace: partner-local's own
//! [`find_missed`] (the console's check, its matching rule and its `since` rules, not a copy)
//! with the team's service connection and the workspace's captures as the arrivals
//! ([`WorkspaceArrivals`], an [`ArrivalLog`] over the `captures` table; migration 0006 gives it
//! an index by subscription and time, so neither question scans).
//!
//! What differs from a laptop's check, and why:
//! - **No "went down" record.** A laptop's listener writes its runs; a workspace's servers are
//!   many, stateless and come and go behind a load balancer, and the intake is down only when
//!   all of them are, which none of them can record. So [`ArrivalLog::last_down`] is `None` and
//!   each subscription is checked from the `since` given, else its first capture.
//! - **The give-up window.** The server knows no environment of its connection, so, unless
//!   `until` is given, it asks the service for a sandbox's delivery rules
//!   ([`sandbox_give_up_window`]): a sandbox answers with its own window, any other service
//!   answers no, and the spec's 130 s apply.

use crate::error::{Error, Result};
use crate::service::Service;
use chrono::{DateTime, Utc};
use partner_local::missed::{
    find_missed, sandbox_give_up_window, ArrivalLog, MissedQuery, MissedReport,
};
use partner_workspace::MissedRequest;
use sqlx::PgPool;
use std::collections::HashSet;
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// The workspace's captures, as the missed check reads what arrived.
#[derive(Debug, Clone)]
pub struct WorkspaceArrivals {
    pool: PgPool,
}

impl WorkspaceArrivals {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// A database error as the check's: sqlx's own words (no statement's values), which
/// `From<partner_local::Error>` turns back into [`Error::Database`].
fn unread(error: sqlx::Error) -> partner_local::Error {
    partner_local::Error::Arrivals(match Error::from(error) {
        Error::Database(message) => message,
        other => other.to_string(),
    })
}

impl ArrivalLog for WorkspaceArrivals {
    /// None: the servers keep no record of the intake going down (see the module's notes).
    fn last_down(
        &self,
        _listening_now: bool,
    ) -> impl Future<Output = partner_local::Result<Option<DateTime<Utc>>>> + Send {
        std::future::ready(Ok(None))
    }

    fn first_capture(
        &self,
        subscription_id: &str,
    ) -> impl Future<Output = partner_local::Result<Option<DateTime<Utc>>>> + Send {
        let pool = self.pool.clone();
        let subscription_id = crate::captures::without_nul(subscription_id);
        async move {
            sqlx::query_scalar::<_, Option<DateTime<Utc>>>(
                "SELECT min(received_at) FROM captures WHERE subscription_id = $1",
            )
            .bind(subscription_id)
            .fetch_one(&pool)
            .await
            .map_err(unread)
        }
    }

    fn arrived_since(
        &self,
        subscription_id: &str,
        since: DateTime<Utc>,
    ) -> impl Future<Output = partner_local::Result<HashSet<(String, String)>>> + Send {
        let pool = self.pool.clone();
        let subscription_id = crate::captures::without_nul(subscription_id);
        async move {
            let rows: Vec<(String, String)> = sqlx::query_as(
                "SELECT DISTINCT resource_type, event_id FROM captures \
                 WHERE subscription_id = $1 AND received_at >= $2 \
                 AND resource_type IS NOT NULL AND event_id IS NOT NULL",
            )
            .bind(subscription_id)
            .bind(since)
            .fetch_all(&pool)
            .await
            .map_err(unread)?;
            Ok(rows.into_iter().collect())
        }
    }
}

impl From<partner_local::Error> for Error {
    fn from(error: partner_local::Error) -> Self {
        match error {
            partner_local::Error::Client(client) => client.into(),
            partner_local::Error::Invalid(message) => Error::Invalid(message),
            partner_local::Error::Arrivals(message) => Error::Database(message),
            other => Error::Io(other.to_string()),
        }
    }
}

/// The check as a member asked it, with the team's connection over the workspace's captures;
/// `cancel` (the server stopping) ends the walk early, the report then says so.
pub async fn check(
    pool: &PgPool,
    service: &Service,
    request: &MissedRequest,
    cancel: &CancellationToken,
) -> Result<MissedReport> {
    let client = service.client().await?;
    let give_up_window = match request.until {
        Some(_) => None,
        None => {
            let control = partner_client::SandboxControl::new(client.base_url().as_str(), None)?
                .with_call_log(client.calls());
            sandbox_give_up_window(&control).await
        }
    };
    let query = MissedQuery {
        subscription_id: request
            .subscription_id
            .as_deref()
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_string),
        since: request.since,
        until: request.until,
        give_up_window,
        all_subscriptions: request.all_subscriptions,
        listening_now: false,
    };
    let arrivals = WorkspaceArrivals::new(pool.clone());
    Ok(find_missed(&client, &arrivals, &query, cancel, |_| {}).await?)
}

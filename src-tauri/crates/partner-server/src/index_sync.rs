//! When the support index is synced: now, when a member asks, and every few minutes on its own
//! while a service connection is set, so a console finds what the service has without anyone
//! pressing a button.
//!
//! However many servers run, one sync runs at a time ([`WorkspaceIndex::exclusively`]): the
//! servers' schedules and members' requests queue behind it, and each after the first is a
//! short refresh from the watermark it left. A scheduled sync that fails (the service down, a
//! connection not set) is logged by its kind and tried again at the next tick; it never stops
//! the server. Nothing of a transaction is logged: counts and ids of phases only.

use crate::error::{Error, Result};
use crate::service::Service;
use crate::support_index::WorkspaceIndex;
use partner_index::SyncReport;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a server syncs on its own unless told otherwise.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(300);

/// Syncs the index with the service now (after any sync running on another server), through
/// `partner-index`'s own walks.
///
/// The sync runs to its end in a task of its own, whoever waits for it. Dropped with its
/// caller (a member's request given up mid-way), it left a statement running in PostgreSQL
/// (the server does not know the client went away until it answers) with rows of the index
/// and its counts locked while the sync's lock was already released: the next sync took the
/// lock, wrote the same rows, and one of the two was cancelled as a deadlock (a CI run, 12-07).
/// Now the next sync waits for this one, as for a sync on another server. `cancel` (the
/// server's shutdown) still stops it between its steps.
pub async fn sync_now(
    service: &Service,
    index: &WorkspaceIndex,
    cancel: &CancellationToken,
) -> Result<SyncReport> {
    let client = service.client().await?;
    let (index, cancel) = (index.clone(), cancel.clone());
    let report = tokio::spawn(async move {
        index
            .exclusively(partner_index::sync(&client, &index, |_| {}, &cancel))
            .await
    })
    .await
    .map_err(|error| Error::Index(format!("the sync stopped: {error}")))???;
    Ok(report)
}

/// Syncs every `every` until `stop` is cancelled (the first right away). `None`: never.
pub fn schedule(
    service: Service,
    index: WorkspaceIndex,
    every: Option<Duration>,
    stop: CancellationToken,
) {
    let Some(every) = every else { return };
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            match sync_now(&service, &index, &stop).await {
                Ok(report) => tracing::info!(
                    transactions = report.state.transactions,
                    stored = report.filled,
                    changed = report.changes.len(),
                    "the support index was synced"
                ),
                Err(Error::NoService) => {
                    tracing::debug!("no service connection yet: the support index waits")
                }
                Err(error) => tracing::warn!(%error, "the scheduled sync of the support index"),
            }
        }
    });
}

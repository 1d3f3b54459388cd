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
pub async fn sync_now(
    service: &Service,
    index: &WorkspaceIndex,
    cancel: &CancellationToken,
) -> Result<SyncReport> {
    let client = service.client().await?;
    let report = index
        .exclusively(partner_index::sync(&client, index, |_| {}, cancel))
        .await??;
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

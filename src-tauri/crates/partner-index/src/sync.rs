//! Bringing the index up to date: the first fill, then incremental refreshes.
//!
//! Why shaped so:
//! - The first fill is one walk through the pager (several pages in flight) over
//!   `sort=created,id` ascending. In that order a transaction keeps its position as the listing
//!   grows (a new one has the newest `created` and goes to the end; `id` breaks ties), so the
//!   count of items stored is where the walk stands: it is saved with every batch, in the same
//!   SQL transaction, and the next sync resumes there (`PartnerClient::pager_from`) instead of
//!   starting over. Under `-updated` or the natural order, positions move with every change.
//! - Before the fill begins, one request (`sort=-updated`, `limit=1`) learns the newest
//!   `updated` stamp: the watermark. Whatever changes while the fill runs (or between a
//!   cancelled fill and its resumption) gets a newer stamp, so the refresh that follows the fill
//!   catches it, including a transaction created at a position the fill had passed.
//! - A refresh is [`PartnerClient::walk_updated_since`] from the watermark: the same walker as
//!   the missed-notification check, newest first, ending where the listing reaches stamps the
//!   index already holds (an item it has unchanged, older than the watermark). Items it meets
//!   are compared with what is stored (the `updated` stamp and the JSON) and only differences are
//!   written and reported. The watermark moves to the newest stamp seen only when a walk
//!   completes; a cancelled one leaves it, so nothing is skipped.
//! - [`refresh_one`] fetches one transaction and its events (for a captured notification). It
//!   never moves the watermark: an item fetched out of order must not make a refresh stop early.
//! - Events of a transaction are fetched only by [`refresh_one`]: the listing does not carry
//!   them, and a custom event does not change the transaction's `updated` stamp.
//! - Which keys a service sorts by is not in the spec. A service that refuses the fill's
//!   `created,id` is walked in its own order instead (saved as the fill's order, so a resume
//!   in another order starts over), and one that refuses `-updated` has every refresh read
//!   every item (`walk_updated_since`'s fallback): slower, never partial. Both are said in the
//!   progress ([`SyncProgress::note`]).
//! - Everything is read with `partner_api::read`'s views and stored as the service sent it: a
//!   transaction needs only its `id`; unknown fields are kept and searchable, unknown statuses
//!   kept and filterable.
//! - During the fill, one writer task takes the pages as they come (whatever
//!   is waiting, up to [`FILL_BATCH`] items, per SQL transaction), so the walk keeps pages in
//!   flight while a batch is written; the position saved is what the writer has committed.
//! - What keeps the copy is a [`SyncStore`]: this machine's encrypted file ([`crate::Index`])
//!   or a team's workspace on PostgreSQL; the walks are the same for both.

use crate::error::{Error, Result};
use crate::store::IndexState;
pub use crate::sync_store::ChangeKind;
use crate::sync_store::{Mark, SyncStore};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use partner_api::read::{self, Document};
use partner_api::{SortKey, SortSpec};
use partner_client::{ClientError, PageRequest, PagerOptions, PartnerClient, WalkEnd, WALK_PAGER};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Items written per SQL transaction at most during the fill.
pub const FILL_BATCH: usize = 2_000;

/// Batches fetched and waiting for the writer at most (then the walk waits).
const WRITE_QUEUE: usize = 16;

/// What a sync is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SyncPhase {
    Products,
    Fill,
    Refresh,
}

/// How far a sync has come: `done` of `total` (the fill knows its total; a refresh does not).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncProgress {
    pub phase: SyncPhase,
    pub done: u64,
    pub total: Option<u64>,
    /// A fallback the sync took, in words (the service refused a sort it walks by).
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SyncEnd {
    Complete,
    /// Cancelled: what was stored stays, and the next sync continues from there.
    Cancelled,
}

/// A transaction a refresh found new or changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub id: String,
    pub kind: ChangeKind,
}

/// What a sync did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub end: SyncEnd,
    /// Transactions stored by the fill in this run.
    pub filled: u64,
    /// What the refresh found created or updated (not the fill's items).
    pub changes: Vec<Change>,
    pub products: u64,
    pub state: IndexState,
}

/// Brings `index` up to date with the service `client` talks to: products relisted, the first
/// fill (or its resumption), then a refresh. Tells `progress` as it goes; `cancel` stops it
/// between batches with what was stored kept.
pub async fn sync(
    client: &PartnerClient,
    index: &impl SyncStore,
    progress: impl FnMut(&SyncProgress),
    cancel: &CancellationToken,
) -> Result<SyncReport> {
    sync_with(client, index, PagerOptions::default(), progress, cancel).await
}

/// [`sync`] with the fill's pages and requests in flight chosen (a benchmark compares one
/// page at a time with the default).
pub async fn sync_with(
    client: &PartnerClient,
    index: &impl SyncStore,
    fill_pager: PagerOptions,
    mut progress: impl FnMut(&SyncProgress),
    cancel: &CancellationToken,
) -> Result<SyncReport> {
    let mut report = SyncReport {
        end: SyncEnd::Complete,
        filled: 0,
        changes: Vec::new(),
        products: 0,
        state: index.state().await?,
    };
    report.products = sync_products(client, index, &mut progress, cancel).await?;
    if cancel.is_cancelled() {
        return cancelled(index, report).await;
    }
    if !report.state.filled {
        let (filled, end) = fill(client, index, fill_pager, &mut progress, cancel).await?;
        report.filled = filled;
        if end == SyncEnd::Cancelled {
            return cancelled(index, report).await;
        }
    }
    let (changes, end) = refresh(client, index, &mut progress, cancel).await?;
    report.changes = changes;
    report.end = end;
    if end == SyncEnd::Complete {
        let now = Utc::now().timestamp_micros().to_string();
        index.set_mark(Mark::AsOf, now).await?;
    }
    report.state = index.state().await?;
    Ok(report)
}

async fn cancelled(index: &impl SyncStore, mut report: SyncReport) -> Result<SyncReport> {
    report.end = SyncEnd::Cancelled;
    report.state = index.state().await?;
    Ok(report)
}

async fn sync_products(
    client: &PartnerClient,
    index: &impl SyncStore,
    progress: &mut impl FnMut(&SyncProgress),
    cancel: &CancellationToken,
) -> Result<u64> {
    let mut products: Vec<Document<read::ProductView>> = Vec::new();
    let mut stream =
        client.pager::<read::ProductView>(SortSpec::default(), PagerOptions::default())?;
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(0),
            next = stream.next() => next,
        };
        let Some(product) = next else { break };
        products.push(product?);
    }
    let count = products.len() as u64;
    index.replace_products(products).await?;
    progress(&SyncProgress {
        phase: SyncPhase::Products,
        done: count,
        total: Some(count),
        note: None,
    });
    Ok(count)
}

/// The first fill, from where the last one stopped.
async fn fill(
    client: &PartnerClient,
    index: &impl SyncStore,
    pager: PagerOptions,
    progress: &mut impl FnMut(&SyncProgress),
    cancel: &CancellationToken,
) -> Result<(u64, SyncEnd)> {
    let state = index.state().await?;
    // The newest stamp now: changes from here on are the refresh's to find. A service that
    // does not sort by `updated` leaves no watermark: its refreshes read every item anyway.
    let newest_first = SortSpec::well_formed(vec![SortKey::desc("updated")])
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let first = PageRequest::new(0, 1).map_err(|e| Error::Invalid(e.to_string()))?;
    let mut note = None;
    let probe = match client
        .list::<read::TransactionView>(&first.clone().sorted(newest_first))
        .await
    {
        Err(refused @ ClientError::InvalidRequest { status: 400, .. }) => {
            note = Some(format!(
                "the service does not sort by `updated` ({refused}); every refresh reads every item"
            ));
            client.list::<read::TransactionView>(&first).await?
        }
        other => other?,
    };
    let total = probe.total;
    if state.watermark.is_none() && note.is_none() {
        if let Some(newest) = probe.items.first().and_then(|t| t.updated) {
            let watermark = newest.timestamp_micros().to_string();
            index.set_mark(Mark::Watermark, watermark).await?;
        }
    }
    // The fill walks `created,id` ascending, where an item keeps its position as the listing
    // grows; a service that refuses it is walked in its own order.
    let oldest_first = SortSpec::well_formed(vec![SortKey::asc("created"), SortKey::asc("id")])
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let order = match client
        .list::<read::TransactionView>(&first.clone().sorted(oldest_first.clone()))
        .await
    {
        Err(refused @ ClientError::InvalidRequest { status: 400, .. }) => {
            let said = format!(
                "the service does not sort by `created,id` ({refused}); copying in its own order"
            );
            note = Some(match note {
                Some(before) => format!("{before}; {said}"),
                None => said,
            });
            SortSpec::default()
        }
        other => {
            other?;
            oldest_first
        }
    };
    // Transactions are never deleted, so the listing only grows; a position past the total
    // (another service behind the same URL?), or one saved under another order, starts over.
    let order_name = order.to_string();
    let mut position = state.fill_position;
    if position > total || index.mark(Mark::FillOrder).await?.unwrap_or_default() != order_name {
        position = 0;
    }
    index.set_mark(Mark::FillOrder, order_name).await?;
    let oldest_first = order;
    progress(&SyncProgress {
        phase: SyncPhase::Fill,
        done: position,
        total: Some(total),
        note: note.clone(),
    });
    let mut stream = client
        .pager_from::<read::TransactionView>(position, oldest_first, pager)?
        .ready_chunks(FILL_BATCH);
    // The writer runs beside the walk, so pages keep coming while a batch is written.
    let stored = Arc::new(AtomicU64::new(position));
    let (batches, mut to_write) =
        tokio::sync::mpsc::channel::<Vec<Document<read::TransactionView>>>(WRITE_QUEUE);
    let writer = {
        let index = index.clone();
        let stored = stored.clone();
        tokio::spawn(async move {
            while let Some(mut items) = to_write.recv().await {
                // Whatever else is waiting goes into the same SQL transaction.
                while items.len() < FILL_BATCH {
                    match to_write.try_recv() {
                        Ok(more) => items.extend(more),
                        Err(_) => break,
                    }
                }
                let at = stored.load(Ordering::SeqCst) + items.len() as u64;
                index.store_fill_batch(items, at, total).await?;
                stored.store(at, Ordering::SeqCst);
            }
            Ok::<(), Error>(())
        })
    };
    let mut outcome: Result<SyncEnd> = Ok(SyncEnd::Complete);
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                outcome = Ok(SyncEnd::Cancelled);
                break;
            }
            next = stream.next() => next,
        };
        let Some(chunk) = next else { break };
        let mut items = Vec::with_capacity(chunk.len());
        let mut failed = None;
        for item in chunk {
            match item {
                Ok(item) => items.push(item),
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        if !items.is_empty() && batches.send(items).await.is_err() {
            break; // the writer failed; its error is taken below
        }
        progress(&SyncProgress {
            phase: SyncPhase::Fill,
            done: stored.load(Ordering::SeqCst),
            total: Some(total),
            note: note.clone(),
        });
        if let Some(error) = failed {
            outcome = Err(error.into());
            break;
        }
    }
    drop(stream);
    drop(batches);
    writer
        .await
        .map_err(|e| Error::Store(format!("the index writer ended unexpectedly ({e})")))??;
    let at = stored.load(Ordering::SeqCst);
    let filled = at - position;
    progress(&SyncProgress {
        phase: SyncPhase::Fill,
        done: at,
        total: Some(total),
        note,
    });
    let end = outcome?;
    if end == SyncEnd::Complete {
        index.set_mark(Mark::Filled, "1".into()).await?;
    }
    Ok((filled, end))
}

/// Everything changed since the watermark, through the incremental walker.
async fn refresh(
    client: &PartnerClient,
    index: &impl SyncStore,
    progress: &mut impl FnMut(&SyncProgress),
    cancel: &CancellationToken,
) -> Result<(Vec<Change>, SyncEnd)> {
    let since = index
        .state()
        .await?
        .watermark
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    let mut seen: Vec<Document<read::TransactionView>> = Vec::new();
    let summary = client
        .walk_updated_since::<read::TransactionView>(
            since,
            WALK_PAGER,
            cancel,
            |walk| {
                progress(&SyncProgress {
                    phase: SyncPhase::Refresh,
                    done: walk.yielded,
                    total: None,
                    note: walk.fallback_note(),
                })
            },
            |item| {
                seen.push(item);
                ControlFlow::Continue(())
            },
        )
        .await?;
    let complete = summary.end == WalkEnd::Complete;
    let newest = summary.progress.newest.map_or(since, |n| n.max(since));
    // Oldest first, so a transaction seen twice ends at its newest version.
    seen.reverse();
    let ids: Vec<String> = seen.iter().map(|item| item.id.clone()).collect();
    let kinds = index.store_seen(seen, complete.then_some(newest)).await?;
    let mut changes: Vec<Change> = Vec::new();
    for (id, kind) in ids.into_iter().zip(kinds) {
        if kind != ChangeKind::Unchanged && !changes.iter().any(|c| c.id == id) {
            changes.push(Change { id, kind });
        }
    }
    let end = if complete {
        SyncEnd::Complete
    } else {
        SyncEnd::Cancelled
    };
    Ok((changes, end))
}

/// Fetches transaction `id` and its events and stores them (a captured notification named it).
pub async fn refresh_one(
    client: &PartnerClient,
    index: &impl SyncStore,
    id: &str,
) -> Result<Change> {
    let (transaction, events) =
        tokio::try_join!(client.get_transaction(id), client.list_events(id))?;
    let events = serde_json::to_string(&events).map_err(Error::json)?;
    let kind = index.store_one(transaction, events).await?;
    Ok(Change {
        id: id.to_string(),
        kind,
    })
}

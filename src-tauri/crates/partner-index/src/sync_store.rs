//! Where a sync writes: the few things [`crate::sync`] asks of a store, so that the walks, their
//! rate limits, resumption and fallbacks have one home whichever store keeps the copy.
//!
//! Why a trait: a connection's copy lives in this machine's encrypted SQLite file ([`Index`]),
//! and a team's in its workspace on PostgreSQL (`partner-server`), synced once for every
//! console. How a fill resumes, where a refresh stops and what counts as a change are rules of
//! the walk, not of the file, so they stay in `sync.rs`; a store only keeps what it is handed,
//! each call in one transaction of its own, and says whether an item was new, changed or the
//! same ([`ChangeKind`]) by the same test: its `updated` stamp and its JSON as sent (and its
//! events, when given).
//!
//! The calls are async: the local file does its work on the blocking pool, a database server
//! over its own async driver.

use crate::error::{Error, Result};
use crate::store::{
    meta_keys, micros, replace_products, set_meta, stored_version, upsert_transaction, Index,
    IndexState,
};
use chrono::{DateTime, Utc};
use partner_api::read::{self, Document};
use std::future::Future;

/// What storing a transaction did.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    Created,
    Updated,
    Unchanged,
}

/// A progress mark a sync keeps beside the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// When the last sync completed.
    AsOf,
    /// The first fill went through the whole listing.
    Filled,
    /// Everything changed at or after this `updated` stamp is still to be walked.
    Watermark,
    /// The sort the fill walks in (`created,id`, or empty: the service's own order).
    FillOrder,
}

impl Mark {
    /// The key the mark is kept under (the same in every store).
    pub fn key(self) -> &'static str {
        match self {
            Mark::AsOf => meta_keys::AS_OF,
            Mark::Filled => meta_keys::FILLED,
            Mark::Watermark => meta_keys::WATERMARK,
            Mark::FillOrder => meta_keys::FILL_ORDER,
        }
    }
}

/// A store a sync can write to. Each call is one transaction of the store.
pub trait SyncStore: Clone + Send + Sync + 'static {
    /// What the store holds and how far its sync has come.
    fn state(&self) -> impl Future<Output = Result<IndexState>> + Send;
    /// A mark as last set.
    fn mark(&self, mark: Mark) -> impl Future<Output = Result<Option<String>>> + Send;
    fn set_mark(&self, mark: Mark, value: String) -> impl Future<Output = Result<()>> + Send;
    /// Replaces every product, each as the service sent it.
    fn replace_products(
        &self,
        products: Vec<Document<read::ProductView>>,
    ) -> impl Future<Output = Result<()>> + Send;
    /// Stores a batch of the fill (as sent, events left as they are) and where the fill then
    /// stands: `position` items of a listing of `total`.
    fn store_fill_batch(
        &self,
        items: Vec<Document<read::TransactionView>>,
        position: u64,
        total: u64,
    ) -> impl Future<Output = Result<()>> + Send;
    /// Stores what a refresh saw, in the order given (oldest first), each only when it is new
    /// or differs from what is kept, and then `watermark` when given; says per item which it
    /// was.
    fn store_seen(
        &self,
        items: Vec<Document<read::TransactionView>>,
        watermark: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<Vec<ChangeKind>>> + Send;
    /// Stores one transaction fetched with its events (the events' JSON array), when new or
    /// different.
    fn store_one(
        &self,
        item: Document<read::TransactionView>,
        events: String,
    ) -> impl Future<Output = Result<ChangeKind>> + Send;
}

impl SyncStore for Index {
    async fn state(&self) -> Result<IndexState> {
        let index = self.clone();
        blocking(move || index.state()).await
    }

    async fn mark(&self, mark: Mark) -> Result<Option<String>> {
        let index = self.clone();
        blocking(move || index.meta(mark.key())).await
    }

    async fn set_mark(&self, mark: Mark, value: String) -> Result<()> {
        let index = self.clone();
        blocking(move || index.write(|tx| set_meta(tx, mark.key(), &value))).await
    }

    async fn replace_products(&self, products: Vec<Document<read::ProductView>>) -> Result<()> {
        let index = self.clone();
        blocking(move || index.write(|tx| replace_products(tx, &products))).await
    }

    async fn store_fill_batch(
        &self,
        items: Vec<Document<read::TransactionView>>,
        position: u64,
        total: u64,
    ) -> Result<()> {
        let index = self.clone();
        blocking(move || {
            index.write(|tx| {
                for item in &items {
                    upsert_transaction(tx, item, None)?;
                }
                set_meta(tx, meta_keys::FILL_POSITION, &position.to_string())?;
                set_meta(tx, meta_keys::FILL_TOTAL, &total.to_string())
            })
        })
        .await
    }

    async fn store_seen(
        &self,
        items: Vec<Document<read::TransactionView>>,
        watermark: Option<DateTime<Utc>>,
    ) -> Result<Vec<ChangeKind>> {
        let index = self.clone();
        blocking(move || {
            index.write(|tx| {
                let kinds = items
                    .iter()
                    .map(|item| store_if_changed(tx, item, None))
                    .collect::<Result<Vec<_>>>()?;
                if let Some(watermark) = watermark {
                    set_meta(tx, meta_keys::WATERMARK, &micros(watermark).to_string())?;
                }
                Ok(kinds)
            })
        })
        .await
    }

    async fn store_one(
        &self,
        item: Document<read::TransactionView>,
        events: String,
    ) -> Result<ChangeKind> {
        let index = self.clone();
        blocking(move || index.write(|tx| store_if_changed(tx, &item, Some(&events)))).await
    }
}

/// Stores `item` when it is new or differs from the stored version; says which.
fn store_if_changed(
    tx: &rusqlite::Transaction<'_>,
    item: &Document<read::TransactionView>,
    events: Option<&str>,
) -> Result<ChangeKind> {
    let body = serde_json::to_string(item).map_err(Error::json)?;
    let kind = match stored_version(tx, &item.id)? {
        None => ChangeKind::Created,
        Some((updated, stored)) if updated == item.updated.map(micros) && stored == body => {
            let events_same = match events {
                None => true,
                Some(fresh) => {
                    let stored: Option<String> = tx
                        .prepare_cached(
                            "SELECT b.events FROM transactions t
                             JOIN transaction_bodies b ON b.rowid = t.rowid WHERE t.id = ?1",
                        )?
                        .query_row([&item.id], |r| r.get(0))?;
                    stored.as_deref() == Some(fresh)
                }
            };
            if events_same {
                return Ok(ChangeKind::Unchanged);
            }
            ChangeKind::Updated
        }
        Some(_) => ChangeKind::Updated,
    };
    upsert_transaction(tx, item, events)?;
    Ok(kind)
}

async fn blocking<R: Send + 'static>(
    work: impl FnOnce() -> Result<R> + Send + 'static,
) -> Result<R> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Sqlite(format!("a write to the index ended unexpectedly ({e})")))?
}

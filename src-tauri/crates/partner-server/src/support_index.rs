//! The team's support index on PostgreSQL: the service's transactions and products, synced
//! once for every console, and the support desk's questions answered from it.
//!
//! Why shaped so:
//! - The sync is `partner-index`'s own ([`partner_index::sync`]: the same walks, resumption,
//!   rate limits and fallbacks as on a laptop); this module is only where it writes
//!   ([`WorkspaceIndex`] is a [`SyncStore`]), and what a transaction is filed under is
//!   `partner-index`'s [`Columns`], so a question finds the same transactions here as there.
//! - One sync at a time for the whole workspace, however many servers run: a sync holds a
//!   PostgreSQL advisory lock on a connection of its own for as long as it runs, and a second
//!   one waits for it (then it is a short refresh).
//! - A page's total is counted up to [`COUNT_CAP`] ("10,000+"), as the workspace's capture
//!   pages are: an exact count of a million rows is a scan.
//! - Questions are [`partner_index::Filter`]s answered with bound values only. Text is matched
//!   as word prefixes, every word required, over a GIN index (PostgreSQL's `simple`
//!   configuration); equality filters use b-tree indexes, the case-insensitive ones on
//!   `lower(...)`. Pages are newest first (`created`, then the order stored), as on a laptop.
//! - Nothing of a transaction goes into an error or a log line: errors are PostgreSQL's own
//!   words, which quote no bound value.

use crate::common_words::{bound, common_words};
use crate::error::Error;
use crate::support_filter::{count_capped, push_filter, TextMatch};
use chrono::{DateTime, Utc};
use partner_api::read::{self, Document};
use partner_index::{
    meta_keys, search_words, ChangeKind, Columns, Counts, Filter, Found, IndexState, Mark,
    SyncStore, MAX_FIND_LIMIT, NO_VALUE,
};
use partner_listener::COUNT_CAP;
use sqlx::{PgPool, Postgres, QueryBuilder, Transaction};

/// The advisory lock a sync holds (any number: the workspace's database is its own).
const SYNC_LOCK: i64 = 0x5041_5254_4e53_5943; // "PARTNSYC"

/// The workspace's index: its tables in the workspace's database.
#[derive(Debug, Clone)]
pub struct WorkspaceIndex {
    pool: PgPool,
}

/// A PostgreSQL error in partner-index's terms.
fn failed(error: sqlx::Error) -> partner_index::Error {
    partner_index::Error::Store(Error::from(error).to_string())
}

fn corrupt(error: serde_json::Error) -> partner_index::Error {
    partner_index::Error::Corrupt(format!(
        "{:?} JSON at line {} column {}",
        error.classify(),
        error.line(),
        error.column()
    ))
}

type IndexResult<T> = partner_index::Result<T>;

impl WorkspaceIndex {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Runs `work` (a sync) while holding the workspace's sync lock: a sync started on any
    /// server meanwhile waits for this one. The lock is a transaction's (`pg_advisory_xact_lock`
    /// on a connection of its own): should the caller stop waiting (a member's request dropped
    /// mid-sync), the transaction is rolled back as its connection goes back to the pool and the
    /// lock with it, where a session's lock would stay with the pooled connection and stop every
    /// later sync.
    pub async fn exclusively<T>(
        &self,
        work: impl std::future::Future<Output = T>,
    ) -> crate::Result<T> {
        let mut holding = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(SYNC_LOCK)
            .execute(&mut *holding)
            .await?;
        let result = work.await;
        holding.rollback().await?;
        Ok(result)
    }

    async fn set_mark_in(
        tx: &mut Transaction<'_, Postgres>,
        key: &str,
        value: &str,
    ) -> IndexResult<()> {
        sqlx::query(
            "INSERT INTO index_marks (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&mut **tx)
        .await
        .map_err(failed)?;
        Ok(())
    }

    async fn marks(&self) -> IndexResult<Vec<(String, String)>> {
        sqlx::query_as("SELECT key, value FROM index_marks")
            .fetch_all(&self.pool)
            .await
            .map_err(failed)
    }

    async fn as_of(&self) -> IndexResult<Option<DateTime<Utc>>> {
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM index_marks WHERE key = $1")
                .bind(meta_keys::AS_OF)
                .fetch_optional(&self.pool)
                .await
                .map_err(failed)?;
        Ok(value.as_deref().and_then(time_of))
    }

    /// The transactions matching `filter`, newest first, `limit` (1 to [`MAX_FIND_LIMIT`])
    /// from `offset`, and how many match in all.
    pub async fn find(&self, filter: &Filter, limit: u64, offset: u64) -> IndexResult<Found> {
        if limit == 0 || limit > MAX_FIND_LIMIT {
            return Err(partner_index::Error::Invalid(format!(
                "the limit must be 1 to {MAX_FIND_LIMIT}, got {limit}"
            )));
        }
        // Counted first, up to a cap: an exact count of a million rows is a scan. The count
        // also tells how to sort: few hits are found by the filter's own indexes and sorted
        // (`+ interval '0'` keeps PostgreSQL off the "newest" index, which it would walk
        // hoping to meet them soon, over every row when they are rare); many are met soon
        // walking that index.
        let cap = i64::try_from(COUNT_CAP).unwrap_or(i64::MAX);
        let total = match self.lower_bound(filter, cap).await? {
            Some(total) if total > cap => total,
            _ => self.count(filter, &TextMatch::of(filter), cap).await?,
        };
        let bodies = self
            .bodies_ordered(filter, Some(limit), offset, total > cap)
            .await?;
        let items = bodies
            .iter()
            .map(|body| serde_json::from_str(body).map_err(corrupt))
            .collect::<IndexResult<Vec<_>>>()?;
        Ok(Found {
            total: u64::try_from(total.min(cap)).unwrap_or_default(),
            total_capped: total > cap,
            offset,
            items,
            as_of: self.as_of().await?,
        })
    }

    /// How many transactions match `filter`, its text matched as `text` says, up to `cap + 1`.
    async fn count(&self, filter: &Filter, text: &TextMatch, cap: i64) -> IndexResult<i64> {
        count_capped(filter, text, cap)?
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(failed)
    }

    /// A lower bound of how many match `filter` (up to `cap + 1`), counted with the common
    /// whole words its words begin, for a text of two words or more
    /// ([`crate::common_words`]); `None` when there is none to count.
    async fn lower_bound(&self, filter: &Filter, cap: i64) -> IndexResult<Option<i64>> {
        let words = filter.text.as_deref().map(search_words).unwrap_or_default();
        if words.len() < 2 {
            return Ok(None);
        }
        let common = common_words(&self.pool, &words).await.map_err(failed)?;
        match bound(&words, &common) {
            Some(text) => Ok(Some(self.count(filter, &text, cap).await?)),
            None => Ok(None),
        }
    }

    /// The JSON of the transactions matching `filter`, newest first; `many`: they are many
    /// (walk the "newest" index), else few (sort them).
    async fn bodies_ordered(
        &self,
        filter: &Filter,
        limit: Option<u64>,
        offset: u64,
        many: bool,
    ) -> IndexResult<Vec<String>> {
        let mut rows = QueryBuilder::<Postgres>::new("SELECT body FROM index_transactions");
        push_filter(&mut rows, filter)?;
        rows.push(if many {
            " ORDER BY created DESC NULLS LAST, seq DESC OFFSET "
        } else {
            " ORDER BY created + interval '0' DESC NULLS LAST, seq + 0 DESC OFFSET "
        })
        .push_bind(i64::try_from(offset).unwrap_or(i64::MAX));
        if let Some(limit) = limit {
            rows.push(" LIMIT ")
                .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        rows.build_query_scalar()
            .fetch_all(&self.pool)
            .await
            .map_err(failed)
    }

    /// How many transactions match `filter`, in all, per status and per product.
    pub async fn counts(&self, filter: &Filter) -> IndexResult<Counts> {
        // Everything, or a status or a product: from the counts the trigger keeps. Anything
        // else: grouped over the rows the filter finds.
        let from_summary = Filter {
            status: filter.status.clone(),
            product: filter.product.clone(),
            ..Filter::default()
        } == *filter;
        let (table, n) = if from_summary {
            ("index_counts", "sum(n)::bigint")
        } else {
            ("index_transactions", "count(*)")
        };
        let mut statuses =
            QueryBuilder::<Postgres>::new(format!("SELECT status, {n} FROM {table}"));
        push_filter(&mut statuses, filter)?;
        statuses.push(format!(
            " GROUP BY status HAVING {n} > 0 ORDER BY status COLLATE \"C\" NULLS FIRST"
        ));
        let by_status: Vec<(Option<String>, i64)> = statuses
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        let mut products =
            QueryBuilder::<Postgres>::new(format!("SELECT product_id, {n} FROM {table}"));
        push_filter(&mut products, filter)?;
        products.push(format!(" GROUP BY product_id HAVING {n} > 0"));
        let by_product: Vec<(Option<String>, i64)> = products
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        let count = |n: i64| u64::try_from(n).unwrap_or_default();
        let by_status: Vec<(String, u64)> = by_status
            .into_iter()
            .map(|(status, n)| (status.unwrap_or_else(|| NO_VALUE.to_owned()), count(n)))
            .collect();
        let mut named = Vec::with_capacity(by_product.len());
        for (id, n) in by_product {
            let Some(id) = id else {
                named.push((NO_VALUE.to_owned(), NO_VALUE.to_owned(), count(n)));
                continue;
            };
            // A product's name as a transaction of it gives one (the local index's rule): its
            // newest, read from the product's own index (unordered, PostgreSQL took the name's
            // index, which carries the id, and read most of it: 70 ms a product at a million).
            let name: Option<String> = sqlx::query_scalar(
                "SELECT product_name FROM index_transactions \
                 WHERE product_id = $1 AND product_name IS NOT NULL \
                 ORDER BY created DESC NULLS LAST, seq DESC LIMIT 1",
            )
            .bind(&id)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?;
            let name = name.unwrap_or_else(|| id.clone());
            named.push((id, name, count(n)));
        }
        named.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        Ok(Counts {
            total: by_status.iter().map(|(_, n)| n).sum(),
            by_status,
            by_product: named,
            as_of: self.as_of().await?,
        })
    }

    /// One transaction as last stored.
    pub async fn transaction(
        &self,
        id: &str,
    ) -> IndexResult<Option<Document<read::TransactionView>>> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM index_transactions WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(failed)?;
        body.map(|b| serde_json::from_str(&b).map_err(corrupt))
            .transpose()
    }

    /// Every product, by name (those without one last).
    pub async fn products(&self) -> IndexResult<Vec<Document<read::ProductView>>> {
        let bodies: Vec<String> =
            sqlx::query_scalar("SELECT body FROM index_products ORDER BY name NULLS LAST, id")
                .fetch_all(&self.pool)
                .await
                .map_err(failed)?;
        bodies
            .iter()
            .map(|b| serde_json::from_str(b).map_err(corrupt))
            .collect()
    }
}

/// A mark's time (microseconds since the epoch, as partner-index writes it).
fn time_of(value: &str) -> Option<DateTime<Utc>> {
    value
        .parse::<i64>()
        .ok()
        .and_then(DateTime::<Utc>::from_timestamp_micros)
}

/// What storing one transaction did.
async fn upsert(
    tx: &mut Transaction<'_, Postgres>,
    item: &Document<read::TransactionView>,
    events: Option<&str>,
) -> IndexResult<ChangeKind> {
    let body = serde_json::to_string(item).map_err(corrupt)?;
    let row = Columns::of(item);
    let stored: Option<(Option<DateTime<Utc>>, String, Option<String>)> = sqlx::query_as(
        "SELECT updated, body, events FROM index_transactions WHERE id = $1 FOR UPDATE",
    )
    .bind(&row.id)
    .fetch_optional(&mut **tx)
    .await
    .map_err(failed)?;
    let kind = match &stored {
        None => ChangeKind::Created,
        Some((updated, stored_body, stored_events))
            if *updated == row.updated
                && *stored_body == body
                && events.is_none_or(|fresh| stored_events.as_deref() == Some(fresh)) =>
        {
            return Ok(ChangeKind::Unchanged)
        }
        Some(_) => ChangeKind::Updated,
    };
    let words = crate::captures::without_nul(&format!(
        "{} {} {}",
        row.request_words, row.response_words, row.other_words
    ));
    let loan: Option<serde_json::Value> = row
        .loan
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(corrupt)?;
    let text = |value: &Option<String>| value.as_deref().map(crate::captures::without_nul);
    sqlx::query(
        "INSERT INTO index_transactions (id, status, product_id, product_name, request_type, \
            response_status, partner_status, reference_number, requesting_party, loan_number, \
            loan, created, updated, body, events, words) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
            to_tsvector('simple', $16)) \
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, \
            product_id = excluded.product_id, product_name = excluded.product_name, \
            request_type = excluded.request_type, response_status = excluded.response_status, \
            partner_status = excluded.partner_status, \
            reference_number = excluded.reference_number, \
            requesting_party = excluded.requesting_party, loan_number = excluded.loan_number, \
            loan = excluded.loan, created = excluded.created, updated = excluded.updated, \
            body = excluded.body, events = coalesce(excluded.events, index_transactions.events), \
            words = excluded.words",
    )
    .bind(crate::captures::without_nul(&row.id))
    .bind(text(&row.status))
    .bind(text(&row.product_id))
    .bind(text(&row.product_name))
    .bind(text(&row.request_type))
    .bind(text(&row.response_status))
    .bind(text(&row.partner_status))
    .bind(text(&row.reference_number))
    .bind(text(&row.requesting_party))
    .bind(text(&row.loan_number))
    .bind(loan)
    .bind(row.created)
    .bind(row.updated)
    .bind(crate::captures::without_nul(&body))
    .bind(events.map(crate::captures::without_nul))
    .bind(words)
    .execute(&mut **tx)
    .await
    .map_err(failed)?;
    Ok(kind)
}

impl SyncStore for WorkspaceIndex {
    async fn state(&self) -> IndexResult<IndexState> {
        let marks = self.marks().await?;
        let mark = |key: &str| {
            marks
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let number = |key: &str| mark(key).and_then(|v| v.parse::<u64>().ok());
        let (transactions, products): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM index_transactions), (SELECT count(*) FROM index_products)",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(failed)?;
        Ok(IndexState {
            as_of: mark(meta_keys::AS_OF).and_then(time_of),
            filled: mark(meta_keys::FILLED) == Some("1"),
            fill_position: number(meta_keys::FILL_POSITION).unwrap_or(0),
            fill_total: number(meta_keys::FILL_TOTAL),
            watermark: mark(meta_keys::WATERMARK).and_then(time_of),
            transactions: u64::try_from(transactions).unwrap_or_default(),
            products: u64::try_from(products).unwrap_or_default(),
        })
    }

    async fn mark(&self, mark: Mark) -> IndexResult<Option<String>> {
        sqlx::query_scalar("SELECT value FROM index_marks WHERE key = $1")
            .bind(mark.key())
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)
    }

    async fn set_mark(&self, mark: Mark, value: String) -> IndexResult<()> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        Self::set_mark_in(&mut tx, mark.key(), &value).await?;
        tx.commit().await.map_err(failed)
    }

    async fn replace_products(
        &self,
        products: Vec<Document<read::ProductView>>,
    ) -> IndexResult<()> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        sqlx::query("DELETE FROM index_products")
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        for product in &products {
            let body = serde_json::to_string(product).map_err(corrupt)?;
            sqlx::query(
                "INSERT INTO index_products (id, name, updated, body) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name, \
                    updated = excluded.updated, body = excluded.body",
            )
            .bind(crate::captures::without_nul(&product.id))
            .bind(product.name.as_deref().map(crate::captures::without_nul))
            .bind(product.updated)
            .bind(crate::captures::without_nul(&body))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        }
        tx.commit().await.map_err(failed)
    }

    async fn store_fill_batch(
        &self,
        items: Vec<Document<read::TransactionView>>,
        position: u64,
        total: u64,
    ) -> IndexResult<()> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        for item in &items {
            upsert(&mut tx, item, None).await?;
        }
        Self::set_mark_in(&mut tx, meta_keys::FILL_POSITION, &position.to_string()).await?;
        Self::set_mark_in(&mut tx, meta_keys::FILL_TOTAL, &total.to_string()).await?;
        tx.commit().await.map_err(failed)
    }

    async fn store_seen(
        &self,
        items: Vec<Document<read::TransactionView>>,
        watermark: Option<DateTime<Utc>>,
    ) -> IndexResult<Vec<ChangeKind>> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        let mut kinds = Vec::with_capacity(items.len());
        for item in &items {
            kinds.push(upsert(&mut tx, item, None).await?);
        }
        if let Some(watermark) = watermark {
            let value = watermark.timestamp_micros().to_string();
            Self::set_mark_in(&mut tx, meta_keys::WATERMARK, &value).await?;
        }
        tx.commit().await.map_err(failed)?;
        Ok(kinds)
    }

    async fn store_one(
        &self,
        item: Document<read::TransactionView>,
        events: String,
    ) -> IndexResult<ChangeKind> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        let kind = upsert(&mut tx, &item, Some(&events)).await?;
        tx.commit().await.map_err(failed)?;
        Ok(kind)
    }
}

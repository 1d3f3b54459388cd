//! The workspace's captures as the inspector and `partner listen captures` ask for them: the
//! local store's filters and search (pages: [`crate::capture_pages`]), facets, walks and
//! clears, answered by PostgreSQL with its indexes and full-text search, never a scan of the
//! table.
//!
//! Differences from the local store, each for the database's sake:
//! - the search matches words (PostgreSQL's `simple` configuration over the body's text and the
//!   header values: every word given must be there), so an event id (in the body) or a
//!   subscription id (in its header) is found as its words; the local store also finds
//!   substrings of ids, which no index answers;
//! - every count stops at [`COUNT_CAP`] (shown "10,000+"): an exact count of a million rows is
//!   a scan;
//! - pages go by keyset as well as by offset: `before` (the last id of the page shown) reads
//!   from the index where it stopped, however deep.

use crate::error::{Error, Result};
use partner_listener::Capture;
use partner_listener::{CaptureFilter, Facets, Verdict, COUNT_CAP, MAX_PAGE_LIMIT};
use sqlx::{PgExecutor, PgPool, Postgres, QueryBuilder};
use std::collections::BTreeMap;

/// The most values of one facet (event types, resource types, subscriptions) the inspector's
/// filter is offered.
pub const FACET_VALUES: i64 = 500;

/// The most of a body's text the search index takes (PostgreSQL's tsvector holds at most 1 MB).
const SEARCH_TEXT_LIMIT: usize = 256 * 1024;

/// `text` with each NUL replaced (PostgreSQL's text cannot hold one).
pub fn without_nul(text: &str) -> String {
    text.replace('\0', "\u{FFFD}")
}

/// The words a capture is found by: its body's text and its header values.
pub fn search_words(capture: &Capture) -> String {
    let mut words = String::new();
    if let Some(body) = capture.body.as_deref() {
        let text = String::from_utf8_lossy(body);
        let mut end = text.len().min(SEARCH_TEXT_LIMIT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        words.push_str(&text[..end]);
    }
    for header in &capture.headers {
        words.push(' ');
        words.push_str(&header.value);
    }
    without_nul(&words)
}

/// One capture by id.
pub async fn get(pool: &PgPool, id: i64) -> Result<Option<Capture>> {
    let record: Option<Vec<u8>> = sqlx::query_scalar("SELECT record FROM captures WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await?;
    record.as_deref().map(decode).transpose()
}

/// Every attempt of the notification capture `id` belongs to, first attempt first (the capture
/// alone when it is no notification's); `None` when there is no such capture.
pub async fn attempts_of(pool: &PgPool, id: i64) -> Result<Option<Vec<Capture>>> {
    let Some(capture) = get(pool, id).await? else {
        return Ok(None);
    };
    let Some(notification_id) = capture.notification_id else {
        return Ok(Some(vec![capture]));
    };
    let records: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT record FROM captures WHERE notification_id = $1 ORDER BY id")
            .bind(notification_id)
            .fetch_all(pool)
            .await?;
    let attempts = records
        .iter()
        .map(|record| decode(record))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(if attempts.is_empty() {
        vec![capture]
    } else {
        attempts
    }))
}

/// What the inspector's filter controls show for `filter`, as the local store's `facets`
/// answers it: the captures per verdict under the filter without its verdicts, the event
/// types, resource types and subscriptions present, the count under the whole filter; and how
/// many captures the workspace holds.
///
/// Each answered from an index, never a scan: without a filter the per-verdict counts are the
/// retention's tally (exact, kept by triggers); with one, each verdict's count stops past
/// [`COUNT_CAP`] (`capped`). The distinct values are read by a loose index scan (one index
/// probe per value, [`FACET_VALUES`] at most), not a `DISTINCT` over the table.
pub async fn facets(pool: &PgPool, filter: &CaptureFilter) -> Result<(Facets, u64)> {
    let filter = filter.clone().tidied();
    let others = CaptureFilter {
        verdicts: Vec::new(),
        ..filter.clone()
    };
    let tally: Vec<(String, i64)> =
        sqlx::query_as("SELECT verdict, captures FROM capture_tally WHERE captures > 0")
            .fetch_all(pool)
            .await?;
    let stored = tally.iter().map(|(_, n)| *n).sum::<i64>();
    let cap = i64::try_from(COUNT_CAP).unwrap_or(i64::MAX);
    let mut verdicts = BTreeMap::new();
    let mut capped = false;
    for (name, count) in tally {
        let Some(verdict) = Verdict::parse(&name) else {
            continue;
        };
        let count = if others == CaptureFilter::default() {
            count
        } else {
            let mut counting =
                QueryBuilder::<Postgres>::new("SELECT count(*) FROM (SELECT 1 FROM captures");
            push_filter(&mut counting, &others);
            counting
                .push(" AND verdict = ")
                .push_bind(name)
                .push(" LIMIT ")
                .push_bind(cap + 1)
                .push(") AS hits");
            let found: i64 = counting.build_query_scalar().fetch_one(pool).await?;
            if found > cap {
                capped = true;
            }
            found.min(cap)
        };
        if count > 0 {
            verdicts.insert(verdict, u64::try_from(count).unwrap_or_default());
        }
    }
    let total = verdicts
        .iter()
        .filter(|(verdict, _)| filter.verdicts.is_empty() || filter.verdicts.contains(verdict))
        .map(|(_, count)| *count)
        .sum();
    Ok((
        Facets {
            verdicts,
            event_types: distinct(pool, "event_type").await?,
            resource_types: distinct(pool, "resource_type").await?,
            subscriptions: distinct(pool, "subscription_id").await?,
            total,
            capped,
            unsearched: 0,
        },
        u64::try_from(stored).unwrap_or_default(),
    ))
}

/// The distinct values of an indexed column, sorted, by a loose index scan (each value found
/// by one probe of the column's index for the next greater one). `column` is one of the
/// facets' names, never the caller's text.
async fn distinct(pool: &PgPool, column: &'static str) -> Result<Vec<String>> {
    let sql = format!(
        "WITH RECURSIVE v(value, n) AS ( \
           SELECT min({column}), 1 FROM captures \
           UNION ALL \
           SELECT (SELECT min({column}) FROM captures WHERE {column} > v.value), v.n + 1 \
           FROM v WHERE v.value IS NOT NULL AND v.n < $1 \
         ) SELECT value FROM v WHERE value IS NOT NULL AND value <> ''"
    );
    Ok(sqlx::query_scalar(&sql)
        .bind(FACET_VALUES)
        .fetch_all(pool)
        .await?)
}

/// The captures whose eventId is `event_id` (of `subscription_id` and `resource_type` when
/// given), oldest first: a notification's attempts, for evidence.
pub async fn of_event(
    pool: &PgPool,
    event_id: &str,
    subscription_id: Option<&str>,
    resource_type: Option<&str>,
) -> Result<Vec<Capture>> {
    let records: Vec<Vec<u8>> = sqlx::query_scalar(
        "SELECT record FROM captures WHERE event_id = $1 \
         AND ($2::text IS NULL OR subscription_id = $2) \
         AND ($3::text IS NULL OR resource_type = $3) ORDER BY id",
    )
    .bind(without_nul(event_id))
    .bind(subscription_id.map(without_nul))
    .bind(resource_type.map(without_nul))
    .fetch_all(pool)
    .await?;
    records.iter().map(|record| decode(record)).collect()
}

/// Captures newer than `after`, oldest first (the live feed's catch-up), at most `limit`.
pub async fn after<'e>(
    executor: impl PgExecutor<'e>,
    after: i64,
    limit: i64,
) -> Result<Vec<Capture>> {
    let records: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT record FROM captures WHERE id > $1 ORDER BY id LIMIT $2")
            .bind(after)
            .bind(limit)
            .fetch_all(executor)
            .await?;
    records.iter().map(|record| decode(record)).collect()
}

/// The captures `filter` matches with ids after `after`, oldest first, at most `limit`: an
/// export's walk, page by page, by keyset.
pub async fn walk(
    pool: &PgPool,
    filter: &CaptureFilter,
    after: i64,
    limit: u64,
) -> Result<Vec<Capture>> {
    if limit > MAX_PAGE_LIMIT {
        return Err(Error::Invalid(format!(
            "a walk reads at most {MAX_PAGE_LIMIT} captures at a time ({limit} asked)"
        )));
    }
    let filter = filter.clone().tidied();
    let mut rows = QueryBuilder::<Postgres>::new("SELECT record FROM captures");
    push_filter(&mut rows, &filter);
    rows.push(" AND id > ")
        .push_bind(after)
        .push(" ORDER BY id LIMIT ")
        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
    let records: Vec<Vec<u8>> = rows.build_query_scalar().fetch_all(pool).await?;
    records.iter().map(|record| decode(record)).collect()
}

/// The newest capture's id (0 when there is none).
pub async fn newest_id(pool: &PgPool) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT coalesce(max(id), 0) FROM captures")
            .fetch_one(pool)
            .await?,
    )
}

/// Deletes the captures `filter` matches; a notification none of whose captures is left is
/// forgotten, so its next redelivery is a first attempt again (as in the local store).
pub async fn clear(pool: &PgPool, filter: &CaptureFilter) -> Result<u64> {
    let filter = filter.clone().tidied();
    let mut tx = pool.begin().await?;
    let mut delete = QueryBuilder::<Postgres>::new("DELETE FROM captures");
    push_filter(&mut delete, &filter);
    let cleared = delete.build().execute(&mut *tx).await?.rows_affected();
    sqlx::query(
        "DELETE FROM notifications AS n WHERE NOT EXISTS \
         (SELECT 1 FROM captures AS c WHERE c.notification_id = n.first_capture_id)",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(cleared)
}

/// ` WHERE ...` for `filter` (always a WHERE, so callers may add `AND ...`).
fn push_filter(builder: &mut QueryBuilder<'_, Postgres>, filter: &CaptureFilter) {
    builder.push(" WHERE true");
    push_conditions(builder, filter, "", &[]);
}

/// ` AND …` for each condition of `filter`, on the columns of the table `alias` names (`""`
/// for the table itself, else `"c."`), leaving out the equality columns in `elsewhere`: a
/// page's self-join writes those against tables of their own ([`crate::capture_pages`]).
pub(crate) fn push_conditions(
    builder: &mut QueryBuilder<'_, Postgres>,
    filter: &CaptureFilter,
    alias: &str,
    elsewhere: &[&str],
) {
    if !filter.ids.is_empty() {
        builder
            .push(format!(" AND {alias}id = ANY("))
            .push_bind(filter.ids.clone())
            .push(")");
    }
    if let Some(max_id) = filter.max_id {
        builder
            .push(format!(" AND {alias}id <= "))
            .push_bind(max_id);
    }
    if !filter.verdicts.is_empty() && !elsewhere.contains(&"verdict") {
        let verdicts: Vec<String> = filter
            .verdicts
            .iter()
            .map(|v| v.as_str().to_string())
            .collect();
        builder
            .push(format!(" AND {alias}verdict = ANY("))
            .push_bind(verdicts)
            .push(")");
    }
    let columns = [
        ("event_type", &filter.event_type),
        ("resource_type", &filter.resource_type),
        ("subscription_id", &filter.subscription_id),
    ];
    for (column, value) in columns {
        if let Some(value) = value.as_ref().filter(|_| !elsewhere.contains(&column)) {
            builder
                .push(format!(" AND {alias}{column} = "))
                .push_bind(without_nul(value));
        }
    }
    if let Some(since) = filter.since {
        builder
            .push(format!(" AND {alias}received_at >= "))
            .push_bind(since);
    }
    if let Some(until) = filter.until {
        builder
            .push(format!(" AND {alias}received_at < "))
            .push_bind(until);
    }
    if let Some(text) = &filter.text {
        // One condition the GIN index answers alone: the ids are words of the body and the
        // headers already (an `OR event_id = …` beside it made PostgreSQL walk the table:
        // 0.8 s at a million captures, BENCHMARKS.md).
        builder
            .push(format!(" AND {alias}search @@ plainto_tsquery('simple', "))
            .push_bind(without_nul(text))
            .push(")");
    }
}

/// The equality filters of `filter` that one column's index answers alone, as (column,
/// value): the event type, resource type and subscription, and the verdict when only one is
/// asked.
pub(crate) fn equalities(filter: &CaptureFilter) -> Vec<(&'static str, String)> {
    let mut found = Vec::new();
    if let [verdict] = filter.verdicts.as_slice() {
        found.push(("verdict", verdict.as_str().to_string()));
    }
    let columns = [
        ("event_type", &filter.event_type),
        ("resource_type", &filter.resource_type),
        ("subscription_id", &filter.subscription_id),
    ];
    for (column, value) in columns {
        if let Some(value) = value {
            found.push((column, without_nul(value)));
        }
    }
    found
}

pub(crate) fn decode(record: &[u8]) -> Result<Capture> {
    serde_json::from_slice(record)
        .map_err(|error| Error::Database(format!("a stored capture does not read: {error}")))
}

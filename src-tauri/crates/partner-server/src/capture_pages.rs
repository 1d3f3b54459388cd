//! A page of the workspace's captures, newest first, with its capped count: the SQL that
//! answers each kind of question at a million captures within the 100 ms, chosen
//! from what the count (and for a time range, two index probes) says about the matches.
//!
//! Why the shapes differ (BENCHMARKS.md, the team workspace, measured with `EXPLAIN ANALYZE`
//! at 1,000,000 captures):
//! - **Many matches** (the count passed [`COUNT_CAP`]): walking the primary key from the
//!   newest meets 50 of them soon. **Few**: the filter's own indexes find them, and only their
//!   ids are sorted (`ORDER BY id + 0` keeps PostgreSQL off the primary key, which it would
//!   walk for a word it has no statistics of: a million rows for a word found once); the 50
//!   records are read last, by id.
//! - **A time range** can have many matches none of which are near the newest: one day in the
//!   middle of thirty was a walk over half the table (270 ms). Two probes of the arrival-time
//!   index give the ids at the range's two ends; when more captures lie above the range than
//!   a third of the range's own span, its ids are read from that index instead (5 ms). The
//!   probes only choose the plan, never filter, so an import (old times at new ids) can make
//!   a page slower, never wrong.
//! - **Two or more equality filters** (event type and subscription, say): each column's index
//!   holds its ids in order, so the captures are joined to themselves once per filter and
//!   PostgreSQL merges the index-only scans. A `BitmapAnd` of the two indexes, which it
//!   chose for the plain `AND`, read every entry of both and then the heap (300 ms for a pair
//!   no capture has).
//! - **Grouped by notification**: a capture is its group's row when no newer capture of its
//!   notification matches the filter (`NOT EXISTS`, one probe of `(notification_id, id)`
//!   each), so a page reads 50 groups from the newest rather than numbering every match
//!   (`DISTINCT ON` over a million rows took 4 s). A capture that is no notification has no
//!   `notification_id` and is a group of its own; every attempt of a notification, the first
//!   included, carries its first capture's id ([`crate::capture_writer`]).

use crate::captures::{decode, equalities, push_conditions};
use crate::error::{Error, Result};
use partner_listener::{
    CaptureFilter, CapturePage, CaptureQuery, Grouping, ListedCapture, COUNT_CAP, MAX_PAGE_LIMIT,
};
use sqlx::{PgPool, Postgres, QueryBuilder};

/// One page of captures, newest first. `before`: only captures older than this id (a keyset
/// page: the previous page's last id).
pub async fn page(pool: &PgPool, query: &CaptureQuery, before: Option<i64>) -> Result<CapturePage> {
    if query.limit > MAX_PAGE_LIMIT {
        return Err(Error::Invalid(format!(
            "a page lists at most {MAX_PAGE_LIMIT} captures ({} asked)",
            query.limit
        )));
    }
    let filter = query.filter.clone().tidied();
    let window = Window {
        before,
        offset: i64::try_from(query.offset).unwrap_or(i64::MAX),
        limit: i64::try_from(query.limit).unwrap_or(i64::MAX),
    };
    let cap = i64::try_from(COUNT_CAP).unwrap_or(i64::MAX);
    let matches = count_matches(pool, &filter, cap).await?;
    let walk = matches > cap && walk_reaches_matches(pool, &filter, before).await?;
    let (total, found) = if matches == 0 {
        (0, Vec::new())
    } else if query.grouping == Grouping::ByNotification {
        let groups = count_groups(pool, &filter, cap, matches > cap, walk).await?;
        (groups, group_rows(pool, &filter, &window, walk).await?)
    } else {
        (matches, rows(pool, &filter, &window, walk).await?)
    };
    let items = found
        .into_iter()
        .map(|(record, group_attempts)| {
            Ok(ListedCapture {
                capture: decode(&record)?,
                group_attempts: u32::try_from(group_attempts).unwrap_or(u32::MAX),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(CapturePage {
        items,
        total: u64::try_from(total.min(cap)).unwrap_or_default(),
        total_capped: total > cap,
        unsearched: 0,
    })
}

/// Where a page starts and how long it is.
struct Window {
    before: Option<i64>,
    offset: i64,
    limit: i64,
}

/// ` FROM captures c [JOIN captures cN …] WHERE …`: the captures `filter` matches, each
/// equality filter after the first on a table of its own joined by id (see the module's
/// notes); `c` is the capture.
fn push_selection(builder: &mut QueryBuilder<'_, Postgres>, filter: &CaptureFilter) {
    let equal = equalities(filter);
    builder.push(" FROM captures c");
    let joined = if equal.len() >= 2 { &equal[1..] } else { &[] };
    for (n, _) in joined.iter().enumerate() {
        builder.push(format!(" JOIN captures c{n} ON c{n}.id = c.id"));
    }
    builder.push(" WHERE true");
    let elsewhere: Vec<&str> = joined.iter().map(|(column, _)| *column).collect();
    push_conditions(builder, filter, "c.", &elsewhere);
    for (n, (column, value)) in joined.iter().enumerate() {
        builder
            .push(format!(" AND c{n}.{column} = "))
            .push_bind(value.clone());
    }
}

/// How many captures `filter` matches, counted up to `cap + 1`.
async fn count_matches(pool: &PgPool, filter: &CaptureFilter, cap: i64) -> Result<i64> {
    let mut count = QueryBuilder::<Postgres>::new("SELECT count(*) FROM (SELECT 1");
    push_selection(&mut count, filter);
    count.push(" LIMIT ").push_bind(cap + 1).push(") AS hits");
    Ok(count.build_query_scalar().fetch_one(pool).await?)
}

/// Whether walking the primary key from the newest (or from `before`) meets the matches soon:
/// always without a time range; with one, unless more captures lie above the range than a
/// third of the range's span, as the arrival-time index's two ends of the range say.
async fn walk_reaches_matches(
    pool: &PgPool,
    filter: &CaptureFilter,
    before: Option<i64>,
) -> Result<bool> {
    if filter.since.is_none() && filter.until.is_none() {
        return Ok(true);
    }
    let range = CaptureFilter {
        since: filter.since,
        until: filter.until,
        ..CaptureFilter::default()
    };
    let mut probe = QueryBuilder::<Postgres>::new("SELECT (SELECT id FROM captures");
    push_range_end(&mut probe, &range, "DESC");
    probe.push(", (SELECT id FROM captures");
    push_range_end(&mut probe, &range, "ASC");
    probe.push(", (SELECT max(id) FROM captures)");
    let (newest_in_range, oldest_in_range, newest): (Option<i64>, Option<i64>, Option<i64>) =
        probe.build_query_as().fetch_one(pool).await?;
    let (Some(high), Some(low), Some(newest)) = (newest_in_range, oldest_in_range, newest) else {
        return Ok(false);
    };
    let top = before.map_or(newest, |before| newest.min(before - 1));
    Ok(top.saturating_sub(high).saturating_mul(3) < high.saturating_sub(low))
}

/// ` WHERE <range> ORDER BY received_at <direction>, id <direction> LIMIT 1)`.
fn push_range_end(
    builder: &mut QueryBuilder<'_, Postgres>,
    range: &CaptureFilter,
    direction: &str,
) {
    builder.push(" WHERE true");
    push_conditions(builder, range, "", &[]);
    builder.push(format!(
        " ORDER BY received_at {direction}, id {direction} LIMIT 1)"
    ));
}

/// The page's captures, every attempt its own row.
async fn rows(
    pool: &PgPool,
    filter: &CaptureFilter,
    window: &Window,
    walk: bool,
) -> Result<Vec<(Vec<u8>, i64)>> {
    let mut rows = QueryBuilder::<Postgres>::new("");
    if walk {
        rows.push("SELECT c.record, 1::bigint FROM captures c WHERE true");
        push_conditions(&mut rows, filter, "c.", &[]);
        push_window(&mut rows, window, " ORDER BY c.id DESC");
    } else {
        rows.push("SELECT record, 1::bigint FROM captures WHERE id IN (SELECT c.id");
        push_selection(&mut rows, filter);
        push_window(&mut rows, window, " ORDER BY c.id + 0 DESC");
        rows.push(") ORDER BY id DESC");
    }
    Ok(rows.build_query_as().fetch_all(pool).await?)
}

/// ` AND c.id < before <order> OFFSET … LIMIT …`.
fn push_window(builder: &mut QueryBuilder<'_, Postgres>, window: &Window, order: &str) {
    if let Some(before) = window.before {
        builder.push(" AND c.id < ").push_bind(before);
    }
    builder
        .push(order)
        .push(" OFFSET ")
        .push_bind(window.offset)
        .push(" LIMIT ")
        .push_bind(window.limit);
}

/// ` AND NOT EXISTS (…)`: no newer capture of `c`'s notification matches the filter.
fn push_newest_of_group(builder: &mut QueryBuilder<'_, Postgres>, filter: &CaptureFilter) {
    builder.push(
        " AND NOT EXISTS (SELECT 1 FROM captures n \
         WHERE n.notification_id = c.notification_id AND n.id > c.id",
    );
    push_conditions(builder, filter, "n.", &[]);
    builder.push(")");
}

/// How many groups (notifications, and captures that are none) the matches make, counted up
/// to `cap + 1`: exactly when the matches are few, else newest first (by the walk, or from
/// the filter's indexes) until past the cap.
async fn count_groups(
    pool: &PgPool,
    filter: &CaptureFilter,
    cap: i64,
    many: bool,
    walk: bool,
) -> Result<i64> {
    let mut count =
        QueryBuilder::<Postgres>::new("SELECT count(*) FROM (SELECT 1 FROM captures c WHERE true");
    push_conditions(&mut count, filter, "c.", &[]);
    push_newest_of_group(&mut count, filter);
    if many {
        if walk {
            count.push(" ORDER BY c.id DESC");
        }
        count.push(" LIMIT ").push_bind(cap + 1);
    }
    count.push(") AS groups");
    Ok(count.build_query_scalar().fetch_one(pool).await?)
}

/// The page's groups: each its newest matching capture, with how many of its captures match.
/// Not walking, the matches' ids are sorted first (from the filter's indexes) and the groups'
/// test runs on them newest first until the page is full, not on every match.
async fn group_rows(
    pool: &PgPool,
    filter: &CaptureFilter,
    window: &Window,
    walk: bool,
) -> Result<Vec<(Vec<u8>, i64)>> {
    let mut rows = QueryBuilder::<Postgres>::new(
        "SELECT c.record, CASE WHEN c.notification_id IS NULL THEN 1 ELSE \
         (SELECT count(*) FROM captures a WHERE a.notification_id = c.notification_id",
    );
    push_conditions(&mut rows, filter, "a.", &[]);
    rows.push(") END FROM ");
    if walk {
        rows.push("captures c WHERE true");
        push_conditions(&mut rows, filter, "c.", &[]);
        push_newest_of_group(&mut rows, filter);
        push_window(&mut rows, window, " ORDER BY c.id DESC");
    } else {
        rows.push("(SELECT c.id + 0 AS newest");
        push_selection(&mut rows, filter);
        if let Some(before) = window.before {
            rows.push(" AND c.id < ").push_bind(before);
        }
        rows.push(" ORDER BY newest DESC) AS m JOIN captures c ON c.id = m.newest WHERE true");
        push_newest_of_group(&mut rows, filter);
        rows.push(" ORDER BY m.newest DESC OFFSET ")
            .push_bind(window.offset)
            .push(" LIMIT ")
            .push_bind(window.limit);
    }
    Ok(rows.build_query_as().fetch_all(pool).await?)
}

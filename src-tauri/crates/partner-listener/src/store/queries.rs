//! Query planning: how a page, a count or the facets of a filter are read from the store's
//! tables and indexes, for the layout the store has ([`IndexLayout`]), and the SQL of a filter.
//!
//! The inspector reads the store, not a copy of it, so these must stay fast at a million
//! captures (`benches/query.rs`); why each path is chosen is said where it is chosen. Below
//! the store's handles: [`QueryPlanner`] takes a read connection and knows nothing of the pool
//! it came from or of the writer.

use super::rows::{capture_from_row, from_micros, CAPTURE_COLUMNS};
use super::schema::IndexLayout;
use super::types::{
    CaptureFilter, CapturePage, CaptureQuery, Facets, Grouping, HitCount, ListedCapture, COUNT_CAP,
    COUNT_TIME_BUDGET, MAX_PAGE_LIMIT,
};
use crate::capture::Capture;
use crate::facet_counts;
use crate::search::{self, SearchText};
use crate::verdict::Verdict;
use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};
use std::collections::BTreeMap;

/// How a store's reads are planned: by whether it has the search index and by how it answers
/// its counts.
#[derive(Debug, Clone, Copy)]
pub(super) struct QueryPlanner {
    /// The store has the search index (schema 4). A store made by an older version, read
    /// beside its older listener, has not: a search scans it all then.
    pub(super) indexed: bool,
    /// What answers its counts and which indexes its queries may name.
    pub(super) layout: IndexLayout,
}

impl QueryPlanner {
    /// [`StoreReader::count`](super::StoreReader::count) on `conn`, planned for this store.
    pub(super) fn count(&self, conn: &Connection, filter: &CaptureFilter) -> Result<u64> {
        if self.layout == IndexLayout::Counted && counts_answer(filter) {
            return self.counted_total(conn, filter);
        }
        let snapshot = conn.unchecked_transaction()?;
        let tables = self.tables(&snapshot, filter)?;
        let (condition, args) = filter_sql(filter, &tables);
        let total: i64 = snapshot.query_row(
            &format!("SELECT COUNT(*) FROM captures WHERE {condition}"),
            params_from_iter(args.iter()),
            |row| row.get(0),
        )?;
        Ok(total.max(0) as u64)
    }

    /// [`StoreReader::page`](super::StoreReader::page) on `conn`, planned for this store.
    pub(super) fn page(&self, conn: &Connection, query: &CaptureQuery) -> Result<CapturePage> {
        let limit = query.limit.min(MAX_PAGE_LIMIT);
        let search = query.filter.text.as_deref().and_then(SearchText::parse);
        // One snapshot for the count, the ids and the rows (the writer goes on meanwhile).
        let snapshot = conn.unchecked_transaction()?;
        let conn = &*snapshot;
        let mut args: Vec<Box<dyn ToSql>> = Vec::new();
        let parts = FilterParts {
            verdicts: true,
            text: false,
        };
        let tables = self.tables(conn, &query.filter)?;
        let condition = filter_condition(&query.filter, "c", &tables, parts, &mut args);
        let mut ids: Vec<(i64, Option<i64>)> = Vec::new();
        let (total, total_capped) = if search.is_none() && query.grouping == Grouping::EveryAttempt
        {
            // Exact count, and only the page's ids read from the index.
            let total = if self.layout == IndexLayout::Counted && counts_answer(&query.filter) {
                self.counted_total(conn, &query.filter)?
            } else {
                let total: i64 = conn.query_row(
                    &format!(
                        "SELECT COUNT(*) FROM captures c {} WHERE {condition}",
                        count_index(&query.filter, true, self.layout)
                    ),
                    params_from_iter(args.iter()),
                    |row| row.get(0),
                )?;
                total.max(0) as u64
            };
            match dense_ids(conn, &query.filter, total)? {
                // The page's ids are arithmetic: no index walk to a middle page.
                Some((oldest, newest)) => {
                    let first =
                        newest.saturating_sub(i64::try_from(query.offset).unwrap_or(i64::MAX));
                    let last = first.saturating_sub(limit as i64 - 1).max(oldest);
                    ids.extend((last..=first).rev().map(|id| (id, None)));
                }
                None => {
                    let mut select = conn.prepare(&format!(
                        "SELECT c.id, c.notification_id FROM captures c {} WHERE {condition} \
                         ORDER BY c.id DESC LIMIT {limit} OFFSET {}",
                        list_index(&query.filter, self.layout),
                        query.offset.min(i64::MAX as u64)
                    ))?;
                    let mut rows = select.query(params_from_iter(args.iter()))?;
                    while let Some(row) = rows.next()? {
                        ids.push((row.get(0)?, row.get(1)?));
                    }
                }
            }
            (total, false)
        } else {
            let chains = self.chains(&tables, &query.filter, search.as_ref(), true);
            let grouped = query.grouping == Grouping::ByNotification;
            let page_end = query.offset.saturating_add(limit);
            let enough = match query.count {
                HitCount::UpToCap => page_end.max(COUNT_CAP),
                HitCount::ThroughPage => page_end,
            };
            let mut seen_groups = std::collections::HashSet::new();
            let mut counted = 0u64;
            let mut capped = false;
            let mut filled_at: Option<std::time::Instant> = None;
            search::merge_newest_first(conn, &chains, &mut |&(id, notification, _)| {
                if counted >= page_end
                    && filled_at
                        .get_or_insert_with(std::time::Instant::now)
                        .elapsed()
                        > COUNT_TIME_BUDGET
                {
                    capped = true;
                    return false;
                }
                if grouped && !seen_groups.insert(group_key(id, notification)) {
                    return true;
                }
                if counted == enough {
                    capped = true;
                    return false;
                }
                if counted >= query.offset && counted < query.offset.saturating_add(limit) {
                    ids.push((id, notification));
                }
                counted += 1;
                true
            })?;
            (counted, capped)
        };
        let mut items = Vec::with_capacity(ids.len());
        let mut get = conn.prepare_cached(&format!(
            "SELECT {CAPTURE_COLUMNS} FROM captures WHERE id = ?1"
        ))?;
        for &(id, notification) in &ids {
            let Some(capture) = get.query_row([id], capture_from_row).optional()? else {
                continue;
            };
            let group_attempts = match (query.grouping, notification) {
                (Grouping::ByNotification, Some(notification)) => {
                    self.matching_attempts(conn, &tables, &query.filter, notification)?
                }
                _ => 1,
            };
            items.push(ListedCapture {
                capture,
                group_attempts,
            });
        }
        drop(get);
        drop(snapshot);
        Ok(CapturePage {
            items,
            total,
            total_capped,
            unsearched: tables.unsearched,
        })
    }

    /// The search tables a query of `filter` reads, in `conn`'s snapshot (none without a
    /// search: then the list of shards is not read).
    fn tables(&self, conn: &Connection, filter: &CaptureFilter) -> Result<search::SearchTables> {
        if self.indexed && filter.text.as_deref().and_then(SearchText::parse).is_some() {
            let list_index = self.layout != IndexLayout::Plain;
            search::SearchTables::bounded(conn, search::TAIL_SCAN_LIMIT, list_index)
        } else {
            Ok(search::SearchTables::unread(self.indexed))
        }
    }

    /// The ordered streams of captures matching `filter` (with or without its verdicts) and
    /// `search`, in chains, for [`search::merge_newest_first`]: one walk of `captures_list`
    /// without a search, the search's chains ([`SearchText::chains`]) with one.
    fn chains(
        &self,
        tables: &search::SearchTables,
        filter: &CaptureFilter,
        search: Option<&SearchText>,
        with_verdicts: bool,
    ) -> Vec<Vec<search::Stream>> {
        let parts = FilterParts {
            verdicts: with_verdicts,
            text: false,
        };
        let condition =
            |args: &mut Vec<Box<dyn ToSql>>| filter_condition(filter, "c", tables, parts, args);
        match search {
            Some(search) => search.chains(tables, &condition),
            None => {
                let mut args = Vec::new();
                let condition = condition(&mut args);
                vec![vec![(
                    format!(
                        "SELECT c.id, c.notification_id, c.verdict FROM captures c {} \
                         WHERE {condition} ORDER BY c.id DESC",
                        list_index(filter, self.layout)
                    ),
                    args,
                )]]
            }
        }
    }

    /// How many captures of the notification `notification_id` match `filter`.
    fn matching_attempts(
        &self,
        conn: &Connection,
        tables: &search::SearchTables,
        filter: &CaptureFilter,
        notification_id: i64,
    ) -> Result<u32> {
        let mut args: Vec<Box<dyn ToSql>> = vec![Box::new(notification_id)];
        let condition = filter_condition(filter, "c", tables, FilterParts::ALL, &mut args);
        let count: i64 = conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM captures c INDEXED BY captures_by_notification \
                 WHERE c.notification_id = ?1 AND {condition}"
            ),
            params_from_iter(args.iter()),
            |row| row.get(0),
        )?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX).max(1))
    }

    /// How many captures `filter` (which [`counts_answer`]) selects, from the counts
    /// and the tail above them.
    fn counted_total(&self, conn: &Connection, filter: &CaptureFilter) -> Result<u64> {
        let mut args: Vec<Box<dyn ToSql>> = Vec::new();
        let parts = FilterParts {
            verdicts: true,
            text: false,
        };
        let tables = search::SearchTables::unread(self.indexed);
        let rows = facet_counts::counted_rows(&mut |alias| {
            filter_condition(filter, alias, &tables, parts, &mut args)
        });
        let total: i64 = conn
            .prepare_cached(&format!("SELECT COALESCE(SUM(captures), 0) FROM ({rows})"))?
            .query_row(params_from_iter(args.iter()), |row| row.get(0))?;
        Ok(total.max(0) as u64)
    }

    /// [`StoreReader::search_backlog`](super::StoreReader::search_backlog) on `conn`, planned for
    /// this store.
    pub(super) fn search_backlog(&self, conn: &Connection) -> Result<u64> {
        let sql = if self.indexed {
            "SELECT COUNT(*) FROM captures WHERE id > \
             (SELECT indexed_through FROM search_state WHERE one = 1)"
        } else {
            "SELECT COUNT(*) FROM captures"
        };
        let backlog: i64 = conn.query_row(sql, [], |row| row.get(0))?;
        Ok(backlog.max(0) as u64)
    }

    /// [`StoreReader::facets`](super::StoreReader::facets) on `conn`, planned for this store.
    pub(super) fn facets(&self, conn: &Connection, filter: &CaptureFilter) -> Result<Facets> {
        let snapshot = conn.unchecked_transaction()?;
        let conn = &*snapshot;
        let tables = self.tables(conn, filter)?;
        let values = |column| match self.layout {
            IndexLayout::Counted => facet_counts::distinct_values(conn, column),
            _ => distinct_values(conn, column),
        };
        let mut facets = Facets {
            event_types: values("event_type")?,
            resource_types: values("resource_type")?,
            subscriptions: values("subscription_id")?,
            ..Facets::default()
        };
        let mut args: Vec<Box<dyn ToSql>> = Vec::new();
        let parts = FilterParts {
            verdicts: false,
            text: false,
        };
        let condition = filter_condition(filter, "c", &tables, parts, &mut args);
        let mut counts: BTreeMap<Verdict, u64> = BTreeMap::new();
        match filter.text.as_deref().and_then(SearchText::parse) {
            None => {
                let sql = if self.layout == IndexLayout::Counted && counts_answer(filter) {
                    args.clear();
                    let rows = facet_counts::counted_rows(&mut |alias| {
                        filter_condition(filter, alias, &tables, parts, &mut args)
                    });
                    format!("SELECT verdict, SUM(captures) FROM ({rows}) GROUP BY verdict")
                } else {
                    format!(
                        "SELECT c.verdict, COUNT(*) FROM captures c {} WHERE {condition} \
                         GROUP BY c.verdict",
                        verdict_count_index(filter, self.layout)
                    )
                };
                let mut select = conn.prepare(&sql)?;
                let mut rows = select.query(params_from_iter(args.iter()))?;
                while let Some(row) = rows.next()? {
                    if let Some(verdict) = Verdict::parse(&row.get::<_, String>(0)?) {
                        counts.insert(verdict, row.get::<_, i64>(1)?.max(0) as u64);
                    }
                }
            }
            Some(search) => {
                let chains = self.chains(&tables, filter, Some(&search), false);
                let mut counted = 0;
                // Timed from the first hit, as a page's count is from its last row: a search
                // whose first hit takes long to find (a scan of captures not indexed yet after
                // an import) still counts what it found, rather than "0+" for every verdict.
                let mut first_hit: Option<std::time::Instant> = None;
                search::merge_newest_first(conn, &chains, &mut |(_, _, verdict)| {
                    let counting = first_hit.get_or_insert_with(std::time::Instant::now);
                    if counted >= COUNT_CAP || counting.elapsed() > COUNT_TIME_BUDGET {
                        facets.capped = true;
                        return false;
                    }
                    counted += 1;
                    if let Some(verdict) = Verdict::parse(verdict) {
                        *counts.entry(verdict).or_default() += 1;
                    }
                    true
                })?;
            }
        }
        facets.total = if filter.verdicts.is_empty() {
            counts.values().sum()
        } else {
            filter
                .verdicts
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|v| counts.get(v).copied().unwrap_or(0))
                .sum()
        };
        facets.verdicts = counts;
        facets.unsearched = tables.unsearched;
        Ok(facets)
    }

    /// [`StoreReader::for_each`](super::StoreReader::for_each) on `conn`, planned for this store.
    pub(super) fn for_each(
        &self,
        conn: &Connection,
        filter: &CaptureFilter,
        mut f: impl FnMut(Capture) -> Result<()>,
    ) -> Result<()> {
        let snapshot = conn.unchecked_transaction()?;
        let tables = self.tables(&snapshot, filter)?;
        let (condition, args) = filter_sql(filter, &tables);
        let mut stmt = snapshot.prepare(&format!(
            "SELECT {CAPTURE_COLUMNS} FROM captures WHERE {condition} ORDER BY id"
        ))?;
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        while let Some(row) = rows.next()? {
            f(capture_from_row(row)?)?;
        }
        Ok(())
    }

    /// [`StoreReader::count_by_verdict`](super::StoreReader::count_by_verdict) on `conn`, planned
    /// for this store.
    pub(super) fn count_by_verdict(
        &self,
        conn: &Connection,
        filter: &CaptureFilter,
    ) -> Result<BTreeMap<Verdict, u64>> {
        let snapshot = conn.unchecked_transaction()?;
        let tables = self.tables(&snapshot, filter)?;
        let (condition, args) = filter_sql(filter, &tables);
        let mut stmt = snapshot.prepare(&format!(
            "SELECT verdict, COUNT(*) FROM captures WHERE {condition} GROUP BY verdict"
        ))?;
        let mut counts = BTreeMap::new();
        let mut rows = stmt.query(params_from_iter(args.iter()))?;
        while let Some(row) = rows.next()? {
            let verdict: String = row.get(0)?;
            let count: i64 = row.get(1)?;
            if let Some(verdict) = Verdict::parse(&verdict) {
                counts.insert(verdict, count as u64);
            }
        }
        Ok(counts)
    }

    /// [`StoreReader::first_capture_of`](super::StoreReader::first_capture_of) on `conn`, planned
    /// for this store.
    pub(super) fn first_capture_of(
        &self,
        conn: &Connection,
        subscription_id: &str,
    ) -> Result<Option<DateTime<Utc>>> {
        // Without the subscription's own index (schema 5), one pass over `captures_list` rather
        // than a walk of the time index reading each row.
        let hint = match self.layout {
            IndexLayout::Counted => "INDEXED BY captures_list",
            _ => "",
        };
        let first: Option<i64> = conn.query_row(
            &format!("SELECT MIN(received_at_us) FROM captures {hint} WHERE subscription_id = ?1"),
            [subscription_id],
            |row| row.get(0),
        )?;
        Ok(first.map(from_micros))
    }
}

/// Whether the counts of `filter` can be read from `facet_counts` ([`crate::facet_counts`]): it
/// restricts only the counted columns (no ids, id bound, time range or search, which keep their own
/// paths).
fn counts_answer(filter: &CaptureFilter) -> bool {
    filter.ids.is_empty()
        && filter.max_id.is_none()
        && filter.since.is_none()
        && filter.until.is_none()
        && filter.text.as_deref().and_then(SearchText::parse).is_none()
}

/// The oldest and newest capture ids when `filter` lists every capture and none is missing
/// between them (`total` captures, as counted in the same snapshot): then the capture `offset`
/// rows from the newest is the newest id less `offset`, and a page in the middle of a million
/// reads its rows by id instead of stepping over half a million index entries (12 ms at 1M,
/// `benches/query.rs`). Ids are given in arrival order and retention deletes the oldest, so a
/// store stays dense until a clear under a filter (or an import of older ids) leaves a gap;
/// the index walk answers then.
fn dense_ids(conn: &Connection, filter: &CaptureFilter, total: u64) -> Result<Option<(i64, i64)>> {
    if *filter != CaptureFilter::default() || total == 0 {
        return Ok(None);
    }
    let (oldest, newest): (Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT (SELECT MIN(id) FROM captures), (SELECT MAX(id) FROM captures)")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(match (oldest, newest) {
        (Some(oldest), Some(newest))
            if u64::try_from(newest - oldest).ok().map(|span| span + 1) == Some(total) =>
        {
            Some((oldest, newest))
        }
        _ => None,
    })
}

/// The index a walk over `filter`'s captures, newest first, reads: `captures_list` (the id and
/// every filtered column), unless the filter names its captures; in a store of schema 4, for
/// one value of one column, that column's narrow index, (value, id), in id order already.
fn list_index(filter: &CaptureFilter, layout: IndexLayout) -> &'static str {
    match layout {
        IndexLayout::Plain => return "",
        IndexLayout::Counted if filter.ids.is_empty() => return "INDEXED BY captures_list",
        IndexLayout::Counted => return "",
        IndexLayout::Narrow => {}
    }
    let one_value_of_one_column = filtered_columns(filter, true) == 1
        && filter.verdicts.len() <= 1
        && filter.since.is_none()
        && filter.until.is_none();
    if !filter.ids.is_empty() || one_value_of_one_column {
        ""
    } else {
        "INDEXED BY captures_list"
    }
}

/// How many of the filter's columns (verdict when `with_verdicts`, event type, resource type,
/// subscription, time) it restricts.
fn filtered_columns(filter: &CaptureFilter, with_verdicts: bool) -> usize {
    [
        with_verdicts && !filter.verdicts.is_empty(),
        filter.event_type.is_some(),
        filter.resource_type.is_some(),
        filter.subscription_id.is_some(),
        filter.since.is_some() || filter.until.is_some(),
    ]
    .into_iter()
    .filter(|&restricted| restricted)
    .count()
}

/// The index an exact count under `filter` reads. One column: its own narrow index (SQLite
/// picks it). Two or more: `captures_list`, which holds them all, so no row is read; the
/// narrow index of one column would have SQLite read a 2.5 KB row per entry to check the
/// others.
fn count_index(filter: &CaptureFilter, with_verdicts: bool, layout: IndexLayout) -> &'static str {
    let least_columns = match layout {
        IndexLayout::Plain => return "",
        // No column has its own index: under a column, or an id bound, the count reads
        // `captures_list`, not the rows; a time range alone reads its own index.
        IndexLayout::Counted => {
            let time_alone = filter.max_id.is_none()
                && filtered_columns(filter, with_verdicts) == 1
                && (filter.since.is_some() || filter.until.is_some());
            let restricted = filter.max_id.is_some() || filtered_columns(filter, with_verdicts) > 0;
            return if filter.ids.is_empty() && restricted && !time_alone {
                "INDEXED BY captures_list"
            } else {
                ""
            };
        }
        IndexLayout::Narrow => 2,
    };
    if filter.ids.is_empty() && filtered_columns(filter, with_verdicts) >= least_columns {
        "INDEXED BY captures_list"
    } else {
        ""
    }
}

/// The index the verdict facet (verdicts counted under `filter` without its verdicts) reads:
/// the narrow verdict index when nothing else is filtered, else `captures_list` (see
/// [`count_index`]).
fn verdict_count_index(filter: &CaptureFilter, layout: IndexLayout) -> &'static str {
    if !filter.ids.is_empty() || layout == IndexLayout::Plain {
        ""
    } else if layout == IndexLayout::Counted {
        "INDEXED BY captures_list"
    } else if filtered_columns(filter, false) == 0 {
        "INDEXED BY captures_verdict"
    } else {
        "INDEXED BY captures_list"
    }
}

/// The group a row of a grouped page belongs to: its notification, or itself.
fn group_key(id: i64, notification_id: Option<i64>) -> (bool, i64) {
    match notification_id {
        Some(notification) => (true, notification),
        None => (false, id),
    }
}

/// The distinct values of an indexed column, sorted, by skipping through its index (one
/// seek per value) rather than reading every entry.
fn distinct_values(conn: &Connection, column: &str) -> Result<Vec<String>> {
    let mut select = conn.prepare_cached(&format!(
        "WITH RECURSIVE next(value) AS ( \
             SELECT MIN({column}) FROM captures \
             UNION ALL \
             SELECT (SELECT MIN({column}) FROM captures WHERE {column} > next.value) \
             FROM next WHERE next.value IS NOT NULL) \
         SELECT value FROM next WHERE value IS NOT NULL"
    ))?;
    let values = select
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(values)
}

/// Which parts of a filter [`filter_sql`] writes.
#[derive(Debug, Clone, Copy)]
struct FilterParts {
    verdicts: bool,
    text: bool,
}

impl FilterParts {
    pub(super) const ALL: FilterParts = FilterParts {
        verdicts: true,
        text: true,
    };
}

/// The WHERE clause and its arguments for a filter, on the whole store.
pub(super) fn filter_sql(
    filter: &CaptureFilter,
    tables: &search::SearchTables,
) -> (String, Vec<Box<dyn ToSql>>) {
    let mut args = Vec::new();
    let condition = filter_condition(filter, "captures", tables, FilterParts::ALL, &mut args);
    (condition, args)
}

/// The condition `filter` puts on a `captures` row named `alias`, its arguments appended to
/// `args` (numbered placeholders, so a caller can use the condition in several places).
fn filter_condition(
    filter: &CaptureFilter,
    alias: &str,
    tables: &search::SearchTables,
    parts: FilterParts,
    args: &mut Vec<Box<dyn ToSql>>,
) -> String {
    let mut clauses: Vec<String> = vec!["1 = 1".into()];
    let placeholder = |args: &mut Vec<Box<dyn ToSql>>, value: Box<dyn ToSql>| {
        args.push(value);
        format!("?{}", args.len())
    };
    if !filter.ids.is_empty() {
        let list: Vec<String> = filter
            .ids
            .iter()
            .map(|id| placeholder(args, Box::new(*id)))
            .collect();
        clauses.push(format!("{alias}.id IN ({})", list.join(", ")));
    }
    if parts.verdicts && !filter.verdicts.is_empty() {
        let list: Vec<String> = filter
            .verdicts
            .iter()
            .map(|v| placeholder(args, Box::new(v.as_str())))
            .collect();
        clauses.push(format!("{alias}.verdict IN ({})", list.join(", ")));
    }
    for (column, value) in [
        ("event_type", &filter.event_type),
        ("resource_type", &filter.resource_type),
        ("subscription_id", &filter.subscription_id),
    ] {
        if let Some(value) = value {
            let p = placeholder(args, Box::new(value.clone()));
            clauses.push(format!("{alias}.{column} = {p}"));
        }
    }
    if let Some(max_id) = filter.max_id {
        let p = placeholder(args, Box::new(max_id));
        clauses.push(format!("{alias}.id <= {p}"));
    }
    if let Some(since) = filter.since {
        let p = placeholder(args, Box::new(since.timestamp_micros()));
        clauses.push(format!("{alias}.received_at_us >= {p}"));
    }
    if let Some(until) = filter.until {
        let p = placeholder(args, Box::new(until.timestamp_micros()));
        clauses.push(format!("{alias}.received_at_us < {p}"));
    }
    if parts.text {
        if let Some(search) = filter.text.as_deref().and_then(SearchText::parse) {
            clauses.push(search.condition(alias, tables, args));
        }
    }
    clauses.join(" AND ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::SearchTables;

    /// A store of `count` captures (ids 1..=count, each body "loan approved <id>"), none of
    /// them indexed for search yet: what an import of an older store leaves while the
    /// indexer catches up.
    fn unindexed_store(count: i64) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(super::super::schema::SCHEMA).unwrap();
        conn.execute_batch(search::SEARCH_SCHEMA).unwrap();
        search::register_functions(&conn).unwrap();
        for id in 1..=count {
            conn.execute(
                "INSERT INTO captures (id, received_at, received_at_us, method, path, headers, \
                 body, body_size, verdict, attempt, response_status, response_body, \
                 response_from_test_mode, response_delay_ms, processing_micros, replay) \
                 VALUES (?1, '2026-11-27T00:00:00Z', ?1, 'POST', '/webhooks', '[]', \
                 CAST('loan approved ' || ?1 AS BLOB), 20, 'valid', 0, 200, '', 0, 0, 1, 0)",
                [id],
            )
            .unwrap();
        }
        conn
    }

    fn found(conn: &Connection, tables: &SearchTables, text: &str) -> Vec<i64> {
        let search = SearchText::parse(text).unwrap();
        let chains = search.chains(tables, &|_| "1".into());
        let mut ids = Vec::new();
        search::merge_newest_first(conn, &chains, &mut |&(id, _, _)| {
            ids.push(id);
            true
        })
        .unwrap();
        ids
    }

    #[test]
    fn a_search_while_the_index_catches_up_scans_the_newest_of_the_tail_and_says_what_it_left() {
        let conn = unindexed_store(10);
        // A person's search: the newest 4 not indexed are scanned, the 6 older are said.
        let tables = SearchTables::bounded(&conn, 4, true).unwrap();
        assert_eq!((tables.tail_scan_above, tables.unsearched), (Some(6), 6));
        assert_eq!(found(&conn, &tables, "loan"), vec![10, 9, 8, 7]);
        assert_eq!(found(&conn, &tables, "approved 3"), Vec::<i64>::new());
        // The same without the narrow index of ids (an older store read beside its listener).
        let plain = SearchTables::bounded(&conn, 4, false).unwrap();
        assert_eq!((plain.tail_scan_above, plain.unsearched), (Some(6), 6));

        // A delete by filter reads every capture not indexed, however many.
        let whole = SearchTables::read(&conn, true).unwrap();
        assert_eq!((whole.tail_scan_above, whole.unsearched), (None, 0));
        assert_eq!(found(&conn, &whole, "loan").len(), 10);

        // Caught up but for a tail within the limit: nothing is left out.
        conn.execute("UPDATE search_state SET indexed_through = 7", [])
            .unwrap();
        let tables = SearchTables::bounded(&conn, 4, true).unwrap();
        assert_eq!((tables.tail_scan_above, tables.unsearched), (None, 0));
        assert_eq!(found(&conn, &tables, "loan"), vec![10, 9, 8]);

        // Ids with gaps: the bound counts captures, not ids.
        conn.execute("UPDATE search_state SET indexed_through = 0", [])
            .unwrap();
        conn.execute("DELETE FROM captures WHERE id IN (8, 9)", [])
            .unwrap();
        let tables = SearchTables::bounded(&conn, 4, true).unwrap();
        assert_eq!((tables.tail_scan_above, tables.unsearched), (Some(4), 4));
        assert_eq!(found(&conn, &tables, "loan"), vec![10, 7, 6, 5]);
    }
}

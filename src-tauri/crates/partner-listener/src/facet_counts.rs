//! How many captures there are per (verdict, event type, resource type, subscription): the
//! table `facet_counts` the inspector's counts, page totals and lists of values are read from
//! when its filter names only those columns.
//!
//! Why a table kept behind the writer rather than indexes kept by it: schema 4 had one index
//! per filtered column (verdict, event type, resource type, subscription) so those counts would
//! not read a million rows, and the writer paid for all four inside every insert, which every
//! acknowledgement waits on (its CPU per capture went from 15 to 20.5 µs, `benches/store.rs`).
//! The counts of a store are few rows (one per combination present), so they are kept instead by
//! the search indexer thread ([`crate::search::index_rows`]), in the same short transactions as
//! the search index and under the same watermark, `search_state.indexed_through`: every capture
//! the indexer indexes it also counts, so one watermark says what both hold, there is one tail
//! (the captures above it) to cover, and an import below the watermark, which indexes its
//! captures in its own transaction, counts them there too.
//!
//! A query is one statement: the table's rows matching the filter plus a scan of the captures
//! above the watermark (through `captures_list`, which starts with the id), so it reads one
//! snapshot and is exact whatever the indexer's lag, a few captures while listening, a whole
//! store just after an import. Every delete of captures (clear, prune) takes its captures at or
//! below the watermark off their combinations in its own transaction ([`uncount`]), as it
//! deletes their search entries, so the table stays exact; a combination at zero is removed, so
//! the values listed are those present.
//!
//! NULL is a value here (a capture without an event type is counted as such): combinations are
//! matched with `IS`, which SQLite's unique constraints do not do, so the table has a plain index
//! and the upsert is an `UPDATE` then, if nothing matched, an `INSERT`.

use crate::watermark::WATERMARK_SQL;
use crate::Result;
use rusqlite::{params, Connection, Row, ToSql};
use std::collections::HashMap;

/// The table of schema version 5 (see the module notes).
pub(crate) const FACET_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS facet_counts (
    verdict TEXT NOT NULL,
    event_type TEXT,
    resource_type TEXT,
    subscription_id TEXT,
    captures INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS facet_counts_combination
    ON facet_counts (verdict, event_type, resource_type, subscription_id);
";

/// The indexes of schema 4 the table replaces. Dropped when a store migrates; found again in
/// a store of schema 5, they say a listener of schema 4 wrote it since (it makes them when it
/// opens a store, and it keeps no counts), so the table is made again from the captures.
pub(crate) const REPLACED_INDEXES: [&str; 4] = [
    "captures_verdict",
    "captures_event_type",
    "captures_resource_type",
    "captures_subscription",
];

/// A combination of the counted columns.
type Combination = (String, Option<String>, Option<String>, Option<String>);

/// Changes to the table, gathered in memory and written once per transaction.
#[derive(Debug, Default)]
pub(crate) struct Tally(HashMap<Combination, i64>);

impl Tally {
    /// Adds `delta` captures of the combination in `row`, columns `first` to `first + 3`
    /// (verdict, event type, resource type, subscription).
    pub fn add(&mut self, row: &Row<'_>, first: usize, delta: i64) -> rusqlite::Result<()> {
        self.add_columns(
            row.get(first)?,
            row.get(first + 1)?,
            row.get(first + 2)?,
            row.get(first + 3)?,
            delta,
        );
        Ok(())
    }

    /// Adds `delta` captures of one combination.
    pub fn add_columns(
        &mut self,
        verdict: String,
        event_type: Option<String>,
        resource_type: Option<String>,
        subscription_id: Option<String>,
        delta: i64,
    ) {
        *self
            .0
            .entry((verdict, event_type, resource_type, subscription_id))
            .or_default() += delta;
    }

    /// Writes the changes into `facet_counts`; combinations left at zero are removed.
    pub fn write(self, conn: &Connection) -> Result<()> {
        let mut update = conn.prepare_cached(
            "UPDATE facet_counts SET captures = captures + ?5 WHERE verdict = ?1 \
             AND event_type IS ?2 AND resource_type IS ?3 AND subscription_id IS ?4",
        )?;
        let mut insert = conn.prepare_cached(
            "INSERT INTO facet_counts (verdict, event_type, resource_type, subscription_id, \
             captures) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut decreased = false;
        for ((verdict, event_type, resource_type, subscription), delta) in self.0 {
            if delta == 0 {
                continue;
            }
            let values = params![verdict, event_type, resource_type, subscription, delta];
            if update.execute(values)? == 0 && delta > 0 {
                insert.execute(values)?;
            }
            decreased |= delta < 0;
        }
        if decreased {
            conn.prepare_cached("DELETE FROM facet_counts WHERE captures <= 0")?
                .execute([])?;
        }
        Ok(())
    }
}

/// Takes the captures `where_captures` selects off the counts (run before deleting them, in the
/// same transaction): those at or below the watermark, the ones the table holds.
pub(crate) fn uncount(conn: &Connection, where_captures: &str, args: &[&dyn ToSql]) -> Result<()> {
    let mut select = conn.prepare(&format!(
        "SELECT verdict, event_type, resource_type, subscription_id, COUNT(*) FROM captures \
         WHERE ({where_captures}) AND id <= {WATERMARK_SQL} GROUP BY 1, 2, 3, 4"
    ))?;
    let mut rows = select.query(args)?;
    let mut tally = Tally::default();
    while let Some(row) = rows.next()? {
        let count: i64 = row.get(4)?;
        tally.add(row, 0, -count)?;
    }
    drop(rows);
    tally.write(conn)
}

/// Empties the counts (a clear of everything).
pub(crate) fn uncount_all(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM facet_counts", [])?;
    Ok(())
}

/// Makes the table again from the captures at or below the watermark (a store migrating from
/// schema 4, or written by a listener of schema 4 since). One pass over `captures_list`.
pub(crate) fn recount(conn: &Connection) -> Result<()> {
    conn.execute("DELETE FROM facet_counts", [])?;
    conn.execute(
        &format!(
            "INSERT INTO facet_counts (verdict, event_type, resource_type, subscription_id, \
             captures) SELECT verdict, event_type, resource_type, subscription_id, COUNT(*) \
             FROM captures INDEXED BY captures_list WHERE id <= {WATERMARK_SQL} \
             GROUP BY 1, 2, 3, 4"
        ),
        [],
    )?;
    Ok(())
}

/// A query giving `(verdict, captures)` rows whose sums are the counts under a filter: the
/// table's combinations matching `condition("f")` and the tail's captures matching
/// `condition("c")`, one row each. `condition` writes the filter on the alias it is given,
/// appending its arguments.
pub(crate) fn counted_rows(condition: &mut dyn FnMut(&str) -> String) -> String {
    let counted = condition("f");
    let tail = condition("c");
    format!(
        "SELECT f.verdict AS verdict, f.captures AS captures FROM facet_counts f \
         WHERE {counted} \
         UNION ALL \
         SELECT c.verdict, 1 FROM captures c INDEXED BY captures_list \
         WHERE c.id > {WATERMARK_SQL} AND {tail}"
    )
}

/// The distinct values of a counted column present in the store, sorted: the table's and the
/// tail's.
pub(crate) fn distinct_values(conn: &Connection, column: &str) -> Result<Vec<String>> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT {column} FROM facet_counts WHERE {column} IS NOT NULL \
         UNION \
         SELECT {column} FROM captures INDEXED BY captures_list \
         WHERE id > {WATERMARK_SQL} AND {column} IS NOT NULL \
         ORDER BY 1"
    ))?;
    let values = select
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(values)
}

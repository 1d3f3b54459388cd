//! How many captures and bytes the tables hold per retention class ([`crate::classes`]): the
//! table `retained_sizes`, kept in the transactions that add or delete captures, and its
//! mirror in memory ([`Tally`]) the retention reads to decide what to prune; and the partial
//! indexes a prune of junk or unverified captures walks.
//!
//! Why kept rather than counted: the retention looks at the sizes every few hundred captures,
//! and at the byte budget as the tables take each chunk; summing the bodies' lengths over the
//! store each time would read every row (the count was measured: counting the captures at
//! each prune was most of what the tables thread did under a flood). So every writer of the
//! tables adds what it wrote and takes off what it deleted in its own transaction: the tables
//! thread per chunk (one `UPDATE` per class present), the journal's catch-up at open, an
//! import, a clear and a prune. At open the tally is checked against the captures' count
//! (`facet_counts`, cheap) and made again from the captures when they differ (a store made
//! before it, or written by an older listener since): one pass, then none.
//!
//! Why partial indexes (`captures_junk`, `captures_unverified`, on the id, holding only the
//! captures of their class): a prune of junk finds its oldest junk through them instead of
//! walking the signed captures before it; a signed capture costs them nothing (SQLite only
//! checks the condition). Signed captures are pruned last, once no other class is left, so
//! they need none.

use super::rows::RowText;
use crate::capture::Capture;
use crate::classes::RetentionClass;
use crate::facet_counts;
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension, ToSql};

/// A capture's size as the retention counts it: its body and its headers (JSON) as stored.
/// [`stored_bytes`] says the same of a capture in memory.
pub(super) const STORED_BYTES_SQL: &str =
    "(COALESCE(length(body), 0) + length(CAST(headers AS BLOB)))";

/// A capture's size as the retention counts it ([`STORED_BYTES_SQL`]).
pub(super) fn stored_bytes(capture: &Capture, text: &RowText) -> i64 {
    let body = capture.body.as_ref().map_or(0, Vec::len);
    i64::try_from(body + text.headers_len()).unwrap_or(i64::MAX)
}

/// The partial index of a class's captures, `None` for the signed ones (see the notes).
fn index_of(class: RetentionClass) -> Option<&'static str> {
    match class {
        RetentionClass::Junk => Some("captures_junk"),
        RetentionClass::Unverified => Some("captures_unverified"),
        RetentionClass::Signed => None,
    }
}

/// The class of a `captures` row as an SQL expression (0, 1, 2: [`RetentionClass::index`]).
fn class_case() -> String {
    let arms: String = RetentionClass::ALL
        .into_iter()
        .map(|class| format!("WHEN {} THEN {} ", class.sql_condition(), class.index()))
        .collect();
    format!("CASE {arms}END")
}

/// Captures and bytes per class: a store's holdings, or a change to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub(super) captures: [i64; 3],
    pub(super) bytes: [i64; 3],
}

impl Tally {
    pub(super) fn add(&mut self, class: RetentionClass, captures: i64, bytes: i64) {
        self.captures[class.index()] += captures;
        self.bytes[class.index()] += bytes;
    }

    pub(super) fn add_capture(&mut self, capture: &Capture, text: &RowText) {
        self.add(
            capture.verdict.retention_class(),
            1,
            stored_bytes(capture, text),
        );
    }

    pub(super) fn merge(&mut self, other: &Tally) {
        for i in 0..3 {
            self.captures[i] += other.captures[i];
            self.bytes[i] += other.bytes[i];
        }
    }

    pub(super) fn minus(&self, other: &Tally) -> Tally {
        let mut left = *self;
        for i in 0..3 {
            left.captures[i] -= other.captures[i];
            left.bytes[i] -= other.bytes[i];
        }
        left
    }

    pub(super) fn negated(&self) -> Tally {
        Tally::default().minus(self)
    }

    pub(super) fn captures_of(&self, class: RetentionClass) -> i64 {
        self.captures[class.index()]
    }

    pub(super) fn bytes_of(&self, class: RetentionClass) -> i64 {
        self.bytes[class.index()]
    }

    pub(super) fn total_captures(&self) -> i64 {
        self.captures.iter().sum()
    }

    pub(super) fn total_bytes(&self) -> i64 {
        self.bytes.iter().sum()
    }

    /// Adds this change to `retained_sizes`, inside the caller's transaction.
    pub(super) fn write(&self, conn: &Connection) -> Result<()> {
        let mut update = conn.prepare_cached(
            "UPDATE retained_sizes SET captures = captures + ?2, bytes = bytes + ?3 \
             WHERE class = ?1",
        )?;
        for class in RetentionClass::ALL {
            let (captures, bytes) = (self.captures_of(class), self.bytes_of(class));
            if captures != 0 || bytes != 0 {
                update.execute(params![class.index() as i64, captures, bytes])?;
            }
        }
        Ok(())
    }

    /// What `retained_sizes` holds.
    pub(super) fn read(conn: &Connection) -> Result<Tally> {
        let mut tally = Tally::default();
        let mut select =
            conn.prepare_cached("SELECT class, captures, bytes FROM retained_sizes")?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let index = usize::try_from(row.get::<_, i64>(0)?).unwrap_or(usize::MAX);
            if let Some(class) = RetentionClass::ALL.get(index) {
                tally.add(*class, row.get(1)?, row.get(2)?);
            }
        }
        Ok(tally)
    }

    /// The captures `where_captures` selects, per class (read before deleting them, in the same
    /// transaction).
    pub(super) fn of_rows(
        conn: &Connection,
        where_captures: &str,
        args: &[&dyn ToSql],
    ) -> Result<Tally> {
        let mut select = conn.prepare_cached(&format!(
            "SELECT {}, COUNT(*), COALESCE(SUM({STORED_BYTES_SQL}), 0) FROM captures \
             WHERE {where_captures} GROUP BY 1",
            class_case()
        ))?;
        let mut rows = select.query(args)?;
        let mut tally = Tally::default();
        while let Some(row) = rows.next()? {
            let index = usize::try_from(row.get::<_, i64>(0)?).unwrap_or(usize::MAX);
            if let Some(class) = RetentionClass::ALL.get(index) {
                tally.add(*class, row.get(1)?, row.get(2)?);
            }
        }
        Ok(tally)
    }
}

/// Whether the store has `retained_sizes` (its catch-up at open keeps it only then).
pub(super) fn kept(conn: &Connection) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' \
         AND name = 'retained_sizes')",
        [],
        |row| row.get(0),
    )?)
}

/// At a writer's open, once the journal's captures are in and the counts are made: the table
/// and the partial indexes (made if missing), and the tally, made again from the captures when
/// it is not their count (see the notes). Returns the tally.
pub(super) fn open(conn: &mut Connection) -> Result<Tally> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // The kept counts and the tail above them: exact in this snapshot whatever the indexer's
    // lag, without reading the captures the indexer counted.
    let rows = facet_counts::counted_rows(&mut |_| "1 = 1".into());
    let captures: i64 = tx.query_row(
        &format!("SELECT COALESCE(SUM(captures), 0) FROM ({rows})"),
        [],
        |row| row.get(0),
    )?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS retained_sizes (
            class INTEGER PRIMARY KEY,
            captures INTEGER NOT NULL,
            bytes INTEGER NOT NULL
        );",
    )?;
    for class in RetentionClass::ALL {
        if let Some(index) = index_of(class) {
            tx.execute_batch(&format!(
                "CREATE INDEX IF NOT EXISTS {index} ON captures (id) WHERE {}",
                class.sql_condition()
            ))?;
        }
    }
    let mut tally = Tally::read(&tx)?;
    let rows: i64 = tx.query_row("SELECT COUNT(*) FROM retained_sizes", [], |row| row.get(0))?;
    if tally.total_captures() != captures || rows != RetentionClass::ALL.len() as i64 {
        tally = Tally::of_rows(&tx, "1 = 1", &[])?;
        tx.execute("DELETE FROM retained_sizes", [])?;
        for class in RetentionClass::ALL {
            tx.execute(
                "INSERT INTO retained_sizes (class, captures, bytes) VALUES (?1, ?2, ?3)",
                params![
                    class.index() as i64,
                    tally.captures_of(class),
                    tally.bytes_of(class)
                ],
            )?;
        }
    }
    tx.commit()?;
    Ok(tally)
}

/// The id through which the oldest captures of `class` are deleted so that at least
/// `captures` of them and at least `bytes` bytes go (either may be zero or less: nothing of
/// it); `None` when nothing need go, `Some(i64::MAX)` when all of them must.
///
/// By count alone, the cut is found through the class's index, stepping over the captures to
/// delete only; with bytes, those captures are read (their sizes), and no others.
pub(super) fn cut_through(
    conn: &Connection,
    class: RetentionClass,
    captures: i64,
    bytes: i64,
) -> Result<Option<i64>> {
    if captures <= 0 && bytes <= 0 {
        return Ok(None);
    }
    let condition = class.sql_condition();
    let indexed = index_of(class).map_or_else(String::new, |index| format!("INDEXED BY {index}"));
    if bytes <= 0 {
        return Ok(Some(
            conn.prepare_cached(&format!(
                "SELECT id FROM captures {indexed} WHERE {condition} ORDER BY id LIMIT 1 \
                 OFFSET ?1"
            ))?
            .query_row([captures - 1], |row| row.get(0))
            .optional()?
            .unwrap_or(i64::MAX),
        ));
    }
    let mut select = conn.prepare_cached(&format!(
        "SELECT id, {STORED_BYTES_SQL} FROM captures {indexed} WHERE {condition} ORDER BY id"
    ))?;
    let mut rows = select.query([])?;
    let (mut counted, mut summed) = (0i64, 0i64);
    while let Some(row) = rows.next()? {
        counted += 1;
        summed += row.get::<_, i64>(1)?;
        if counted >= captures && summed >= bytes {
            return Ok(Some(row.get(0)?));
        }
    }
    Ok(Some(i64::MAX))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::journal::path_of;
    use crate::store::journal::tests::{leave_journal, linked};
    use crate::store::schema::open_connection;
    use crate::verdict::Verdict;
    use crate::{CaptureFilter, Durability, Retention, Store};

    fn junk(event: &str) -> Capture {
        let mut capture = linked(0, 0, 0, event);
        capture.verdict = Verdict::WrongPath;
        capture
    }

    async fn store_of_five(db: &std::path::Path) {
        let store = Store::open(db, Retention::default()).unwrap();
        for capture in [
            linked(0, 0, 0, "a"),
            linked(0, 0, 0, "b"),
            linked(0, 0, 0, "c"),
            junk("x"),
            junk("y"),
        ] {
            store.insert(capture).await.unwrap();
        }
        assert!(store.wait_for_tables());
    }

    fn expected(db: &std::path::Path) -> Tally {
        let conn = open_connection(db, Durability::Full).unwrap();
        Tally::of_rows(&conn, "1 = 1", &[]).unwrap()
    }

    #[tokio::test]
    async fn a_store_made_before_the_sizes_gets_them_from_its_captures_and_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        store_of_five(&db).await;
        let kept = expected(&db);
        assert_eq!(kept.captures, [2, 0, 3]);
        assert!(kept.bytes_of(RetentionClass::Signed) > 300);
        // As a store of an older listener: no table, no partial indexes.
        open_connection(&db, Durability::Full)
            .unwrap()
            .execute_batch(
                "DROP TABLE retained_sizes; DROP INDEX captures_junk; \
                 DROP INDEX captures_unverified;",
            )
            .unwrap();
        let store = Store::open(&db, Retention::default()).unwrap();
        let sizes = store.retention_sizes();
        assert_eq!(
            (
                sizes.signed.captures,
                sizes.junk.captures,
                sizes.unverified.captures
            ),
            (3, 2, 0)
        );
        assert_eq!(sizes.bytes() as i64, kept.total_bytes());
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 5);
    }

    #[tokio::test]
    async fn sizes_an_older_listener_let_drift_are_made_again_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        store_of_five(&db).await;
        // An older listener wrote captures without keeping the table.
        open_connection(&db, Durability::Full)
            .unwrap()
            .execute("UPDATE retained_sizes SET captures = 0, bytes = 0", [])
            .unwrap();
        let store = Store::open(&db, Retention::default()).unwrap();
        assert_eq!(store.retention_sizes().captures(), 5);
        assert_eq!(
            store.retention_sizes().bytes() as i64,
            expected(&db).total_bytes()
        );
    }

    #[tokio::test]
    async fn captures_the_journal_held_at_open_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        drop(Store::open(&db, Retention::default()).unwrap());
        leave_journal(
            &path_of(&db),
            &[linked(1, 1, 1, "ev-a"), linked(2, 2, 1, "ev-b")],
        );
        let store = Store::open(&db, Retention::default()).unwrap();
        assert_eq!(store.retention_sizes().signed.captures, 2);
        assert_eq!(
            store.retention_sizes().bytes() as i64,
            expected(&db).total_bytes()
        );
        let kept = Tally::read(&open_connection(&db, Durability::Full).unwrap()).unwrap();
        assert_eq!(kept.captures, [0, 0, 2], "the table, not only the mirror");
    }
}

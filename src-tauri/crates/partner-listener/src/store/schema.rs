//! The store's tables and their versions: the schema a writer makes, the migrations of older
//! stores at open, the layout of indexes a store has (which decides how its counts are
//! answered), and the connections' settings (WAL, page size, durability, how they wait for
//! a lock).
//!
//! Everything here runs when a store is opened, never while it serves: the writer and the
//! query planner only read the results (the connections, [`IndexLayout`]). The one exception
//! is the wait for a lock the connections are given at open ([`wait_for_lock`]), which SQLite
//! calls whenever one of them meets a lock another holds.

use super::types::{Durability, StoreKey};
use crate::facet_counts;
use crate::redelivery::{NotificationKey, Redeliveries, RedeliveriesLoader, Seen};
use crate::search;
use crate::{Error, Result};
use rusqlite::{params, Connection};
use std::path::Path;

/// How long a connection waits for a lock another connection holds.
pub(super) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A wait for a lock longer than this is logged (see [`wait_for_lock`]).
const LOGGED_LOCK_WAIT_MS: i64 = 50;

/// Makes `conn` wait for locks as [`wait_for_lock`] does, up to [`BUSY_TIMEOUT`].
pub(super) fn wait_for_locks(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_handler(Some(wait_for_lock))
}

/// How long the waits before try `tries` took, in milliseconds: 1 ms a try up to
/// [`LOGGED_LOCK_WAIT_MS`], then 5 ms a try.
fn waited_ms(tries: i32) -> i64 {
    let tries = i64::from(tries.max(0));
    tries.min(LOGGED_LOCK_WAIT_MS) + (tries - LOGGED_LOCK_WAIT_MS).max(0) * 5
}

/// SQLite's busy handler for every connection of a store: called with the tries made so far
/// while another connection holds a lock this one needs; sleeps and says to try again, or gives
/// up (the statement fails with `SQLITE_BUSY`) once [`BUSY_TIMEOUT`] has passed.
///
/// Why not SQLite's own (`busy_timeout`): its sleeps grow to 100 ms each, so a lock freed just
/// after a try is waited for up to 100 ms more, and two reads that waited for the same lock
/// wake at the same steps, long after it was free. Short steps end a wait within a few
/// milliseconds of the lock's release. A wait past [`LOGGED_LOCK_WAIT_MS`] is logged with the
/// waiting thread's name (the writer, the indexer, a read on the blocking pool): in WAL mode a
/// read should never wait, so one that does says what held the store up.
fn wait_for_lock(tries: i32) -> bool {
    let waited = waited_ms(tries);
    if waited >= BUSY_TIMEOUT.as_millis() as i64 {
        tracing::warn!(
            thread = std::thread::current().name().unwrap_or("unnamed"),
            waited_ms = waited,
            "gave up waiting for a lock on the capture store"
        );
        return false;
    }
    if waited == LOGGED_LOCK_WAIT_MS {
        tracing::warn!(
            thread = std::thread::current().name().unwrap_or("unnamed"),
            waited_ms = waited,
            "waiting for a lock on the capture store"
        );
    }
    let step = if waited < LOGGED_LOCK_WAIT_MS { 1 } else { 5 };
    std::thread::sleep(std::time::Duration::from_millis(step));
    true
}

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS captures (
    id INTEGER PRIMARY KEY,
    received_at TEXT NOT NULL,
    received_at_us INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB,
    body_size INTEGER NOT NULL,
    peer TEXT,
    verdict TEXT NOT NULL,
    matched_key TEXT,
    subscription_id TEXT,
    event_id TEXT,
    event_time TEXT,
    event_type TEXT,
    instance_id TEXT,
    resource_id TEXT,
    resource_type TEXT,
    resource_ref TEXT,
    attempt INTEGER NOT NULL,
    notification_id INTEGER,
    response_status INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    response_from_test_mode INTEGER NOT NULL,
    response_delay_ms INTEGER NOT NULL,
    processing_micros INTEGER NOT NULL,
    replay INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS captures_received ON captures (received_at_us);
CREATE INDEX IF NOT EXISTS captures_by_notification ON captures (notification_id);
CREATE INDEX IF NOT EXISTS captures_list ON captures (id, verdict, event_type, resource_type,
    subscription_id, notification_id, received_at_us);
DROP INDEX IF EXISTS captures_verdicts;
DROP INDEX IF EXISTS captures_by_verdict;
DROP INDEX IF EXISTS captures_by_event_type;
DROP INDEX IF EXISTS captures_by_resource_type;
DROP INDEX IF EXISTS captures_by_subscription;
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY,
    key BLOB NOT NULL,
    attempts INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbound (
    id INTEGER PRIMARY KEY,
    capture_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body BLOB,
    status INTEGER,
    response_headers TEXT NOT NULL,
    response_body TEXT,
    elapsed_ms INTEGER NOT NULL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS outbound_capture ON outbound (capture_id);
CREATE TABLE IF NOT EXISTS listener_runs (
    id INTEGER PRIMARY KEY,
    started_at_us INTEGER NOT NULL,
    stopped_at_us INTEGER
);
CREATE TABLE IF NOT EXISTS highest_deleted (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id INTEGER NOT NULL
);
";

/// The schema version (`PRAGMA user_version`) this code writes. Version 1 linked redeliveries
/// through an index on (subscription, resource type, eventId); version 2 through
/// `notifications` (see [`crate::redelivery`]), filled from the captures when an older store
/// opens; version 3 adds `listener_runs` ([`crate::runs`]), empty in a store made before it;
/// version 4 adds the indexes the inspector's filters and facets use and the search index
/// ([`crate::search`]), which an older store gets built by the indexer thread after it opens
/// (queries stay complete meanwhile: what is not indexed yet is scanned); version 5 replaces
/// the four single-column indexes of version 4 (verdict, event type, resource type,
/// subscription) with the counts of `facet_counts`, kept by the indexer thread
/// ([`crate::facet_counts`]) and made from the captures when an older store opens; version 6
/// cuts the words' index into shards by id (see [`crate::search`]), which an older store gets
/// rebuilt by the indexer thread after it opens; version 7 keeps no positions in the index of
/// ids (`search::SEARCH_SCHEMA`), rebuilt the same way.
const SCHEMA_VERSION: i64 = 7;
/// The version from which `facet_counts` is kept (older stores make it from their captures).
pub(super) const COUNTS_SINCE_VERSION: i64 = 5;
/// The version from which `notifications` is kept (older stores fill it from their captures).
const NOTIFICATIONS_SINCE_VERSION: i64 = 2;

/// How a store answers the inspector's counts, by the version that made (or last wrote) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IndexLayout {
    /// Schema 5: `facet_counts` and `captures_list`, no single-column index.
    Counted,
    /// Schema 4 (or a store of schema 5 a listener of schema 4 has written since, whose counts
    /// are stale until a listener of schema 5 opens it): one index per filtered column and
    /// `captures_list`.
    Narrow,
    /// Older: neither (everything counted by scanning).
    Plain,
}

impl IndexLayout {
    pub(super) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        let exists = |name: &str| -> rusqlite::Result<bool> {
            conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?1)",
                [name],
                |row| row.get(0),
            )
        };
        Ok(if exists(facet_counts::REPLACED_INDEXES[0])? {
            Self::Narrow
        } else if exists("facet_counts")? {
            Self::Counted
        } else {
            Self::Plain
        })
    }
}

/// Makes `facet_counts` from the captures the indexer has reached and drops the indexes it
/// replaces, in one transaction (see [`crate::facet_counts`]).
pub(super) fn count_captures(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for index in facet_counts::REPLACED_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))?;
    }
    facet_counts::recount(&tx)?;
    tx.commit()?;
    Ok(())
}

/// 8 KiB pages hold two or three captures of a 2 KiB notification (a row is about 2.5 KB), so
/// no row spills onto an overflow page. Every commit also writes
/// the last, partly filled page of each B-tree it touched, so larger pages cost more per
/// commit: with spec-shaped 2 KiB notifications and random eventIds (`benches/store.rs`,
/// 30,000 captures, 32 concurrent inserts, three interleaved rounds), 8 KiB gave 22,341-22,424
/// captures/s, 16 KiB 19,601-20,489 and 4 KiB (one row per page) 18,148-21,068.
pub(super) const PAGE_SIZE: i64 = 8 * 1024;
/// A WAL file larger than this is cut back to it when the WAL restarts.
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// A connection that only reads, for [`StoreReader::open`](super::StoreReader::open), keyed
/// first thing with `key` (an encrypted store, [`super::encryption`]).
pub(super) fn open_read_only_keyed(path: &Path, key: Option<&StoreKey>) -> Result<Connection> {
    let open_error = |source| Error::OpenStore {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_error)?;
    super::keying::apply_key(&conn, key, path, PAGE_SIZE)?;
    wait_for_locks(&conn).map_err(open_error)?;
    search::register_functions(&conn).map_err(open_error)?;
    Ok(conn)
}

/// [`open_read_only_keyed`] on an unencrypted store.
#[cfg(test)]
pub(super) fn open_read_only(path: &Path) -> Result<Connection> {
    open_read_only_keyed(path, None)
}

/// A connection that reads and writes, keyed first thing with `key` (an encrypted store,
/// [`super::encryption`]).
pub(super) fn open_connection_keyed(
    path: &Path,
    durability: Durability,
    key: Option<&StoreKey>,
) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|source| Error::OpenStore {
        path: path.to_path_buf(),
        source,
    })?;
    super::keying::apply_key(&conn, key, path, PAGE_SIZE)?;
    wait_for_locks(&conn)?;
    // Only takes effect on a new, empty database (before WAL mode is set); an existing store
    // keeps the page size it was made with. (An encrypted store's is SQLCipher's
    // `cipher_page_size`, set with its key.)
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let synchronous = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", synchronous)?;
    search::register_functions(&conn)?;
    Ok(conn)
}

/// [`open_connection_keyed`] on an unencrypted store.
#[cfg(test)]
pub(super) fn open_connection(path: &Path, durability: Durability) -> Result<Connection> {
    open_connection_keyed(path, durability, None)
}

/// The first capture id whose notification may still be redelivered, as a store opens: the
/// lowest id of the captures received within `window` of now, or past the newest capture when
/// none was (see [`crate::REDELIVERY_WINDOW`]). Read through `captures_received` (named: left
/// to itself SQLite walks `captures_list` in id order up to the window, the whole store when
/// the window is at its end, 0.76 s at a million captures against 4 ms), so it costs a walk of
/// the window's captures, not of the store's.
pub(super) fn redelivery_horizon(conn: &Connection, window: std::time::Duration) -> Result<i64> {
    let window = chrono::Duration::from_std(window).unwrap_or(chrono::Duration::MAX);
    let cutoff = chrono::Utc::now()
        .checked_sub_signed(window)
        .map_or(i64::MIN, |at| at.timestamp_micros());
    Ok(conn.query_row(
        "SELECT COALESCE((SELECT MIN(id) FROM captures INDEXED BY captures_received \
         WHERE received_at_us >= ?1), \
         (SELECT MAX(id) + 1 FROM captures), 0)",
        [cutoff],
        |row| row.get(0),
    )?)
}

/// Brings a store to [`SCHEMA_VERSION`] and reads into memory its notifications first captured
/// at or above id `horizon` (those below are past the redelivery window, see
/// [`redelivery_horizon`]).
///
/// A version-1 store has no `notifications` rows: they are made once from its captures (one
/// pass over the table), and its index on the three fields is dropped.
pub(super) fn load_redeliveries(conn: &mut Connection, horizon: i64) -> Result<Redeliveries> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version < NOTIFICATIONS_SINCE_VERSION {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM notifications", [])?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO notifications (id, key, attempts) VALUES (?1, ?2, ?3)                  ON CONFLICT (id) DO UPDATE SET attempts = MAX(attempts, excluded.attempts)",
            )?;
            let mut select = tx.prepare(
                "SELECT notification_id, subscription_id, resource_type, event_id,                  MAX(attempt) FROM captures WHERE notification_id IS NOT NULL                  AND subscription_id IS NOT NULL AND resource_type IS NOT NULL                  AND event_id IS NOT NULL GROUP BY notification_id",
            )?;
            let mut rows = select.query([])?;
            while let Some(row) = rows.next()? {
                let key = NotificationKey::of(
                    &row.get::<_, String>(1)?,
                    &row.get::<_, String>(2)?,
                    &row.get::<_, String>(3)?,
                );
                insert.execute(params![
                    row.get::<_, i64>(0)?,
                    key.as_bytes(),
                    row.get::<_, i64>(4)?
                ])?;
            }
        }
        tx.execute_batch("DROP INDEX IF EXISTS captures_notification")?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
    } else if version < SCHEMA_VERSION {
        // `listener_runs` was made by `SCHEMA` (empty): nothing else changed.
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    // Counted first, so the map is allocated once, at its size (see [`crate::redelivery`]).
    let rows: i64 = conn.query_row(
        "SELECT COUNT(*) FROM notifications WHERE id >= ?1",
        [horizon],
        |row| row.get(0),
    )?;
    let mut loader = RedeliveriesLoader::from_horizon(horizon, usize::try_from(rows).unwrap_or(0));
    let mut select = conn.prepare("SELECT id, key, attempts FROM notifications WHERE id >= ?1")?;
    let mut rows = select.query([horizon])?;
    while let Some(row) = rows.next()? {
        if let Some(key) =
            NotificationKey::from_bytes(row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?)
        {
            loader.push(
                key,
                Seen {
                    first_id: row.get(0)?,
                    attempts: u32::try_from(row.get::<_, i64>(2)?).unwrap_or(u32::MAX),
                },
            );
        }
    }
    Ok(loader.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_waits_step_by_one_then_five_milliseconds_up_to_the_timeout() {
        assert_eq!(waited_ms(0), 0);
        assert_eq!(waited_ms(49), 49);
        assert_eq!(waited_ms(50), 50);
        assert_eq!(waited_ms(51), 55);
        let last_try = (0..).find(|&tries| waited_ms(tries) >= 10_000).unwrap();
        assert_eq!(waited_ms(last_try), BUSY_TIMEOUT.as_millis() as i64);
        assert!(wait_for_lock(0), "the first try waits");
        assert!(!wait_for_lock(last_try), "past the timeout it gives up");
    }

    /// A store's tables, search tables and counts, holding one small capture (the word
    /// "ledger" in its body) for each of `ids`, none indexed yet.
    fn store_to_index(dir: &std::path::Path, ids: &[i64]) -> Connection {
        let conn = open_connection(&dir.join("index.sqlite3"), Durability::Full).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute_batch(search::SEARCH_SCHEMA).unwrap();
        conn.execute_batch(facet_counts::FACET_SCHEMA).unwrap();
        for id in ids {
            conn.execute(
                "INSERT INTO captures (id, received_at, received_at_us, method, path, headers, \
                 body, body_size, verdict, event_type, attempt, response_status, response_body, \
                 response_from_test_mode, response_delay_ms, processing_micros, replay) \
                 VALUES (?1, '2026-11-28T00:00:00Z', ?1, 'POST', '/webhooks', '[]', \
                 CAST('{\"word\": \"ledger\"}' AS BLOB), 18, 'valid', 'created', 1, 200, 'ok', \
                 0, 0, 1, 0)",
                [id],
            )
            .unwrap();
        }
        conn
    }

    #[test]
    fn the_indexer_gives_way_after_the_capture_at_hand_and_goes_on_from_there_later() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = store_to_index(dir.path(), &[1, 2, 3]);
        let indexed = |conn: &Connection| crate::watermark::indexed_through(conn).unwrap();
        // A writer waits: one capture, then the turn goes back.
        assert_eq!(
            search::index_next_batch(&mut conn, 200, &|| true).unwrap(),
            1
        );
        assert_eq!(indexed(&conn), 1);
        // No writer waits: the rest, from where it stopped.
        assert_eq!(
            search::index_next_batch(&mut conn, 200, &|| false).unwrap(),
            2
        );
        assert_eq!(indexed(&conn), 3);
        let words: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM search_text_0 WHERE search_text_0 MATCH 'ledger'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(words, 3, "every capture indexed once");
        let counted: i64 = conn
            .query_row("SELECT SUM(captures) FROM facet_counts", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(counted, 3, "and counted once");
    }

    #[test]
    fn the_search_tables_merge_and_buffer_as_set_on_every_table_the_indexer_makes() {
        let dir = tempfile::tempdir().unwrap();
        // Two captures in two shards of the words' index, so two shard tables are made.
        let mut conn = store_to_index(dir.path(), &[1, search::TEXT_SHARD_SIZE + 1]);
        assert_eq!(
            search::index_next_batch(&mut conn, 10, &|| false).unwrap(),
            2
        );
        let setting = |table: &str, option: &str| -> i64 {
            conn.query_row(
                &format!("SELECT v FROM {table}_config WHERE k = ?1"),
                [option],
                |row| row.get(0),
            )
            .unwrap()
        };
        for table in ["search_ids", "search_text_0", "search_text_1"] {
            assert_eq!(
                setting(table, "automerge"),
                search::FTS_AUTOMERGE,
                "{table}"
            );
            assert_eq!(setting(table, "hashsize"), search::FTS_HASH_SIZE, "{table}");
        }
    }

    #[test]
    fn a_read_waits_out_a_lock_another_connection_holds_and_then_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locked.sqlite3");
        let holder = open_connection(&path, Durability::Full).unwrap();
        holder
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        // In WAL mode only a connection in exclusive locking mode keeps readers out.
        holder
            .execute_batch("PRAGMA locking_mode = EXCLUSIVE; INSERT INTO t VALUES (2);")
            .unwrap();
        let reader_path = path.clone();
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let reading = std::thread::spawn(move || {
            let reader = open_read_only(&reader_path);
            opened_tx.send(()).unwrap();
            let asked = std::time::Instant::now();
            let count = reader?
                .query_row("SELECT COUNT(*) FROM t", [], |row| row.get::<_, i64>(0))
                .map_err(crate::Error::from);
            count.map(|count| (count, asked.elapsed()))
        });
        opened_rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
        // Back to normal locking: the exclusive lock goes with the next read.
        holder
            .execute_batch("PRAGMA locking_mode = NORMAL; SELECT COUNT(*) FROM t;")
            .unwrap();
        let (count, waited) = reading.join().unwrap().unwrap();
        assert_eq!(count, 2);
        assert!(
            waited >= std::time::Duration::from_millis(100),
            "the read waited for the lock: {waited:?}"
        );
    }
}

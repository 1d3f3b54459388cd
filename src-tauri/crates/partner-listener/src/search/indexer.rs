//! Keeping the search index up to date with the captures: the indexer thread
//! ([`indexer_loop`]) that indexes what the writer committed, in short transactions of its own
//! and out of the writer's way ([`WriterActivity`]); the indexing an import does in its own
//! transaction ([`index_tail_in`]); and the entries taken out when a clear or a prune deletes
//! captures ([`unindex`]), shards dropped whole where they can be. Why the index is kept behind
//! the writer rather than in its transaction: the notes of [`crate::search`].
//!
//! The same thread, in the same transactions and under the same watermark, keeps the counts of
//! the captures per verdict, event type, resource type and subscription that the inspector's
//! filter counts read ([`crate::facet_counts`]).

use super::{
    header_values, text_shard_of, text_shard_sql, text_shard_table, SearchTables, IDS_DETAIL,
    LEGACY_TEXT_TABLE, SEARCH_SCHEMA,
};
use crate::watermark::indexed_through;
use crate::Result;
use rusqlite::{params, Connection, OptionalExtension, ToSql};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Captures indexed in one transaction of the indexer while the writer is quiet. Not short:
/// every transaction leaves FTS5 a segment to merge into the others later, and each merge pass
/// rewrites its pages through SQLCipher's page cipher; after a flood, transactions of 2,000
/// cost the indexer 15 % less CPU than transactions of 200 (BENCHMARKS.md, listener, first
/// section). The writer is not held up by the batch's length: the batch stops after the capture
/// at hand when a writer asks for the turn (`give_way`), and acknowledgements never wait for it
/// (the writer answers from its journal), only the tables' copy does, for the commit.
const INDEX_BATCH: i64 = 2000;
/// The indexer's page cache, in KiB (SQLite's is 2 MB): a transaction of [`INDEX_BATCH`]
/// captures with its merges dirties more pages than 2 MB holds, and each page spilled
/// mid-transaction is encrypted, written and read back. Given back when the indexer has caught
/// up ([`release_cache`]), so a listener that saw one flood does not keep it.
const INDEXER_CACHE_KIB: i64 = 64 * 1024;
/// How often an idle indexer looks for new captures.
const INDEX_POLL: Duration = Duration::from_millis(100);

/// Indexes the captures `SELECT ... FROM captures WHERE <selection>` returns into both search
/// tables and counts them in `facet_counts`. The selection must not hold a capture indexed
/// before (the counts are kept under the same watermark, see [`crate::facet_counts`]; every
/// delete of a capture takes its entries out). A plain `INSERT`, not `INSERT OR REPLACE`: on a
/// contentless-delete table a replace first runs FTS5's delete of the rowid, which was 32% of
/// an import's CPU in a profile (perf over `benches/query.rs`) for entries that never exist.
/// Stops after the capture at hand when `give_way` says so (the indexer's, when a writer waits
/// for its turn; the selection is then in id order, so what was indexed is the lowest ids).
/// Returns how many and the highest id.
pub(crate) fn index_rows(
    conn: &Connection,
    selection: &str,
    args: &[&dyn ToSql],
    give_way: &dyn Fn() -> bool,
) -> Result<(u64, Option<i64>)> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT id, body, headers, event_id, resource_id, instance_id, subscription_id, \
         resource_ref, verdict, event_type, resource_type FROM captures WHERE {selection}"
    ))?;
    let mut shards_made = std::collections::HashSet::new();
    let mut ids = conn.prepare_cached(
        "INSERT INTO search_ids (rowid, event_id, resource_id, instance_id, \
         subscription_id, resource_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut rows = select.query(args)?;
    let mut highest = None;
    let mut count = 0;
    let mut tally = crate::facet_counts::Tally::default();
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let body: Option<Vec<u8>> = row.get(1)?;
        let body = body.map(|b| String::from_utf8_lossy(&b).into_owned());
        let headers: String = row.get(2)?;
        let shard = text_shard_of(id);
        if shards_made.insert(shard) {
            conn.execute_batch(&text_shard_sql(shard))?;
        }
        conn.prepare_cached(&format!(
            "INSERT INTO {} (rowid, body, header_values) VALUES (?1, ?2, ?3)",
            text_shard_table(shard)
        ))?
        .execute(params![id, body, header_values(&headers)])?;
        ids.execute(params![
            id,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<String>>(6)?,
            row.get::<_, Option<String>>(7)?,
        ])?;
        tally.add_columns(row.get(8)?, row.get(9)?, row.get(10)?, row.get(6)?, 1);
        highest = Some(highest.map_or(id, |h: i64| h.max(id)));
        count += 1;
        if give_way() {
            break;
        }
    }
    drop(rows);
    tally.write(conn)?;
    Ok((count, highest))
}

/// Removes the entries of the captures `where_captures` selects, and takes them off the counts
/// kept with the index (run before deleting them, in the same transaction).
///
/// Entry by entry, by rowid, through statements prepared once: it was one `DELETE ... WHERE
/// rowid IN (SELECT id FROM captures WHERE ...)` per table, prepared afresh at each prune
/// (every 256 captures under a count limit), and under a flood the prunes' search deletes were
/// 44% of their time and grew with the store; this way the tables thread spends 10–16% less
/// and the tail stays put (p99 54 ms against 134 at 600,000 kept; BENCHMARKS.md, listener,
/// first section). Both plans look each rowid up (`EXPLAIN QUERY PLAN`); which part of the old
/// statement cost is not pinned down. Only the captures at or below the watermark have entries
/// (the indexer and an import move it past what they index), so only theirs are deleted.
pub(crate) fn unindex(conn: &Connection, where_captures: &str, args: &[&dyn ToSql]) -> Result<()> {
    crate::facet_counts::uncount(conn, where_captures, args)?;
    let doomed: Vec<i64> = conn
        .prepare(&format!("SELECT id FROM captures WHERE {where_captures}"))?
        .query_map(args, |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    unindex_ids(conn, &doomed)
}

/// Removes the entries of these captures: those at or below the watermark, the only ones
/// that have any (the one place that rule is applied to deletes).
pub(crate) fn unindex_ids(conn: &Connection, ids: &[i64]) -> Result<()> {
    let tables = SearchTables::read(conn, true)?;
    let through = indexed_through(conn)?;
    for id in ids.iter().filter(|&&id| id <= through) {
        let shard = tables
            .text
            .iter()
            .find(|shard| (shard.lowest..=shard.highest).contains(id));
        for table in shard
            .map(|s| s.table.as_str())
            .into_iter()
            .chain(["search_ids"])
        {
            conn.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?
                .execute([id])?;
        }
    }
    Ok(())
}

/// Empties both indexes and the counts kept with them (a clear of everything): the words'
/// shards are dropped.
pub(crate) fn unindex_all(conn: &Connection) -> Result<()> {
    crate::facet_counts::uncount_all(conn)?;
    for shard in SearchTables::read(conn, true)?.text {
        conn.execute_batch(&format!("DROP TABLE {}", shard.table))?;
    }
    conn.execute(
        "INSERT INTO search_ids (search_ids) VALUES ('delete-all')",
        [],
    )?;
    Ok(())
}

/// Drops the shards of the words' index that hold no capture at or above `oldest_kept` (after
/// a prune deleted the captures below it): dropping a table is quicker than deleting its
/// entries one by one.
pub(crate) fn drop_shards_below(conn: &Connection, oldest_kept: i64) -> Result<()> {
    for shard in SearchTables::read(conn, true)?.text {
        if shard.highest < oldest_kept {
            conn.execute_batch(&format!("DROP TABLE {}", shard.table))?;
        }
    }
    Ok(())
}

/// Has the indexer build the search index again when a store's is of an older layout: the
/// words' index of version 5 (one table, now cut into shards) or the index of ids of versions 4
/// to 6 (with positions, now without: see [`super::SEARCH_SCHEMA`]). The old tables are
/// dropped and made again empty, and every capture is indexed again by the indexer thread, in
/// the background (a search scans what is not indexed yet meanwhile: slower, not less
/// complete). The counts kept under the same watermark start again with it. Run by the writer
/// at open, in one transaction with nothing else (see its caller); says whether it had to.
pub(crate) fn rebuild_old_index(conn: &Connection) -> Result<bool> {
    let sql_of = |name: &str| -> Result<Option<String>> {
        Ok(conn
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = ?1",
                [name],
                |row| row.get(0),
            )
            .optional()?)
    };
    let legacy = sql_of(LEGACY_TEXT_TABLE)?.is_some();
    let ids_with_positions =
        sql_of("search_ids")?.is_some_and(|sql| !sql.replace(' ', "").contains(IDS_DETAIL));
    if !legacy && !ids_with_positions {
        return Ok(false);
    }
    // The legacy table is read as a shard too.
    for shard in SearchTables::read(conn, true)?.text {
        conn.execute_batch(&format!("DROP TABLE {}", shard.table))?;
    }
    conn.execute_batch("DROP TABLE search_ids")?;
    conn.execute_batch(SEARCH_SCHEMA)?;
    crate::facet_counts::uncount_all(conn)?;
    conn.execute(
        "UPDATE search_state SET indexed_through = 0 WHERE one = 1",
        [],
    )?;
    Ok(true)
}

/// One round of the indexer: indexes up to `batch` captures above the indexed id in one
/// transaction, fewer when `give_way` asks it to stop (see [`index_rows`]); returns how many.
pub(crate) fn index_next_batch(
    conn: &mut Connection,
    batch: i64,
    give_way: &dyn Fn() -> bool,
) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let from = indexed_through(&tx)?;
    let (count, highest) = index_rows(
        &tx,
        "id > ?1 ORDER BY id LIMIT ?2",
        &[&from, &batch],
        give_way,
    )?;
    let Some(highest) = highest else {
        return Ok(0);
    };
    tx.execute(
        "UPDATE search_state SET indexed_through = ?1 WHERE one = 1",
        [highest],
    )?;
    tx.commit()?;
    Ok(count)
}

/// Most captures above the indexed id an import indexes in its own transaction besides its
/// batch (live captures the indexer has not reached yet): more means the indexer is far
/// behind (a store of an older version being indexed), and it catches up on its own.
const IMPORT_INDEXES_TAIL_UP_TO: i64 = 5_000;

/// Whether the captures above the indexed id `from` are few enough for an import to index
/// them with its batch ([`IMPORT_INDEXES_TAIL_UP_TO`]); asked before the batch is inserted.
pub(crate) fn tail_is_short(tx: &Connection, from: i64) -> Result<bool> {
    let tail: i64 = tx
        .prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM captures WHERE id > ?1 LIMIT ?2)")?
        .query_row(params![from, IMPORT_INDEXES_TAIL_UP_TO + 1], |row| {
            row.get(0)
        })?;
    Ok(tail <= IMPORT_INDEXES_TAIL_UP_TO)
}

/// Indexes every capture above the indexed id `from` in the writer's transaction `tx` and
/// moves the mark past them (an import's, after its batch; see `store::Writer::import`).
pub(crate) fn index_tail_in(tx: &Connection, from: i64) -> Result<u64> {
    let (count, highest) = index_rows(tx, "id > ?1", &[&from], &|| false)?;
    if let Some(highest) = highest {
        tx.execute(
            "UPDATE search_state SET indexed_through = ?1 WHERE one = 1",
            [highest],
        )?;
    }
    Ok(count)
}

/// When the writer last committed captures and last imported, as the indexer reads them to
/// keep out of its way (milliseconds since the store opened; 0: never).
#[derive(Debug)]
pub(crate) struct WriterActivity {
    opened: Instant,
    last_write_ms: AtomicU64,
    last_import_ms: AtomicU64,
    /// Held by whoever writes the store (the tables thread around each commit, the writer around
    /// each job, the indexer around each batch), so they take turns here rather than in
    /// SQLite: a writer that finds SQLite's write lock taken sleeps in its busy handler (steps
    /// of up to 100 ms) and is not woken when the lock comes free, which held acknowledgements
    /// for hundreds of milliseconds behind index batches of a few. Waiting on this mutex, it
    /// runs the moment the holder's batch commits.
    write_turn: std::sync::Mutex<()>,
    /// Writers waiting for the turn: the indexer lets them go first.
    writers_waiting: AtomicU64,
}

impl WriterActivity {
    pub fn new() -> Self {
        Self {
            opened: Instant::now(),
            last_write_ms: AtomicU64::new(0),
            last_import_ms: AtomicU64::new(0),
            write_turn: std::sync::Mutex::new(()),
            writers_waiting: AtomicU64::new(0),
        }
    }

    /// The turn to write the store (see `write_turn`); a holder that panicked left nothing
    /// half-written behind it (SQLite rolled its transaction back), so a poisoned lock is taken.
    pub fn write_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writers_waiting.fetch_add(1, Ordering::SeqCst);
        let turn = self
            .write_turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.writers_waiting.fetch_sub(1, Ordering::SeqCst);
        turn
    }

    /// Whether a writer waits for the turn: the indexer, holding it, stops its batch after
    /// the capture at hand. Under load the indexer shares two busy cores with the writer and
    /// the request tasks, so a batch of 25 held the turn for 8 ms at p99 and up to 80 ms (the
    /// acknowledgements' tail, BENCHMARKS.md); one capture's indexing is a fraction of a
    /// millisecond.
    pub fn writer_waits(&self) -> bool {
        self.writers_waiting.load(Ordering::SeqCst) > 0
    }

    /// The indexer's turn, only when no writer waits for one: `None` otherwise.
    fn index_turn(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        if self.writer_waits() {
            return None;
        }
        let turn = self.write_turn.try_lock().ok()?;
        (!self.writer_waits()).then_some(turn)
    }

    fn now_ms(&self) -> u64 {
        // +1 so that a write in the first millisecond is not "never".
        self.opened.elapsed().as_millis() as u64 + 1
    }

    /// Called by the writer after each commit of captures.
    pub fn wrote(&self) {
        self.last_write_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Called by the writer after each import batch.
    pub fn imported(&self) {
        let now = self.now_ms();
        self.last_write_ms.store(now, Ordering::Relaxed);
        self.last_import_ms.store(now, Ordering::Relaxed);
    }

    fn within(&self, at: &AtomicU64, window: Duration) -> bool {
        let at = at.load(Ordering::Relaxed);
        at != 0 && self.now_ms().saturating_sub(at) < window.as_millis() as u64
    }
}

/// The indexer waits while the writer wrote this recently, so it does not take the write lock
/// while acknowledgements are being committed...
const WRITER_QUIET: Duration = Duration::from_millis(20);
/// ...unless this many captures wait to be indexed: then the tail a search scans would grow
/// without bound under sustained load, so it indexes in small batches beside the writer, one
/// batch each [`WRITER_QUIET`] (about a sixth of a core here: without the pause it took up to
/// half of one from the acknowledgements, whose writer no longer holds the turn while it syncs
/// its journal; BENCHMARKS.md).
const DEFER_LIMIT: i64 = 20_000;
/// How long the indexer waits before asking again when a writer wanted the turn.
const TURN_RETRY: Duration = Duration::from_millis(2);
/// Captures per transaction while the writer is busy: a few milliseconds of holding the lock.
const BUSY_BATCH: i64 = 25;
/// How long after an import batch the indexer keeps waiting: an import is the writer's
/// whole work, and indexing after it is faster than fighting it for the lock batch by batch.
const IMPORT_QUIET: Duration = Duration::from_millis(1000);

/// Gives the indexer's page cache back to the system once it has caught up: the pages are of
/// no use to its next batch anyway (another connection's commit, the tables', empties the
/// cache of every other connection in WAL mode), and a desktop listener should not keep the
/// [`INDEXER_CACHE_KIB`] a flood grew it to.
fn release_cache(conn: &Connection) {
    if let Err(error) = conn.execute_batch("PRAGMA shrink_memory") {
        tracing::debug!(%error, "could not give back the search indexer's page cache");
    }
}

/// How many captures above the indexed id, estimated from ids (cheap: two index seeks).
fn backlog_estimate(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE((SELECT MAX(id) FROM captures), 0) - \
             COALESCE((SELECT indexed_through FROM search_state WHERE one = 1), 0)",
        )?
        .query_row([], |row| row.get(0))?)
}

/// The indexer thread: indexes what the writer committed, keeping out of the writer's way
/// (see [`WRITER_QUIET`], [`DEFER_LIMIT`], [`IMPORT_QUIET`]); looks for new captures every
/// [`INDEX_POLL`] when there is nothing to do; stops when `stop` is dropped or sent to.
pub(crate) fn indexer_loop(
    conn: &mut Connection,
    activity: &WriterActivity,
    stop: &mpsc::Receiver<()>,
) {
    let wait = |pause: Duration| {
        matches!(
            stop.recv_timeout(pause),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    };
    // Not at once: a store just opened has its writer's first jobs (the run's start, the first
    // captures) to do, and an index batch would hold the write lock while they wait.
    if !wait(INDEX_POLL) {
        return;
    }
    if let Err(error) = conn.pragma_update(None, "cache_size", -INDEXER_CACHE_KIB) {
        tracing::warn!(%error, "could not size the search indexer's page cache");
    }
    // Whether the indexer has indexed something since it last gave its cache back.
    let mut indexed_since_release = false;
    loop {
        let batch = if activity.within(&activity.last_import_ms, IMPORT_QUIET) {
            None
        } else if activity.within(&activity.last_write_ms, WRITER_QUIET) {
            match backlog_estimate(conn) {
                Ok(backlog) if backlog >= DEFER_LIMIT => Some(BUSY_BATCH),
                _ => None,
            }
        } else {
            Some(INDEX_BATCH)
        };
        let Some(batch) = batch else {
            if !wait(WRITER_QUIET) {
                return;
            }
            continue;
        };
        let Some(turn) = activity.index_turn() else {
            // The writer is committing or about to: after it.
            if !wait(TURN_RETRY) {
                return;
            }
            continue;
        };
        let indexed = index_next_batch(conn, batch, &|| activity.writer_waits());
        drop(turn);
        if matches!(indexed, Ok(n) if n > 0) {
            indexed_since_release = true;
        }
        match indexed {
            Ok(0) => {
                if indexed_since_release {
                    release_cache(conn);
                    indexed_since_release = false;
                }
                if !wait(INDEX_POLL) {
                    return;
                }
            }
            // Beside a busy writer: a pause after each small batch, so indexing takes a share
            // of the cores and leaves the rest to the acknowledgements.
            Ok(_) if batch == BUSY_BATCH => {
                if !wait(WRITER_QUIET) {
                    return;
                }
            }
            Ok(_) => {
                if !matches!(stop.try_recv(), Err(mpsc::TryRecvError::Empty)) {
                    return;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "indexing captures for search failed; trying again");
                if !wait(INDEX_POLL * 10) {
                    return;
                }
            }
        }
    }
}

//! The one thread that writes a store: captures acknowledged in groups through the journal and
//! written into the tables behind the acknowledgements; every other write (clear, prune,
//! import, the run log, outbound records) as a job between two groups, in order with the
//! captures around it (the tables take every acknowledged capture first); and the checkpoint
//! thread beside it.
//!
//! Why one thread: the listener may answer 2xx only once a capture is durably on disk, and one
//! sync per request would cap the rate at the disk's sync rate; and the writer numbers attempts
//! and hands out ids from its memory, which must not race (see the store's notes). When the
//! tables take the backlog: once no capture has arrived for [`TABLE_QUIET`], at once when a
//! reader waits for them or a job is due, and in chunks when the journal has no room for the
//! next group; so a burst is acknowledged at the journal's pace and the tables catch up after
//! it. Why checkpoints have their own thread: see [`checkpoint_loop`].

use super::journal::{AckProgress, GroupBuffer, Journal};
use super::queries::filter_sql;
use super::rows::{insert_row, insert_row_or_ignore, RowText};
use super::types::{CaptureFilter, ImportReport, Retention};
use crate::capture::Capture;
use crate::facet_counts;
use crate::redelivery::{NotificationKey, PendingChanges, Redeliveries, RedeliveryWindow, Seen};
use crate::search;
use crate::{Error, Result};
use chrono::Utc;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Most captures written in one transaction.
const MAX_BATCH: usize = 1024;
/// Retention is enforced after the tables took this many captures (and on demand).
const PRUNE_EVERY: u64 = 256;

/// A write that is not an insert, run alone in the writer thread, with the writer's state (the
/// map of notifications, the retention, the highest id ever deleted) it may have to change.
type Job = Box<dyn FnOnce(&mut Connection, &mut Writer) + Send>;

/// A capture on its way to the writer.
pub(super) struct PendingInsert {
    pub(super) capture: Box<Capture>,
    pub(super) reply: oneshot::Sender<Result<Capture>>,
}

pub(super) enum WriteOp {
    Insert(PendingInsert),
    /// Anything else that writes, run alone in the writer thread.
    Run(Job),
}

/// How often the checkpoint thread moves the WAL into the database file.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// How long the writer's WAL restart may wait for a reader to step off the WAL before it gives
/// up until the next round (it holds the write lock meanwhile, so acknowledgements wait too).
const RESTART_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

/// Checkpoints run here rather than inside the writer's commits (`wal_autocheckpoint=0` on the
/// writer), so copying the WAL into the database and its fsync never stall an acknowledgement.
/// `PASSIVE` never blocks the writer.
///
/// A passive checkpoint alone never lets the WAL start over while captures keep arriving: by
/// the time it has copied what it saw, the writer has appended more, and SQLite restarts the WAL
/// only when a write begins with everything copied. The WAL would grow for as long as the load
/// lasts (hundreds of MB in a minute of the benchmark), every commit appending to the file
/// (block allocation and a journal commit in each fsync). So after each round this thread
/// raises `restart_due`, and the writer, between two batches, finishes the job itself
/// ([`restart_wal`]): it copies the few frames committed since, and its next transaction
/// writes the WAL from the start again, over blocks that already exist.
pub(super) fn checkpoint_loop(
    conn: &Connection,
    stop: &mpsc::Receiver<()>,
    restart_due: &AtomicBool,
) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT_EVERY) {
        match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            row.get::<_, i64>(1)
        }) {
            Ok(frames) if frames > 0 => restart_due.store(true, Ordering::Relaxed),
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "checkpointing the capture store failed"),
        }
    }
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
}

/// Copies what is left of the WAL and has the next transaction start it over (see
/// [`checkpoint_loop`]). Busy (a reader on the WAL, the checkpointer at work) is fine: the
/// checkpoint thread asks again after its next round.
fn restart_wal(conn: &Connection) {
    let outcome = conn
        .busy_timeout(RESTART_WAIT)
        .and_then(|()| conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(())));
    if let Err(error) = outcome {
        tracing::debug!(%error, "restarting the WAL failed; trying again later");
    }
    if let Err(error) = super::schema::wait_for_locks(conn) {
        tracing::warn!(%error, "resetting the writer's wait for locks failed");
    }
}

/// The writer thread's state: everything it needs besides its connection and its queue.
pub(super) struct Writer {
    /// The store's policy; [`Store::set_retention`](super::Store::set_retention) changes it.
    pub(super) retention: Retention,
    pub(super) restart_due: Arc<AtomicBool>,
    /// Told of every commit, so the search indexer keeps out of the way ([`crate::search`]).
    pub(super) activity: Arc<search::WriterActivity>,
    /// The notifications acknowledged so far (the journal's captures included).
    pub(super) redeliveries: Arc<Mutex<Redeliveries>>,
    /// The highest capture id ever deleted (kept in `highest_deleted`): new ids start above
    /// it, so a capture id names one capture for the life of the store, even after the newest
    /// captures were cleared (an export, a forward record, the app's list may still name it).
    pub(super) highest_deleted: i64,
    /// Which notifications the map may let go ([`crate::REDELIVERY_WINDOW`]).
    pub(super) window: RedeliveryWindow,
    /// Where captures are acknowledged before the tables take them ([`journal`]).
    pub(super) journal: Journal,
    /// Reused for reading the backlog back from the journal.
    pub(super) read_buffer: Vec<u8>,
    pub(super) progress: Arc<AckProgress>,
    /// The id the next capture gets.
    pub(super) next_id: i64,
    /// The group being made for the journal, kept to reuse its memory.
    pub(super) group: GroupBuffer,
    /// After the tables refused the backlog: when to try again.
    pub(super) retry_tables_at: Option<Instant>,
    /// Captures written into the tables since retention was last applied.
    pub(super) written_since_prune: u64,
}

/// Most captures of the backlog written into the tables in one transaction: large enough to
/// cost the tables little per capture, small enough that an acknowledgement arriving meanwhile
/// waits about a millisecond.
const TABLE_CHUNK: usize = 128;
/// The writer writes the backlog into the tables once no capture has arrived for this long (a
/// reader or a job asking for them does not wait).
const TABLE_QUIET: Duration = Duration::from_millis(5);
/// After the tables refused the backlog (a full disk, say), how long before trying again.
const TABLE_RETRY: Duration = Duration::from_secs(1);

impl Writer {
    pub(super) fn run(&mut self, conn: &mut Connection, rx: mpsc::Receiver<WriteOp>) {
        let mut inserts = Vec::new();
        // Nothing arrived for `TABLE_QUIET`: the tables take the backlog a chunk at a time for as
        // long as nothing arrives.
        let mut quiet = false;
        loop {
            let first = if self.journal.backlog() == 0 {
                quiet = false;
                match rx.recv() {
                    Ok(op) => op,
                    Err(_) => break,
                }
            } else if self.progress.take_wanted() {
                self.write_all_backlog(conn);
                continue;
            } else if quiet {
                match rx.try_recv() {
                    Ok(op) => {
                        quiet = false;
                        op
                    }
                    Err(mpsc::TryRecvError::Empty) => {
                        let written = self.write_backlog(conn, TABLE_CHUNK);
                        // Refused (see `retry_tables_at`): wait for the next quiet moment.
                        quiet = written > 0;
                        continue;
                    }
                    Err(mpsc::TryRecvError::Disconnected) => break,
                }
            } else {
                match rx.recv_timeout(TABLE_QUIET) {
                    Ok(op) => op,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        quiet = true;
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            };
            let mut pending = Some(first);
            while let Some(op) = pending.take() {
                match op {
                    WriteOp::Insert(insert) => {
                        inserts.push(insert);
                        if inserts.len() < MAX_BATCH {
                            pending = rx.try_recv().ok();
                        }
                    }
                    WriteOp::Run(job) => {
                        self.acknowledge(conn, &mut inserts);
                        // A job sees every acknowledged capture in the tables.
                        self.write_all_backlog(conn);
                        // The job may change the writer (`self`), so the turn is taken through
                        // a handle of its own.
                        let activity = self.activity.clone();
                        let turn = activity.write_turn();
                        job(conn, self);
                        drop(turn);
                        // An import may have brought higher ids, a clear a higher deleted one.
                        self.renumber_after_job(conn);
                        if inserts.is_empty() {
                            pending = rx.try_recv().ok();
                        }
                    }
                }
            }
            self.acknowledge(conn, &mut inserts);
            if self.progress.take_wanted() {
                self.write_all_backlog(conn);
            }
            if self.restart_due.swap(false, Ordering::Relaxed) {
                let _turn = self.activity.write_turn();
                restart_wal(conn);
            }
        }
        // Stopping: the tables take everything acknowledged, so a clean stop leaves no backlog.
        self.retry_tables_at = None;
        self.write_all_backlog(conn);
        if self.journal.backlog() == 0 {
            self.journal.shrink();
        }
    }

    /// Numbers the queued captures, links their attempts, appends them to the journal and
    /// answers each once the journal is synced; they join the backlog for the tables.
    fn acknowledge(&mut self, conn: &mut Connection, inserts: &mut Vec<PendingInsert>) {
        if inserts.is_empty() {
            return;
        }
        let mut batch = std::mem::take(inserts);
        let mut changes = PendingChanges::default();
        self.group.clear();
        {
            let committed = lock(&self.redeliveries);
            for (id, insert) in (self.next_id..).zip(batch.iter_mut()) {
                let capture = &mut insert.capture;
                capture.id = id;
                link_attempt(&committed, &mut changes, capture);
                self.group.push(capture);
            }
        }
        // A backlog as large as the journal: the tables take some before this group goes in
        // (a chunk at a time: 512 at once kept the same pace under a sustained flood, with a
        // longer wait for the group that waited, p99 20-22 ms against 17-18).
        while !self.journal.has_room(self.group.len()) {
            self.retry_tables_at = None;
            if self.write_backlog(conn, TABLE_CHUNK) == 0 {
                break;
            }
        }
        if let Err(error) = self.journal.append(&self.group) {
            tracing::error!(%error, "journaling captures failed");
            let message = error.to_string();
            for insert in batch {
                let _ = insert.reply.send(Err(Error::Commit(message.clone())));
            }
            return;
        }
        let newest = batch
            .last()
            .map_or(self.next_id - 1, |insert| insert.capture.id);
        self.next_id = newest + 1;
        {
            let mut map = lock(&self.redeliveries);
            changes.apply(&mut map);
            if let Some(horizon) = self.window.note(Instant::now(), self.next_id) {
                map.pass_window(horizon);
            }
        }
        self.progress.acknowledged(newest);
        // The indexer keeps out of the way of acknowledgements as of commits.
        self.activity.wrote();
        for insert in batch {
            let _ = insert.reply.send(Ok(*insert.capture));
        }
    }

    /// Writes the oldest `most` captures of the backlog into the tables in one transaction, with
    /// the journal's mark; returns how many.
    fn write_backlog(&mut self, conn: &mut Connection, most: usize) -> u64 {
        let count = most.min(self.journal.backlog());
        if count == 0 || self.retry_tables_at.is_some_and(|at| Instant::now() < at) {
            return 0;
        }
        let Some(mark) = self.journal.mark_after(count) else {
            return 0;
        };
        let turn = self.activity.write_turn();
        let written = (|| -> Result<()> {
            let captures = self.journal.oldest(count, &mut self.read_buffer)?;

            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            for capture in &captures {
                insert_row(&tx, capture, &RowText::of(capture)?, Some(capture.id))?;
                record_attempt(&tx, capture)?;
            }
            mark.write(&tx)?;
            tx.commit()?;
            Ok(())
        })();
        drop(turn);
        if let Err(error) = written {
            tracing::error!(%error, "writing acknowledged captures into the store failed; they stay in its journal");
            self.retry_tables_at = Some(Instant::now() + TABLE_RETRY);
            return 0;
        }
        self.retry_tables_at = None;
        if self.read_buffer.capacity() > 4 << 20 {
            self.read_buffer = Vec::new();
        }
        self.journal.applied_through(mark.id);
        self.written_since_prune += count as u64;
        // Before readers are told: what they read next is already within the retention.
        if self.retention != Retention::default() && self.written_since_prune >= PRUNE_EVERY {
            self.written_since_prune = 0;
            let activity = self.activity.clone();
            let _turn = activity.write_turn();
            if let Err(error) = self.prune(conn, self.retention) {
                tracing::warn!(%error, "pruning the capture store failed");
            }
        }
        self.progress.applied(mark.id);
        self.activity.wrote();
        count as u64
    }

    /// Writes the whole backlog into the tables (before a job, when a reader waits, at the end).
    fn write_all_backlog(&mut self, conn: &mut Connection) -> u64 {
        let mut written = 0;
        while self.journal.backlog() > 0 {
            let step = self.write_backlog(conn, TABLE_CHUNK * 8);
            if step == 0 {
                break;
            }
            written += step;
        }
        written
    }

    /// After a job, with the backlog in the tables: the next id is above every id there is and
    /// every id deleted.
    fn renumber_after_job(&mut self, conn: &Connection) {
        match newest_id(conn) {
            Ok(newest) => {
                self.next_id = self
                    .next_id
                    .max(newest + 1)
                    .max(self.highest_deleted.saturating_add(1));
            }
            Err(error) => tracing::warn!(%error, "reading the newest capture id failed"),
        }
    }

    /// Writes imported captures: `INSERT OR IGNORE` tells a taken id (skipped) without a
    /// lookup per row. They are indexed for search in the same transaction, so an import
    /// leaves a store that answers from its index the moment it returns: a capture at or below
    /// the indexed id (an import into a store with newer captures) always, as the indexer only
    /// looks above it; the others, with the few live captures the indexer had not reached yet,
    /// when those are few ([`search::tail_is_short`]), else the indexer catches up after.
    ///
    /// Why here rather than by the indexer after: the indexer works in transactions of a few
    /// hundred captures so as to hold an acknowledgement up for milliseconds only, and FTS5
    /// writes a segment per transaction and merges them, which made indexing an import four
    /// times slower than indexing it in the import's own batches (`benches/query.rs`).
    pub(super) fn import(
        &self,
        conn: &mut Connection,
        captures: &[Capture],
    ) -> Result<ImportReport> {
        let redeliveries = &*self.redeliveries;
        let mut changes = PendingChanges::default();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let indexed_through = crate::watermark::indexed_through(&tx)?;
        let tail_is_short = search::tail_is_short(&tx, indexed_through)?;
        let mut report = ImportReport {
            imported: 0,
            skipped: 0,
            cancelled: false,
        };
        let mut below_index = Vec::new();
        for capture in captures {
            if insert_row_or_ignore(&tx, capture, &RowText::of(capture)?)? {
                record_imported_attempt(&tx, redeliveries, &mut changes, capture)?;
                report.imported += 1;
                if capture.id <= indexed_through {
                    below_index.push(capture.id);
                }
            } else {
                report.skipped += 1;
            }
        }
        for id in below_index {
            search::index_rows(&tx, "id = ?1", &[&id], &|| false)?;
        }
        if tail_is_short {
            search::index_tail_in(&tx, indexed_through)?;
        }
        tx.commit()?;
        changes.apply(&mut lock(redeliveries));
        self.activity.imported();
        Ok(report)
    }

    /// Applies `retention` once; returns how many captures it deleted.
    pub(super) fn prune(&mut self, conn: &mut Connection, retention: Retention) -> Result<u64> {
        if retention == Retention::default() {
            return Ok(0);
        }
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let newest_before = newest_id(&tx)?;
        let mut pruned = 0u64;
        if let Some(max_age) = retention.max_age {
            let cutoff = (Utc::now() - max_age).timestamp_micros();
            search::unindex(&tx, "received_at_us < ?1", &[&cutoff])?;
            pruned +=
                tx.execute("DELETE FROM captures WHERE received_at_us < ?1", [cutoff])? as u64;
        }
        if let Some(max_count) = retention.max_count {
            let max_count = i64::try_from(max_count).unwrap_or(i64::MAX);
            search::unindex(
                &tx,
                "id <= (SELECT id FROM captures ORDER BY id DESC LIMIT 1 OFFSET ?1)",
                &[&max_count],
            )?;
            pruned += tx.execute(
                "DELETE FROM captures WHERE id <= (SELECT id FROM captures ORDER BY id DESC \
                 LIMIT 1 OFFSET ?1)",
                [max_count],
            )? as u64;
        }
        if pruned == 0 {
            return Ok(0);
        }
        tx.execute(
            "DELETE FROM outbound WHERE capture_id NOT IN (SELECT id FROM captures)",
            [],
        )?;
        let oldest_capture: Option<i64> =
            tx.query_row("SELECT MIN(id) FROM captures", [], |row| row.get(0))?;
        search::drop_shards_below(&tx, oldest_capture.unwrap_or(i64::MAX))?;
        // Oldest first, so the notifications no capture refers to any more are those older than
        // the oldest one still referred to (a redelivery of one of them later starts afresh).
        let oldest_kept: i64 = tx.query_row(
            "SELECT COALESCE((SELECT MIN(notification_id) FROM captures), \
             (SELECT MAX(id) + 1 FROM notifications), 0)",
            [],
            |row| row.get(0),
        )?;
        tx.execute("DELETE FROM notifications WHERE id < ?1", [oldest_kept])?;
        let highest_deleted = self.note_deleted_newest(&tx, newest_before)?;
        tx.commit()?;
        self.highest_deleted = highest_deleted;
        lock(&self.redeliveries).forget_before(oldest_kept);
        Ok(pruned)
    }

    /// Deletes the captures `filter` selects (see [`Store::clear`](super::Store::clear)), in one
    /// transaction.
    ///
    /// A notification is forgotten (its row in `notifications` and its entry in the map) once no
    /// capture of it is left, so a redelivery of it is a first attempt again: the user cleared it,
    /// and an "attempt 4" whose attempts 1-3 cannot be shown would point at nothing. When some of
    /// its captures are left (a clear by verdict may take only some), it keeps its link and count,
    /// and the next redelivery continues the numbering, beside the attempts that are still there.
    pub(super) fn clear(&mut self, conn: &mut Connection, filter: &CaptureFilter) -> Result<u64> {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let newest_before = newest_id(&tx)?;
        let everything = *filter == CaptureFilter::default();
        let (deleted, forgotten) = if everything {
            // No WHERE: SQLite drops the tables' pages wholesale instead of row by row.
            tx.execute("DELETE FROM outbound", [])?;
            tx.execute("DELETE FROM notifications", [])?;
            search::unindex_all(&tx)?;
            (tx.execute("DELETE FROM captures", [])? as u64, None)
        } else {
            let (condition, args) = filter_sql(filter, &search::SearchTables::read(&tx, true)?);
            let touched: Vec<i64> = tx
                .prepare(&format!(
                    "SELECT DISTINCT notification_id FROM captures WHERE ({condition}) \
                     AND notification_id IS NOT NULL"
                ))?
                .query_map(params_from_iter(args.iter()), |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            tx.execute(
                &format!(
                    "DELETE FROM outbound WHERE capture_id IN \
                     (SELECT id FROM captures WHERE {condition})"
                ),
                params_from_iter(args.iter()),
            )?;
            // The ids first: a search condition reads the index, so the index entries go
            // after the captures.
            let doomed: Vec<i64> = tx
                .prepare(&format!("SELECT id FROM captures WHERE {condition}"))?
                .query_map(params_from_iter(args.iter()), |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let arg_refs: Vec<&dyn ToSql> = args.iter().map(|arg| arg.as_ref()).collect();
            facet_counts::uncount(&tx, &condition, &arg_refs)?;
            let deleted = tx.execute(
                &format!("DELETE FROM captures WHERE {condition}"),
                params_from_iter(args.iter()),
            )? as u64;
            search::unindex_ids(&tx, &doomed)?;
            let mut forget = tx.prepare(
                "DELETE FROM notifications WHERE id = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM captures WHERE notification_id = ?1)",
            )?;
            let mut forgotten = std::collections::HashSet::new();
            for id in touched {
                if forget.execute([id])? > 0 {
                    forgotten.insert(id);
                }
            }
            drop(forget);
            (deleted, Some(forgotten))
        };
        if deleted == 0 {
            return Ok(0);
        }
        let highest_deleted = self.note_deleted_newest(&tx, newest_before)?;
        tx.commit()?;
        self.highest_deleted = highest_deleted;
        let mut redeliveries = lock(&self.redeliveries);
        match forgotten {
            None => redeliveries.clear(),
            Some(forgotten) => redeliveries.forget(&forgotten),
        }
        drop(redeliveries);
        // Emptied: give the disk back. VACUUM copies only what is left, here nothing, so it
        // holds the writer briefly (measured in `benches/clear.rs`); the file shrinks at the
        // next checkpoint. A partial clear leaves its pages on the free list for the next
        // captures instead: a VACUUM then would copy the whole store while every
        // acknowledgement waits.
        if newest_id(conn)? == 0 {
            if let Err(error) = conn.execute_batch("VACUUM") {
                tracing::warn!(%error, "compacting the emptied capture store failed");
            }
        }
        Ok(deleted)
    }

    /// After a delete inside `tx`: when it took the newest capture(s), records the newest id
    /// there was in `highest_deleted`, so ids are not handed out again. Returns the value to
    /// keep in memory once `tx` commits.
    pub(super) fn note_deleted_newest(&self, tx: &Connection, newest_before: i64) -> Result<i64> {
        if newest_id(tx)? >= newest_before || newest_before <= self.highest_deleted {
            return Ok(self.highest_deleted);
        }
        tx.execute(
            "INSERT INTO highest_deleted (one, id) VALUES (1, ?1) \
             ON CONFLICT (one) DO UPDATE SET id = MAX(id, excluded.id)",
            [newest_before],
        )?;
        Ok(newest_before)
    }
}

/// The newest capture's id, 0 when there is none.
fn newest_id(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM captures")?
        .query_row([], |row| row.get(0))?)
}

/// The highest capture id ever deleted (see [`Writer::highest_deleted`]).
pub(super) fn highest_deleted(conn: &Connection) -> Result<i64> {
    Ok(conn
        .query_row("SELECT id FROM highest_deleted WHERE one = 1", [], |row| {
            row.get(0)
        })
        .optional()?
        .unwrap_or(0))
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The notification a capture is an attempt of, if it names one.
fn notification_key(capture: &Capture) -> Option<NotificationKey> {
    crate::redelivery::counts_as_attempt(capture).then_some(())?;
    Some(NotificationKey::of(
        capture.subscription_id.as_deref()?,
        capture.fields.resource_type.as_deref()?,
        capture.fields.event_id.as_deref()?,
    ))
}

/// Sets `attempt` and `notification_id` from earlier captures of the same notification (see
/// [`crate::redelivery`]), as acknowledged so far (`committed` and this group's `changes`).
fn link_attempt(committed: &Redeliveries, changes: &mut PendingChanges, capture: &mut Capture) {
    capture.attempt = 1;
    capture.notification_id = None;
    let Some(key) = notification_key(capture) else {
        return;
    };
    let seen = match changes.get(committed, &key) {
        Some(earlier) => Seen {
            first_id: earlier.first_id,
            attempts: earlier.attempts.saturating_add(1),
        },
        // The first attempt is the notification: it links to itself.
        None => Seen {
            first_id: capture.id,
            attempts: 1,
        },
    };
    capture.attempt = seen.attempts;
    capture.notification_id = Some(seen.first_id);
    changes.set(key, seen);
}

/// Records a linked capture's attempt in `notifications` (see [`link_attempt`]): a first attempt
/// adds its notification, a later one counts itself there.
pub(super) fn record_attempt(conn: &Connection, capture: &Capture) -> Result<()> {
    let (Some(key), Some(first_id)) = (notification_key(capture), capture.notification_id) else {
        return Ok(());
    };
    if first_id == capture.id {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO notifications (id, key, attempts) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![first_id, key.as_bytes(), capture.attempt])?;
    } else {
        conn.prepare_cached("UPDATE notifications SET attempts = ?2 WHERE id = ?1")?
            .execute(params![first_id, capture.attempt])?;
    }
    Ok(())
}

/// Adds an imported capture's notification to `notifications` (imports keep their own attempt
/// numbers and links): later redeliveries of it then link to it.
fn record_imported_attempt(
    conn: &Connection,
    committed: &Mutex<Redeliveries>,
    changes: &mut PendingChanges,
    capture: &Capture,
) -> Result<()> {
    let (Some(key), Some(first_id)) = (notification_key(capture), capture.notification_id) else {
        return Ok(());
    };
    let known = changes.get(&lock(committed), &key);
    let attempts = match known {
        // Already known under another first capture (the same notification received live):
        // keep that link.
        Some(known) if known.first_id != first_id => return Ok(()),
        Some(known) => known.attempts.max(capture.attempt),
        None => capture.attempt.max(1),
    };
    conn.prepare_cached(
        "INSERT INTO notifications (id, key, attempts) VALUES (?1, ?2, ?3) \
         ON CONFLICT (id) DO UPDATE SET attempts = MAX(attempts, excluded.attempts)",
    )?
    .execute(params![first_id, key.as_bytes(), attempts])?;
    changes.set(key, Seen { first_id, attempts });
    Ok(())
}

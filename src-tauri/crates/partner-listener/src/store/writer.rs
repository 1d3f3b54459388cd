//! The one thread that acknowledges captures: it numbers each group queued while it synced the
//! last one, links their attempts, appends them to the journal and answers them once it is
//! synced; the tables thread ([`super::tables`]) writes them into the tables behind. Every other
//! write (clear, prune, import, the run log, outbound records) runs here too, as a job between
//! two groups, in order with the captures around it: a job waits until the tables hold every
//! capture acknowledged before it.
//!
//! Why one thread: the listener may answer 2xx only once a capture is durably on disk, and one
//! sync per request would cap the rate at the disk's sync rate; and the writer numbers attempts
//! and hands out ids from its memory, which must not race (see the store's notes).
//!
//! The store's retention is applied by the tables thread as it takes captures (so a read after
//! them finds the store within it) and by the writer's jobs: both through [`Retained`], which
//! also holds what a prune must not forget while captures wait in the journal.

use super::journal::{AckProgress, GroupBuffer, Journal};
use super::queries::filter_sql;
use super::rows::{insert_row_or_ignore, RowText};
use super::sizes::{self, Tally};
use super::types::{CaptureFilter, ImportReport, Retention};
use crate::capture::Capture;
use crate::classes::RetentionClass;
use crate::facet_counts;
use crate::redelivery::{NotificationKey, PendingChanges, Redeliveries, RedeliveryWindow, Seen};
use crate::search;
use crate::{Error, Result};
use chrono::Utc;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use tokio::sync::oneshot;

/// Most captures acknowledged in one group.
const MAX_BATCH: usize = 1024;

/// A write that is not an insert, run alone in the writer thread, with the writer's state (the
/// map of notifications, the retention, the highest id ever deleted) it may have to change; or
/// told why it cannot run.
pub(super) struct Job {
    pub(super) scope: JobScope,
    pub(super) work: JobWork,
}

/// A job's work: given the writer connection and the writer's state, or why it cannot run.
pub(super) type JobWork = Box<dyn for<'a> FnOnce(Result<JobTurn<'a>>) + Send>;

/// What a job runs with: the writer connection and the writer's state.
pub(super) type JobTurn<'a> = (&'a mut Connection, &'a mut Writer);

/// What a job works on, which decides what it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JobScope {
    /// The captures (their rows, indexes, notifications, forwards and replays): it runs once
    /// the tables hold every capture acknowledged before it, and is refused
    /// ([`Error::TablesBehind`]) while they cannot take them, rather than run on part of them.
    Captures,
    /// Only what is kept apart from the captures (the retention policy, the listener's runs):
    /// it runs at once, whatever the tables' backlog.
    Apart,
}

/// A capture on its way to the writer.
pub(super) struct PendingInsert {
    pub(super) capture: Box<Capture>,
    pub(super) reply: oneshot::Sender<Result<Capture>>,
}

pub(super) enum WriteOp {
    Insert(PendingInsert),
    /// Anything else that writes, run alone in the writer thread, in order with the captures.
    Run(Job),
}

/// What a prune reads and changes, shared by the writer (its jobs) and the tables thread (the
/// store's policy, applied as they take captures).
pub(super) struct Retained {
    /// The store's policy; [`Store::set_retention`](super::Store::set_retention) changes it.
    pub(super) policy: Mutex<Retention>,
    /// The notifications acknowledged so far (the journal's captures included).
    pub(super) redeliveries: Arc<Mutex<Redeliveries>>,
    /// (capture id, first attempt's id) of the redeliveries acknowledged and perhaps not yet in
    /// the tables, oldest first: a prune keeps the notifications they link to. Pushed while the
    /// writer holds `redeliveries` to link them, so a prune holding it sees every link made.
    pub(super) journal_links: Mutex<VecDeque<(i64, i64)>>,
    /// The highest capture id ever deleted (kept in `highest_deleted`): new ids start above
    /// it, so a capture id names one capture for the life of the store, even after the newest
    /// captures were cleared (an export, a forward record, the app's list may still name it).
    pub(super) highest_deleted: AtomicI64,
    /// What the tables hold per retention class (captures and bytes, [`super::sizes`]): read
    /// from `retained_sizes` at open (`None`: read it at the next prune), then kept by whoever
    /// changes the tables (the tables thread's chunks, imports, clears, prunes), each under the
    /// write turn before it lets go of it, so the next to take the turn finds it exact. Why kept:
    /// a prune finds where to cut by what is past the limits, and counting the captures at each
    /// prune was most of what the tables thread did under a flood (see [`Retained::prune_in`]).
    pub(super) captures: Mutex<Option<Tally>>,
    /// Captures the retention deleted since the store was opened, per class.
    pub(super) pruned: [AtomicU64; 3],
}

/// The writer thread's state: everything it needs besides its connection and its queue.
pub(super) struct Writer {
    pub(super) retained: Arc<Retained>,
    /// Told of every group, so the search indexer keeps out of the way ([`crate::search`]).
    pub(super) activity: Arc<search::WriterActivity>,
    /// Which notifications the map may let go ([`crate::REDELIVERY_WINDOW`]).
    pub(super) window: RedeliveryWindow,
    /// Where captures are acknowledged before the tables take them ([`super::journal`]).
    pub(super) journal: Arc<Journal>,
    pub(super) progress: Arc<AckProgress>,
    /// Told of every group and whenever the writer waits for the tables.
    pub(super) tables: mpsc::Sender<()>,
    /// The id the next capture gets.
    pub(super) next_id: i64,
    /// The group being made for the journal, kept to reuse its memory.
    pub(super) group: GroupBuffer,
}

impl Writer {
    pub(super) fn run(&mut self, conn: &mut Connection, rx: mpsc::Receiver<WriteOp>) {
        let mut inserts = Vec::new();
        while let Ok(first) = rx.recv() {
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
                        self.acknowledge(&mut inserts);
                        self.run_job(conn, job);
                        if inserts.is_empty() {
                            pending = rx.try_recv().ok();
                        }
                    }
                }
            }
            self.acknowledge(&mut inserts);
        }
    }

    /// Runs `job` once what it works on is in the tables: a job on the captures sees every
    /// capture acknowledged before it, or is refused in the tables' words.
    fn run_job(&mut self, conn: &mut Connection, job: Job) {
        if job.scope == JobScope::Captures && !self.journal.wait_until_empty(|| self.nudge_tables())
        {
            let reason = self
                .journal
                .refusal()
                .unwrap_or_else(|| "they stopped taking them".into());
            (job.work)(Err(Error::TablesBehind {
                waiting: self.journal.backlog(),
                reason,
            }));
            return;
        }
        // The job may change the writer (`self`), so the turn is taken through a handle of
        // its own.
        let activity = self.activity.clone();
        let turn = activity.write_turn();
        (job.work)(Ok((&mut *conn, &mut *self)));
        drop(turn);
        if job.scope == JobScope::Captures {
            // An import may have brought higher ids, a clear a higher deleted one.
            self.renumber_after_job(conn);
        }
    }

    fn nudge_tables(&self) {
        // Gone only when the tables thread failed to start or has stopped: nothing to wake.
        let _ = self.tables.send(());
    }

    /// Numbers the queued captures, links their attempts, appends them to the journal and
    /// answers each once the journal is synced; they join the backlog for the tables.
    fn acknowledge(&mut self, inserts: &mut Vec<PendingInsert>) {
        if inserts.is_empty() {
            return;
        }
        let mut batch = std::mem::take(inserts);
        let mut changes = PendingChanges::default();
        self.group.clear();
        {
            let committed = lock(&self.retained.redeliveries);
            let mut links = lock(&self.retained.journal_links);
            for (id, insert) in (self.next_id..).zip(batch.iter_mut()) {
                let capture = &mut insert.capture;
                capture.id = id;
                link_attempt(&committed, &mut changes, capture);
                if let Some(first) = capture.notification_id.filter(|&first| first != id) {
                    links.push_back((id, first));
                }
                self.group.push(capture);
            }
        }
        // A backlog as large as the journal: the tables take some before this group goes in
        // (no wait when there is room). Refused (a full disk), the append below says there is
        // no room.
        self.journal
            .wait_for_room(self.group.len(), || self.nudge_tables());
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
            let mut map = lock(&self.retained.redeliveries);
            changes.apply(&mut map);
            if let Some(horizon) = self.window.note(Instant::now(), self.next_id) {
                map.pass_window(horizon);
            }
        }
        self.progress.acknowledged(newest);
        // The indexer keeps out of the way of acknowledgements as of commits.
        self.activity.wrote();
        self.nudge_tables();
        for insert in batch {
            let _ = insert.reply.send(Ok(*insert.capture));
        }
    }

    /// After a job, with the backlog in the tables: the next id is above every id there is and
    /// every id deleted.
    fn renumber_after_job(&mut self, conn: &Connection) {
        match newest_id(conn) {
            Ok(newest) => {
                self.next_id = self.next_id.max(newest + 1).max(
                    self.retained
                        .highest_deleted
                        .load(Ordering::Relaxed)
                        .saturating_add(1),
                );
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
        let redeliveries = &*self.retained.redeliveries;
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
        let mut added = Tally::default();
        for capture in captures {
            let text = RowText::of(capture)?;
            if insert_row_or_ignore(&tx, capture, &text)? {
                added.add_capture(capture, &text);
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
        added.write(&tx)?;
        let held = self.retained.held(&tx)?;
        tx.commit()?;
        self.retained.set_held(held, &added);
        changes.apply(&mut lock(redeliveries));
        self.activity.imported();
        Ok(report)
    }

    /// Applies `retention` once (see [`Retained::prune`]); returns how many captures it deleted.
    pub(super) fn prune(&mut self, conn: &mut Connection, retention: Retention) -> Result<u64> {
        self.retained
            .prune(conn, retention, self.progress.applied_id())
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
        let held = self.retained.held(&tx)?;
        let (deleted, forgotten) = if everything {
            Tally::of_rows(&tx, "1 = 1", &[])?.negated().write(&tx)?;
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
            Tally::of_rows(&tx, &format!("({condition})"), &arg_refs)?
                .negated()
                .write(&tx)?;
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
        let highest_deleted = self.retained.note_deleted_newest(&tx, newest_before)?;
        // Read back rather than worked out: a clear is rare, and the table is three rows.
        let now_held = Tally::read(&tx)?;
        tx.commit()?;
        self.retained.set_held(held, &now_held.minus(&held));
        self.retained
            .highest_deleted
            .fetch_max(highest_deleted, Ordering::Relaxed);
        let mut redeliveries = lock(&self.retained.redeliveries);
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
}

impl std::fmt::Debug for Retained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retained")
            .field("policy", &*lock(&self.policy))
            .field("captures", &*lock(&self.captures))
            .finish_non_exhaustive()
    }
}

impl Retained {
    /// Applies `retention` once, in a transaction of its own; returns how many captures it
    /// deleted. `applied`: the newest capture id the tables hold (the links of captures up to it
    /// are in the tables).
    pub(super) fn prune(
        &self,
        conn: &mut Connection,
        retention: Retention,
        applied: i64,
    ) -> Result<u64> {
        if retention == Retention::default() {
            return Ok(0);
        }
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let held = self.held(&tx)?;
        let pruned = self.prune_in(&tx, retention, applied, held)?;
        if pruned.total_captures() == 0 {
            return Ok(0);
        }
        let removed = pruned.negated();
        removed.write(&tx)?;
        tx.commit()?;
        self.set_held(held, &removed);
        self.note_pruned(&pruned);
        Ok(pruned.total_captures().max(0) as u64)
    }

    /// What the tables hold, per class: the mirror, or `retained_sizes` when it is not known.
    pub(super) fn held(&self, conn: &Connection) -> Result<Tally> {
        match *lock(&self.captures) {
            Some(held) => Ok(held),
            None => Tally::read(conn),
        }
    }

    /// After a commit that changed the tables by `change` from `before` (still under the
    /// write turn, see [`Retained::captures`]).
    pub(super) fn set_held(&self, before: Tally, change: &Tally) {
        let mut now = before;
        now.merge(change);
        *lock(&self.captures) = Some(now);
    }

    /// Counts what a committed prune deleted (see [`Retained::pruned`]).
    pub(super) fn note_pruned(&self, pruned: &Tally) {
        for class in RetentionClass::ALL {
            let count = u64::try_from(pruned.captures_of(class)).unwrap_or(0);
            self.pruned[class.index()].fetch_add(count, Ordering::Relaxed);
        }
    }

    /// Applies `retention` inside `tx` to tables holding `held`; returns what it deleted, per
    /// class, for the caller to take off `retained_sizes` and the mirror once it commits.
    ///
    /// The order (see [`crate::classes`]): captures past `max_age`, whatever their class;
    /// then junk past its share ([`crate::classes::JUNK_SHARE_PERCENT`] of the count and of the bytes); then,
    /// while the tables are past the count or the byte budget, the oldest junk, then the oldest
    /// notifications of subscriptions without a key, then the oldest signed captures. Each cut
    /// is found by what is past the limit ([`sizes::cut_through`]), stepping over the captures
    /// to delete only: SQLite steps over every entry an `OFFSET` skips, and the prune used to
    /// find the cut as `OFFSET max_count` from the newest, a walk over the whole retained store
    /// (11 ms at the app's default of 200,000) in each of its statements, every 256 captures;
    /// under a flood that walk was 60% of the tables thread (BENCHMARKS.md, listener, first
    /// section).
    ///
    /// Holds the map of notifications from when it reads which ones are still linked to until
    /// it has forgotten the others, so the writer links no capture to one it forgets; not
    /// through the delete of their rows and the commit (a sync), which the writer's next group
    /// would wait for. Should those fail, the store still has notifications the map forgot,
    /// and a redelivery of one is counted as a first attempt, as it would have been had the
    /// prune gone through.
    pub(super) fn prune_in(
        &self,
        tx: &Connection,
        retention: Retention,
        applied: i64,
        held: Tally,
    ) -> Result<Tally> {
        let mut pruned = Tally::default();
        let newest_before = newest_id(tx)?;
        if let Some(max_age) = retention.max_age {
            let cutoff = (Utc::now() - max_age).timestamp_micros();
            pruned.merge(&delete_where(tx, "received_at_us < ?1", &[&cutoff])?);
        }
        let limit = |value: Option<u64>, share: fn(u64) -> u64| {
            value.map_or(i64::MAX, |value| {
                i64::try_from(share(value)).unwrap_or(i64::MAX)
            })
        };
        let whole = |value: u64| value;
        let junk = RetentionClass::Junk;
        let left = held.minus(&pruned);
        let through = sizes::cut_through(
            tx,
            junk,
            left.captures_of(junk) - limit(retention.max_count, RetentionClass::junk_share),
            left.bytes_of(junk) - limit(retention.max_bytes, RetentionClass::junk_share),
        )?;
        if let Some(through) = through {
            pruned.merge(&delete_class_through(tx, junk, through)?);
        }
        for class in RetentionClass::ALL {
            let left = held.minus(&pruned);
            let through = sizes::cut_through(
                tx,
                class,
                left.total_captures() - limit(retention.max_count, whole),
                left.total_bytes() - limit(retention.max_bytes, whole),
            )?;
            match through {
                Some(through) => pruned.merge(&delete_class_through(tx, class, through)?),
                None => break,
            }
        }
        if pruned.total_captures() == 0 {
            return Ok(pruned);
        }
        tx.execute(
            "DELETE FROM outbound WHERE capture_id NOT IN (SELECT id FROM captures)",
            [],
        )?;
        let oldest_capture: Option<i64> =
            tx.query_row("SELECT MIN(id) FROM captures", [], |row| row.get(0))?;
        search::drop_shards_below(tx, oldest_capture.unwrap_or(i64::MAX))?;
        // The notifications no capture refers to any more include those older than the oldest
        // one still referred to, by a capture in the tables or one still in the journal: they
        // go (a redelivery of one of them later starts afresh). One a pruned junk capture was
        // the first attempt of stays while a later attempt is kept.
        let oldest_kept = {
            let mut map = lock(&self.redeliveries);
            let oldest_in_tables: i64 = tx.query_row(
                "SELECT COALESCE((SELECT MIN(notification_id) FROM captures), \
                 (SELECT MAX(id) + 1 FROM notifications), 0)",
                [],
                |row| row.get(0),
            )?;
            let oldest_kept = oldest_in_tables.min(self.oldest_journal_link(applied));
            map.forget_before(oldest_kept);
            oldest_kept
        };
        tx.execute("DELETE FROM notifications WHERE id < ?1", [oldest_kept])?;
        let highest_deleted = self.note_deleted_newest(tx, newest_before)?;
        self.highest_deleted
            .fetch_max(highest_deleted, Ordering::Relaxed);
        Ok(pruned)
    }

    /// The oldest notification a capture still in the journal links to (the tables do not
    /// hold the link yet), `i64::MAX` when none does; forgets the links through `applied`.
    fn oldest_journal_link(&self, applied: i64) -> i64 {
        let mut links = lock(&self.journal_links);
        while links.front().is_some_and(|&(id, _)| id <= applied) {
            links.pop_front();
        }
        links
            .iter()
            .map(|&(_, first)| first)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// After a delete inside `tx`: when it took the newest capture(s), records the newest id
    /// there was in `highest_deleted`, so ids are not handed out again. Returns the value to
    /// keep in memory once `tx` commits.
    pub(super) fn note_deleted_newest(&self, tx: &Connection, newest_before: i64) -> Result<i64> {
        let highest_deleted = self.highest_deleted.load(Ordering::Relaxed);
        if newest_id(tx)? >= newest_before || newest_before <= highest_deleted {
            return Ok(highest_deleted);
        }
        tx.execute(
            "INSERT INTO highest_deleted (one, id) VALUES (1, ?1) \
             ON CONFLICT (one) DO UPDATE SET id = MAX(id, excluded.id)",
            [newest_before],
        )?;
        Ok(newest_before)
    }
}

/// Deletes the captures `where_captures` selects (their search entries and counts first);
/// returns what they were, per class.
fn delete_where(tx: &Connection, where_captures: &str, args: &[&dyn ToSql]) -> Result<Tally> {
    let doomed = Tally::of_rows(tx, where_captures, args)?;
    if doomed.total_captures() == 0 {
        return Ok(doomed);
    }
    search::unindex(tx, where_captures, args)?;
    tx.execute(
        &format!("DELETE FROM captures WHERE {where_captures}"),
        args,
    )?;
    Ok(doomed)
}

/// Deletes the captures of `class` with ids up to `through` (see [`sizes::cut_through`]).
fn delete_class_through(tx: &Connection, class: RetentionClass, through: i64) -> Result<Tally> {
    delete_where(
        tx,
        &format!("{} AND id <= ?1", class.sql_condition()),
        &[&through],
    )
}

/// The newest capture's id, 0 when there is none.
fn newest_id(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM captures")?
        .query_row([], |row| row.get(0))?)
}

/// The highest capture id ever deleted (see [`Retained::highest_deleted`]).
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
    let (subscription, resource_type, event_id) = capture.notification_of()?;
    Some(NotificationKey::of(subscription, resource_type, event_id))
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

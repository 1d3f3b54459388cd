//! The capture store: SQLite in WAL mode, captures acknowledged by one thread from a journal,
//! written into the tables by another behind them.
//!
//! Why shaped so: the listener may answer 2xx only once a capture is durably on disk, and one
//! fsync per request would cap the rate at the disk's fsync rate. So every insert goes to a single
//! writer thread; the writer takes whatever requests queued up while it was syncing the last
//! group, numbers them, appends them to the acknowledgement journal in one write, syncs it once
//! (with `Durability::Full`, so an acknowledged capture survives a power cut, not only a
//! `kill -9`), and only then tells each waiting request that its capture is stored. Under load
//! groups grow by themselves; when idle a group is one capture and nothing waits for a window to
//! close. The tables thread writes the journal's captures into the tables behind the
//! acknowledgements, on its own connection, in transactions of many: at a quiet moment, when
//! the journal is nearly full, or when a reader or the writer waits for it ([`tables`]: the
//! writer waits for all of it before a job on the captures, and refuses the job while the
//! tables refuse the backlog, `writer::JobScope`); this
//! process's reads wait for the tables to hold every capture acknowledged before the read, and a
//! restart after a crash writes in what they had not taken yet ([`journal`]). Readers use their
//! own connections, which WAL lets run beside the writers; a reader opened in another process
//! first catches up with the journal ([`catch_up`]: after a crash it writes the journal's
//! captures in, beside a listener it waits for that listener's tables), so it sees every capture
//! acknowledged before it opened, and later ones once the tables have them (within a few
//! milliseconds when the listener is not flooded, a second when it is).
//!
//! The writer also links redeliveries, so attempt numbers never race: it keeps the store's
//! notifications by (subscription, resource type, eventId) in the append-only table
//! `notifications`, and those of the redelivery window in memory, instead of an index on those
//! fields (why: [`crate::redelivery`]).
//!
//! The writer is the one thread every acknowledgement waits on, so it does nothing another
//! thread can do, and nothing before an acknowledgement that can come after it (measured with
//! `benches/store.rs`, `benches/ack.rs` and `perf`, see BENCHMARKS.md):
//! - the journal takes a capture's bytes; the row's formatting, its 27 columns, the indexes beside
//!   it and the WAL's 8 KiB frames come later, for many captures at once, on the tables thread
//!   ([`journal`], [`tables`]); the writer waits for it only when the journal is full;
//! - checkpoints run on their own thread, and the tables thread only finishes each round with a
//!   short `RESTART` so the WAL is written from its start again instead of growing for as long
//!   as a burst lasts (see [`tables::checkpoint_loop`]);
//! - 8 KiB pages keep a 2 KiB notification's row off overflow pages (see [`schema::PAGE_SIZE`]).
//!
//! The inspector reads the store, not a copy of it ([`StoreReader::page`], [`StoreReader::facets`]):
//! a page of rows, its count, the filter choices and text search are answered here, so the app
//! holds one screen of captures whatever the store's size. What keeps those reads fast at a
//! million captures (`benches/query.rs`) without slowing the writer:
//! - `captures_list`, an index of the id and every filtered column, is what a page walks
//!   newest first (stepping over 60-byte entries, not 2.5 KB rows), what a count under a time
//!   range or an id bound scans, and where the scans of the unindexed tail read;
//! - the counts under the column filters (verdict, event type, resource type, subscription),
//!   the verdict facet, a page's total and the lists of values come from `facet_counts`, a few
//!   rows kept by the search indexer thread behind the writer, plus a scan of the captures it
//!   has not reached ([`crate::facet_counts`]). Schema 4 had one narrow index per filtered
//!   column instead, kept inside the writer's insert: its CPU per capture went from 15 to
//!   20 µs (`benches/store.rs`); schema 5 dropped them. Tried and dropped before that: each
//!   column's index holding the other columns too (24 µs per capture, and ordered by
//!   (column, other columns) a million-capture import fell to 11,000 captures/s);
//! - text search has its own index, kept by a thread behind the writer, never in its
//!   transaction ([`crate::search`]);
//! - counts that can only be had by walking (a search's hits, a grouping's notifications) stop
//!   past [`COUNT_CAP`]: the page says "more than" instead of reading a million hits.
//!
//! Tried and measured no cheaper (BENCHMARKS.md, listener, round 3), so not done: answering a
//! committed batch through one task inside the runtime instead of waking each request from the
//! writer's thread, and SQLite built with `fdatasync` instead of `fsync`.
//!
//! The parts, each one job, in layers (a file uses only the ones below it):
//! - this module: the handles ([`Store`], [`StoreReader`]) and the public API, which wire
//!   the parts together;
//! - `encryption`: the encryption in place of a store written before data at rest;
//! - `catch_up`: the journal's captures written in at a writer's open, and caught up with by a
//!   reader opened apart (which opens a writer through this module for that);
//! - `tables`: the tables thread (the acknowledged captures into the tables, the retention as
//!   they come) and the checkpoints;
//! - `writer`: the writer thread (acknowledgements, and the jobs: clear, prune, import, the run
//!   log) and the state a prune shares with the tables thread;
//! - `journal`: the acknowledgement journal, its recovery after a crash, and the progress of the
//!   tables behind it that reads wait for;
//! - `positioned`: reads and writes at an offset of the journal's file, on every OS;
//! - `sizes`: the captures and bytes the tables hold per retention class, kept as they change
//!   (what the retention's count, byte budget and junk share are checked against);
//! - `queries`: planning the inspector's pages, counts and facets, and a filter's SQL;
//! - `runs`: the run log and the outbound records;
//! - `schema`: the tables, the migrations at open and the connections' settings;
//! - `keying`: a connection keyed with the data key first (a wrong key refused, naming the one
//!   the store's key note says it needs);
//! - `rows`: a capture and an outbound record as rows;
//! - `types`: the values callers pass and get back ([`CaptureFilter`], [`CapturePage`], ...).

mod catch_up;
mod encryption;
mod journal;
mod keying;
mod positioned;
mod queries;
mod rows;
mod runs;
mod schema;
mod sizes;
mod tables;
mod types;
mod writer;

pub use types::{
    ArrivedNotification, CaptureFilter, CaptureList, CapturePage, CaptureQuery, ClassSizes,
    Durability, Facets, Grouping, HitCount, ImportReport, ListedCapture, Retention, RetentionSizes,
    StoreKey, StoreOptions, COUNT_CAP, COUNT_TIME_BUDGET, MAX_PAGE_LIMIT,
};

use crate::capture::{Capture, OutboundRecord};
use crate::facet_counts;
use crate::readers::{Reader, ReaderPool};
use crate::redelivery::{NotificationKey, Redeliveries, RedeliveryWindow};
use crate::runs::ListenerRun;
use crate::search;
use crate::verdict::Verdict;
use crate::writer_lock::WriterLock;
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use journal::AckProgress;
use queries::QueryPlanner;
use rows::{capture_from_row, from_micros, CAPTURE_COLUMNS};
use rusqlite::{params, Connection, OptionalExtension};
use schema::{
    count_captures, load_redeliveries, open_connection_keyed, open_read_only_keyed,
    redelivery_horizon, IndexLayout, COUNTS_SINCE_VERSION, SCHEMA, WAL_SIZE_LIMIT,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Mutex};
use tables::{checkpoint_loop, Tables};
use tokio::sync::oneshot;
use writer::{highest_deleted, lock, Job, JobScope, PendingInsert, Retained, WriteOp, Writer};

/// What [`StoreReader::warm_up`] searches for: long enough for the id index's trigrams as well
/// as the words' shards, and found in no capture a sender would make (if one holds it, the
/// warm-up only reads a little more).
const WARM_UP_SEARCH: &str = "qxzjwarmupqxzj";

/// A handle to the store that writes: it holds the store's writer lock (one writer per store,
/// see [`crate::writer_lock`]); clones share the writer thread and the read connections. Every
/// read of [`StoreReader`] is available on it too (`Deref`).
#[derive(Debug, Clone)]
pub struct Store {
    inner: Arc<StoreInner>,
}

/// Reads a store: queries, counts, export. Opened on its own ([`StoreReader::open`]) it takes
/// no lock and never writes, so it works while a listener (the app's or `partner listen`'s)
/// writes the same store: WAL lets readers in other processes read beside the writer, each
/// read seeing the captures committed when it began.
#[derive(Debug)]
pub struct StoreReader {
    path: PathBuf,
    readers: ReaderPool,
    /// Whether the store has the search index and how it answers counts.
    planner: QueryPlanner,
    /// For the store this process writes: how far its tables have caught up with the
    /// acknowledgements, which every read waits for ([`journal`]).
    progress: Option<Arc<AckProgress>>,
}

#[derive(Debug)]
struct StoreInner {
    writer: Mutex<Option<mpsc::Sender<WriteOp>>>,
    reader: StoreReader,
    /// Written by the writer thread (after each group and job) and the tables thread's prunes;
    /// read for the test mode's count.
    redeliveries: Arc<Mutex<Redeliveries>>,
    /// The retention's state, shared with the writer and the tables thread: read for
    /// [`Store::retention_sizes`].
    retained: Arc<Retained>,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Stops once the writer has (it holds the sender that wakes this thread).
    tables_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropping it stops the checkpoint thread.
    checkpoint_stop: Mutex<Option<mpsc::Sender<()>>>,
    checkpoint_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropping it stops the search indexer thread ([`crate::search`]).
    indexer_stop: Mutex<Option<mpsc::Sender<()>>>,
    indexer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Released when the store is dropped, after the threads above have stopped (fields drop
    /// after `Drop::drop`), so no write can follow its release.
    _lock: WriterLock,
    /// The acknowledgement journal, for tests to see how the tables took its records.
    #[cfg(test)]
    journal: Arc<journal::Journal>,
}

impl std::ops::Deref for Store {
    type Target = StoreReader;

    fn deref(&self) -> &StoreReader {
        &self.inner.reader
    }
}

impl Drop for StoreInner {
    fn drop(&mut self) {
        if let Ok(mut writer) = self.writer.lock() {
            writer.take();
        }
        for stop in [&self.checkpoint_stop, &self.indexer_stop] {
            if let Ok(mut stop) = stop.lock() {
                stop.take();
            }
        }
        for thread in [
            &self.indexer_thread,
            &self.writer_thread,
            &self.tables_thread,
            &self.checkpoint_thread,
        ] {
            if let Ok(mut thread) = thread.lock() {
                if let Some(handle) = thread.take() {
                    let _ = handle.join();
                }
            }
        }
    }
}

impl Store {
    /// Opens (creating if needed) the store at `path` with full durability and starts its
    /// writer thread.
    pub fn open(path: impl AsRef<Path>, retention: Retention) -> Result<Self> {
        Self::open_with(
            path,
            StoreOptions {
                retention,
                ..StoreOptions::default()
            },
        )
    }

    /// Opens (creating if needed) the store at `path` and starts its writer thread.
    ///
    /// Takes the store's writer lock first: while another `Store` (in this process or another)
    /// has the store open, this fails with [`Error::StoreInUse`] and touches nothing.
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let holder = match options.holder {
            "" => crate::writer_lock::default_holder(),
            named => named.to_string(),
        };
        let lock = WriterLock::acquire(&path, &holder)?;
        let key = options.key.clone();
        // A store written before data at rest is encrypted first, journal and all.
        if let Some(key) = &key {
            if keying::is_plain(&path)? {
                encryption::encrypt_in_place(&path, key, options.durability)?;
            }
        }
        let data_key = key.as_ref().map(|key| key.key.clone());
        let mut writer_conn = open_connection_keyed(&path, options.durability, key.as_ref())?;
        if let Some(key) = &key {
            keying::write_note(&path, key);
        }
        let version: i64 = writer_conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        // Before `SCHEMA`, which makes no such index: found, a listener of schema 4 wrote here.
        let written_by_schema_4 = IndexLayout::read(&writer_conn)? == IndexLayout::Narrow;
        writer_conn.execute_batch(SCHEMA)?;
        writer_conn.execute_batch(search::SEARCH_SCHEMA)?;
        writer_conn.execute_batch(facet_counts::FACET_SCHEMA)?;
        writer_conn.execute_batch(journal::APPLIED_SCHEMA)?;
        // Before the map of notifications is read: captures acknowledged and not yet written
        // into the tables when the last writer stopped go in first.
        let journal_path = journal::path_of(&path);
        catch_up::apply_journal(&mut writer_conn, &journal_path, data_key.as_ref())?;
        // Before the counts are made: an index rebuilt starts the watermark again (and the
        // counts). One transaction: a crash between dropping the old tables and moving the
        // watermark back would leave captures neither indexed nor in the tail a search scans.
        let rebuilding =
            writer_conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        search::rebuild_old_index(&rebuilding)?;
        rebuilding.commit()?;
        if version < COUNTS_SINCE_VERSION || written_by_schema_4 {
            count_captures(&mut writer_conn)?;
        }
        // After the counts: the sizes per class are checked against them.
        let held = sizes::open(&mut writer_conn)?;
        let window = options
            .redelivery_window
            .unwrap_or(crate::redelivery::REDELIVERY_WINDOW);
        let horizon = redelivery_horizon(&writer_conn, window)?;
        let redeliveries = Arc::new(Mutex::new(load_redeliveries(&mut writer_conn, horizon)?));
        let highest_deleted = highest_deleted(&writer_conn)?;
        // As the writer numbers its next capture (`Writer::acknowledge`, `Writer::renumber_after_job`).
        let next_id = writer_conn
            .query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM captures", [], |row| {
                row.get::<_, i64>(0)
            })?
            .max(highest_deleted.saturating_add(1));
        let window = RedeliveryWindow::new(window, std::time::Instant::now(), next_id);
        writer_conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer_conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        let reader = open_connection_keyed(&path, options.durability, key.as_ref())?;
        let readers = ReaderPool::new(reader, {
            let (path, durability, key) = (path.clone(), options.durability, key.clone());
            move || open_connection_keyed(&path, durability, key.as_ref())
        });
        let checkpointer = open_connection_keyed(&path, options.durability, key.as_ref())?;
        let (checkpoint_stop, stop_rx) = mpsc::channel::<()>();
        let restart_due = Arc::new(AtomicBool::new(false));
        let checkpoint_thread = std::thread::Builder::new()
            .name("capture-checkpoint".into())
            .spawn({
                let restart_due = restart_due.clone();
                move || checkpoint_loop(&checkpointer, &stop_rx, &restart_due)
            })?;
        // The index can be rebuilt, so its commits need not wait for the disk (NORMAL); they
        // stay atomic with the indexed id they record.
        let mut indexer = open_connection_keyed(&path, Durability::Normal, key.as_ref())?;
        let (indexer_stop, indexer_rx) = mpsc::channel::<()>();
        let activity = Arc::new(search::WriterActivity::new());
        let indexer_thread = std::thread::Builder::new()
            .name("capture-indexer".into())
            .spawn({
                let activity = activity.clone();
                move || search::indexer_loop(&mut indexer, &activity, &indexer_rx)
            })?;
        let progress = Arc::new(AckProgress::new(next_id - 1));
        let ack_journal = Arc::new(journal::Journal::open_sealed(
            &journal_path,
            options.durability == Durability::Full,
            journal::CAPACITY,
            data_key.clone(),
        )?);
        let (tx, rx) = mpsc::channel::<WriteOp>();
        // The tables' own connection, set as the writer's: the two take turns through
        // `activity` (see `tables`).
        let mut tables_conn = open_connection_keyed(&path, options.durability, key.as_ref())?;
        tables_conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        tables_conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        let retained = Arc::new(Retained {
            policy: Mutex::new(options.retention),
            redeliveries: redeliveries.clone(),
            journal_links: Mutex::default(),
            highest_deleted: highest_deleted.into(),
            captures: Mutex::new(Some(held)),
            pruned: Default::default(),
        });
        let (appended, appended_rx) = mpsc::channel::<()>();
        let tables_thread = std::thread::Builder::new()
            .name("capture-tables".into())
            .spawn({
                let mut tables = Tables {
                    journal: ack_journal.clone(),
                    progress: progress.clone(),
                    activity: activity.clone(),
                    restart_due,
                    retained: retained.clone(),
                    read_buffer: Vec::new(),
                    retry_at: None,
                    written_since_prune: 0,
                };
                move || tables.run(&mut tables_conn, appended_rx)
            })?;
        let thread = std::thread::Builder::new()
            .name("capture-writer".into())
            .spawn({
                let mut writer = Writer {
                    retained: retained.clone(),
                    activity,
                    window,
                    journal: ack_journal.clone(),
                    progress: progress.clone(),
                    tables: appended,
                    next_id,
                    group: journal::GroupBuffer::sealed_with(data_key),
                };
                move || writer.run(&mut writer_conn, rx)
            })?;
        Ok(Self {
            inner: Arc::new(StoreInner {
                writer: Mutex::new(Some(tx)),
                reader: StoreReader {
                    path,
                    readers,
                    planner: QueryPlanner {
                        indexed: true,
                        layout: IndexLayout::Counted,
                    },
                    progress: Some(progress),
                },
                redeliveries,
                retained,
                writer_thread: Mutex::new(Some(thread)),
                tables_thread: Mutex::new(Some(tables_thread)),
                checkpoint_stop: Mutex::new(Some(checkpoint_stop)),
                checkpoint_thread: Mutex::new(Some(checkpoint_thread)),
                indexer_stop: Mutex::new(Some(indexer_stop)),
                indexer_thread: Mutex::new(Some(indexer_thread)),
                _lock: lock,
                #[cfg(test)]
                journal: ack_journal,
            }),
        })
    }

    /// How many records the tables took from the journal's hand-over, and from its file.
    #[cfg(test)]
    pub(crate) fn journal_taken(&self) -> (u64, u64) {
        self.inner.journal.taken()
    }

    /// Everything this store can read, as a [`StoreReader`] (what `Deref` gives too).
    pub fn reader(&self) -> &StoreReader {
        &self.inner.reader
    }

    /// Waits until the search index covers every stored capture, telling `progress` how many
    /// are left each time it looks (every 250 ms). An import ends with this, so the store it
    /// leaves answers searches from the index, not by scanning what was imported. Returns
    /// `false` when `stop` resolves first (the indexing goes on with the next writer).
    pub async fn wait_until_searchable(
        &self,
        mut progress: impl FnMut(u64),
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<bool> {
        tokio::pin!(stop);
        loop {
            let left = self.reader().search_backlog()?;
            progress(left);
            if left == 0 {
                return Ok(true);
            }
            tokio::select! {
                () = &mut stop => return Ok(false),
                () = tokio::time::sleep(std::time::Duration::from_millis(250)) => {}
            }
        }
    }

    /// Waits (at most a couple of seconds) until the tables hold every capture acknowledged so
    /// far, so a reader of its own (a [`StoreReader`] opened apart, another process, a plain
    /// SQLite connection) sees them too: this handle's own reads wait so by themselves. Returns
    /// whether they do.
    pub fn wait_for_tables(&self) -> bool {
        self.inner
            .reader
            .progress
            .as_ref()
            .is_none_or(|progress| progress.wait_for_acknowledged())
    }

    fn send(&self, op: WriteOp) -> Result<()> {
        let writer = self.inner.writer.lock().map_err(|_| Error::WriterStopped)?;
        writer
            .as_ref()
            .ok_or(Error::WriterStopped)?
            .send(op)
            .map_err(|_| Error::WriterStopped)
    }

    /// Stores a capture and returns it with its id and attempt number, once it is durably in
    /// the journal (the tables take it behind; this store's reads wait for them).
    pub async fn insert(&self, capture: Capture) -> Result<Capture> {
        let (tx, rx) = oneshot::channel();
        self.send(WriteOp::Insert(PendingInsert {
            capture: Box::new(capture),
            reply: tx,
        }))?;
        rx.await.map_err(|_| Error::WriterStopped)?
    }

    /// Runs `job` on the writer connection, in order with the captures written before and
    /// after it (what it waits for first is its `scope`'s), and waits for its result.
    async fn run<T: Send + 'static>(
        &self,
        scope: JobScope,
        job: impl FnOnce(&mut Connection, &mut Writer) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.queue_job(scope, job)?
            .await
            .map_err(|_| Error::WriterStopped)?
    }

    /// Queues `job` on the writer and returns at once with where its result will come.
    fn queue_job<T: Send + 'static>(
        &self,
        scope: JobScope,
        job: impl FnOnce(&mut Connection, &mut Writer) -> Result<T> + Send + 'static,
    ) -> Result<oneshot::Receiver<Result<T>>> {
        let (tx, rx) = oneshot::channel();
        self.send(WriteOp::Run(Job {
            scope,
            work: Box::new(move |ready| {
                let _ = tx.send(ready.and_then(|(conn, writer)| job(conn, writer)));
            }),
        }))?;
        Ok(rx)
    }

    /// Records a forward or replay and returns it with its id.
    pub async fn insert_outbound(&self, record: OutboundRecord) -> Result<OutboundRecord> {
        self.run(JobScope::Captures, move |conn, _| {
            runs::insert_outbound(conn, record)
        })
        .await
    }

    /// Deletes the captures `filter` selects, with their forwards and replays; returns how
    /// many captures were deleted. An empty filter deletes everything ([`Store::clear_all`]).
    ///
    /// Runs in the writer thread, in order with the captures being written: it deletes what
    /// was stored when it ran, and a capture acknowledged after it is kept. A notification
    /// none of whose captures are left is forgotten, so its next redelivery is recorded as a
    /// new first attempt (attempt 1), as after retention pruning; one with captures left keeps
    /// counting (see `clear` in this module). Ids are never handed out again.
    pub async fn clear(&self, filter: &CaptureFilter) -> Result<u64> {
        let filter = filter.clone();
        self.run(JobScope::Captures, move |conn, writer| {
            writer.clear(conn, &filter)
        })
        .await
    }

    /// Deletes every capture and outbound record; returns how many captures were deleted.
    pub async fn clear_all(&self) -> Result<u64> {
        self.clear(&CaptureFilter::default()).await
    }

    /// Applies a retention policy now, once; returns how many captures were pruned. The
    /// store's own policy stays as it is (see [`Store::set_retention`]).
    pub async fn prune(&self, retention: Retention) -> Result<u64> {
        self.run(JobScope::Captures, move |conn, writer| {
            writer.prune(conn, retention)
        })
        .await
    }

    /// Makes `retention` the store's policy from now on (the app's settings change it without
    /// reopening the store) and applies it at once; returns how many captures that pruned.
    pub async fn set_retention(&self, retention: Retention) -> Result<u64> {
        self.run(JobScope::Captures, move |conn, writer| {
            *lock(&writer.retained.policy) = retention;
            writer.prune(conn, retention)
        })
        .await
    }

    /// The retention policy the store applies now.
    pub async fn retention(&self) -> Result<Retention> {
        self.run(JobScope::Apart, |_, writer| {
            Ok(*lock(&writer.retained.policy))
        })
        .await
    }

    /// Adds captures as they are (ids, attempts and all), skipping ids already present, in
    /// one transaction. For a large import, hand it batches (as [`crate::export::import_jsonl`]
    /// does): each batch holds the writer while it is written.
    pub async fn import(&self, captures: Vec<Capture>) -> Result<ImportReport> {
        self.start_import(captures)?
            .await
            .map_err(|_| Error::WriterStopped)?
    }

    /// Queues an import batch on the writer and returns at once with where its report will
    /// come, so the caller can read the next batch meanwhile.
    pub(crate) fn start_import(
        &self,
        captures: Vec<Capture>,
    ) -> Result<oneshot::Receiver<Result<ImportReport>>> {
        self.queue_job(JobScope::Captures, move |conn, writer| {
            writer.import(conn, &captures)
        })
    }

    /// Records that a listener started serving on this store at `at`; returns the run's id for
    /// [`Store::record_run_stop`]. The oldest runs past the last 200 are dropped.
    pub async fn record_run_start(&self, at: DateTime<Utc>) -> Result<i64> {
        self.run(JobScope::Apart, move |conn, _| runs::record_start(conn, at))
            .await
    }

    /// Records that the run `run_id` stopped cleanly at `at`.
    pub async fn record_run_stop(&self, run_id: i64, at: DateTime<Utc>) -> Result<()> {
        self.run(JobScope::Apart, move |conn, _| {
            runs::record_stop(conn, run_id, at)
        })
        .await
    }

    /// What the tables hold per retention class, and what the retention pruned of each since
    /// this store was opened ([`crate::classes`]). Read from memory: the sizes are kept as the
    /// tables change ([`sizes`]), so this reads nothing.
    pub fn retention_sizes(&self) -> RetentionSizes {
        let retained = &self.inner.retained;
        let held = writer::lock(&retained.captures).unwrap_or_default();
        let of = |class: crate::classes::RetentionClass| ClassSizes {
            captures: u64::try_from(held.captures_of(class)).unwrap_or(0),
            bytes: u64::try_from(held.bytes_of(class)).unwrap_or(0),
            pruned: retained.pruned[class.index()].load(std::sync::atomic::Ordering::Relaxed),
        };
        RetentionSizes {
            junk: of(crate::classes::RetentionClass::Junk),
            unverified: of(crate::classes::RetentionClass::Unverified),
            signed: of(crate::classes::RetentionClass::Signed),
        }
    }

    /// How many captures of (subscription, resource type, eventId) are stored already.
    pub fn prior_attempts(
        &self,
        subscription_id: &str,
        resource_type: &str,
        event_id: &str,
    ) -> u32 {
        let key = NotificationKey::of(subscription_id, resource_type, event_id);
        lock(&self.inner.redeliveries)
            .get(&key)
            .map_or(0, |seen| seen.attempts)
    }
}

/// Whether the file at `path` is a store encrypted at rest (there, not empty, and not an
/// unencrypted SQLite file): a caller deciding where its key may come from asks.
pub fn encrypted_at_rest(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    std::fs::metadata(path).is_ok_and(|meta| meta.len() > 0)
        && keying::is_plain(path).is_ok_and(|plain| !plain)
}

impl StoreReader {
    /// Opens the unencrypted store at `path` to read only (tests and tools; a program passes
    /// its data key to [`StoreReader::open_keyed`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_keyed(path, None)
    }

    /// Opens the store at `path` to read only, encrypted with `key` ([`StoreOptions::key`]): no
    /// writer lock, no schema change, nothing created. A store written before data at rest is
    /// encrypted first (as a writer's open does; refused while a writer holds it). Fails with
    /// [`Error::NoStore`] when there is no file, [`Error::NotAStore`] when the file is not a
    /// capture store, [`Error::StoreKey`] when it does not open with `key`.
    pub fn open_keyed(path: impl AsRef<Path>, key: Option<StoreKey>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(Error::NoStore(path));
        }
        if key.is_some() && keying::is_plain(&path)? {
            Store::open_with(
                &path,
                StoreOptions {
                    holder: "a reader encrypting the store",
                    key: key.clone(),
                    ..StoreOptions::default()
                },
            )
            .map(drop)?;
        }
        let conn = open_read_only_keyed(&path, key.as_ref())?;
        let open_error = |source| Error::OpenStore {
            path: path.clone(),
            source,
        };
        let has_captures: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' \
                 AND name = 'captures')",
                [],
                |row| row.get(0),
            )
            .map_err(open_error)?;
        if !has_captures {
            return Err(Error::NotAStore(path));
        }
        // Before anything is read, the planner's look at the schema included: writing the
        // journal in may migrate the store.
        let data_key = key.as_ref().map(|key| key.key.clone());
        catch_up::catch_up(&path, &conn, data_key.as_ref(), catch_up::WAIT, |holder| {
            Store::open_with(
                &path,
                StoreOptions {
                    holder,
                    key: key.clone(),
                    ..StoreOptions::default()
                },
            )
            .map(drop)
        })?;
        let indexed: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'search_state')",
                [],
                |row| row.get(0),
            )
            .map_err(open_error)?;
        let layout = IndexLayout::read(&conn).map_err(open_error)?;
        let readers = ReaderPool::new(conn, {
            let path = path.clone();
            move || open_read_only_keyed(&path, key.as_ref())
        });
        Ok(Self {
            path,
            readers,
            planner: QueryPlanner { indexed, layout },
            progress: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A read connection of its own for as long as it is held (see [`crate::readers`]), once
    /// the tables hold every capture this process's writer acknowledged before the call.
    fn reader(&self) -> Reader<'_> {
        if let Some(progress) = &self.progress {
            progress.wait_for_acknowledged();
        }
        self.readers.get()
    }

    pub fn get(&self, id: i64) -> Result<Capture> {
        let conn = self.reader();
        conn.query_row(
            &format!("SELECT {CAPTURE_COLUMNS} FROM captures WHERE id = ?1"),
            [id],
            capture_from_row,
        )
        .optional()?
        .ok_or(Error::NoSuchCapture(id))
    }

    /// Every attempt of the notification `id` belongs to, first attempt first.
    pub fn attempts_of(&self, id: i64) -> Result<Vec<Capture>> {
        let capture = self.get(id)?;
        let Some(notification_id) = capture.notification_id else {
            return Ok(vec![capture]);
        };
        let conn = self.reader();
        let rows = conn
            .prepare_cached(&format!(
                "SELECT {CAPTURE_COLUMNS} FROM captures WHERE notification_id = ?1 ORDER BY id"
            ))?
            .query_map([notification_id], capture_from_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// How many captures `filter` selects.
    pub fn count(&self, filter: &CaptureFilter) -> Result<u64> {
        self.planner.count(&self.reader(), filter)
    }

    /// A page of captures matching `filter`, newest first, every attempt a row: [`Self::page`]
    /// without the grouping (`total` as [`CapturePage::total`] counts it).
    pub fn query(&self, filter: &CaptureFilter, offset: u64, limit: u64) -> Result<CaptureList> {
        let page = self.page(&CaptureQuery {
            filter: filter.clone(),
            grouping: Grouping::EveryAttempt,
            offset,
            limit,
            count: HitCount::UpToCap,
        })?;
        Ok(CaptureList {
            items: page.items.into_iter().map(|row| row.capture).collect(),
            total: page.total,
        })
    }

    /// The rows of `query` on screen, newest first (by id), and how many rows match.
    ///
    /// How it stays fast on a large store (measured in `benches/query.rs`):
    /// - without a search, rows are walked newest first in `captures_list`, an index of the
    ///   id and every filtered column, so skipping to a middle page steps over index entries
    ///   (about 60 bytes) instead of rows (2.5 KB); the count under column filters is read
    ///   from `facet_counts` and the unindexed tail ([`crate::facet_counts`]), others are
    ///   SQL's over `captures_list` (or the time index);
    /// - a search merges the ordered hits of the full-text index, of the id index and of the
    ///   unindexed tail ([`crate::search::SearchText::chains`]), each joined to its capture for
    ///   the other filters, and stops after the page: a word in every capture reads one page of
    ///   hits;
    /// - grouped, the same walk keeps the first (newest) row of each notification.
    ///
    /// Walked counts (a search, a grouping) stop past [`COUNT_CAP`] or past the page asked for
    /// ([`CapturePage::total_capped`]).
    pub fn page(&self, query: &CaptureQuery) -> Result<CapturePage> {
        self.planner.page(&self.reader(), query)
    }

    /// Captures the search index has not reached yet (the indexer works behind the writer, see
    /// [`crate::search`]); a search reads these by scanning them, so it is slower, not less
    /// complete, while this is large (after an import or the migration of an older store).
    pub fn search_backlog(&self) -> Result<u64> {
        self.planner.search_backlog(&self.reader())
    }

    /// What the inspector's filter controls show for `filter`: per-verdict counts (ignoring
    /// `filter.verdicts`), the event types, resource types and subscriptions present in the
    /// store, and the count under the whole filter. A search's counts walk its hits and stop
    /// past [`COUNT_CAP`] ([`Facets::capped`]).
    pub fn facets(&self, filter: &CaptureFilter) -> Result<Facets> {
        self.planner.facets(&self.reader(), filter)
    }

    /// Readies every read connection for the inspector's first questions: each opens, reads
    /// the schema and every shard of the words' index, and prepares a search's statements by
    /// answering a search that finds nothing (`WARM_UP_SEARCH`), page and counts.
    ///
    /// Why: the first search on a connection paid all of that (about 9 ms at 1,000,000
    /// captures, against 3 for the same search after it), and the inspector's reads go to
    /// whichever connection is idle, so a user's first searches were the slow ones. The app
    /// asks for it when it makes its Webhooks screen ready, after the first screen.
    pub fn warm_up(&self) -> Result<()> {
        let filter = CaptureFilter {
            text: Some(WARM_UP_SEARCH.into()),
            ..CaptureFilter::default()
        };
        let query = CaptureQuery {
            filter: filter.clone(),
            grouping: Grouping::EveryAttempt,
            offset: 0,
            limit: 1,
            count: HitCount::ThroughPage,
        };
        self.readers.ready_each(|conn| {
            self.planner.page(conn, &query)?;
            self.planner.facets(conn, &filter)?;
            Ok(())
        })
    }

    /// Every capture matching `filter`, oldest first (for export).
    pub fn for_each(
        &self,
        filter: &CaptureFilter,
        f: impl FnMut(Capture) -> Result<()>,
    ) -> Result<()> {
        self.planner.for_each(&self.reader(), filter, f)
    }

    /// The number of captures per verdict among those matching `filter` (verdicts with none left
    /// out).
    pub fn count_by_verdict(&self, filter: &CaptureFilter) -> Result<BTreeMap<Verdict, u64>> {
        self.planner.count_by_verdict(&self.reader(), filter)
    }

    /// The listener's runs on this store, oldest first (none in a store made before runs were
    /// kept), each with its last capture (see [`crate::runs`]).
    pub fn listener_runs(&self) -> Result<Vec<ListenerRun>> {
        runs::listener_runs(&self.reader())
    }

    /// When the listener last went down (see [`crate::runs::last_down_time`]); pass
    /// `listening_now` when a listener is serving this store now (its run has not ended).
    pub fn last_down_time(&self, listening_now: bool) -> Result<Option<DateTime<Utc>>> {
        Ok(crate::runs::last_down_time(
            &self.listener_runs()?,
            listening_now,
        ))
    }

    /// When the first capture of `subscription_id` still in the store was received.
    pub fn first_capture_of(&self, subscription_id: &str) -> Result<Option<DateTime<Utc>>> {
        self.planner
            .first_capture_of(&self.reader(), subscription_id)
    }

    /// The notifications that arrived for `subscription_id` at or after `since`, whatever their
    /// verdict (a request that arrived was not missed), one per (resource type, eventId) with
    /// its first arrival: the identity receivers deduplicate on (field notes, "Webhooks").
    pub fn arrived_since(
        &self,
        subscription_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ArrivedNotification>> {
        let conn = self.reader();
        let mut select = conn.prepare_cached(
            "SELECT resource_type, event_id, MIN(received_at_us) FROM captures \
             WHERE received_at_us >= ?2 AND subscription_id = ?1 \
             AND resource_type IS NOT NULL AND event_id IS NOT NULL \
             GROUP BY resource_type, event_id",
        )?;
        let arrived = select
            .query_map(params![subscription_id, since.timestamp_micros()], |row| {
                Ok(ArrivedNotification {
                    resource_type: row.get(0)?,
                    event_id: row.get(1)?,
                    first_received_at: from_micros(row.get(2)?),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(arrived)
    }

    /// Forwards and replays of a capture, oldest first.
    pub fn outbound_of(&self, capture_id: i64) -> Result<Vec<OutboundRecord>> {
        runs::outbound_of(&self.reader(), capture_id)
    }
}

//! The capture store: SQLite in WAL mode, written by one thread with group commit.
//!
//! Why shaped so: the listener may answer 2xx only once a capture is durably on disk, and one
//! fsync per request would cap the rate at the disk's fsync rate. So every insert goes to a single
//! writer thread; the writer takes whatever requests queued up while it was committing the last
//! batch, writes them in one transaction, commits once (`synchronous=FULL`: the WAL is fsynced on
//! every commit, so a commit survives a power cut, not only a `kill -9`), and only then tells each
//! waiting request that its capture is stored. Under load batches grow by themselves; when idle a
//! batch is one capture and nothing waits for a window to close. Readers use their own connection,
//! which WAL lets run beside the writer.
//!
//! The writer also links redeliveries, so attempt numbers never race: it keeps the store's
//! notifications by (subscription, resource type, eventId) in memory and in the append-only
//! table `notifications`, instead of an index on those fields (why: [`crate::redelivery`]).
//!
//! The writer is the one thread every acknowledgement waits on, so it does nothing another
//! thread can do (measured with `benches/store.rs` and `perf`, see BENCHMARKS.md):
//! - the request's own task formats the row (header JSON, timestamp text) before the hand-off;
//!   the writer binds ready values to cached statements;
//! - checkpoints run on their own thread, and the writer only finishes each round with a short
//!   `RESTART` so the WAL is written from its start again instead of growing for as long as a
//!   burst lasts (see [`checkpoint_loop`]);
//! - 8 KiB pages keep a 2 KiB notification's row off overflow pages (see [`PAGE_SIZE`]).
//!
//! Of the writer's time under load, most is the kernel's: the fsync of each commit (about 60%
//! of a commit) and the WAL writes (about 30%); SQLite's own insert work is about a fifth.
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

use crate::capture::{Capture, Header, OutboundKind, OutboundRecord, ResponseRecord};
use crate::facet_counts;
use crate::readers::{Reader, ReaderPool};
use crate::redelivery::{NotificationKey, PendingChanges, Redeliveries, RedeliveriesLoader, Seen};
use crate::runs::ListenerRun;
use crate::search::{self, SearchText};
use crate::verdict::{MatchedKey, NotificationFields, Verdict};
use crate::writer_lock::WriterLock;
use crate::{Error, Result};
use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row, ToSql};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use tokio::sync::oneshot;

/// How long a connection waits for a lock another connection holds.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Most captures written in one transaction.
const MAX_BATCH: usize = 1024;
/// Retention is enforced after this many inserts (and on demand).
const PRUNE_EVERY: u64 = 256;

const SCHEMA: &str = "
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
/// rebuilt by the indexer thread after it opens.
const SCHEMA_VERSION: i64 = 6;
/// The version from which `facet_counts` is kept (older stores make it from their captures).
const COUNTS_SINCE_VERSION: i64 = 5;
/// The version from which `notifications` is kept (older stores fill it from their captures).
const NOTIFICATIONS_SINCE_VERSION: i64 = 2;
/// Runs kept in `listener_runs`; older ones are dropped when a run starts.
const RUNS_KEPT: i64 = 200;

const CAPTURE_COLUMNS: &str = "id, received_at, method, path, headers, body, body_size, peer, \
    verdict, matched_key, subscription_id, event_id, event_time, event_type, instance_id, \
    resource_id, resource_type, resource_ref, attempt, notification_id, response_status, \
    response_body, response_from_test_mode, response_delay_ms, processing_micros, replay";

/// How much the store keeps. Oldest captures go first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    pub max_count: Option<u64>,
    #[serde(default, with = "optional_seconds")]
    pub max_age: Option<Duration>,
}

/// Which captures a query, a count or an export covers. Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CaptureFilter {
    /// Only these captures (a selection in the inspector).
    pub ids: Vec<i64>,
    /// Only captures up to this id: what was stored when the user looked (a clear confirmed
    /// later leaves the captures that arrived meanwhile).
    pub max_id: Option<i64>,
    pub verdicts: Vec<Verdict>,
    pub event_type: Option<String>,
    pub resource_type: Option<String>,
    pub subscription_id: Option<String>,
    /// Received at or after.
    pub since: Option<DateTime<Utc>>,
    /// Received before.
    pub until: Option<DateTime<Utc>>,
    /// A search: words in the body or a header value, or a substring of an id (see
    /// [`crate::search`] for exactly what it means).
    pub text: Option<String>,
}

/// How [`StoreReader::page`] lists captures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Grouping {
    /// Every capture is a row.
    #[default]
    EveryAttempt,
    /// One row per notification: its newest attempt that matches the filter (a capture that
    /// names no notification is a row of its own).
    ByNotification,
}

/// How far [`StoreReader::page`] counts when its count has to walk the hits (a text search, a
/// grouped listing); other counts are exact and cheap, and always made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HitCount {
    /// On past the page, up to [`COUNT_CAP`] or [`COUNT_TIME_BUDGET`]: `partner listen
    /// captures` prints "1-50 of 10,000+".
    #[default]
    UpToCap,
    /// Through the page and one hit more: `total` is the rows up to the page's end and
    /// `total_capped` says whether more follow. For a caller that counts the same hits
    /// elsewhere: the inspector reads [`StoreReader::facets`] beside every new search, which
    /// walks them again (at a million captures, counting a word every capture has costs about
    /// 30 ms, and the page alone under 2).
    ThroughPage,
}

/// A page the inspector asks for: which captures, how grouped, which rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CaptureQuery {
    pub filter: CaptureFilter,
    pub grouping: Grouping,
    /// Rows (or groups) to skip, newest first.
    pub offset: u64,
    /// Rows (or groups) to return, at most [`MAX_PAGE_LIMIT`].
    pub limit: u64,
    /// How far a walked count goes.
    pub count: HitCount,
}

/// Most rows one page returns.
pub const MAX_PAGE_LIMIT: u64 = 1000;
/// Counts that have to walk search hits or groups stop here (see [`CapturePage::total_capped`]).
pub const COUNT_CAP: u64 = 10_000;
/// How long such a walk goes on counting once the page is filled (the facets: once the first
/// hit is found): a common word under a narrow
/// filter (every capture has the word, one in 25 the verdict) reads 250,000 hits to count
/// 10,000 (`benches/query.rs`, "search + verdict": 195 ms at p50 on a million captures), and
/// only time bounds what SQLite reads to find each match.
pub const COUNT_TIME_BUDGET: std::time::Duration = std::time::Duration::from_millis(40);

/// A row of a page: a capture and, grouped, how many attempts of its notification match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedCapture {
    #[serde(flatten)]
    pub capture: Capture,
    /// Captures of its notification matching the filter (1 listing every attempt).
    pub group_attempts: u32,
}

/// One page of [`StoreReader::page`], newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapturePage {
    pub items: Vec<ListedCapture>,
    /// Rows (or groups) matching, over all pages; a lower bound when `total_capped`.
    pub total: u64,
    /// The count stopped early: at least `total` match, and likely more ("10,000+"). Only a
    /// text search or a grouped listing is counted by walking its hits; the walk stops at
    /// [`COUNT_CAP`] matches (or at the page asked for, when that is further), or when
    /// [`COUNT_TIME_BUDGET`] has passed since the page was filled: counting a word every
    /// capture has would read them all.
    pub total_capped: bool,
}

/// What the inspector's filter controls offer and count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    /// Captures per verdict under the filter without its verdicts (so every pill has its
    /// count); verdicts with none left out.
    pub verdicts: BTreeMap<Verdict, u64>,
    /// Every event type, resource type and subscription id in the store, sorted.
    pub event_types: Vec<String>,
    pub resource_types: Vec<String>,
    pub subscriptions: Vec<String>,
    /// Captures matching the whole filter.
    pub total: u64,
    /// A text search's counts stopped early ([`COUNT_CAP`] captures counted or
    /// [`COUNT_TIME_BUDGET`] spent): they are lower bounds.
    pub capped: bool,
}

/// A notification that reached the listener, as [`StoreReader::arrived_since`] tells it: the
/// fields that identify it for its subscription, as they arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrivedNotification {
    /// `$.meta.resourceType` as sent.
    pub resource_type: String,
    pub event_id: String,
    pub first_received_at: DateTime<Utc>,
}

/// Captures as [`StoreReader::query`] lists them, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureList {
    pub items: Vec<Capture>,
    /// Captures matching the filter, over all pages.
    pub total: u64,
}

/// How many captures an import added and how many it skipped because their id was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub imported: u64,
    pub skipped: u64,
    /// The import was cancelled; the captures counted above were imported and stay.
    #[serde(default)]
    pub cancelled: bool,
}

/// A write that is not an insert, run alone in the writer thread, with the writer's state (the
/// map of notifications, the retention, the highest id ever deleted) it may have to change.
type Job = Box<dyn FnOnce(&mut Connection, &mut Writer) + Send>;

/// A capture on its way to the writer, with every value the row needs that takes formatting
/// (the header JSON, the timestamp text) already made by the request's own task, so the single
/// writer thread only binds ready values.
struct PendingInsert {
    capture: Box<Capture>,
    text: RowText,
    reply: oneshot::Sender<Result<Capture>>,
}

/// The formatted columns of a capture row.
struct RowText {
    received_at: String,
    headers: String,
}

impl RowText {
    fn of(capture: &Capture) -> Result<Self> {
        Ok(Self {
            received_at: capture
                .received_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            headers: headers_json(&capture.headers)?,
        })
    }
}

enum WriteOp {
    Insert(PendingInsert),
    /// Anything else that writes, run alone in the writer thread.
    Run(Job),
}

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
    /// The store has the search index (schema 4). A store made by an older version, read
    /// beside its older listener, has not: a search scans it all then.
    indexed: bool,
    /// What answers its counts and which indexes its queries may name.
    layout: IndexLayout,
}

/// How a store answers the inspector's counts, by the version that made (or last wrote) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IndexLayout {
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
    fn read(conn: &Connection) -> rusqlite::Result<Self> {
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
fn count_captures(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for index in facet_counts::REPLACED_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))?;
    }
    facet_counts::recount(&tx)?;
    tx.commit()?;
    Ok(())
}

#[derive(Debug)]
struct StoreInner {
    writer: Mutex<Option<mpsc::Sender<WriteOp>>>,
    reader: StoreReader,
    /// Written by the writer thread only (after each commit); read for the test mode's count.
    redeliveries: Arc<Mutex<Redeliveries>>,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropping it stops the checkpoint thread.
    checkpoint_stop: Mutex<Option<mpsc::Sender<()>>>,
    checkpoint_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dropping it stops the search indexer thread ([`crate::search`]).
    indexer_stop: Mutex<Option<mpsc::Sender<()>>>,
    indexer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Released when the store is dropped, after the threads above have stopped (fields drop
    /// after `Drop::drop`), so no write can follow its release.
    _lock: WriterLock,
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

/// How often the checkpoint thread moves the WAL into the database file.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// How long the writer's WAL restart may wait for a reader to step off the WAL before it gives
/// up until the next round (it holds the write lock meanwhile, so acknowledgements wait too).
const RESTART_WAIT: std::time::Duration = std::time::Duration::from_millis(5);
/// 8 KiB pages hold two or three captures of a 2 KiB notification (a row is about 2.5 KB), so
/// no row spills onto an overflow page. Every commit also writes
/// the last, partly filled page of each B-tree it touched, so larger pages cost more per
/// commit: with spec-shaped 2 KiB notifications and random eventIds (`benches/store.rs`,
/// 30,000 captures, 32 concurrent inserts, three interleaved rounds), 8 KiB gave 22,341-22,424
/// captures/s, 16 KiB 19,601-20,489 and 4 KiB (one row per page) 18,148-21,068.
const PAGE_SIZE: i64 = 8 * 1024;
/// A WAL file larger than this is cut back to it when the WAL restarts.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

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
fn checkpoint_loop(conn: &Connection, stop: &mpsc::Receiver<()>, restart_due: &AtomicBool) {
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
    if let Err(error) = conn.busy_timeout(BUSY_TIMEOUT) {
        tracing::warn!(%error, "resetting the writer's busy timeout failed");
    }
}

/// How hard a commit tries to reach the disk before the listener answers 2xx.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Durability {
    /// `synchronous=FULL`: every commit fsyncs the WAL. An acknowledged capture survives a
    /// `kill -9`, an OS crash and a power cut. One fsync per batch, not per capture.
    #[default]
    Full,
    /// `synchronous=NORMAL` (in WAL mode): a commit is written to the WAL in the OS's page cache
    /// before the answer, so it survives `kill -9` and any crash of the process; only an OS crash
    /// or power cut in the following moments could lose it. The WAL is fsynced at checkpoints.
    Normal,
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOptions {
    pub retention: Retention,
    pub durability: Durability,
    /// What this program calls itself in the store's lock file, so a second writer's refusal
    /// can name it ("partner listen", "Partner Console app"). Empty: the executable's name.
    pub holder: &'static str,
}

/// A connection that only reads, for [`StoreReader::open`].
fn open_read_only(path: &Path) -> Result<Connection> {
    let open_error = |source| Error::OpenStore {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_error)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
    search::register_functions(&conn).map_err(open_error)?;
    Ok(conn)
}

fn open_connection(path: &Path, durability: Durability) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|source| Error::OpenStore {
        path: path.to_path_buf(),
        source,
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Only takes effect on a new, empty database (before WAL mode is set); an existing store
    // keeps the page size it was made with.
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
        let mut writer_conn = open_connection(&path, options.durability)?;
        let version: i64 = writer_conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        // Before `SCHEMA`, which makes no such index: found, a listener of schema 4 wrote here.
        let written_by_schema_4 = IndexLayout::read(&writer_conn)? == IndexLayout::Narrow;
        writer_conn.execute_batch(SCHEMA)?;
        writer_conn.execute_batch(search::SEARCH_SCHEMA)?;
        writer_conn.execute_batch(facet_counts::FACET_SCHEMA)?;
        // Before the counts are made: the shards start the watermark again (and the counts).
        // One transaction: a crash between dropping the old table and moving the watermark back
        // would leave captures neither indexed nor in the tail a search scans.
        let sharding =
            writer_conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        search::shard_legacy_index(&sharding)?;
        sharding.commit()?;
        if version < COUNTS_SINCE_VERSION || written_by_schema_4 {
            count_captures(&mut writer_conn)?;
        }
        let redeliveries = Arc::new(Mutex::new(load_redeliveries(&mut writer_conn)?));
        let highest_deleted = highest_deleted(&writer_conn)?;
        writer_conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer_conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        let reader = open_connection(&path, options.durability)?;
        let readers = ReaderPool::new(reader, {
            let (path, durability) = (path.clone(), options.durability);
            move || open_connection(&path, durability)
        });
        let checkpointer = open_connection(&path, options.durability)?;
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
        let mut indexer = open_connection(&path, Durability::Normal)?;
        let (indexer_stop, indexer_rx) = mpsc::channel::<()>();
        let activity = Arc::new(search::WriterActivity::new());
        let indexer_thread = std::thread::Builder::new()
            .name("capture-indexer".into())
            .spawn({
                let activity = activity.clone();
                move || search::indexer_loop(&mut indexer, &activity, &indexer_rx)
            })?;
        let (tx, rx) = mpsc::channel::<WriteOp>();
        let retention = options.retention;
        let thread = std::thread::Builder::new()
            .name("capture-writer".into())
            .spawn({
                let mut writer = Writer {
                    retention,
                    restart_due,
                    activity,
                    redeliveries: redeliveries.clone(),
                    highest_deleted,
                };
                move || writer.run(&mut writer_conn, rx)
            })?;
        Ok(Self {
            inner: Arc::new(StoreInner {
                writer: Mutex::new(Some(tx)),
                reader: StoreReader {
                    path,
                    readers,
                    indexed: true,
                    layout: IndexLayout::Counted,
                },
                redeliveries,
                writer_thread: Mutex::new(Some(thread)),
                checkpoint_stop: Mutex::new(Some(checkpoint_stop)),
                checkpoint_thread: Mutex::new(Some(checkpoint_thread)),
                indexer_stop: Mutex::new(Some(indexer_stop)),
                indexer_thread: Mutex::new(Some(indexer_thread)),
                _lock: lock,
            }),
        })
    }

    /// Everything this store can read, as a [`StoreReader`] (what `Deref` gives too).
    pub fn reader(&self) -> &StoreReader {
        &self.inner.reader
    }

    fn send(&self, op: WriteOp) -> Result<()> {
        let writer = self.inner.writer.lock().map_err(|_| Error::WriterStopped)?;
        writer
            .as_ref()
            .ok_or(Error::WriterStopped)?
            .send(op)
            .map_err(|_| Error::WriterStopped)
    }

    /// Stores a capture and returns it with its id and attempt number, once it is committed.
    pub async fn insert(&self, capture: Capture) -> Result<Capture> {
        let (tx, rx) = oneshot::channel();
        let text = RowText::of(&capture)?;
        self.send(WriteOp::Insert(PendingInsert {
            capture: Box::new(capture),
            text,
            reply: tx,
        }))?;
        rx.await.map_err(|_| Error::WriterStopped)?
    }

    /// Runs `job` on the writer connection, in order with the captures written before and
    /// after it, and waits for its result.
    async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection, &mut Writer) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = oneshot::channel();
        self.send(WriteOp::Run(Box::new(move |conn, writer| {
            let _ = tx.send(job(conn, writer));
        })))?;
        rx.await.map_err(|_| Error::WriterStopped)?
    }

    /// Records a forward or replay and returns it with its id.
    pub async fn insert_outbound(&self, record: OutboundRecord) -> Result<OutboundRecord> {
        self.run(move |conn, _| {
            let mut record = record;
            conn.execute(
                "INSERT INTO outbound (capture_id, kind, url, sent_at, request_headers, \
                 request_body, status, response_headers, response_body, elapsed_ms, error) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    record.capture_id,
                    record.kind.as_str(),
                    record.url,
                    record.sent_at.to_rfc3339(),
                    headers_json(&record.request_headers)?,
                    record.request_body,
                    record.status,
                    headers_json(&record.response_headers)?,
                    record.response_body,
                    record.elapsed_ms as i64,
                    record.error,
                ],
            )?;
            record.id = conn.last_insert_rowid();
            Ok(record)
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
        self.run(move |conn, writer| writer.clear(conn, &filter))
            .await
    }

    /// Deletes every capture and outbound record; returns how many captures were deleted.
    pub async fn clear_all(&self) -> Result<u64> {
        self.clear(&CaptureFilter::default()).await
    }

    /// Applies a retention policy now, once; returns how many captures were pruned. The
    /// store's own policy stays as it is (see [`Store::set_retention`]).
    pub async fn prune(&self, retention: Retention) -> Result<u64> {
        self.run(move |conn, writer| writer.prune(conn, retention))
            .await
    }

    /// Makes `retention` the store's policy from now on (the app's settings change it without
    /// reopening the store) and applies it at once; returns how many captures that pruned.
    pub async fn set_retention(&self, retention: Retention) -> Result<u64> {
        self.run(move |conn, writer| {
            writer.retention = retention;
            writer.prune(conn, retention)
        })
        .await
    }

    /// The retention policy the writer applies now.
    pub async fn retention(&self) -> Result<Retention> {
        self.run(|_, writer| Ok(writer.retention)).await
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
        let (tx, rx) = oneshot::channel();
        self.send(WriteOp::Run(Box::new(move |conn, writer| {
            let _ = tx.send(writer.import(conn, &captures));
        })))?;
        Ok(rx)
    }

    /// Records that a listener started serving on this store at `at`; returns the run's id for
    /// [`Store::record_run_stop`]. The oldest runs past the last 200 are dropped.
    pub async fn record_run_start(&self, at: DateTime<Utc>) -> Result<i64> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            tx.execute(
                "INSERT INTO listener_runs (started_at_us, stopped_at_us) VALUES (?1, NULL)",
                [at.timestamp_micros()],
            )?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "DELETE FROM listener_runs WHERE id <= ?1",
                [id.saturating_sub(RUNS_KEPT)],
            )?;
            tx.commit()?;
            Ok(id)
        })
        .await
    }

    /// Records that the run `run_id` stopped cleanly at `at`.
    pub async fn record_run_stop(&self, run_id: i64, at: DateTime<Utc>) -> Result<()> {
        self.run(move |conn, _| {
            conn.execute(
                "UPDATE listener_runs SET stopped_at_us = ?2 WHERE id = ?1",
                [run_id, at.timestamp_micros()],
            )?;
            Ok(())
        })
        .await
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

impl StoreReader {
    /// Opens the store at `path` to read only: no writer lock, no schema change, nothing
    /// created. Fails with [`Error::NoStore`] when there is no file, [`Error::NotAStore`] when
    /// the file is not a capture store.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(Error::NoStore(path));
        }
        let conn = open_read_only(&path)?;
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
            move || open_read_only(&path)
        });
        Ok(Self {
            path,
            readers,
            indexed,
            layout,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A read connection of its own for as long as it is held (see [`crate::readers`]).
    fn reader(&self) -> Reader<'_> {
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
        let conn = self.reader();
        if self.layout == IndexLayout::Counted && facet_counts::answers(filter) {
            return self.counted_total(&conn, filter);
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
    ///   unindexed tail ([`SearchText::streams`]), each joined to its capture for the other
    ///   filters, and stops after the page: a word in every capture reads one page of hits;
    /// - grouped, the same walk keeps the first (newest) row of each notification.
    ///
    /// Walked counts (a search, a grouping) stop past [`COUNT_CAP`] or past the page asked for
    /// ([`CapturePage::total_capped`]).
    pub fn page(&self, query: &CaptureQuery) -> Result<CapturePage> {
        let limit = query.limit.min(MAX_PAGE_LIMIT);
        let search = query.filter.text.as_deref().and_then(SearchText::parse);
        let conn = self.reader();
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
            let total =
                if self.layout == IndexLayout::Counted && facet_counts::answers(&query.filter) {
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
        })
    }

    /// The search tables a query of `filter` reads, in `conn`'s snapshot (none without a
    /// search: then the list of shards is not read).
    fn tables(&self, conn: &Connection, filter: &CaptureFilter) -> Result<search::SearchTables> {
        if self.indexed && filter.text.as_deref().and_then(SearchText::parse).is_some() {
            search::SearchTables::read(conn, true)
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

    /// How many captures `filter` (which [`facet_counts::answers`]) selects, from the counts
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

    /// Captures the search index has not reached yet (the indexer works behind the writer, see
    /// [`crate::search`]); a search reads these by scanning them, so it is slower, not less
    /// complete, while this is large (after an import or the migration of an older store).
    pub fn search_backlog(&self) -> Result<u64> {
        let sql = if self.indexed {
            "SELECT COUNT(*) FROM captures WHERE id > \
             (SELECT indexed_through FROM search_state WHERE one = 1)"
        } else {
            "SELECT COUNT(*) FROM captures"
        };
        let backlog: i64 = self.reader().query_row(sql, [], |row| row.get(0))?;
        Ok(backlog.max(0) as u64)
    }

    /// What the inspector's filter controls show for `filter`: per-verdict counts (ignoring
    /// `filter.verdicts`), the event types, resource types and subscriptions present in the
    /// store, and the count under the whole filter. A search's counts walk its hits and stop
    /// past [`COUNT_CAP`] ([`Facets::capped`]).
    pub fn facets(&self, filter: &CaptureFilter) -> Result<Facets> {
        let reader = self.reader();
        let snapshot = reader.unchecked_transaction()?;
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
                let sql = if self.layout == IndexLayout::Counted && facet_counts::answers(filter) {
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
        Ok(facets)
    }

    /// Every capture matching `filter`, oldest first (for export).
    pub fn for_each(
        &self,
        filter: &CaptureFilter,
        mut f: impl FnMut(Capture) -> Result<()>,
    ) -> Result<()> {
        let reader = self.reader();
        let snapshot = reader.unchecked_transaction()?;
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

    /// The number of captures per verdict among those matching `filter` (verdicts with none left out).
    pub fn count_by_verdict(&self, filter: &CaptureFilter) -> Result<BTreeMap<Verdict, u64>> {
        let reader = self.reader();
        let snapshot = reader.unchecked_transaction()?;
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

    /// The listener's runs on this store, oldest first (none in a store made before runs were
    /// kept), each with its last capture (see [`crate::runs`]).
    pub fn listener_runs(&self) -> Result<Vec<ListenerRun>> {
        let conn = self.reader();
        let has_runs: bool = conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' \
             AND name = 'listener_runs')",
            [],
            |row| row.get(0),
        )?;
        if !has_runs {
            return Ok(Vec::new());
        }
        let mut select = conn.prepare(
            "SELECT id, started_at_us, stopped_at_us FROM listener_runs \
             ORDER BY started_at_us, id",
        )?;
        let rows: Vec<(i64, i64, Option<i64>)> = select
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut last_capture = conn.prepare_cached(
            "SELECT MAX(received_at_us) FROM captures \
             WHERE received_at_us >= ?1 AND received_at_us < ?2",
        )?;
        let mut runs = Vec::with_capacity(rows.len());
        for (index, &(id, started, stopped)) in rows.iter().enumerate() {
            let next_start = rows.get(index + 1).map_or(i64::MAX, |next| next.1);
            let last: Option<i64> =
                last_capture.query_row([started, next_start], |row| row.get(0))?;
            runs.push(ListenerRun {
                id,
                started_at: from_micros(started),
                stopped_at: stopped.map(from_micros),
                last_capture_at: last.map(from_micros),
            });
        }
        Ok(runs)
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
        // Without the subscription's own index (schema 5), one pass over `captures_list` rather
        // than a walk of the time index reading each row.
        let hint = match self.layout {
            IndexLayout::Counted => "INDEXED BY captures_list",
            _ => "",
        };
        let first: Option<i64> = self.reader().query_row(
            &format!("SELECT MIN(received_at_us) FROM captures {hint} WHERE subscription_id = ?1"),
            [subscription_id],
            |row| row.get(0),
        )?;
        Ok(first.map(from_micros))
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
        let conn = self.reader();
        let mut stmt = conn.prepare(
            "SELECT id, capture_id, kind, url, sent_at, request_headers, request_body, status, \
             response_headers, response_body, elapsed_ms, error FROM outbound \
             WHERE capture_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([capture_id], outbound_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The writer thread's state: everything it needs besides its connection and its queue.
struct Writer {
    /// The store's policy; [`Store::set_retention`] changes it.
    retention: Retention,
    restart_due: Arc<AtomicBool>,
    /// Told of every commit, so the search indexer keeps out of the way ([`crate::search`]).
    activity: Arc<search::WriterActivity>,
    redeliveries: Arc<Mutex<Redeliveries>>,
    /// The highest capture id ever deleted (kept in `highest_deleted`): new ids start above
    /// it, so a capture id names one capture for the life of the store, even after the newest
    /// captures were cleared (an export, a forward record, the app's list may still name it).
    highest_deleted: i64,
}

impl Writer {
    fn run(&mut self, conn: &mut Connection, rx: mpsc::Receiver<WriteOp>) {
        let mut since_prune = 0u64;
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
                        since_prune += self.commit_batch(conn, &mut inserts);
                        job(conn, self);
                        if inserts.is_empty() {
                            pending = rx.try_recv().ok();
                        }
                    }
                }
            }
            since_prune += self.commit_batch(conn, &mut inserts);
            if self.restart_due.swap(false, Ordering::Relaxed) {
                restart_wal(conn);
            }
            let pruning_due = self.retention != Retention::default() && since_prune >= PRUNE_EVERY;
            if pruning_due {
                since_prune = 0;
                if let Err(error) = self.prune(conn, self.retention) {
                    tracing::warn!(%error, "pruning the capture store failed");
                }
            }
        }
    }

    /// Writes the queued inserts in one transaction, then answers each; returns how many were
    /// stored.
    fn commit_batch(&self, conn: &mut Connection, inserts: &mut Vec<PendingInsert>) -> u64 {
        if inserts.is_empty() {
            return 0;
        }
        let mut batch = std::mem::take(inserts);
        let mut changes = PendingChanges::default();
        let written = (|| -> Result<()> {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            // One writer, so the next ids are known: each row is written once, its own id
            // included as the notification id of a first attempt.
            let after_newest: i64 = tx
                .prepare_cached("SELECT COALESCE(MAX(id), 0) + 1 FROM captures")?
                .query_row([], |row| row.get(0))?;
            let first_id = after_newest.max(self.highest_deleted.saturating_add(1));
            for (id, insert) in (first_id..).zip(batch.iter_mut()) {
                let capture = &mut insert.capture;
                capture.id = id;
                link_attempt(&tx, &self.redeliveries, &mut changes, capture)?;
                insert_row(&tx, capture, &insert.text, Some(id))?;
            }
            tx.commit()?;
            Ok(())
        })();
        match written {
            Ok(()) => {
                changes.apply(&mut lock(&self.redeliveries));
                self.activity.wrote();
                let count = batch.len() as u64;
                for insert in batch {
                    let _ = insert.reply.send(Ok(*insert.capture));
                }
                count
            }
            Err(error) => {
                tracing::error!(%error, "committing captures failed");
                let message = error.to_string();
                for insert in batch {
                    let _ = insert.reply.send(Err(Error::Commit(message.clone())));
                }
                0
            }
        }
    }

    /// Writes imported captures: `INSERT OR IGNORE` tells a taken id (skipped) without a
    /// lookup per row. A capture at or below the search index's indexed id (an import into a
    /// store with newer captures) is indexed here, in the same transaction, as the indexer
    /// only looks above it; the others it indexes after (see [`crate::search`]).
    fn import(&self, conn: &mut Connection, captures: &[Capture]) -> Result<ImportReport> {
        let redeliveries = &*self.redeliveries;
        let mut changes = PendingChanges::default();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let indexed_through = search::indexed_through(&tx)?;
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
            search::index_rows(&tx, "id = ?1", &[&id])?;
        }
        tx.commit()?;
        changes.apply(&mut lock(redeliveries));
        self.activity.imported();
        Ok(report)
    }

    /// Applies `retention` once; returns how many captures it deleted.
    fn prune(&mut self, conn: &mut Connection, retention: Retention) -> Result<u64> {
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

    /// Deletes the captures `filter` selects (see [`Store::clear`]), in one transaction.
    ///
    /// A notification is forgotten (its row in `notifications` and its entry in the map) once
    /// no capture of it is left, so a redelivery of it is a first attempt again: the user
    /// cleared it, and an "attempt 4" whose attempts 1-3 cannot be shown would point at
    /// nothing. When some of its captures are left (a clear by verdict may take only some),
    /// it keeps its link and count, and the next redelivery continues the numbering, beside
    /// the attempts that are still there.
    fn clear(&mut self, conn: &mut Connection, filter: &CaptureFilter) -> Result<u64> {
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
    fn note_deleted_newest(&self, tx: &Connection, newest_before: i64) -> Result<i64> {
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
fn highest_deleted(conn: &Connection) -> Result<i64> {
    Ok(conn
        .query_row("SELECT id FROM highest_deleted WHERE one = 1", [], |row| {
            row.get(0)
        })
        .optional()?
        .unwrap_or(0))
}

/// An instant kept as microseconds since the Unix epoch (the store's `*_us` columns).
fn from_micros(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
/// [`crate::redelivery`]) and records this attempt in `notifications`.
fn link_attempt(
    conn: &Connection,
    committed: &Mutex<Redeliveries>,
    changes: &mut PendingChanges,
    capture: &mut Capture,
) -> Result<()> {
    capture.attempt = 1;
    capture.notification_id = None;
    let Some(key) = notification_key(capture) else {
        return Ok(());
    };
    // Only this thread changes the map, so it is locked just to read, never across a commit
    // (the test mode reads it from the request tasks).
    let known = changes.get(&lock(committed), &key);
    let seen = match known {
        Some(earlier) => {
            let seen = Seen {
                first_id: earlier.first_id,
                attempts: earlier.attempts.saturating_add(1),
            };
            conn.prepare_cached("UPDATE notifications SET attempts = ?2 WHERE id = ?1")?
                .execute(params![seen.first_id, seen.attempts])?;
            seen
        }
        // The first attempt is the notification: it links to itself.
        None => {
            let seen = Seen {
                first_id: capture.id,
                attempts: 1,
            };
            conn.prepare_cached(
                "INSERT OR REPLACE INTO notifications (id, key, attempts) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![seen.first_id, key.as_bytes(), seen.attempts])?;
            seen
        }
    };
    capture.attempt = seen.attempts;
    capture.notification_id = Some(seen.first_id);
    changes.set(key, seen);
    Ok(())
}

/// Brings a store to [`SCHEMA_VERSION`] and reads its notifications into memory.
///
/// A version-1 store has no `notifications` rows: they are made once from its captures (one
/// pass over the table), and its index on the three fields is dropped.
fn load_redeliveries(conn: &mut Connection) -> Result<Redeliveries> {
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
    let rows: i64 = conn.query_row("SELECT COUNT(*) FROM notifications", [], |row| row.get(0))?;
    let mut loader = RedeliveriesLoader::with_capacity(usize::try_from(rows).unwrap_or(0));
    let mut select = conn.prepare("SELECT id, key, attempts FROM notifications")?;
    let mut rows = select.query([])?;
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

fn headers_json(headers: &[Header]) -> Result<String> {
    Ok(serde_json::to_string(headers)?)
}

/// The statement that writes a capture row, made at compile time (the writer binds it for
/// every capture).
macro_rules! insert_sql {
    ($verb:literal) => {
        concat!(
            $verb,
            " INTO captures (id, received_at, received_at_us, method, path, headers, body, \
             body_size, peer, verdict, matched_key, subscription_id, event_id, event_time, \
             event_type, instance_id, resource_id, resource_type, resource_ref, attempt, \
             notification_id, response_status, response_body, response_from_test_mode, \
             response_delay_ms, processing_micros, replay) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
             ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, \
             ?25, ?26, ?27)"
        )
    };
}

fn insert_row(conn: &Connection, c: &Capture, text: &RowText, id: Option<i64>) -> Result<i64> {
    insert_with(conn, insert_sql!("INSERT"), c, text, id)?;
    Ok(conn.last_insert_rowid())
}

/// Inserts an imported capture with its own id; `false` when the id is taken.
fn insert_row_or_ignore(conn: &Connection, c: &Capture, text: &RowText) -> Result<bool> {
    Ok(insert_with(conn, insert_sql!("INSERT OR IGNORE"), c, text, Some(c.id))? == 1)
}

fn insert_with(
    conn: &Connection,
    sql: &str,
    c: &Capture,
    text: &RowText,
    id: Option<i64>,
) -> Result<usize> {
    Ok(conn.prepare_cached(sql)?.execute(params![
        id,
        text.received_at,
        c.received_at.timestamp_micros(),
        c.method,
        c.path,
        text.headers,
        c.body,
        c.body_size as i64,
        c.peer,
        c.verdict.as_str(),
        c.matched_key.map(MatchedKey::as_str),
        c.subscription_id,
        c.fields.event_id,
        c.fields.event_time,
        c.fields.event_type,
        c.fields.instance_id,
        c.fields.resource_id,
        c.fields.resource_type,
        c.fields.resource_ref,
        c.attempt,
        c.notification_id,
        c.response.status,
        c.response.body,
        c.response.from_test_mode,
        c.response.delay_ms as i64,
        c.processing_micros as i64,
        c.replay,
    ])?)
}

fn conversion_error(column: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, message.into())
}

fn parse_headers(column: usize, text: &str) -> rusqlite::Result<Vec<Header>> {
    serde_json::from_str(text).map_err(|e| conversion_error(column, e.to_string()))
}

fn parse_time(column: usize, text: &str) -> rusqlite::Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| conversion_error(column, e.to_string()))
}

fn capture_from_row(row: &Row<'_>) -> rusqlite::Result<Capture> {
    let verdict: String = row.get(8)?;
    let matched_key: Option<String> = row.get(9)?;
    Ok(Capture {
        id: row.get(0)?,
        received_at: parse_time(1, &row.get::<_, String>(1)?)?,
        method: row.get(2)?,
        path: row.get(3)?,
        headers: parse_headers(4, &row.get::<_, String>(4)?)?,
        body: row.get(5)?,
        body_size: row.get::<_, i64>(6)? as u64,
        peer: row.get(7)?,
        verdict: Verdict::parse(&verdict)
            .ok_or_else(|| conversion_error(8, format!("unknown verdict {verdict}")))?,
        matched_key: matched_key.as_deref().and_then(MatchedKey::parse),
        subscription_id: row.get(10)?,
        fields: NotificationFields {
            event_id: row.get(11)?,
            event_time: row.get(12)?,
            event_type: row.get(13)?,
            instance_id: row.get(14)?,
            resource_id: row.get(15)?,
            resource_type: row.get(16)?,
            resource_ref: row.get(17)?,
        },
        attempt: row.get(18)?,
        notification_id: row.get(19)?,
        response: ResponseRecord {
            status: row.get(20)?,
            body: row.get(21)?,
            from_test_mode: row.get(22)?,
            delay_ms: row.get::<_, i64>(23)? as u64,
        },
        processing_micros: row.get::<_, i64>(24)? as u64,
        replay: row.get(25)?,
    })
}

fn outbound_from_row(row: &Row<'_>) -> rusqlite::Result<OutboundRecord> {
    let kind: String = row.get(2)?;
    Ok(OutboundRecord {
        id: row.get(0)?,
        capture_id: row.get(1)?,
        kind: OutboundKind::parse(&kind)
            .ok_or_else(|| conversion_error(2, format!("unknown kind {kind}")))?,
        url: row.get(3)?,
        sent_at: parse_time(4, &row.get::<_, String>(4)?)?,
        request_headers: parse_headers(5, &row.get::<_, String>(5)?)?,
        request_body: row.get(6)?,
        status: row.get(7)?,
        response_headers: parse_headers(8, &row.get::<_, String>(8)?)?,
        response_body: row.get(9)?,
        elapsed_ms: row.get::<_, i64>(10)? as u64,
        error: row.get(11)?,
    })
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
    const ALL: FilterParts = FilterParts {
        verdicts: true,
        text: true,
    };
}

/// The WHERE clause and its arguments for a filter, on the whole store.
fn filter_sql(
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

mod optional_seconds {
    use chrono::Duration;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_i64(d.num_seconds()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(Duration::seconds))
    }
}

//! The tables thread: writes the captures the writer acknowledged through the journal into the
//! store's tables, behind the acknowledgements, on a connection of its own; and the checkpoint
//! thread beside it.
//!
//! Why a thread of its own: a capture's row, its indexes and its notification cost two to three
//! times what the writer spends on acknowledging it (22 s of CPU a minute against 9 under a
//! flood, BENCHMARKS.md, listener). Done in the writer, they held every acknowledgement while
//! they ran whenever the journal was full, so a flood longer than the journal went at the
//! tables' pace one step at a time (write a chunk, then acknowledge a group) and a quarter of
//! the two cores stood idle. Here they run beside the acknowledgements: the writer waits for
//! them only when the journal has no room left.
//!
//! When the tables take the backlog: once no group has arrived for [`TABLE_QUIET`] (so a burst
//! is acknowledged without them competing for the cores), and at once when the journal is
//! nearly full or its oldest capture has waited a second ([`Journal::pressed`]: a reader in
//! another process waits for them, [`super::catch_up`]), when the writer waits for them (for
//! room, or for all of them before a job) or when a reader of this process waits for them
//! ([`super::journal::AckProgress`]).
//!
//! What the tables take comes from the journal's hand-over when it is there: the plaintext of
//! the groups the writer just made durable, kept in memory up to a sixteenth of the journal's
//! size (4 MiB), so
//! an encrypted store's records are not read back and opened again (about 20,000 instructions
//! a capture of this thread's 309,000 in callgrind, BENCHMARKS.md); the rest (past the
//! hand-over's room, or after a restart) is read back from the journal's file
//! ([`Journal::oldest`]). Which records are taken is the journal's ring alone, so each is
//! taken once, in order, whichever way it comes.
//!
//! Every other write (clear, prune, import, the run log) stays with the writer, which numbers
//! captures and links attempts: the two take turns at SQLite through
//! [`search::WriterActivity::write_turn`], and a job waits until the tables hold every capture
//! acknowledged before it. The store's retention is applied here, in the transaction of the
//! chunk that makes it due (every [`PRUNE_EVERY`] captures, or at once past the byte budget),
//! before readers are told of them ([`Retained::prune_in`]), and with it the sizes per class
//! are kept ([`super::sizes`]).

use super::journal::{AckProgress, Journal};
use super::rows::{insert_row, RowText};
use super::sizes::Tally;
use super::types::Retention;
use super::writer::{lock, record_attempt, Retained};
use crate::classes::RetentionClass;
use crate::search;
use crate::Result;
use rusqlite::Connection;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Most captures of the backlog written into the tables in one transaction: large enough to
/// cost the tables little per capture, small enough that a job or a reader waiting for the turn
/// waits a few milliseconds at most (512 measured no cheaper under a flood, BENCHMARKS.md).
const TABLE_CHUNK: usize = 128;
/// The tables take the backlog once no group has arrived for this long (see the module's notes).
const TABLE_QUIET: Duration = Duration::from_millis(5);
/// After the tables refused the backlog (a full disk, say), how long before trying again.
const TABLE_RETRY: Duration = Duration::from_secs(1);
/// The store's retention is applied after the tables took this many captures.
const PRUNE_EVERY: u64 = 256;

/// Whether the tables holding `held` are past `policy`'s byte budget, or their junk past its
/// share of it.
fn over_bytes(held: &Tally, policy: Retention) -> bool {
    let Some(budget) = policy.max_bytes else {
        return false;
    };
    let as_i64 = |bytes: u64| i64::try_from(bytes).unwrap_or(i64::MAX);
    held.total_bytes() > as_i64(budget)
        || held.bytes_of(RetentionClass::Junk) > as_i64(RetentionClass::junk_share(budget))
}

/// How often the checkpoint thread moves the WAL into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// How long the tables' WAL restart may wait for a reader to step off the WAL before it gives
/// up until the next round (it holds the write turn meanwhile).
const RESTART_WAIT: Duration = Duration::from_millis(5);

/// The tables thread's state besides its connection.
pub(super) struct Tables {
    pub(super) journal: Arc<Journal>,
    pub(super) progress: Arc<AckProgress>,
    /// Turns at SQLite with the writer and the search indexer ([`crate::search`]).
    pub(super) activity: Arc<search::WriterActivity>,
    pub(super) restart_due: Arc<AtomicBool>,
    /// The store's retention and what applying it must keep.
    pub(super) retained: Arc<Retained>,
    /// Reused for reading back from the journal's file what its hand-over does not hold.
    pub(super) read_buffer: Vec<u8>,
    /// After the tables refused the backlog: when to try again.
    pub(super) retry_at: Option<Instant>,
    /// Captures written since the retention was last applied.
    pub(super) written_since_prune: u64,
}

impl Tables {
    /// Runs until the writer stops (`appended` disconnects), then writes what is left, so a
    /// clean stop leaves no backlog. `appended` is told of every group the writer acknowledged
    /// and whenever it waits for the tables.
    pub(super) fn run(&mut self, conn: &mut Connection, appended: mpsc::Receiver<()>) {
        // No group has arrived for `TABLE_QUIET`.
        let mut quiet = false;
        // A reader waits: the tables take everything there is before they wait again.
        let mut reader_waits = false;
        loop {
            if self.retry_at.is_some_and(|at| Instant::now() >= at) {
                self.retry_at = None;
            }
            let backlog = self.journal.backlog();
            reader_waits = (reader_waits || self.progress.take_wanted()) && backlog > 0;
            let urgent = reader_waits || self.journal.pressed();
            let due = backlog > 0 && (urgent || quiet) && self.retry_at.is_none();
            if due && self.write_backlog(conn, TABLE_CHUNK) > 0 {
                // Groups that came meanwhile end the quiet; the pressure is looked at again.
                loop {
                    match appended.try_recv() {
                        Ok(()) => quiet = false,
                        Err(mpsc::TryRecvError::Empty) => break,
                        Err(mpsc::TryRecvError::Disconnected) => return self.stop(conn),
                    }
                }
                self.restart_wal_if_due(conn);
                continue;
            }
            let wait = match self.retry_at {
                Some(at) => Some(at.saturating_duration_since(Instant::now())),
                None if backlog == 0 => {
                    // Nothing waits: what a burst's hand-over held goes back.
                    self.journal.trim_spares();
                    None
                }
                None => Some(TABLE_QUIET),
            };
            let arrived = match wait {
                None => appended
                    .recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                Some(wait) => appended.recv_timeout(wait),
            };
            match arrived {
                Ok(()) => quiet = false,
                Err(mpsc::RecvTimeoutError::Timeout) => quiet = true,
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.stop(conn),
            }
            self.restart_wal_if_due(conn);
        }
    }

    /// The writer stopped: the tables take everything acknowledged, and a file a burst grew is
    /// given back.
    fn stop(&mut self, conn: &mut Connection) {
        self.retry_at = None;
        while self.journal.backlog() > 0 {
            if self.write_backlog(conn, TABLE_CHUNK * 8) == 0 {
                break;
            }
        }
        if self.journal.backlog() == 0 {
            self.journal.shrink();
        }
        let (from_memory, from_file) = self.journal.taken();
        tracing::debug!(
            from_memory,
            from_file,
            "captures the tables took from the journal's hand-over and from its file"
        );
    }

    /// Writes the oldest `most` captures of the backlog into the tables in one transaction, with
    /// the journal's mark and what they add to the sizes per class ([`super::sizes`]); returns
    /// how many.
    ///
    /// The store's retention is applied in the same transaction, before readers are told of
    /// them (what they read next is already within it): every [`PRUNE_EVERY`] captures, and at
    /// once when the chunk would take the tables past the byte budget or junk past its share
    /// of it, so bodies of a megabyte never take the store past its budget, not even between
    /// two commits.
    fn write_backlog(&mut self, conn: &mut Connection, most: usize) -> u64 {
        let count = most.min(self.journal.backlog());
        let Some(mark) = self.journal.mark_after(count) else {
            return 0;
        };
        let policy = *lock(&self.retained.policy);
        let turn = self.activity.write_turn();
        let written = (|| -> Result<(Tally, Tally, Tally)> {
            let captures = self.journal.oldest(count, &mut self.read_buffer)?;
            let mut tx =
                conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let held = self.retained.held(&tx)?;
            let mut added = Tally::default();
            for capture in &captures {
                let text = RowText::of(capture)?;
                insert_row(&tx, capture, &text, Some(capture.id))?;
                added.add_capture(capture, &text);
                record_attempt(&tx, capture)?;
            }
            let mut now = held;
            now.merge(&added);
            let due = policy != Retention::default()
                && (self.written_since_prune + count as u64 >= PRUNE_EVERY
                    || over_bytes(&now, policy));
            let pruned = if due {
                self.written_since_prune = 0;
                // A prune that fails is undone alone: the captures go in all the same (they
                // are acknowledged), and the next chunk tries the retention again.
                let savepoint = tx.savepoint()?;
                match self.retained.prune_in(&savepoint, policy, mark.id, now) {
                    Ok(pruned) => {
                        savepoint.commit()?;
                        pruned
                    }
                    Err(error) => {
                        tracing::warn!(%error, "pruning the capture store failed");
                        self.written_since_prune = PRUNE_EVERY;
                        Tally::default()
                    }
                }
            } else {
                self.written_since_prune += count as u64;
                Tally::default()
            };
            let mut change = added;
            change.merge(&pruned.negated());
            change.write(&tx)?;
            mark.write(&tx)?;
            tx.commit()?;
            Ok((held, change, pruned))
        })();
        let written = written.map(|(held, change, pruned)| {
            // Under the turn still: the next to take it finds the sizes exact.
            self.retained.set_held(held, &change);
            pruned
        });
        drop(turn);
        let pruned = match written {
            Ok(pruned) => pruned,
            Err(error) => {
                tracing::error!(%error, "writing acknowledged captures into the store failed; they stay in its journal");
                self.retry_at = Some(Instant::now() + TABLE_RETRY);
                self.journal.set_refused(Some(error.to_string()));
                return 0;
            }
        };
        self.journal.set_refused(None);
        if self.read_buffer.capacity() > 4 << 20 {
            self.read_buffer = Vec::new();
        }
        self.journal.applied_through(mark.id);
        self.retained.note_pruned(&pruned);
        self.progress.applied(mark.id);
        self.activity.wrote();
        count as u64
    }

    fn restart_wal_if_due(&self, conn: &Connection) {
        if self.restart_due.swap(false, Ordering::Relaxed) {
            let _turn = self.activity.write_turn();
            restart_wal(conn);
        }
    }
}

/// Checkpoints run here rather than inside the tables' commits (`wal_autocheckpoint=0` on the
/// writing connections), so copying the WAL into the database and its fsync never stall a
/// write. `PASSIVE` never blocks a writer.
///
/// A passive checkpoint alone never lets the WAL start over while captures keep arriving: by
/// the time it has copied what it saw, the tables have appended more, and SQLite restarts the
/// WAL only when a write begins with everything copied. The WAL would grow for as long as the
/// load lasts (hundreds of MB in a minute of the benchmark), every commit appending to the file
/// (block allocation and a journal commit in each fsync). So after each round this thread
/// raises `restart_due`, and the tables thread, between two chunks, finishes the job itself
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
        tracing::warn!(%error, "resetting the connection's wait for locks failed");
    }
}

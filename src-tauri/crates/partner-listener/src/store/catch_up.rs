//! Captures acknowledged but not yet in the tables: written in at a writer's open, and caught up
//! with by a reader that opens the store apart (`partner listen export`, `captures`, `missed`,
//! `recover`, `replay`, evidence bundles, the app beside `partner listen`).
//!
//! Why: the listener answers a notification once it is synced into the journal
//! ([`super::journal`]); the tables take it behind. A reader of another process reads only the
//! tables, so after a `kill -9` (or beside a listener in a burst) it read a store without the
//! captures the listener had acknowledged, and said nothing: an export after a crash left most of
//! them out, and `missed` counted them as missed (and `recover` would have sent them again). So
//! before a reader's first read:
//! - with no writer on the store, the reader writes the journal's captures into the tables
//!   itself, exactly as the next writer's open would (it opens the store as a writer for that
//!   moment; a listener started in that instant is refused naming it, and may simply start again);
//! - beside a writer, it waits (at most [`WAIT`]) until the tables hold the newest capture the
//!   journal held when it looked: the writer's tables take a capture within
//!   [`super::journal::MAX_LAG`] however busy it is, a few milliseconds when it is not;
//! - where neither can be done (the store is not this user's to write, the writer's tables are
//!   stuck), the open fails saying what to run ([`Error::JournalPending`],
//!   [`Error::JournalUnapplied`]): never a shorter answer.
//!
//! A reader that stays open (the app's inspector beside `partner listen`) sees later captures as
//! the tables take them, within that same bound.

use super::journal::{self, AppliedMark};
use super::rows::{self, RowText};
use super::sizes::{self, Tally};
use super::writer::record_attempt;
use crate::{Error, Result};
use partner_seal::DataKey;
use rusqlite::Connection;
use std::path::Path;
use std::time::{Duration, Instant};

/// The longest a reader waits for a running writer's tables to take what its journal holds: as
/// long as the writer's own reads wait ([`journal::READ_WAIT`]).
pub(super) const WAIT: Duration = journal::READ_WAIT;
/// How often it looks meanwhile.
const POLL: Duration = Duration::from_millis(20);

/// Before a reader's first read of the store at `path` (`conn` reads it): the captures its
/// journal holds past the tables' mark are in the tables, written in here when no writer holds
/// the store, waited for when one does (see the module's notes). `open_writer` opens the store
/// as its writer, naming the holder given, and closes it again: the open writes the journal in.
pub(super) fn catch_up(
    path: &Path,
    conn: &Connection,
    key: Option<&DataKey>,
    wait: Duration,
    open_writer: impl Fn(&'static str) -> Result<()>,
) -> Result<()> {
    let journal_path = journal::path_of(path);
    if !journal_path.exists() {
        return Ok(());
    }
    let pending = match journal::recover(&journal_path, applied_mark(conn)?, key) {
        Ok(found) => found.captures,
        Err(error @ Error::JournalDamaged { .. }) => {
            // Nobody can read those records: the next writer keeps the file aside and says so.
            tracing::error!(%error, "the capture store's journal is damaged; reading the tables alone");
            return Ok(());
        }
        Err(error) => return Err(error),
    };
    let (Some(newest), count) = (pending.last().map(|capture| capture.id), pending.len()) else {
        return Ok(());
    };
    drop(pending);
    let deadline = Instant::now() + wait;
    loop {
        if applied_mark(conn)?.id >= newest {
            return Ok(());
        }
        match open_writer(READER_HOLDER) {
            // Its open wrote the journal's captures in; closing it stopped its threads cleanly.
            Ok(()) => {
                tracing::info!(
                    captures = count,
                    "wrote the captures a listener acknowledged before it stopped into the store before reading it"
                );
                return Ok(());
            }
            Err(Error::StoreInUse { holder, .. }) => {
                if Instant::now() >= deadline {
                    return Err(Error::JournalPending {
                        path: path.to_path_buf(),
                        holder,
                        captures: count,
                        waited_secs: wait.as_secs(),
                    });
                }
                std::thread::sleep(POLL);
            }
            Err(error) => {
                return Err(Error::JournalUnapplied {
                    path: path.to_path_buf(),
                    captures: count,
                    reason: error.to_string(),
                })
            }
        }
    }
}

/// What a reader that writes the journal in calls itself in the store's lock file.
const READER_HOLDER: &str = "a reader writing in the captures a listener acknowledged";

/// The tables' mark; none in a store made before the journal.
fn applied_mark(conn: &Connection) -> Result<AppliedMark> {
    let has_marks: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'acks_applied')",
        [],
        |row| row.get(0),
    )?;
    if has_marks {
        AppliedMark::read(conn)
    } else {
        Ok(AppliedMark::default())
    }
}

/// At a writer's open: writes into the tables the captures the journal holds past their mark
/// (acknowledged before the last writer stopped, not yet in the tables), in one transaction;
/// sealed with `key` (plain without). A journal that cannot be read is kept aside under a name
/// of its own and reported; the store opens without it.
pub(super) fn apply_journal(
    conn: &mut Connection,
    journal_path: &Path,
    key: Option<&DataKey>,
) -> Result<()> {
    let mark = AppliedMark::read(conn)?;
    let found = match journal::recover(journal_path, mark, key) {
        Ok(found) => found,
        Err(error @ Error::JournalDamaged { .. }) => {
            let aside = journal::keep_aside(journal_path)?;
            tracing::error!(%error, kept_as = %aside.display(), "the capture store's acknowledgement journal was damaged and has been kept aside");
            return Ok(());
        }
        Err(error) => return Err(error),
    };
    let Some(last) = found.captures.last() else {
        return Ok(());
    };
    let applied = AppliedMark {
        id: last.id,
        end: found.end,
    };
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut added = Tally::default();
    for capture in &found.captures {
        let text = RowText::of(capture)?;
        if rows::insert_row_or_ignore(&tx, capture, &text)? {
            added.add_capture(capture, &text);
        }
        record_attempt(&tx, capture)?;
    }
    // A store made before the sizes were kept gets them from its captures after this.
    if sizes::kept(&tx)? {
        added.write(&tx)?;
    }
    applied.write(&tx)?;
    tx.commit()?;
    tracing::warn!(
        captures = found.captures.len(),
        "wrote the captures acknowledged before the last stop from the journal into the store"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::journal::tests::{leave_journal, linked};
    use crate::store::schema::open_read_only;
    use crate::store::{Store, StoreOptions, StoreReader};
    use crate::writer_lock::WriterLock;
    use crate::{CaptureFilter, Retention};

    /// A store whose last writer stopped (as `kill -9` stops it) with three captures
    /// acknowledged in its journal and none of them in its tables.
    fn crashed_store(dir: &Path) -> std::path::PathBuf {
        let db = dir.join("s.db");
        drop(Store::open(&db, Retention::default()).unwrap());
        leave_journal(
            &journal::path_of(&db),
            &[
                linked(1, 1, 1, "ev-a"),
                linked(2, 1, 2, "ev-a"),
                linked(3, 3, 1, "ev-b"),
            ],
        );
        db
    }

    fn open_writer_on(db: &Path) -> impl Fn(&'static str) -> Result<()> + '_ {
        move |holder| {
            Store::open_with(
                db,
                StoreOptions {
                    holder,
                    ..StoreOptions::default()
                },
            )
            .map(drop)
        }
    }

    #[test]
    fn a_reader_after_a_crash_writes_the_journal_in_and_reads_every_acknowledged_capture() {
        let dir = tempfile::tempdir().unwrap();
        let db = crashed_store(dir.path());
        // The tables alone hold none of them: what a reader read before.
        let plain = open_read_only(&db).unwrap();
        let in_tables: i64 = plain
            .query_row("SELECT COUNT(*) FROM captures", [], |row| row.get(0))
            .unwrap();
        assert_eq!(in_tables, 0);

        let reader = StoreReader::open(&db).unwrap();
        assert_eq!(reader.count(&CaptureFilter::default()).unwrap(), 3);
        let redelivery = reader.get(2).unwrap();
        assert_eq!(
            (redelivery.attempt, redelivery.notification_id),
            (2, Some(1))
        );
        drop(reader);
        // It let the store go again: a listener opens it, and nothing is written twice.
        let store = Store::open(&db, Retention::default()).unwrap();
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 3);
    }

    #[test]
    fn beside_a_writer_a_reader_waits_for_its_tables_and_refuses_rather_than_answer_short() {
        let dir = tempfile::tempdir().unwrap();
        let db = crashed_store(dir.path());
        // A writer holds the store and never writes the journal in.
        let held = WriterLock::acquire(&db, "partner listen").unwrap();
        let conn = open_read_only(&db).unwrap();
        let started = Instant::now();
        let refused = catch_up(
            &db,
            &conn,
            None,
            Duration::from_millis(300),
            open_writer_on(&db),
        )
        .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(
            matches!(&refused, Error::JournalPending { captures: 3, holder, .. } if holder.contains("partner listen")),
            "{refused}"
        );
        let message = refused.to_string();
        assert!(
            message.contains("nothing was read") && message.contains("Try again"),
            "{message}"
        );

        // The writer goes away while the reader waits: the reader writes the journal in.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        catch_up(
            &db,
            &conn,
            None,
            Duration::from_secs(10),
            open_writer_on(&db),
        )
        .unwrap();
        release.join().unwrap();
        let in_tables: i64 = conn
            .query_row("SELECT COUNT(*) FROM captures", [], |row| row.get(0))
            .unwrap();
        assert_eq!(in_tables, 3);
    }

    #[tokio::test]
    async fn beside_a_running_listener_a_reader_sees_what_it_acknowledged() {
        let dir = tempfile::tempdir().unwrap();
        let db = crashed_store(dir.path());
        // The listener's open writes the left journal in; what it acknowledges next goes to
        // its journal first, and a reader opened apart right after the answer finds it.
        let store = Store::open(&db, Retention::default()).unwrap();
        for round in 0..20 {
            let event = format!("ev-next-{round}");
            let stored = store.insert(linked(0, 0, 0, &event)).await.unwrap();
            let reader = StoreReader::open(&db).unwrap();
            assert_eq!(reader.get(stored.id).unwrap().fields.event_id, Some(event));
        }
    }

    #[test]
    fn a_store_without_a_journal_opens_as_it_did() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        drop(Store::open(&db, Retention::default()).unwrap());
        std::fs::remove_file(journal::path_of(&db)).unwrap();
        let conn = open_read_only(&db).unwrap();
        catch_up(&db, &conn, None, WAIT, |_| panic!("no writer is needed")).unwrap();
    }
}

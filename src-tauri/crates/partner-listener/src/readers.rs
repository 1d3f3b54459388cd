//! The store's read connections: a few, so the inspector's questions are answered side by side.
//!
//! Why more than one: SQLite runs one statement at a time on a connection, and with a single
//! read connection behind a mutex every read waited for the one before it: the inspector's rows
//! behind the filter's counts (150–190 ms at 1,000,000 captures), a scroll behind a live
//! refresh, the whole inspector behind an export. In WAL mode readers block neither each other
//! nor the writer, so each read takes an idle connection; when none is idle another is opened,
//! up to [`MAX_READERS`], and past that a read waits for one to come back. Connections are
//! opened only when reads overlap (a CLI query uses one) and then kept, each with its own page
//! cache (SQLite's default 2 MiB) and prepared statements.

use crate::Result;
use rusqlite::Connection;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The most read connections one store handle opens.
pub(crate) const MAX_READERS: usize = 3;

type Opener = Box<dyn Fn() -> Result<Connection> + Send + Sync>;

/// Read connections to one store file, opened as reads overlap.
pub(crate) struct ReaderPool {
    open: Opener,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Connection>,
    opened: usize,
}

impl std::fmt::Debug for ReaderPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state();
        f.debug_struct("ReaderPool")
            .field("opened", &state.opened)
            .field("idle", &state.idle.len())
            .finish()
    }
}

impl ReaderPool {
    /// A pool holding `first` (opened by the caller, so a store that cannot be read fails when
    /// it is opened, not at its first query), that opens more with `open`.
    pub(crate) fn new(
        first: Connection,
        open: impl Fn() -> Result<Connection> + Send + Sync + 'static,
    ) -> Self {
        Self {
            open: Box::new(open),
            state: Mutex::new(PoolState {
                idle: vec![first],
                opened: 1,
            }),
            returned: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, PoolState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An idle connection, a new one when none is idle and fewer than [`MAX_READERS`] are
    /// open, or the next one returned. A connection that fails to open is not an error here
    /// (at least one is open): the read waits for one of those instead.
    pub(crate) fn get(&self) -> Reader<'_> {
        let mut state = self.state();
        let mut waiting_since: Option<std::time::Instant> = None;
        loop {
            if let Some(conn) = state.idle.pop() {
                if let Some(since) = waiting_since {
                    log_long_wait(since);
                }
                return Reader {
                    pool: self,
                    conn: Some(conn),
                };
            }
            if state.opened < MAX_READERS {
                state.opened += 1;
                drop(state);
                match (self.open)() {
                    Ok(conn) => {
                        return Reader {
                            pool: self,
                            conn: Some(conn),
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "could not open another read connection; waiting for one");
                        state = self.state();
                        state.opened -= 1;
                        if state.idle.is_empty() {
                            state = self
                                .returned
                                .wait(state)
                                .unwrap_or_else(|poisoned| poisoned.into_inner());
                        }
                        continue;
                    }
                }
            }
            waiting_since.get_or_insert_with(std::time::Instant::now);
            state = self
                .returned
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Runs `ready` on every connection the pool may hold: the idle ones and new ones up to
    /// [`MAX_READERS`], all taken first (so each call gets a connection of its own) and each
    /// given back as soon as it is ready (a connection busy with a read is left alone; it has
    /// been used). The new ones are opened outside the pool's lock, their places kept, as
    /// [`Self::get`] does. Stops at the first error.
    pub(crate) fn ready_each(&self, ready: impl Fn(&Connection) -> Result<()>) -> Result<()> {
        let (idle, to_open) = {
            let mut state = self.state();
            let to_open = MAX_READERS.saturating_sub(state.opened);
            state.opened += to_open;
            (std::mem::take(&mut state.idle), to_open)
        };
        let reader = |conn| Reader {
            pool: self,
            conn: Some(conn),
        };
        let mut taken: Vec<Reader<'_>> = idle.into_iter().map(reader).collect();
        for opening in 0..to_open {
            match (self.open)() {
                Ok(conn) => taken.push(reader(conn)),
                Err(error) => {
                    // This place and those not tried yet are free again for a read to open.
                    self.state().opened -= to_open - opening;
                    self.returned.notify_all();
                    return Err(error);
                }
            }
        }
        taken.into_iter().try_for_each(|reader| ready(&reader))
    }

    #[cfg(test)]
    fn opened(&self) -> usize {
        self.state().opened
    }
}

/// A read connection taken from its pool; it goes back when dropped.
pub(crate) struct Reader<'a> {
    pool: &'a ReaderPool,
    conn: Option<Connection>,
}

impl std::ops::Deref for Reader<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        // Only `Drop` takes it.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.state().idle.push(conn);
            self.pool.returned.notify_one();
        }
    }
}

/// Logs a read's wait for a connection when it took longer than [`LOGGED_POOL_WAIT`]: every
/// connection was busy with another read that long.
fn log_long_wait(since: std::time::Instant) {
    let waited = since.elapsed();
    if waited > LOGGED_POOL_WAIT {
        tracing::warn!(
            waited_ms = waited.as_millis() as u64,
            connections = MAX_READERS,
            "a capture store read waited for a read connection"
        );
    }
}

/// A wait for a read connection longer than this is logged.
const LOGGED_POOL_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    fn memory() -> Result<Connection> {
        Ok(Connection::open_in_memory()?)
    }

    #[test]
    fn one_connection_serves_reads_in_turn_and_overlapping_reads_open_more_up_to_the_limit() {
        let pool = Arc::new(ReaderPool::new(memory().expect("open"), memory));
        {
            let _a = pool.get();
        }
        {
            let _b = pool.get();
        }
        assert_eq!(pool.opened(), 1, "reads in turn share one connection");

        // MAX_READERS + 2 reads at once: MAX_READERS run together, the rest wait their turn.
        let overlapping = MAX_READERS + 2;
        let inside = Arc::new(AtomicUsize::new(0));
        let most_inside = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(overlapping));
        let threads: Vec<_> = (0..overlapping)
            .map(|_| {
                let (pool, inside, most_inside, start) = (
                    pool.clone(),
                    inside.clone(),
                    most_inside.clone(),
                    start.clone(),
                );
                std::thread::spawn(move || {
                    start.wait();
                    let conn = pool.get();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most_inside.fetch_max(now, Ordering::SeqCst);
                    let one: i64 = conn
                        .query_row("SELECT 1", [], |row| row.get(0))
                        .expect("query");
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    inside.fetch_sub(1, Ordering::SeqCst);
                    one
                })
            })
            .collect();
        for thread in threads {
            assert_eq!(thread.join().expect("thread"), 1);
        }
        assert_eq!(pool.opened(), MAX_READERS);
        assert_eq!(most_inside.load(Ordering::SeqCst), MAX_READERS);
    }

    #[test]
    fn readying_every_connection_opens_them_all_and_gives_them_back() {
        let pool = ReaderPool::new(memory().expect("open"), memory);
        let readied = AtomicUsize::new(0);
        pool.ready_each(|conn| {
            conn.execute_batch("SELECT 1")?;
            readied.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .expect("ready");
        assert_eq!(readied.load(Ordering::SeqCst), MAX_READERS);
        assert_eq!(pool.opened(), MAX_READERS);
        assert_eq!(pool.state().idle.len(), MAX_READERS, "every one back, idle");
        // Again: the same connections, none more.
        pool.ready_each(|_| Ok(())).expect("ready again");
        assert_eq!(pool.opened(), MAX_READERS);
    }

    #[test]
    fn readying_with_a_connection_that_fails_to_open_says_so_and_keeps_no_place_for_it() {
        let failing = || -> Result<Connection> {
            Err(crate::Error::InvalidInput("no more connections".into()))
        };
        let pool = ReaderPool::new(memory().expect("open"), failing);
        assert!(pool.ready_each(|_| Ok(())).is_err());
        assert_eq!(pool.opened(), 1, "only the connection that opened counts");
        assert_eq!(pool.state().idle.len(), 1, "and it is back, idle");
        let conn = pool.get();
        assert_eq!(
            conn.query_row("SELECT 3", [], |row| row.get::<_, i64>(0))
                .expect("query"),
            3
        );
    }

    #[test]
    fn a_connection_that_fails_to_open_makes_the_read_wait_for_one_that_is_open() {
        let failing = || -> Result<Connection> {
            Err(crate::Error::InvalidInput("no more connections".into()))
        };
        let pool = Arc::new(ReaderPool::new(memory().expect("open"), failing));
        let held = pool.get();
        let waiting = {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let conn = pool.get();
                conn.query_row("SELECT 2", [], |row| row.get::<_, i64>(0))
                    .expect("query")
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(held);
        assert_eq!(waiting.join().expect("thread"), 2);
        assert_eq!(pool.opened(), 1);
    }
}

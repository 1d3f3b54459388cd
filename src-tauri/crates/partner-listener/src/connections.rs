//! The listener's open connections, so that at its connection cap it can close an idle one
//! rather than make a new client wait.
//!
//! Why: the cap ([`crate::ListenerConfig::max_connections`]) keeps a flood of clients from
//! exhausting file descriptors, but HTTP/1.1 senders keep their connections open between
//! requests. A sender that opens more connections than the cap (a pool growing during a burst,
//! a second sender beside a first) would otherwise find every slot held by connections that are
//! merely waiting for a next request, and wait until one of them reached the header-read
//! timeout: 10 s by default. So when a connection arrives and no slot is free, the one idle the
//! longest is asked to close, as nginx does with its keep-alive connections. A connection asked
//! to close finishes the request it may be handling (hyper's graceful shutdown); only a
//! connection with no request in hand is chosen.
//!
//! And only one idle for a while ([`MIN_IDLE_TO_CLOSE`]): a connection between two requests of
//! a busy sender is idle too, for the moment between an answer and the next request, and
//! closing it then races that request, which the sender sees fail ("connection closed before
//! message completed"; 1-2% of requests at 512 senders in the `ack` bench when any idle
//! connection could be chosen). A connection idle for a quarter of a second is one its client's
//! pool is not using: hyper's pool (reqwest's) hands out the connection used last.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long a connection must have been idle before it is closed to make room.
pub(crate) const MIN_IDLE_TO_CLOSE: Duration = Duration::from_millis(250);
/// How often a client waiting for a slot looks again for a connection idle long enough.
pub(crate) const LOOK_FOR_IDLE_EVERY: Duration = Duration::from_millis(50);

/// Every connection being served, by a number of its own.
#[derive(Debug)]
pub(crate) struct Connections {
    started: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Connection>>>,
}

/// What the serving loop knows of one connection.
#[derive(Debug)]
pub(crate) struct Connection {
    /// Requests handled on it right now.
    in_flight: AtomicUsize,
    /// Microseconds from [`Connections::started`] to when it last became idle (or opened).
    idle_since_micros: AtomicU64,
    /// Asked to close already (so two new clients do not both count on it).
    closing: AtomicBool,
    close: Notify,
}

impl Connection {
    /// Marks a request as being handled until the guard is dropped.
    pub(crate) fn busy(self: &Arc<Self>, connections: &Connections) -> Busy {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy {
            connection: self.clone(),
            started: connections.started,
        }
    }

    /// Completes once the connection is asked to close (by the cap or by shutdown).
    pub(crate) async fn close_requested(&self) {
        self.close.notified().await;
    }

    fn ask_to_close(&self) {
        self.closing.store(true, Ordering::Release);
        // `notify_one` keeps the wake-up if the connection is not waiting yet.
        self.close.notify_one();
    }
}

/// A request in hand on a connection.
#[derive(Debug)]
pub(crate) struct Busy {
    connection: Arc<Connection>,
    started: Instant,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.connection
            .idle_since_micros
            .store(micros_since(self.started), Ordering::Release);
        self.connection.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

fn micros_since(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

impl Connections {
    pub(crate) fn new() -> Self {
        Self {
            started: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::default(),
        }
    }

    /// Registers a new connection; `forget` it when it ends.
    pub(crate) fn open(&self) -> (u64, Arc<Connection>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            in_flight: AtomicUsize::new(0),
            idle_since_micros: AtomicU64::new(micros_since(self.started)),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        lock(&self.open).insert(id, connection.clone());
        (id, connection)
    }

    pub(crate) fn forget(&self, id: u64) {
        lock(&self.open).remove(&id);
    }

    /// Asks the connection idle the longest to close, if it has been idle for `min_idle`;
    /// false when none has (every connection is handling a request, was busy a moment ago, or
    /// is closing already).
    pub(crate) fn close_longest_idle(&self, min_idle: Duration) -> bool {
        let min_idle = u64::try_from(min_idle.as_micros()).unwrap_or(u64::MAX);
        let idle_before = micros_since(self.started).saturating_sub(min_idle);
        let open = lock(&self.open);
        let longest_idle = open
            .values()
            .filter(|c| {
                c.in_flight.load(Ordering::Acquire) == 0 && !c.closing.load(Ordering::Acquire)
            })
            .min_by_key(|c| c.idle_since_micros.load(Ordering::Acquire))
            .filter(|c| c.idle_since_micros.load(Ordering::Acquire) <= idle_before);
        match longest_idle {
            Some(connection) => {
                connection.ask_to_close();
                true
            }
            None => false,
        }
    }

    /// Asks every connection to close (the listener is shutting down).
    pub(crate) fn close_all(&self) {
        for connection in lock(&self.open).values() {
            connection.ask_to_close();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_idle_longest_is_chosen_and_never_a_busy_one() {
        let connections = Connections::new();
        let (_, first) = connections.open();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (_, second) = connections.open();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (_, third) = connections.open();

        // The first is handling a request; of the idle two, the second has waited longest.
        let request = first.busy(&connections);
        assert!(connections.close_longest_idle(Duration::ZERO));
        assert!(second.closing.load(Ordering::Acquire));
        assert!(!first.closing.load(Ordering::Acquire));

        // The third is next; after it, only the busy one is left.
        assert!(connections.close_longest_idle(Duration::ZERO));
        assert!(third.closing.load(Ordering::Acquire));
        assert!(!connections.close_longest_idle(Duration::ZERO));

        // Once its request is done, the first may go too.
        drop(request);
        assert!(connections.close_longest_idle(Duration::ZERO));
        assert!(first.closing.load(Ordering::Acquire));
    }

    #[test]
    fn a_connection_that_finished_a_request_counts_as_idle_from_then() {
        let connections = Connections::new();
        let (_, early) = connections.open();
        let (_, late) = connections.open();
        // The one opened first just finished a request, so the other has been idle longer.
        std::thread::sleep(std::time::Duration::from_millis(2));
        drop(early.busy(&connections));
        assert!(connections.close_longest_idle(Duration::ZERO));
        assert!(late.closing.load(Ordering::Acquire));
        assert!(!early.closing.load(Ordering::Acquire));
    }

    #[test]
    fn a_connection_idle_for_less_than_the_minimum_is_left_open() {
        let connections = Connections::new();
        let (_, connection) = connections.open();
        assert!(!connections.close_longest_idle(Duration::from_secs(60)));
        assert!(!connection.closing.load(Ordering::Acquire));
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(connections.close_longest_idle(Duration::from_millis(5)));
        assert!(connection.closing.load(Ordering::Acquire));
    }

    #[test]
    fn forgotten_connections_are_not_chosen() {
        let connections = Connections::new();
        let (id, connection) = connections.open();
        connections.forget(id);
        assert!(!connections.close_longest_idle(Duration::ZERO));
        assert!(!connection.closing.load(Ordering::Acquire));
    }
}

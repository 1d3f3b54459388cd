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
//!
//! Connections that hold a slot without sending (issue #46: a scanner's slow-loris) are closed
//! the same way, and at once rather than gracefully, so a real delivery arriving at the cap gets
//! a slot within moments instead of after their timeouts (10 s for a head, 30 s for a body,
//! while a thousand of them queue ahead of it):
//! - one that has not sent a whole request head for [`MIN_IDLE_TO_CLOSE`] has no request in
//!   hand (hyper hands one over only with its head), so it is chosen like any idle one; and,
//!   having none, it is dropped, not shut down gracefully: hyper's graceful shutdown of a
//!   connection part-way through a head waits for the rest of it;
//! - one whose request's body has not moved for [`STALLED_BODY_TO_CLOSE`] is chosen too: its
//!   body read is abandoned ([`Connection::body_abandoned`]), the request is answered 408 and
//!   kept as `incomplete`, and the connection closed. A real sender's body arrives in
//!   milliseconds; the service's timeout is 30 s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long a connection must have been idle before it is closed to make room.
pub(crate) const MIN_IDLE_TO_CLOSE: Duration = Duration::from_millis(250);
/// How long a request's body must have sent nothing before its connection is closed to make
/// room.
pub(crate) const STALLED_BODY_TO_CLOSE: Duration = Duration::from_secs(1);
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
    /// Microseconds from [`Connections::started`] to when the body being read last sent
    /// something (or began), plus one; 0 while no body is being read.
    body_moved_micros: AtomicU64,
    /// Asked to close already (so two new clients do not both count on it).
    closing: AtomicBool,
    close: Notify,
    /// Told when the connection is chosen for a stalled body (see the module's notes).
    abandon_body: Notify,
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

    /// Whether the connection has no request in hand and has had none for `min_idle`: closing
    /// it then drops nothing (an answer was written long ago, no head is complete).
    pub(crate) fn idle_for(&self, connections: &Connections, min_idle: Duration) -> bool {
        let min_idle = u64::try_from(min_idle.as_micros()).unwrap_or(u64::MAX);
        self.in_flight.load(Ordering::Acquire) == 0
            && self.idle_since_micros.load(Ordering::Acquire)
                <= micros_since(connections.started).saturating_sub(min_idle)
    }

    /// A body is being read, or sent more (`true`), or is done (`false`).
    pub(crate) fn body_moved(&self, connections: &Connections, reading: bool) {
        let at = if reading {
            micros_since(connections.started).saturating_add(1)
        } else {
            0
        };
        self.body_moved_micros.store(at, Ordering::Release);
    }

    /// Completes once the body being read is to be given up (its connection was chosen to make
    /// room, see the module's notes).
    pub(crate) async fn body_abandoned(&self) {
        self.abandon_body.notified().await;
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
            body_moved_micros: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
            abandon_body: Notify::new(),
        });
        lock(&self.open).insert(id, connection.clone());
        (id, connection)
    }

    pub(crate) fn forget(&self, id: u64) {
        lock(&self.open).remove(&id);
    }

    /// Asks the connection that has sent nothing for the longest to close: one with no
    /// request in hand idle for `min_idle`, or one whose request's body has not moved for
    /// [`STALLED_BODY_TO_CLOSE`] (its body read is given up); false when there is none (every
    /// connection is handling a request that moves, was busy a moment ago, or is closing
    /// already).
    pub(crate) fn close_longest_idle(&self, min_idle: Duration) -> bool {
        let now = micros_since(self.started);
        let idle_before = now.saturating_sub(u64::try_from(min_idle.as_micros()).unwrap_or(0));
        let stalled_before = now
            .saturating_sub(u64::try_from(STALLED_BODY_TO_CLOSE.as_micros()).unwrap_or(0))
            .saturating_add(1);
        let open = lock(&self.open);
        let quiet_longest = open
            .values()
            .filter(|c| !c.closing.load(Ordering::Acquire))
            .filter_map(|c| {
                if c.in_flight.load(Ordering::Acquire) == 0 {
                    let since = c.idle_since_micros.load(Ordering::Acquire);
                    (since <= idle_before).then_some((since, c, false))
                } else {
                    let moved = c.body_moved_micros.load(Ordering::Acquire);
                    (moved != 0 && moved <= stalled_before).then_some((moved, c, true))
                }
            })
            .min_by_key(|(since, _, _)| *since);
        match quiet_longest {
            Some((_, connection, stalled)) => {
                // Only a stalled body is given up: told to an idle connection, the wake-up
                // would be kept and end the body of a request that raced the close.
                if stalled {
                    connection.abandon_body.notify_one();
                }
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
    fn a_request_whose_body_stalled_is_chosen_and_one_whose_body_moves_is_not() {
        let connections = Connections::new();
        let (_, stalled) = connections.open();
        let (_, moving) = connections.open();
        let _in_hand = (stalled.busy(&connections), moving.busy(&connections));
        stalled.body_moved(&connections, true);
        moving.body_moved(&connections, true);
        assert!(!connections.close_longest_idle(Duration::ZERO));
        std::thread::sleep(STALLED_BODY_TO_CLOSE + Duration::from_millis(20));
        moving.body_moved(&connections, true);
        assert!(connections.close_longest_idle(Duration::ZERO));
        assert!(stalled.closing.load(Ordering::Acquire));
        assert!(!moving.closing.load(Ordering::Acquire));
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

//! The time the token manager reads, injectable so tests can move it with the sandbox's clock.
//!
//! Token deadlines are 15 and 120 minutes away; nobody waits that long in a test. The sandbox's
//! clock can be advanced over HTTP, and a [`ManualClock`] advanced by the same amount keeps the
//! client's view of "now" in step, so "replaced before the deadline" is tested against the
//! server's real expiry rather than a client-side simulation.

use chrono::{DateTime, TimeDelta, Utc};
use std::fmt::Debug;
use std::sync::Mutex;
use std::time::Duration;

pub trait Clock: Send + Sync + Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Real time plus an offset that [`ManualClock::advance`] grows (as the sandbox's clock does).
#[derive(Debug, Default)]
pub struct ManualClock {
    offset: Mutex<TimeDelta>,
}

impl ManualClock {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn advance(&self, by: Duration) {
        let by = TimeDelta::from_std(by).unwrap_or(TimeDelta::MAX);
        let mut offset = self.offset.lock().unwrap_or_else(|p| p.into_inner());
        *offset = offset.checked_add(&by).unwrap_or(TimeDelta::MAX);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        let offset = *self.offset.lock().unwrap_or_else(|p| p.into_inner());
        Utc::now()
            .checked_add_signed(offset)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_forward() {
        let clock = ManualClock::new();
        let before = clock.now();
        clock.advance(Duration::from_secs(600));
        let moved = clock.now() - before;
        assert!(moved >= TimeDelta::seconds(600) && moved < TimeDelta::seconds(605));
    }
}

//! The sandbox's clock: real time plus an offset that `POST /sandbox/v1/clock/advance` grows.
//!
//! Token expiry is 15 and 120 minutes, and delivery retries wait 20 seconds; a demo or a test
//! cannot wait that long. Everything in the sandbox that depends on time reads this clock, and
//! everything that waits sleeps on it with [`Clock::sleep_until`], which wakes early when the
//! clock is advanced past the deadline. So advancing the clock expires tokens and fires due
//! retries at once, exactly as if the time had passed.

use chrono::{DateTime, TimeDelta, Utc};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

#[derive(Debug, Clone)]
pub struct Clock {
    /// How far the sandbox is ahead of real time, in milliseconds; watched by sleepers.
    offset_ms: Arc<watch::Sender<i64>>,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock at real time.
    pub fn new() -> Self {
        Self {
            offset_ms: Arc::new(watch::Sender::new(0)),
        }
    }

    /// A clock running `offset_ms` ahead of real time (the offset a data file kept).
    pub(crate) fn with_offset_ms(offset_ms: i64) -> Self {
        Self {
            offset_ms: Arc::new(watch::Sender::new(offset_ms.max(0))),
        }
    }

    /// How far ahead of real time the clock runs, in milliseconds (what a data file keeps).
    pub(crate) fn offset_ms(&self) -> i64 {
        *self.offset_ms.borrow()
    }

    /// The sandbox's now, to the millisecond (the precision of every timestamp it writes).
    pub fn now(&self) -> DateTime<Utc> {
        let now = Utc::now() + TimeDelta::milliseconds(*self.offset_ms.borrow());
        let millis = now.timestamp_millis();
        DateTime::from_timestamp_millis(millis).unwrap_or(now)
    }

    /// How far ahead of real time the clock runs.
    pub fn offset(&self) -> Duration {
        Duration::from_millis((*self.offset_ms.borrow()).max(0) as u64)
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has now passed.
    pub fn advance(&self, by: Duration) {
        let by_ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.offset_ms
            .send_modify(|offset| *offset = offset.saturating_add(by_ms));
    }

    /// Waits until the sandbox's clock reaches `deadline`, by real time passing or by
    /// [`Clock::advance`], whichever comes first.
    pub async fn sleep_until(&self, deadline: DateTime<Utc>) {
        let mut advanced = self.offset_ms.subscribe();
        loop {
            let left = deadline - self.now();
            let Ok(left) = left.to_std() else {
                return; // already past
            };
            if left.is_zero() {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
                changed = advanced.changed() => {
                    if changed.is_err() {
                        // The clock is gone; fall back to real time.
                        tokio::time::sleep(left).await;
                        return;
                    }
                }
            }
        }
    }

    /// Waits for `duration` of sandbox time.
    pub async fn sleep(&self, duration: Duration) {
        let deadline = self.now() + TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX);
        self.sleep_until(deadline).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_moves_now() {
        let clock = Clock::new();
        let before = clock.now();
        clock.advance(Duration::from_secs(900));
        let after = clock.now();
        assert!(after - before >= TimeDelta::seconds(900));
        assert!(after - before < TimeDelta::seconds(905));
        assert_eq!(clock.offset(), Duration::from_secs(900));
    }

    #[tokio::test]
    async fn advancing_wakes_a_sleeper_early() {
        let clock = Clock::new();
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep(Duration::from_secs(3600)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(3600));
        tokio::time::timeout(Duration::from_secs(2), sleeper)
            .await
            .expect("the sleeper woke when the clock passed its deadline")
            .unwrap();
    }

    #[tokio::test]
    async fn a_small_advance_does_not_wake_a_long_sleep() {
        let clock = Clock::new();
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep(Duration::from_secs(3600)).await }
        });
        clock.advance(Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!sleeper.is_finished());
        sleeper.abort();
    }
}

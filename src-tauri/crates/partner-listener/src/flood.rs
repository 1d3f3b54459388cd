//! A flood of junk is counted rather than stored in full: past a rate the user sets
//! ([`crate::ListenerConfig::junk_rate`]), junk requests ([`RetentionClass::Junk`]) are still
//! answered as always, but only one in [`SAMPLE_EVERY`] is stored (the sample the inspector can
//! open); the rest are counted ([`FloodSummary`]), shown by the inspector and by `partner
//! listen`.
//!
//! Why: a public tunnel URL is scanned within minutes, and a scanner sends thousands of
//! requests a minute. Each stored in full costs the disk its body and the tables thread its row,
//! indexes and search entries, and pushes the junk share of the store through its oldest junk
//! ([`crate::classes`]) so fast that the junk a user would look at is gone before they look.
//! Below the rate every request is stored, so a developer's own mistakes (a wrong path, a bad
//! signature while they try things) are all there to read.
//!
//! The rate is a token bucket (`rate` a second, a burst of as many), checked on the request's
//! task before the store is asked: a summarised request never reaches the writer. It can be
//! changed while the listener runs ([`crate::Listener::set_junk_rate`]: the app's retention
//! settings), without a restart that would drop connections a delivery may be on.

use crate::classes::RetentionClass;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The default rate past which junk is summarised: more than a person's experiments make,
/// far less than a scanner sends.
pub const DEFAULT_JUNK_RATE: u32 = 20;
/// Past the rate, one junk request in this many is still stored, as a sample.
pub const SAMPLE_EVERY: u64 = 100;

/// What became of the junk past the rate since the listener started.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FloodSummary {
    /// Junk requests answered but not stored (counted only).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub summarised: u64,
    /// Junk requests past the rate stored all the same, as the sample.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub sampled: u64,
    /// Junk stored in full per second before the summary starts; `None`: no summary.
    pub junk_rate: Option<u32>,
}

/// Whether a request is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Store,
    /// Answered, counted, not stored.
    Summarise,
}

/// The listener's junk meter (see the module's notes).
#[derive(Debug)]
pub struct JunkFlood {
    /// Requests a second; 0: no summary.
    rate: AtomicU32,
    bucket: Mutex<Bucket>,
    summarised: AtomicU64,
    sampled: AtomicU64,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl JunkFlood {
    pub fn new(rate: Option<u32>) -> Self {
        let rate = rate.unwrap_or(0);
        Self {
            rate: AtomicU32::new(rate),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(rate),
                refilled: Instant::now(),
            }),
            summarised: AtomicU64::new(0),
            sampled: AtomicU64::new(0),
        }
    }

    fn rate(&self) -> Option<u32> {
        Some(self.rate.load(Ordering::Relaxed)).filter(|rate| *rate > 0)
    }

    /// Changes the rate from now on (`None` or 0: every request stored); the bucket starts full.
    pub fn set_rate(&self, rate: Option<u32>) {
        let rate = rate.unwrap_or(0);
        let mut bucket = self
            .bucket
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.rate.store(rate, Ordering::Relaxed);
        bucket.tokens = f64::from(rate);
        bucket.refilled = Instant::now();
    }

    /// Whether a request judged `verdict` is stored: always, unless it is junk past the rate
    /// and not the sample's turn.
    pub fn fate(&self, verdict: Verdict) -> Fate {
        let Some(rate) = self.rate() else {
            return Fate::Store;
        };
        if verdict.retention_class() != RetentionClass::Junk {
            return Fate::Store;
        }
        {
            let mut bucket = self
                .bucket
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let now = Instant::now();
            let elapsed = now.duration_since(bucket.refilled).as_secs_f64();
            bucket.refilled = now;
            bucket.tokens = (bucket.tokens + elapsed * f64::from(rate)).min(f64::from(rate));
            if bucket.tokens >= 1.0 {
                bucket.tokens -= 1.0;
                return Fate::Store;
            }
        }
        let past = self.summarised.load(Ordering::Relaxed) + self.sampled.load(Ordering::Relaxed);
        if past.is_multiple_of(SAMPLE_EVERY) {
            self.sampled.fetch_add(1, Ordering::Relaxed);
            Fate::Store
        } else {
            self.summarised.fetch_add(1, Ordering::Relaxed);
            Fate::Summarise
        }
    }

    pub fn summary(&self) -> FloodSummary {
        FloodSummary {
            summarised: self.summarised.load(Ordering::Relaxed),
            sampled: self.sampled.load(Ordering::Relaxed),
            junk_rate: self.rate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_rate_junk_is_counted_with_one_in_a_hundred_kept_and_the_rest_always_stored() {
        let flood = JunkFlood::new(Some(10));
        let stored = (0..1010)
            .filter(|_| flood.fate(Verdict::WrongPath) == Fate::Store)
            .count();
        // The burst of ten, then one in a hundred of the thousand past it (a few more tokens
        // may have come back while the loop ran).
        assert!((20..=25).contains(&stored), "{stored}");
        let summary = flood.summary();
        assert!((9..=10).contains(&summary.sampled), "{summary:?}");
        assert_eq!(summary.summarised + stored as u64, 1010);
        for verdict in [Verdict::Valid, Verdict::UnknownSubscription] {
            assert_eq!(flood.fate(verdict), Fate::Store);
        }
        let off = JunkFlood::new(None);
        assert!((0..1000).all(|_| off.fate(Verdict::WrongPath) == Fate::Store));
    }

    #[test]
    fn a_rate_changed_while_running_applies_to_the_next_request() {
        let flood = JunkFlood::new(None);
        flood.set_rate(Some(5));
        assert_eq!(flood.summary().junk_rate, Some(5));
        let stored = (0..500)
            .filter(|_| flood.fate(Verdict::InvalidSignature) == Fate::Store)
            .count();
        assert!((5..=12).contains(&stored), "{stored}");
        flood.set_rate(None);
        assert_eq!(flood.summary().junk_rate, None);
        assert!((0..100).all(|_| flood.fate(Verdict::InvalidSignature) == Fate::Store));
    }
}

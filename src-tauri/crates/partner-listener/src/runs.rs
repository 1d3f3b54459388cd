//! When the listener was listening: one row per run in the store (`listener_runs`), written when
//! a [`crate::Listener`] starts serving and when it stops cleanly, so the console can say when
//! the listener was last down, and look for the notifications the service gave up on meanwhile
//! (`partner_local::missed`).
//!
//! Why in the store and not in the settings: the store is what the listener writes while it
//! runs, under its one-writer lock, beside the captures the times are compared with; the app and
//! `partner listen` share it, so either one's runs count.
//!
//! A run without a stop ended uncleanly (a crash, `kill -9`, the machine sleeping or losing
//! power) unless it is the run listening now. Its down time is then the last thing known to
//! have happened in it: its last capture, else its start.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One run of a listener on a store.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerRun {
    pub id: i64,
    pub started_at: DateTime<Utc>,
    /// When it stopped cleanly; `None` while it runs, or when it never stopped cleanly.
    pub stopped_at: Option<DateTime<Utc>>,
    /// The last capture received during the run (before the next run started).
    pub last_capture_at: Option<DateTime<Utc>>,
}

impl ListenerRun {
    /// When this run stopped listening, known or inferred: its clean stop, else its last
    /// capture, else its start.
    pub fn down_at(&self) -> DateTime<Utc> {
        self.stopped_at
            .or(self.last_capture_at)
            .unwrap_or(self.started_at)
    }
}

/// The last time the listener went down, from its `runs` (any order). With `listening_now`,
/// the newest run is the one listening and has not gone down: the run before it counts. `None`
/// when no run has ended.
pub fn last_down_time(runs: &[ListenerRun], listening_now: bool) -> Option<DateTime<Utc>> {
    let mut newest_first: Vec<&ListenerRun> = runs.iter().collect();
    newest_first.sort_by_key(|run| std::cmp::Reverse((run.started_at, run.id)));
    let skip = usize::from(listening_now);
    newest_first.get(skip).map(|run| run.down_at())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: u32) -> DateTime<Utc> {
        format!("2024-05-01T10:{minute:02}:00Z").parse().unwrap()
    }

    fn run(id: i64, start: u32, stop: Option<u32>, last: Option<u32>) -> ListenerRun {
        ListenerRun {
            id,
            started_at: at(start),
            stopped_at: stop.map(at),
            last_capture_at: last.map(at),
        }
    }

    #[test]
    fn a_clean_stop_is_the_down_time() {
        let runs = [run(1, 0, Some(10), Some(9)), run(2, 20, None, Some(25))];
        assert_eq!(last_down_time(&runs, true), Some(at(10)));
        // Not listening now: run 2 ended without a stop, at its last capture.
        assert_eq!(last_down_time(&runs, false), Some(at(25)));
    }

    #[test]
    fn an_unclean_stop_is_its_last_capture_else_its_start() {
        let runs = [
            run(1, 0, None, Some(7)),
            run(2, 20, None, None),
            run(3, 30, None, None),
        ];
        assert_eq!(last_down_time(&runs, true), Some(at(20)));
        assert_eq!(last_down_time(&runs[..1], false), Some(at(7)));
        assert_eq!(last_down_time(&runs[..1], true), None);
        assert_eq!(last_down_time(&[], false), None);
    }
}

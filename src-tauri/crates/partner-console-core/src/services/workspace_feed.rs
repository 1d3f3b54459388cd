//! The workspace's live feed to the window: while the app has joined a team workspace, the
//! captures any of its servers commits reach the inspector as the local listener's do, as the
//! same `captures` event ([`AppEvent::Captures`], batched per [`BATCH_WINDOW`] as the local feed
//! is), so the inspector updates as it does locally.
//!
//! Why one task that watches the session instead of a start at join and a stop at leave: the
//! session changes in several places (a join, a leave, a token the workspace stops knowing, a
//! workspace that answers only later than the start), and one loop that looks at it every
//! [`WATCH`] follows all of them: it opens the feed when a workspace is joined, closes it when
//! none is (or another one is), and opens it again from the last capture it read, with a
//! backoff, when the connection drops. A feed that was down therefore misses nothing of the
//! workspace it follows: the server sends what came after that id first.
use crate::bridge::{CaptureBatch, CaptureSummary};
use crate::console::{AppEvent, Console};
use crate::events::{summary, BATCH_MAX, BATCH_WINDOW};
use crate::services::workspace;
use std::time::Duration;
use tokio::time::Instant;

/// How often the task looks whether the app is still joined to the same workspace.
pub const WATCH: Duration = Duration::from_secs(1);
/// The first wait before a dropped feed is opened again; doubled at each failure in a row.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two tries.
pub const MOST_BACKOFF: Duration = Duration::from_secs(30);

/// Starts following the workspace's feed for as long as the app runs.
pub fn follow(console: &Console) {
    console.spawn(run(console.clone()));
}

/// The workspace a feed is of: its URL and the member (a different one is a different feed).
fn identity(joined: &workspace::Joined) -> (String, String) {
    (joined.describe(), joined.member.name.clone())
}

async fn run(console: Console) {
    let stop = console.state().shutdown.clone();
    let mut backoff = Backoff::default();
    // The last capture read, and of which workspace: a feed opened again goes on from it.
    let mut last: Option<((String, String), i64)> = None;
    loop {
        let Some(joined) = workspace::joined(console.state()) else {
            if stopped_within(&stop, WATCH).await {
                return;
            }
            continue;
        };
        let who = identity(&joined);
        let after = last
            .as_ref()
            .filter(|(of, _)| *of == who)
            .map(|(_, id)| *id);
        let opened = tokio::select! {
            opened = joined.client.captures_live(after) => opened,
            () = stop.cancelled() => return,
        };
        let ended = match opened {
            Ok(feed) => {
                let outcome = read(&console, feed, &who, &mut last, &mut backoff).await;
                if matches!(outcome, Outcome::Stopped) {
                    return;
                }
                outcome
            }
            Err(error) => {
                let why = error.to_string();
                // The session learns of it: a token the workspace no longer knows ends the
                // session (and so this feed), rather than being tried again and again.
                let _ = workspace::answered::<()>(console.state(), Err(error));
                Outcome::Failed(why)
            }
        };
        match ended {
            Outcome::Left => continue,
            Outcome::Failed(why) => {
                tracing::info!(%why, "the workspace's live feed is down; trying again");
            }
            Outcome::Ended => tracing::info!("the workspace ended its live feed; trying again"),
            Outcome::Stopped => return,
        }
        if stopped_within(&stop, backoff.next()).await {
            return;
        }
    }
}

/// Waits `wait`; true when the app began closing meanwhile.
async fn stopped_within(stop: &tokio_util::sync::CancellationToken, wait: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(wait) => false,
        () = stop.cancelled() => true,
    }
}

/// Why a feed stopped being read.
enum Outcome {
    /// The app left the workspace (or joined another).
    Left,
    /// The server ended the feed (it stopped).
    Ended,
    /// The connection broke or went silent, or could not be opened.
    Failed(String),
    /// The app is closing.
    Stopped,
}

/// Reads `feed`, sending its captures to the window in batches, until it ends or the app
/// leaves the workspace.
async fn read(
    console: &Console,
    mut feed: partner_workspace::LiveFeed,
    who: &(String, String),
    last: &mut Option<((String, String), i64)>,
    backoff: &mut Backoff,
) -> Outcome {
    let stop = console.state().shutdown.clone();
    let mut batch: Vec<CaptureSummary> = Vec::new();
    let mut due: Option<Instant> = None;
    let mut watch = tokio::time::interval(WATCH);
    watch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let outcome = loop {
        let flush_at = due.unwrap_or_else(|| Instant::now() + WATCH);
        tokio::select! {
            next = feed.next() => match next {
                Ok(Some(capture)) => {
                    backoff.reset();
                    *last = Some((who.clone(), capture.id));
                    batch.push(summary(&capture));
                    due.get_or_insert_with(|| Instant::now() + BATCH_WINDOW);
                    if batch.len() >= BATCH_MAX {
                        send(console, std::mem::take(&mut batch));
                        due = None;
                    }
                }
                Ok(None) => break Outcome::Ended,
                Err(error) => break Outcome::Failed(error.to_string()),
            },
            () = tokio::time::sleep_until(flush_at), if due.is_some() => {
                send(console, std::mem::take(&mut batch));
                due = None;
            }
            _ = watch.tick() => {
                let still = workspace::joined(console.state()).map(|joined| identity(&joined));
                if still.as_ref() != Some(who) {
                    // Left: what was read of it no longer belongs on the screen.
                    batch.clear();
                    break Outcome::Left;
                }
            }
            () = stop.cancelled() => break Outcome::Stopped,
        }
    };
    if !batch.is_empty() {
        send(console, batch);
    }
    outcome
}

/// One event of captures to the window, as the local listener's feed sends it (with the same
/// desktop notices for failed verifications).
fn send(console: &Console, captures: Vec<CaptureSummary>) {
    if captures.is_empty() {
        return;
    }
    crate::notices::captures_arrived(console, &captures);
    console.emit(AppEvent::Captures(CaptureBatch {
        captures,
        missed: 0,
    }));
}

/// The waits between tries to open a dropped feed: [`FIRST_BACKOFF`], doubled up to
/// [`MOST_BACKOFF`]; back to the first once a capture arrives.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    fn next(&mut self) -> Duration {
        let wait = FIRST_BACKOFF
            .saturating_mul(1 << self.failures.min(10))
            .min(MOST_BACKOFF);
        self.failures = self.failures.saturating_add(1);
        wait
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_to_its_most_and_starts_over_after_a_capture() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..7).map(|_| backoff.next().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        backoff.reset();
        assert_eq!(backoff.next(), FIRST_BACKOFF);
    }
}

//! Live captures to the window: the listener's committed captures, coalesced by its
//! `Coalescer` (one event per 100 ms window at most) before they reach the sink, so a burst of
//! notifications is a few events, not thousands. Every feed stops with its own stop signal (a
//! child of the app's shutdown).

use crate::bridge::{CaptureBatch, CaptureSummary};
use crate::console::{AppEvent, Console};
use partner_listener::{Capture, Coalescer, Listener, LiveEvent};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the coalescer gathers captures before one event goes out.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);
/// Most captures in one event.
pub const BATCH_MAX: usize = 2000;

pub fn summary(c: &Capture) -> CaptureSummary {
    CaptureSummary {
        id: c.id,
        received_at: c.received_at.to_rfc3339(),
        verdict: c.verdict,
        event_type: c.fields.event_type.clone().unwrap_or_default(),
        resource_type: c.fields.resource_type.clone().unwrap_or_default(),
        resource_id: c.fields.resource_id.clone().unwrap_or_default(),
        instance_id: c.fields.instance_id.clone().unwrap_or_default(),
        event_id: c.fields.event_id.clone().unwrap_or_default(),
        subscription_id: c.subscription_id.clone().unwrap_or_default(),
        attempts: c.attempt,
        replayed: c.replay,
        group_attempts: 1,
    }
}

/// Sends the listener's captures to the sink in batches, until `stop`.
pub fn spawn_capture_feed(console: &Console, listener: &Listener, stop: CancellationToken) {
    let feed = Coalescer::new(listener.subscribe(), BATCH_WINDOW, BATCH_MAX);
    console.spawn(forward_captures(console.clone(), feed, stop));
}

async fn forward_captures(console: Console, mut coalescer: Coalescer, stop: CancellationToken) {
    loop {
        let batch = tokio::select! {
            batch = coalescer.next_batch() => batch,
            () = stop.cancelled() => return,
        };
        let Some(batch) = batch else { return };
        let captures: Vec<CaptureSummary> = batch
            .events
            .iter()
            .filter_map(|event| match event {
                LiveEvent::Captured(capture) => Some(summary(capture)),
                LiveEvent::Outbound(_) => None,
            })
            .collect();
        crate::notices::captures_arrived(&console, &captures);
        if !captures.is_empty() || batch.missed > 0 {
            console.emit(AppEvent::Captures(CaptureBatch {
                captures,
                missed: batch.missed,
            }));
        }
    }
}

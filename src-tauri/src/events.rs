//! Live data to the UI as Tauri events: captures batched by the listener's `Coalescer` (one
//! event per 100 ms window at most), token state changes, status changes. This module only
//! sends; the services decide what to send. Every task here stops with the app's shutdown
//! signal (or its own child of it).

use crate::bridge::{CaptureBatch, CaptureSummary};
use crate::state::AppState;
use partner_listener::{Capture, Coalescer, Listener, LiveEvent};
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager};
use tokio_util::sync::CancellationToken;

pub const CAPTURES: &str = "captures";
pub const TOKEN: &str = "token";
pub const SEARCH_PROGRESS: &str = "search-progress";
pub const STATUS: &str = "status";
pub const MISSED_PROGRESS: &str = "missed-progress";
pub const JOB_PROGRESS: &str = "job-progress";

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

/// Sends the listener's captures to the UI in batches, until `stop`.
pub fn spawn_capture_feed(app: AppHandle, listener: &Listener, stop: CancellationToken) {
    let feed = Coalescer::new(listener.subscribe(), BATCH_WINDOW, BATCH_MAX);
    tauri::async_runtime::spawn(forward_captures(app, feed, stop));
}

async fn forward_captures(app: AppHandle, mut coalescer: Coalescer, stop: CancellationToken) {
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
        if !captures.is_empty() || batch.missed > 0 {
            let _ = app.emit(
                CAPTURES,
                CaptureBatch {
                    captures,
                    missed: batch.missed,
                },
            );
        }
    }
}

/// Makes a change of the status and tells the UI, under a new version (see
/// [`AppState::announce`]).
pub fn announce(app: &AppHandle, change: impl FnOnce(&mut crate::state::Inner)) {
    let state = app.state::<AppState>();
    emit_status(app, state.announce(change));
}

/// Tells the UI of a status already announced (by [`AppState::announce_locked`]).
pub fn emit_status(app: &AppHandle, status: crate::bridge::AppStatus) {
    let _ = app.emit(STATUS, status);
}

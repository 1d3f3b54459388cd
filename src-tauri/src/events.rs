//! Live data to the UI as Tauri events, batched: captures coalesced by the listener's
//! `Coalescer` (one event per 100 ms window at most), token state changes as they happen.
//! Every task here stops with the app's shutdown signal (or its own child of it).

use crate::bridge::{CaptureBatch, CaptureSummary};
use crate::commands::token::{history_entry, token_view};
use crate::error::Result;
use crate::state::{AppState, RunningListener};
use partner_client::PartnerClient;
use partner_listener::{Capture, Coalescer, Listener, ListenerConfig, LiveEvent, Retention, Store};
use std::sync::Arc;
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager};
use tokio_util::sync::CancellationToken;

pub const CAPTURES: &str = "captures";
pub const TOKEN: &str = "token";
pub const SEARCH_PROGRESS: &str = "search-progress";
pub const STATUS: &str = "status";

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
    }
}

/// Starts the listener on 127.0.0.1:`port` (0: any free port) with the app's capture store and
/// keys, and the task that forwards its captures to the UI in batches.
pub async fn start_listener(app: &AppHandle, port: u16) -> Result<RunningListener> {
    let state = app.state::<AppState>();
    std::fs::create_dir_all(&state.data_dir)
        .map_err(|e| crate::error::AppError::io("create the app's data folder", &e))?;
    let store = Store::open(
        state.data_dir.join("captures.db"),
        Retention {
            max_count: Some(200_000),
            max_age: None,
        },
    )?;
    let test_mode = crate::commands::webhooks::listener_test_mode(&state.lock().test_mode);
    let config = ListenerConfig {
        test_mode,
        ..ListenerConfig::default()
    };
    let keys: Arc<dyn partner_listener::KeySource> = state.keys.clone();
    let listener = Listener::new(config, store, keys)?;
    let socket = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(partner_listener::Error::Io)?;
    let addr = socket.local_addr().map_err(partner_listener::Error::Io)?;
    let stop = state.shutdown.child_token();
    let serving = listener.clone();
    let stopped = stop.clone();
    tauri::async_runtime::spawn(async move {
        if let Err(error) = serving.serve(socket, stopped.cancelled_owned()).await {
            tracing::error!(%error, "the listener stopped with an error");
        }
    });
    let forward = Coalescer::new(listener.subscribe(), BATCH_WINDOW, BATCH_MAX);
    tauri::async_runtime::spawn(forward_captures(app.clone(), forward, stop.clone()));
    let running = RunningListener {
        listener,
        addr,
        stop,
    };
    let mut inner = state.lock();
    inner.listener = Some(running.clone());
    inner.listener_port = Some(addr.port());
    Ok(running)
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

/// Sends every token state change of `client` to the UI and into the history, until `stop`.
pub fn watch_token(app: AppHandle, client: PartnerClient, stop: CancellationToken) {
    tauri::async_runtime::spawn(async move {
        let mut rx = client.tokens().subscribe();
        let mut previous = rx.borrow().clone();
        loop {
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                () = stop.cancelled() => return,
            }
            let next = rx.borrow_and_update().clone();
            let state = app.state::<AppState>();
            let now = crate::embedded::now(&state);
            if let Some(entry) = history_entry(&previous, &next, now) {
                state.record_token_event(entry);
            }
            let _ = app.emit(TOKEN, token_view(&state, &next, now));
            previous = next;
        }
    });
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

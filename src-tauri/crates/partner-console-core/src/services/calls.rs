//! The Calls panel's service: the active connection's call log (`PartnerClient::calls()`),
//! fed to the window as batched events while the connection is active, listed for the panel's
//! first load, and one call as a curl command (secrets as `$PARTNER_TOKEN`-style variables,
//! by the library's `CallRecord::curl`).
//!
//! The feed gathers the calls that end within [`BATCH_WINDOW`] into one event, so a burst
//! (a search across pages) is a few events a second, not one per call. A feed that falls
//! behind the log's broadcast catches up from the log itself (`CallLog::since`).
use crate::bridge::{CallBatch, CallList, CallSummary};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, Result};
use partner_client::{CallOutcome, CallRecord, PartnerClient};
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio_util::sync::CancellationToken;

/// How long calls are gathered before one event goes out (at most five a second).
pub const BATCH_WINDOW: Duration = Duration::from_millis(200);

pub fn summary(call: &CallRecord) -> CallSummary {
    let (status, error) = match &call.outcome {
        CallOutcome::Answered { status } => (Some(*status), None),
        other => (None, Some(other.to_string())),
    };
    CallSummary {
        seq: call.seq,
        started_at: call.started_at.to_rfc3339(),
        method: call.method.clone(),
        target: call.target(),
        status,
        error,
        duration_ms: u64::try_from(call.duration.as_millis()).unwrap_or(u64::MAX),
        retries: call.retries(),
        waited_ms: u64::try_from(call.waited().as_millis()).unwrap_or(u64::MAX),
        request_id: call
            .request_id
            .as_ref()
            .map(|id| format!("{}={}", id.header, id.value)),
        response_bytes: call.response_bytes,
    }
}

/// Sends `client`'s new calls to the window in batches until `stop` (another connection).
pub fn watch(app: Console, client: PartnerClient, stop: CancellationToken) {
    let connection_id = app.state().active_id().unwrap_or_default();
    let log = client.calls().clone();
    let mut live = log.subscribe();
    let mut last_seq = log.last_seq();
    app.clone().spawn(async move {
        loop {
            let first = tokio::select! {
                received = live.recv() => received,
                () = stop.cancelled() => return,
            };
            match first {
                Err(RecvError::Closed) => return,
                Err(RecvError::Lagged(_)) | Ok(_) => {}
            }
            tokio::select! {
                () = tokio::time::sleep(BATCH_WINDOW) => {},
                () = stop.cancelled() => return,
            }
            // Everything that ended since the last event, read from the log itself: the
            // broadcast only says when, so a lagged receiver loses nothing the log still keeps.
            while let Ok(_) | Err(TryRecvError::Lagged(_)) = live.try_recv() {}
            let calls: Vec<CallSummary> = log
                .since(last_seq)
                .iter()
                .map(|call| summary(call))
                .collect();
            if let Some(last) = calls.last() {
                last_seq = last.seq;
                app.emit(AppEvent::Calls(CallBatch {
                    connection_id: connection_id.clone(),
                    calls,
                }));
            }
        }
    });
}

fn active_client(app: &Console) -> Result<(String, PartnerClient)> {
    let inner = app.state().lock();
    let active = inner
        .active
        .as_ref()
        .ok_or_else(|| AppError::invalid("No connection is active."))?;
    Ok((active.view.id.clone(), active.client.clone()))
}

/// The active connection's calls that ended after call `since` (0 for all kept), oldest first.
pub fn list(app: &Console, since: u64) -> Result<CallList> {
    let (connection_id, client) = active_client(app)?;
    let snapshot = client.calls().snapshot();
    Ok(CallList {
        connection_id,
        calls: snapshot
            .calls
            .iter()
            .filter(|call| call.seq > since)
            .map(|call| summary(call))
            .collect(),
        dropped: snapshot.dropped,
    })
}

/// Call `seq` of the active connection as a curl command, its secrets as shell variables.
pub fn curl(app: &Console, seq: u64) -> Result<String> {
    let (_, client) = active_client(app)?;
    client
        .calls()
        .get(seq)
        .map(|call| call.curl())
        .ok_or_else(|| {
            AppError::invalid("That call is no longer kept: the log keeps the latest calls only.")
        })
}

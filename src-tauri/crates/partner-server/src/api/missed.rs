//! `POST /api/v1/missed` and `POST /api/v1/missed/recover`: the missed-notification check
//! ([`crate::missed::check`]: partner-local's `find_missed` over the workspace's captures, with
//! the team's connection) and the recovery of what it found (partner-local's `recover`, signed
//! with the keys the servers hold, which never leave them).
//!
//! The bodies are partner-workspace's [`MissedRequest`] and [`RecoverRequest`], the answers
//! partner-local's [`MissedReport`] and [`RecoveryReport`], so a console reads them as it
//! reads its own check. The check is a read (viewer and up); a recovery sends notifications in
//! the subscriptions' names, so it takes the developer role and is audited.
//!
//! Where a recovery goes: `to` when given; else the workspace's own intake, in process
//! ([`crate::intake::take_made_here`]): judged and stored as a POST to `/webhooks` is, so the
//! recovered notifications become the workspace's captures (valid, marked
//! `Svc-Replay: recovery`) and the next check counts them as arrived.

use super::call::{ApiResult, Body, Caller, Workspace};
use crate::error::Error;
use crate::roles::Action;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use partner_api::delivery::acknowledges;
use partner_local::missed::{MissedNotification, MissedReport};
use partner_local::recover::{recover, recovery_request, RecoveryOutcome, RecoveryReport};
use partner_workspace::{MissedRequest, NotificationKey, RecoverRequest};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

pub fn routes() -> Router<Arc<Workspace>> {
    Router::new()
        .route("/api/v1/missed", post(missed))
        .route("/api/v1/missed/recover", post(recover_missed))
}

/// What a check or a recovery is of, for the audit log.
fn target_of(request: &MissedRequest) -> String {
    match &request.subscription_id {
        Some(id) => format!("missed notifications of {}", id.trim()),
        None => "missed notifications".to_string(),
    }
}

async fn missed(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<MissedRequest>,
) -> ApiResult<Json<MissedReport>> {
    caller.may(&ws, Action::Read, &target_of(&request)).await?;
    let cancel = ws.shutdown.child_token();
    Ok(Json(
        crate::missed::check(&ws.pool, &ws.service, &request, &cancel).await?,
    ))
}

async fn recover_missed(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<RecoverRequest>,
) -> ApiResult<Json<RecoveryReport>> {
    let target = target_of(&request.missed);
    caller.may(&ws, Action::Recover, &target).await?;
    let to = match request.to.as_deref().map(str::trim) {
        Some(to) if !to.is_empty() => Some(
            partner_listener::outbound::parse_target(to)
                .map_err(|error| Error::Invalid(error.to_string()))?,
        ),
        _ => None,
    };
    let cancel = ws.shutdown.child_token();
    let mut report = crate::missed::check(&ws.pool, &ws.service, &request.missed, &cancel).await?;
    if !request.only.is_empty() {
        // Only what the check found is signed, whatever the request names.
        let only: HashSet<&NotificationKey> = request.only.iter().collect();
        report
            .missed
            .retain(|missed| only.contains(&NotificationKey::from(missed)));
    }
    let recovered = match &to {
        Some(url) => {
            recover(
                &partner_listener::outbound::http_client(),
                url,
                &report.missed,
                &ws.keys,
                &cancel,
                |_, _| {},
            )
            .await
        }
        None => to_own_intake(&ws, &report.missed).await,
    };
    let place = match &to {
        Some(url) => url.to_string(),
        None => ws.intake.config.path.clone(),
    };
    let mut detail = format!(
        "{} of {} acknowledged, to {place}",
        recovered.acknowledged(),
        recovered.outcomes.len()
    );
    if report.cancelled || recovered.cancelled {
        detail.push_str(" (cancelled: the server stopped)");
    }
    caller.done(&ws, Action::Recover, &target, &detail).await?;
    Ok(Json(RecoveryReport {
        cancelled: report.cancelled || recovered.cancelled,
        ..recovered
    }))
}

/// Each of `missed` taken by this workspace's own intake, one after another (no network
/// between them: a burst does the receiver no harm here), an outcome each as `recover` gives.
async fn to_own_intake(ws: &Workspace, missed: &[MissedNotification]) -> RecoveryReport {
    let mut outcomes = Vec::with_capacity(missed.len());
    for notification in missed {
        if ws.shutdown.is_cancelled() {
            return RecoveryReport {
                outcomes,
                cancelled: true,
            };
        }
        let started = Instant::now();
        let mut outcome = RecoveryOutcome {
            subscription_id: notification.subscription_id.clone(),
            resource_type: notification.resource_type,
            event_id: notification.event_id.clone(),
            url: ws.intake.config.path.clone(),
            status: None,
            acknowledged: false,
            error: None,
            elapsed_ms: 0,
        };
        match recovery_request(notification, &ws.keys) {
            Ok((headers, body)) => {
                let status = crate::intake::take_made_here(&ws.intake, headers, body).await;
                outcome.status = Some(status);
                outcome.acknowledged = acknowledges(status);
            }
            Err(error) => outcome.error = Some(error.to_string()),
        }
        outcome.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        outcomes.push(outcome);
    }
    RecoveryReport {
        outcomes,
        cancelled: false,
    }
}

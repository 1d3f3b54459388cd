//! The notifications that never arrived, in the app: `partner_local::missed` (the same check as
//! `partner listen missed`) over the active connection and the app's own capture store, with
//! its progress sent to the Webhooks screen and a way to cancel it.
//!
//! The app holds the store's writer, so it knows whether its listener is serving now; the
//! check reads through a clone of that store (no second connection, no lock taken).
//!
//! What it found can be sent again (`partner_local::recover`, as `partner listen recover`
//! does): to this app's listener by default, signed with the keys the listener verifies with.
//!
//! Joined to a team workspace, both are the workspace's (as `partner listen missed|recover`
//! with one): its servers run the same check over the team's captures with the team's
//! connection (`POST /api/v1/missed`), and send the chosen rows again signed with the keys only
//! they hold (`POST /api/v1/missed/recover`, developer and up: refused here first, with the
//! sentence the screen shows), to the URL given or the workspace's own intake. The server works
//! the rows out again before it signs them (it signs nothing a console names), so a row that
//! has arrived since the check gets an outcome saying so instead of a second copy.
use crate::bridge::{MissedForm, Progress, RecoverForm};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, ErrorKind, Result};
use crate::services::workspace;
use crate::state::locked;
use crate::state::AppState;
use partner_api::delivery::GIVE_UP_AFTER;
use partner_local::missed::{find_missed, MissedProgress, MissedQuery, MissedReport};
use partner_local::recover::{recover, RecoveryOutcome, RecoveryReport};
use partner_workspace::roles::Action;
use partner_workspace::{MissedRequest, NotificationKey, RecoverRequest};

/// The active connection's give-up window when it is a sandbox (its own delivery rules, asked
/// through its controls); `None` (the spec's) for any other service.
async fn sandbox_give_up_window(
    state: &crate::state::AppState,
    client: &partner_client::PartnerClient,
) -> Option<std::time::Duration> {
    let view = state.lock().active.as_ref().map(|a| a.view.clone())?;
    if !view.embedded && view.environment != partner_local::Environment::Sandbox {
        return None;
    }
    let control = partner_client::SandboxControl::new(client.base_url().as_str(), None)
        .ok()?
        .with_call_log(client.calls());
    partner_local::missed::sandbox_give_up_window(&control).await
}

/// Now on the active service's clock: the embedded sandbox's own (the Demo moves it on), else
/// this machine's.
fn service_now(state: &AppState) -> chrono::DateTime<chrono::Utc> {
    crate::services::embedded::active_sandbox(state)
        .map(|sandbox| sandbox.clock().now())
        .unwrap_or_else(|_| chrono::Utc::now())
}

pub async fn find(app: &Console, form: MissedForm) -> Result<MissedReport> {
    let state = app.state();
    if let Some(joined) = workspace::joined(state) {
        return find_on_workspace(app, &joined, form).await;
    }
    let client = state.client()?;
    let (store, listening_now) = {
        let inner = state.lock();
        let store = inner.captures.clone().ok_or_else(|| {
            AppError::new(
                ErrorKind::Listener,
                "The capture store is not open, so there is nothing to compare with.",
                "Start the listener on the Webhooks screen and look again.",
            )
        })?;
        (store, inner.listener.is_some())
    };
    let give_up_window = sandbox_give_up_window(state, &client).await;
    // Up to the service's give-up window ago, as the CLI does; "now" includes the notifications
    // the service may still be retrying. Both on the service's clock: the embedded sandbox's
    // runs ahead once the Demo has moved it on.
    let now = service_now(state);
    let until = if form.include_recent {
        now
    } else {
        now - chrono::Duration::from_std(give_up_window.unwrap_or(GIVE_UP_AFTER))
            .unwrap_or(chrono::Duration::zero())
    };
    let query = MissedQuery {
        subscription_id: form.subscription_id.filter(|s| !s.trim().is_empty()),
        since: form.since,
        until: Some(until),
        give_up_window,
        all_subscriptions: form.all_subscriptions,
        listening_now,
    };
    let stop = state.shutdown.child_token();
    if let Some(running) = locked(&state.missed_check).replace(stop.clone()) {
        running.cancel();
    }
    // The last progress told, so a wait the service asks for is told beside it.
    let last = std::sync::Arc::new(std::sync::Mutex::new(Progress::from(
        &MissedProgress::Subscriptions,
    )));
    let _waits = {
        let app = app.clone();
        let last = last.clone();
        crate::services::jobs::watch_waits(&client, move |note| {
            let mut told = locked(&last).clone();
            told.note = note.or(told.note);
            app.emit(AppEvent::MissedProgress(told));
        })
    };
    let progress = |p: MissedProgress| {
        let told = Progress::from(&p);
        *locked(&last) = told.clone();
        app.emit(AppEvent::MissedProgress(told));
    };
    let outcome = find_missed(&client, &store, &query, &stop, progress).await;
    if !stop.is_cancelled() {
        *locked(&state.missed_check) = None;
    }
    let report = outcome.map_err(|e| match e {
        partner_local::Error::Client(error) => AppError::from(error),
        other => AppError::new(
            ErrorKind::Listener,
            format!("The check could not read the capture store: {other}."),
            "Try again; if it keeps failing, restart the app.",
        ),
    })?;
    if !report.cancelled {
        crate::notices::missed_found(app, report.missed.len());
    }
    Ok(report)
}

/// The check run by the workspace's servers; one progress step while it runs (the walk is
/// theirs). Cancel stops waiting and closes the request, which ends the server's walk with it
/// (the walk runs inside the request); there is no part-way report to show, so it says so.
async fn find_on_workspace(
    app: &Console,
    joined: &workspace::Joined,
    form: MissedForm,
) -> Result<MissedReport> {
    let state = app.state();
    app.emit(AppEvent::MissedProgress(Progress::from(
        &MissedProgress::Subscriptions,
    )));
    let request = MissedRequest {
        since: form.since,
        // The workspace's service is on real time (the embedded sandbox is this machine's).
        until: form.include_recent.then(chrono::Utc::now),
        subscription_id: form.subscription_id.filter(|s| !s.trim().is_empty()),
        all_subscriptions: form.all_subscriptions,
    };
    let stop = state.shutdown.child_token();
    if let Some(running) = locked(&state.missed_check).replace(stop.clone()) {
        running.cancel();
    }
    let answer = tokio::select! {
        answer = joined.client.missed(&request) => answer,
        () = stop.cancelled() => {
            return Err(AppError::new(
                ErrorKind::Cancelled,
                "The check was cancelled before the workspace answered, so nothing was found yet.",
                "Look again when you are ready.",
            ));
        }
    };
    if !stop.is_cancelled() {
        *locked(&state.missed_check) = None;
    }
    let report = workspace::answered(state, answer)?;
    if !report.cancelled {
        crate::notices::missed_found(app, report.missed.len());
    }
    Ok(report)
}

/// The chosen rows sent again by the workspace's servers: the check asked again over exactly
/// their window (every subscription they name), only those rows recovered.
async fn resend_on_workspace(
    state: &AppState,
    joined: &workspace::Joined,
    form: RecoverForm,
) -> Result<RecoveryReport> {
    joined.may(Action::Recover)?;
    let first = form.notifications.iter().map(|m| m.sent_at).min();
    let last = form.notifications.iter().map(|m| m.sent_at).max();
    let subscriptions: std::collections::BTreeSet<&str> = form
        .notifications
        .iter()
        .map(|m| m.subscription_id.as_str())
        .collect();
    let request = RecoverRequest {
        missed: MissedRequest {
            since: first,
            until: last.map(|last| last + chrono::Duration::seconds(1)),
            subscription_id: match subscriptions.iter().collect::<Vec<_>>().as_slice() {
                [only] => Some((**only).to_string()),
                _ => None,
            },
            all_subscriptions: true,
        },
        to: form
            .target
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        only: form
            .notifications
            .iter()
            .map(NotificationKey::from)
            .collect(),
    };
    let mut report = workspace::answered(state, joined.client.recover(&request).await)?;
    // A chosen row the servers did not find missed any more: said, not passed over.
    for chosen in &form.notifications {
        let key = NotificationKey::from(chosen);
        let sent = report
            .outcomes
            .iter()
            .any(|o| NotificationKey::from(o) == key);
        if !sent && !report.cancelled {
            report.outcomes.push(RecoveryOutcome {
                subscription_id: chosen.subscription_id.clone(),
                resource_type: chosen.resource_type,
                event_id: chosen.event_id.clone(),
                url: request.to.clone().unwrap_or_default(),
                status: None,
                acknowledged: false,
                error: Some(
                    "not sent: the workspace no longer finds it missed (it has arrived since the check)"
                        .into(),
                ),
                elapsed_ms: 0,
            });
        }
    }
    Ok(report)
}

/// Stops a running check; its report says how far it got (`cancelled`).
pub fn cancel(state: &AppState) {
    if let Some(stop) = locked(&state.missed_check).take() {
        stop.cancel();
    }
}

/// Sends `form.notifications` again, each built and signed as the service would have sent it,
/// to `form.target` or this app's listener; an outcome per notification.
pub async fn resend(state: &AppState, form: RecoverForm) -> Result<RecoveryReport> {
    if form.notifications.is_empty() {
        return Err(AppError::invalid(
            "Choose the missed notifications to send again.",
        ));
    }
    if let Some(joined) = workspace::joined(state) {
        return resend_on_workspace(state, &joined, form).await;
    }
    let target = crate::services::listener::target_or_listener(
        state,
        form.target.as_deref(),
        "The recovery's",
    )?;
    let subscriptions: Vec<String> = form
        .notifications
        .iter()
        .map(|m| m.subscription_id.clone())
        .collect();
    let found = crate::services::keys::current_keys(state, subscriptions).await?;
    let http = partner_listener::outbound::http_client();
    let stop = state.shutdown.child_token();
    Ok(recover(
        &http,
        &target,
        &form.notifications,
        &found,
        &stop,
        |_, _| {},
    )
    .await)
}

//! The notifications that never arrived, in the app: `partner_local::missed` (the same check as
//! `partner listen missed`) over the active connection and the app's own capture store, with
//! its progress sent to the Webhooks screen and a way to cancel it.
//!
//! The app holds the store's writer, so it knows whether its listener is serving now; the
//! check reads through a clone of that store (no second connection, no lock taken).
//!
//! What it found can be sent again (`partner_local::recover`, as `partner listen recover`
//! does): to this app's listener by default, signed with the keys the listener verifies with.
use crate::bridge::{MissedForm, Progress, RecoverForm};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::locked;
use crate::state::AppState;
use partner_api::delivery::GIVE_UP_AFTER;
use partner_local::missed::{find_missed, MissedProgress, MissedQuery, MissedReport};
use partner_local::recover::{recover, RecoveryReport};

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

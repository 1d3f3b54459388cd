//! Checks a subscription's receiver against the spec's webhook rules: the app's side of
//! `partner check-receiver`, over the same library (`partner-conformance`).
//!
//! The URL and the resource type come from the product as the service has it now, and the key
//! from the listener's key source (the keychain), so the check signs exactly as the service
//! signs for that subscription. The key goes into the check and nowhere else: the report the UI
//! gets holds none (the library masks every response excerpt). One check per subscription runs
//! at a time; it can be cancelled, and it stops with the app.
use crate::bridge::{ListenerRoute, ListenerSubscription, ReceiverCheckForm};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::state::{locked, AppState};
use partner_conformance::{check_receiver, CheckConfig, CheckError, Report};
use partner_listener::KeySource;

pub async fn check(app: &Console, form: ReceiverCheckForm) -> Result<Report> {
    let state = app.state();
    let client = state.client()?;
    let product = client
        .get_product_as::<partner_api::Product>(&form.product_id)
        .await?
        .into_view();
    let subscription = product
        .webhooks
        .iter()
        .find(|w| w.subscription_id == form.subscription_id)
        .ok_or_else(|| {
            AppError::new(
                ErrorKind::InvalidInput,
                format!(
                    "The product has no subscription {} any more.",
                    form.subscription_id
                ),
                "Reload the product.",
            )
        })?;
    let keys = state.keys.clone();
    let id = form.subscription_id.clone();
    let held = tokio::task::spawn_blocking(move || keys.keys(&id))
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Reading the key failed: {e}."),
                "Try again.",
            )
        })?;
    let Some(held) = held else {
        return Err(AppError::new(
            ErrorKind::Keychain,
            "The console does not hold this subscription's signing key, so it cannot sign as the service does.",
            "Rotate the key here (the console keeps the new one), or run `partner check-receiver --key-stdin` with the key you hold.",
        ));
    };

    let mut config = CheckConfig::new(
        subscription.url.clone(),
        subscription.subscription_id.clone(),
        held.current,
    );
    config.resource = subscription.resource;
    config.allow_http = form.allow_http;
    // Checking the console's own listener: its probes are forged on purpose, so they are
    // marked for it and never land in the inspector or reach a forward rule's app.
    let _own_listener_check = match (
        crate::services::listener::own_route_of(state, &subscription.url),
        state.lock().listener.clone(),
    ) {
        (Some(_), Some(running)) => {
            let guard = running.listener.expect_receiver_check();
            config.marker_headers.push((
                partner_listener::RECEIVER_CHECK_HEADER.to_owned(),
                guard.nonce().to_owned(),
            ));
            Some(guard)
        }
        _ => None,
    };

    let stop = state.shutdown.child_token();
    if let Some(running) =
        locked(&state.receiver_checks).insert(form.subscription_id.clone(), stop.clone())
    {
        running.cancel();
    }
    let outcome = check_receiver(&config, &stop).await;
    // A cancelled run's entry was removed by `cancel`, or replaced by a newer check: only a
    // run that ended by itself removes its own.
    if !stop.is_cancelled() {
        locked(&state.receiver_checks).remove(&form.subscription_id);
    }
    let report = outcome.map_err(could_not_run)?;
    let failed: Vec<String> = report
        .rules
        .iter()
        .filter(|rule| rule.outcome == partner_conformance::Outcome::Fail)
        .map(|rule| rule.id.to_string())
        .collect();
    crate::notices::receiver_check_ended(app, &report.url, &failed);
    Ok(report)
}

/// Stops a running check of the subscription (its report is not shown).
pub fn cancel(state: &AppState, subscription_id: &str) {
    if let Some(stop) = locked(&state.receiver_checks).remove(subscription_id) {
        stop.cancel();
    }
}

fn could_not_run(error: CheckError) -> AppError {
    match error {
        CheckError::InvalidInput(message) => AppError::new(
            ErrorKind::InvalidInput,
            format!("The check could not start: {message}."),
            "Edit the subscription's URL.",
        ),
        CheckError::Unreachable(message) => AppError::new(
            ErrorKind::Network,
            format!("The receiver could not be reached: {message}."),
            "Start the receiver (or its tunnel) and check again.",
        ),
        CheckError::Setup(message) => AppError::new(
            ErrorKind::Internal,
            format!("The check could not be set up: {message}."),
            "Try again.",
        ),
        CheckError::Cancelled => AppError::new(
            ErrorKind::Cancelled,
            "The check was cancelled.",
            "Check again when you are ready.",
        ),
    }
}

/// The active connection's subscriptions that reach the console's own listener: through the
/// tunnel URL (the way the service reaches it) or straight at the listener's address. These are
/// what the Webhooks screen offers to check, the tunnel's first.
pub async fn listener_subscriptions(state: &AppState) -> Result<Vec<ListenerSubscription>> {
    // The listener's own address counts only while it runs: stopped, it answers no check, and
    // the service is not asked for every subscription to find the ones that point at it.
    let running = state.lock().listener.is_some();
    let bases: Vec<_> = crate::services::listener::own_callback_routes(state)
        .into_iter()
        .filter(|(via, _)| running || *via == ListenerRoute::Tunnel)
        .collect();
    if bases.is_empty() {
        return Ok(Vec::new());
    }
    let all = state.client()?.all_subscriptions().await?;
    let mut found: Vec<ListenerSubscription> = all
        .into_iter()
        .filter_map(|at| {
            let url = at.subscription.url.as_deref()?;
            let (via, _) = bases.iter().find(|(_, base)| base.holds(url))?;
            Some(ListenerSubscription {
                product_id: at.product_id,
                product_name: at.product_name,
                subscription: partner_client::to_record("a subscription", &at.subscription).ok()?,
                via: *via,
            })
        })
        .collect();
    found.sort_by_key(|s| s.via != ListenerRoute::Tunnel);
    Ok(found)
}

//! What the service did: a sandbox's own delivery records (`GET /sandbox/v1/deliveries`), each
//! notification with its subscription, URL, every attempt and its state, beside the captures
//! the listener kept of it. A notification the listener never saw shows there with none.
//!
//! The embedded sandbox's records are read from its dispatcher in-process; another sandbox's
//! over HTTP. A production service has no such records.
use crate::bridge::{ConnectionView, DeliveryView};
use crate::error::{AppError, Result};
use crate::state::AppState;
use partner_api::DeliveryRecord;
use partner_listener::CaptureFilter;
use partner_local::Environment;
use std::collections::HashMap;

/// The most recent records shown.
const SHOWN: usize = 500;

/// The active sandbox connection's delivery records, newest first, each with the ids of the
/// captures the listener kept of its notification.
pub async fn list(state: &AppState) -> Result<Vec<DeliveryView>> {
    let view = state
        .lock()
        .active
        .as_ref()
        .map(|a| a.view.clone())
        .ok_or_else(AppError::not_connected)?;
    let records = records(state, &view, None).await?;
    let mut deliveries: Vec<DeliveryView> = records.iter().map(DeliveryView::of).collect();
    deliveries.sort_by_key(|d| std::cmp::Reverse(d.enqueued_at));
    deliveries.truncate(SHOWN);
    let Some(store) = state.lock().captures.clone() else {
        return Ok(deliveries);
    };
    // One pass over the captures since the oldest record shown (less the clocks' margin).
    let since = deliveries
        .iter()
        .map(|d| d.enqueued_at)
        .min()
        .map(|oldest| oldest - chrono::Duration::minutes(10));
    let captured = crate::services::captures::read(store, move |store| {
        let mut by_notification: HashMap<(String, String, String), Vec<i64>> = HashMap::new();
        let filter = CaptureFilter {
            since,
            ..CaptureFilter::default()
        };
        store.for_each(&filter, |capture| {
            if let (Some(subscription), Some(resource), Some(event)) = (
                capture.subscription_id.clone(),
                capture.fields.resource_type.clone(),
                capture.fields.event_id.clone(),
            ) {
                by_notification
                    .entry((subscription, resource, event))
                    .or_default()
                    .push(capture.id);
            }
            Ok(())
        })?;
        Ok(by_notification)
    })
    .await?;
    for delivery in &mut deliveries {
        let key = (
            delivery.subscription_id.clone(),
            delivery.resource_type.clone(),
            delivery.event_id.clone(),
        );
        delivery.capture_ids = captured.get(&key).cloned().unwrap_or_default();
    }
    Ok(deliveries)
}

/// The delivery records of a sandbox connection as the sandbox writes them (all, or one
/// eventId's): the embedded sandbox's from its dispatcher, another one's through
/// `partner_client::SandboxControl`.
pub async fn records(
    state: &AppState,
    view: &ConnectionView,
    event_id: Option<&str>,
) -> Result<Vec<DeliveryRecord>> {
    if view.embedded {
        let sandbox = state
            .lock()
            .embedded
            .as_ref()
            .map(|e| e.sandbox.clone())
            .ok_or_else(AppError::not_connected)?;
        return Ok(sandbox.deliveries(event_id));
    }
    if view.environment != Environment::Sandbox {
        return Err(AppError::invalid(
            "Delivery records are the sandbox's: a production service does not show them.",
        ));
    }
    let mut control = partner_client::SandboxControl::new(&view.base_url, None)?;
    // Kept in the connection's call log, so the Calls panel shows them.
    if let Some(log) = state
        .lock()
        .active
        .as_ref()
        .filter(|active| active.view.id == view.id)
        .map(|active| active.client.calls().clone())
    {
        control = control.with_call_log(&log);
    }
    control.deliveries(event_id).await.map_err(|error| {
        let mut app_error = AppError::from(error);
        app_error.hint =
            "Is the connection a Partner Console sandbox? One bound beyond loopback needs its admin token, which the app does not send.".into();
        app_error
    })
}

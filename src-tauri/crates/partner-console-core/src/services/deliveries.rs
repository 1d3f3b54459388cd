//! What the service did: a sandbox's own delivery records (`GET /sandbox/v1/deliveries`), each
//! notification with its subscription, URL, every attempt and its state, beside the captures
//! the listener kept of it. A notification the listener never saw shows there with none.
//!
//! The embedded sandbox's records are read from its dispatcher in-process; another sandbox's
//! over HTTP. A production service has no such records.
use crate::bridge::{ConnectionView, DeliveryView};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
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
    let mut deliveries: Vec<DeliveryView> = records
        .into_iter()
        .map(serde_json::from_value::<DeliveryView>)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| {
            AppError::new(
                ErrorKind::Server,
                format!("The sandbox's delivery records are not as expected: {e}."),
                "Is the connection a Partner Console sandbox of this version?",
            )
        })?;
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
    let captured = tokio::task::spawn_blocking(move || {
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
        Ok::<_, partner_listener::Error>(by_notification)
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Reading the captures failed: {e}."),
            "Try again.",
        )
    })??;
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
/// eventId's): the embedded sandbox's from its dispatcher, another one's over HTTP.
pub async fn records(
    state: &AppState,
    view: &ConnectionView,
    event_id: Option<&str>,
) -> Result<Vec<serde_json::Value>> {
    if view.embedded {
        let sandbox = state
            .lock()
            .embedded
            .as_ref()
            .map(|e| e.sandbox.clone())
            .ok_or_else(AppError::not_connected)?;
        return Ok(sandbox
            .deliveries(event_id)
            .into_iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect());
    }
    if view.environment != Environment::Sandbox {
        return Err(AppError::invalid(
            "Delivery records are the sandbox's: a production service does not show them.",
        ));
    }
    let url = format!(
        "{}/sandbox/v1/deliveries",
        view.base_url.trim_end_matches('/')
    );
    let mut request = reqwest::Client::new().get(&url);
    if let Some(id) = event_id {
        request = request.query(&[("eventId", id)]);
    }
    let response = request.send().await.map_err(|e| {
        AppError::new(
            ErrorKind::Network,
            format!("The sandbox's delivery records could not be read: {e}."),
            "Is the sandbox running?",
        )
    })?;
    if !response.status().is_success() {
        return Err(AppError::new(
            ErrorKind::Server,
            format!(
                "The sandbox answered {} for its delivery records.",
                response.status()
            ),
            "A sandbox bound beyond loopback needs its admin token; the app does not send one.",
        ));
    }
    response.json().await.map_err(|e| {
        AppError::new(
            ErrorKind::Server,
            format!("The sandbox's delivery records are not JSON: {e}."),
            "Is the connection a Partner Console sandbox?",
        )
    })
}

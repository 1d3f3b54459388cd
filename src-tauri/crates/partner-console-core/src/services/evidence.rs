//! Evidence for a support ticket, from the app: `partner_listener::evidence` (the same bundle as
//! `partner listen export --redact`) over the app's own store, with the listener's keys for the
//! signature debugger's diagnosis, the active client's secrets masked too, and, for a sandbox
//! connection, the service's own delivery records.
//!
//! Reading the captures and building the bundle may read the keychain (a D-Bus round trip for a
//! key not cached yet), so it runs on the blocking pool.
use crate::bridge::{EvidenceForm, EvidenceResult, EvidenceScope, EVIDENCE_MOST_SHOWN};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::DeliveryRecord;
use partner_listener::evidence::{self, EvidenceOptions, FieldPath, Selection};
use partner_listener::KeySource;
use partner_local::Environment;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub async fn bundle(state: &AppState, form: EvidenceForm) -> Result<EvidenceResult> {
    let mask_body_fields = form
        .mask_fields
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .map(FieldPath::parse)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| AppError::invalid(format!("A field to mask is not a path: {e}.")))?;
    let (store, active) = {
        let inner = state.lock();
        let store = inner.captures.clone().ok_or_else(|| {
            AppError::new(
                ErrorKind::Listener,
                "The capture store is not open.",
                "Start the listener on the Webhooks screen and try again.",
            )
        })?;
        (
            store,
            inner
                .active
                .as_ref()
                .map(|a| (a.view.clone(), a.client.clone())),
        )
    };
    let selection = match form.scope {
        EvidenceScope::Capture => Selection::Ids(vec![form.capture_id]),
        EvidenceScope::Shown => {
            let filter = form.shown.clone().unwrap_or_default().tidied();
            let shown = store.count(&filter)?;
            if shown > EVIDENCE_MOST_SHOWN {
                return Err(AppError::invalid(format!(
                    "The filter shows {shown} captures; an evidence bundle holds at most {EVIDENCE_MOST_SHOWN}. Narrow the filter (a subscription, a time range, a search)."
                )));
            }
            let mut ids = Vec::new();
            store.for_each(&filter, |capture| {
                ids.push(capture.id);
                Ok(())
            })?;
            if !ids.contains(&form.capture_id) {
                ids.push(form.capture_id);
            }
            Selection::Ids(ids)
        }
        EvidenceScope::Notification => {
            let capture = store.get(form.capture_id)?;
            let event_id = capture.fields.event_id.clone().ok_or_else(|| {
                AppError::invalid(
                    "This capture carries no eventId, so it belongs to no notification: bundle it alone.",
                )
            })?;
            Selection::Notification {
                event_id,
                subscription_id: capture.subscription_id.clone(),
                resource_type: capture.fields.resource_type.clone(),
            }
        }
    };
    let selected_store = store.clone();
    let chosen = tokio::task::spawn_blocking(move || evidence::select(&selected_store, &selection))
        .await
        .map_err(internal)??;

    // What the client holds is masked wherever it turns up; a sandbox's records are included.
    let mut other_secrets = Vec::new();
    let mut deliveries = None;
    if let Some((view, client)) = &active {
        other_secrets = client.tokens().held_secrets().await;
        let event_ids: BTreeSet<String> = chosen
            .captures
            .iter()
            .filter_map(|c| c.fields.event_id.clone())
            .collect();
        deliveries = service_deliveries(state, view, &event_ids).await;
    }

    // Said from what was read, not from the kind of connection: a sandbox whose records could
    // not be read gives a bundle without them, and the screen says so.
    let with_deliveries = deliveries.is_some();
    let path = bundle_path(state, form.path.as_deref(), form.capture_id)?;
    let keys = state.keys.clone();
    let written = tokio::task::spawn_blocking(move || {
        let mut options = EvidenceOptions::new(chrono::Utc::now());
        options.mask_body_fields = mask_body_fields;
        options.deliveries = deliveries;
        options.keys = Some(keys.as_ref() as &dyn KeySource);
        options.other_secrets = other_secrets;
        let bundle = evidence::build(&chosen, &options)?;
        let (har, summary) = bundle.write(&path)?;
        Ok::<_, partner_listener::Error>((bundle.report, har, summary, chosen.captures.len()))
    })
    .await
    .map_err(internal)?;
    let (report, har, summary, captures) = written?;
    Ok(EvidenceResult {
        har_path: har.display().to_string(),
        summary_path: summary.display().to_string(),
        captures: captures as u64,
        headers_masked: report.headers_masked as u64,
        fields_masked: report.fields_masked as u64,
        secrets_masked: report.secrets_masked as u64,
        bodies_withheld: report.bodies_withheld as u64,
        with_deliveries,
    })
}

/// The service's delivery records of these notifications, for a sandbox connection; none for a
/// production connection, or when they cannot be read (the bundle goes on without).
async fn service_deliveries(
    state: &AppState,
    view: &crate::bridge::ConnectionView,
    event_ids: &BTreeSet<String>,
) -> Option<Vec<DeliveryRecord>> {
    if !view.embedded && view.environment != Environment::Sandbox {
        return None;
    }
    let mut records = Vec::new();
    for id in event_ids {
        match crate::services::deliveries::records(state, view, Some(id)).await {
            Ok(found) => records.extend(found),
            Err(error) => {
                tracing::info!(%error, "the bundle goes without the sandbox's delivery records");
                return None;
            }
        }
    }
    Some(records)
}

/// Where the two files go: the user's base path, or `evidence-<capture>-<time>` in the export
/// folder (`.har` and `.md` are added).
fn bundle_path(state: &AppState, path: Option<&str>, capture_id: i64) -> Result<PathBuf> {
    crate::services::exports::file(state, path, &format!("evidence-{capture_id}"), None)
}

fn internal(error: impl std::fmt::Display) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("Making the evidence failed: {error}."),
        "Try again.",
    )
}

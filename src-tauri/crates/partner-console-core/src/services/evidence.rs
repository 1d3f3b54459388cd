//! Evidence for a support ticket, from the app: `partner_listener::evidence` (the same bundle as
//! `partner listen export --redact`) over the app's own store, with the listener's keys for the
//! signature debugger's diagnosis, the active client's secrets masked too, and, for a sandbox
//! connection, the service's own delivery records.
//!
//! Reading the captures and building the bundle may read the keychain (a D-Bus round trip for a
//! key not cached yet), so it runs on the blocking pool.
//!
//! While a team workspace is joined, the captures are the workspace's and its server builds the
//! bundle (the same `partner_listener::evidence`, with the keys and the service's secrets only
//! it holds, masked as here); the app writes the two files where it writes its own. Exporting
//! evidence takes the support role or above, refused here with the sentence the screen shows.
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
    if let Some(joined) = crate::services::workspace::joined(state) {
        return from_workspace(state, &joined, form).await;
    }
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

/// The bundle of the workspace's captures, built by its server; the files written here.
async fn from_workspace(
    state: &AppState,
    joined: &crate::services::workspace::Joined,
    form: EvidenceForm,
) -> Result<EvidenceResult> {
    use crate::services::workspace::answered;
    joined.may(partner_workspace::roles::Action::ExportEvidence)?;
    let client = &joined.client;
    let mut request = partner_workspace::EvidenceRequest {
        mask_fields: form
            .mask_fields
            .iter()
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect(),
        ..partner_workspace::EvidenceRequest::default()
    };
    match form.scope {
        EvidenceScope::Capture => request.ids = vec![form.capture_id],
        EvidenceScope::Shown => {
            let filter = form.shown.clone().unwrap_or_default().tidied();
            let mut ids = Vec::new();
            let mut after = 0;
            loop {
                let page = answered(state, client.captures_walk(&filter, after, 500).await)?;
                let Some(last) = page.last() else { break };
                after = last.id;
                ids.extend(page.iter().map(|capture| capture.id));
                if ids.len() as u64 > EVIDENCE_MOST_SHOWN {
                    return Err(AppError::invalid(format!(
                        "The filter shows more than {EVIDENCE_MOST_SHOWN} captures; an evidence bundle holds at most {EVIDENCE_MOST_SHOWN}. Narrow the filter (a subscription, a time range, a search)."
                    )));
                }
            }
            if !ids.contains(&form.capture_id) {
                ids.push(form.capture_id);
            }
            request.ids = ids;
        }
        EvidenceScope::Notification => {
            let capture = answered(state, client.capture(form.capture_id).await)?;
            let event_id = capture.fields.event_id.clone().ok_or_else(|| {
                AppError::invalid(
                    "This capture carries no eventId, so it belongs to no notification: bundle it alone.",
                )
            })?;
            request.event_id = Some(event_id);
            request.subscription_id = capture.subscription_id.clone();
            request.resource_type = capture.fields.resource_type.clone();
        }
    }
    let bundle = answered(state, client.evidence(&request).await)?;
    let path = bundle_path(state, form.path.as_deref(), form.capture_id)?;
    let (har_path, summary_path) = evidence::Bundle::paths(&path);
    let (har, summary) = (har_path.clone(), summary_path.clone());
    let (har_text, summary_text) = (bundle.har, bundle.summary);
    tokio::task::spawn_blocking(move || {
        std::fs::write(&har, har_text)
            .map_err(|e| AppError::io(&format!("write {}", har.display()), &e))?;
        std::fs::write(&summary, summary_text)
            .map_err(|e| AppError::io(&format!("write {}", summary.display()), &e))
    })
    .await
    .map_err(internal)??;
    Ok(EvidenceResult {
        har_path: har_path.display().to_string(),
        summary_path: summary_path.display().to_string(),
        captures: bundle.captures as u64,
        headers_masked: bundle.report.headers_masked as u64,
        fields_masked: bundle.report.fields_masked as u64,
        secrets_masked: bundle.report.secrets_masked as u64,
        bodies_withheld: bundle.report.bodies_withheld as u64,
        with_deliveries: false,
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

//! Webhooks screen: the listener on/off and its address, the tunnel URL (its check is
//! `commands::tunnel`), test mode, retention, the inspector's captures, clear, the signature
//! debugger, replay and export. Thin adapters over `services::listener` and the listener
//! library.
use crate::bridge::{
    CaptureDetail, CaptureExportForm, CaptureSummary, ClearCapturesForm, ClearResult,
    FileJobResult, ForwardRuleView, InspectorFacets, InspectorFilter, InspectorPage,
    InspectorQuery, ListenerAddressForm, ListenerView, ReplayForm, ReplayResult, RetentionForm,
    SignatureCheck, SignatureReport, TestMode, TunnelSaved,
};
use crate::error::Result;
use crate::events::summary;
use crate::services::{captures, listener};
use crate::state::AppState;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::KeySource;
use tauri::{AppHandle, State};

#[tauri::command]
pub fn listener_status(state: State<'_, AppState>) -> ListenerView {
    listener::view(&state)
}

#[tauri::command]
pub async fn listener_start(app: AppHandle, state: State<'_, AppState>) -> Result<ListenerView> {
    listener::start(&app).await?;
    Ok(listener::view(&state))
}

#[tauri::command]
pub fn listener_stop(app: AppHandle, state: State<'_, AppState>) -> ListenerView {
    listener::stop(&app);
    listener::view(&state)
}

/// Moves the listener to another address and path (kept in the settings).
#[tauri::command]
pub async fn set_listener_address(
    app: AppHandle,
    state: State<'_, AppState>,
    form: ListenerAddressForm,
) -> Result<ListenerView> {
    listener::move_to(&app, form).await?;
    Ok(listener::view(&state))
}

#[tauri::command]
pub async fn set_retention(
    state: State<'_, AppState>,
    form: RetentionForm,
) -> Result<ListenerView> {
    listener::set_retention(&state, form).await?;
    Ok(listener::view(&state))
}

/// Deletes the given captures (what the inspector's filter shows), or all of them.
#[tauri::command]
pub async fn clear_captures(
    state: State<'_, AppState>,
    form: ClearCapturesForm,
) -> Result<ClearResult> {
    let cleared = captures::clear(&state, form).await?;
    Ok(ClearResult { cleared })
}

/// Saves the active connection's tunnel URL, checks it in the background, and offers to
/// re-point the subscriptions that still use the URL it replaced.
#[tauri::command]
pub async fn set_tunnel_url(
    app: AppHandle,
    state: State<'_, AppState>,
    url: Option<String>,
) -> Result<TunnelSaved> {
    let replaced = listener::set_tunnel_url(&state, url)?;
    crate::services::tunnel::check_in_background(app.clone());
    let repoint = crate::services::subscriptions::repoint_offer(&state, replaced).await?;
    Ok(TunnelSaved {
        listener: listener::view(&state),
        repoint,
    })
}

/// Saves the forward rules and applies them to the running listener.
#[tauri::command]
pub fn set_forward_rules(
    state: State<'_, AppState>,
    rules: Vec<ForwardRuleView>,
) -> Result<ListenerView> {
    listener::set_forward_rules(&state, rules)?;
    Ok(listener::view(&state))
}

#[tauri::command]
pub fn set_test_mode(state: State<'_, AppState>, mode: TestMode) -> Result<ListenerView> {
    listener::set_test_mode(&state, mode)?;
    Ok(listener::view(&state))
}

fn store(state: &AppState) -> Result<partner_listener::Store> {
    state.captures()
}

/// One window of the inspector's list, read from the store.
#[tauri::command]
pub async fn inspector_page(
    state: State<'_, AppState>,
    query: InspectorQuery,
) -> Result<InspectorPage> {
    captures::page(&state, query).await
}

/// The inspector filter's choices and the verdict counts.
#[tauri::command]
pub async fn inspector_facets(
    state: State<'_, AppState>,
    filter: InspectorFilter,
) -> Result<InspectorFacets> {
    captures::facets(&state, filter).await
}

/// The attempts folded under a notification's row.
#[tauri::command]
pub async fn capture_attempts(state: State<'_, AppState>, id: i64) -> Result<Vec<CaptureSummary>> {
    captures::attempts(&state, id).await
}

#[tauri::command]
pub fn capture_detail(state: State<'_, AppState>, id: i64) -> Result<CaptureDetail> {
    let store = store(&state)?;
    let capture = store.get(id)?;
    let raw_body = capture.body_text().unwrap_or_default();
    let pretty_body = serde_json::from_str::<serde_json::Value>(&raw_body)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok());
    let attempts = store.attempts_of(id)?.iter().map(summary).collect();
    Ok(CaptureDetail {
        summary: summary(&capture),
        headers: capture
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        raw_body,
        pretty_body,
        resource_ref: capture.fields.resource_ref.clone(),
        attempts,
        answered_status: capture.response.status,
        outbound: store
            .outbound_of(id)?
            .iter()
            .map(captures::outbound_view)
            .collect(),
        open: captures::open_resource(&capture, state.base_url().as_deref()),
    })
}

/// The signature debugger. `partner_listener::debugger` does the diagnosis (every known key,
/// and the body variants a known mistake produces: re-serialised JSON, a trailing newline, a
/// text encoding, a signature in another encoding, a key that breaks the rule); the shell adds
/// the expected signature under each of the subscription's keys for display, and an optional
/// pasted key (never stored).
#[tauri::command]
pub fn signature_report(
    state: State<'_, AppState>,
    id: i64,
    pasted_key: Option<String>,
) -> Result<SignatureReport> {
    let capture = store(&state)?.get(id)?;
    let pasted = pasted_key.filter(|k| !k.is_empty()).map(Secret::new);
    let mut report = signature_view(&capture, state.keys.as_ref(), pasted, chrono::Utc::now());
    if let partner_local::KeychainHealth::Unavailable(why) = state.keys.health() {
        report.explanation = format!(
            "The keychain was not available when last asked ({why}), so this subscription's keys may not be loaded: unlock it and use Try again on the banner. {}",
            report.explanation
        );
    }
    Ok(report)
}

/// The pasted key's label in the checks.
const PASTED_KEY: &str = "pasted key";

/// [`signature_report`] for one capture and a key source.
pub fn signature_view(
    capture: &partner_listener::Capture,
    keys: &dyn KeySource,
    pasted: Option<Secret>,
    now: chrono::DateTime<chrono::Utc>,
) -> SignatureReport {
    let body = capture.body.as_deref().unwrap_or_default();
    let received = capture.header(SIGNATURE_HEADER).map(str::to_string);
    let subscription = capture.header(SUBSCRIPTION_HEADER).unwrap_or_default();
    let mut labelled: Vec<(String, Secret)> = Vec::new();
    if let Some(known) = keys.keys(subscription) {
        labelled.push(("current key".into(), known.current.clone()));
        if let Some(previous) = known.previous {
            labelled.push(("previous key".into(), previous.key));
        }
    }
    if let Some(pasted) = pasted {
        labelled.push((PASTED_KEY.into(), pasted));
    }
    let checks: Vec<SignatureCheck> = labelled
        .iter()
        .map(|(label, key)| SignatureCheck {
            key_label: label.clone(),
            expected: signature::sign(key.expose().as_bytes(), body),
            matches: received
                .as_deref()
                .is_some_and(|r| signature::verify(key.expose().as_bytes(), body, r)),
        })
        .collect();
    let pasted_matches = checks
        .iter()
        .any(|c| c.key_label == PASTED_KEY && c.matches);
    let diagnosis = partner_listener::diagnose_capture(capture, keys, now);
    let mut sentences = Vec::new();
    if pasted_matches {
        sentences.push("The signature matches the pasted key: the sender signs with it; rotate the subscription to that key, or give the sender the current one.".to_string());
    }
    sentences.extend(
        diagnosis
            .diagnoses
            .iter()
            .filter(|d| !(pasted_matches && **d == partner_listener::Diagnosis::NoExplanation))
            .map(ToString::to_string),
    );
    SignatureReport {
        received,
        body_bytes: u32::try_from(body.len()).unwrap_or(u32::MAX),
        body_sha256: sha256_hex(body),
        checks,
        explanation: sentences.join(" "),
    }
}

fn sha256_hex(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Replays a capture to this listener or to any URL: unchanged, or with an edited body
/// re-signed with the subscription's current key. Either way it carries `Svc-Replay: 1` and is
/// kept as a replay, never counted as the service's attempt.
#[tauri::command]
pub async fn replay_capture(state: State<'_, AppState>, form: ReplayForm) -> Result<ReplayResult> {
    listener::replay(&state, form).await
}

/// Exports the chosen or filtered captures (JSON Lines or HAR 1.2) through the save dialog.
#[tauri::command]
pub async fn export_captures(app: AppHandle, form: CaptureExportForm) -> Result<FileJobResult> {
    captures::export(&app, form).await
}

/// Imports captures from JSON Lines through the open dialog.
#[tauri::command]
pub async fn import_captures(app: AppHandle, job_id: String) -> Result<FileJobResult> {
    captures::import(&app, job_id).await
}

/// Stops an export or import.
#[tauri::command]
pub fn cancel_job(state: State<'_, AppState>, job_id: String) {
    crate::services::jobs::cancel(&state, &job_id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::tunnel::tests::running_listener_with;
    use partner_listener::MemoryKeys;
    use std::sync::Arc;

    const SUB: &str = "sub-1";
    const KEY: &str = "Current#Key0123456789abcdefghijKLMN";
    const OTHER: &str = "Sender#Key0123456789abcdefghijKLMNO";
    const COMPACT: &str = r#"{"eventId":"e1","eventTime":"2026-01-01T00:00:00Z","eventType":"created","meta":{"instanceId":"i","resourceId":"r","resourceRef":"http://127.0.0.1/partner/v2/transactions/r","resourceType":"urn:svc:partner:transaction"}}"#;

    /// Posts `body` signed over `signed_body` with `key` to the listener; returns the capture.
    async fn deliver(
        running: &crate::state::RunningListener,
        key: &str,
        signed_body: &str,
        body: &str,
    ) -> partner_listener::Capture {
        reqwest::Client::new()
            .post(running.url())
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(
                SIGNATURE_HEADER,
                signature::sign(key.as_bytes(), signed_body.as_bytes()),
            )
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let store = running.listener.store();
        let newest = store
            .query(&partner_listener::CaptureFilter::default(), 0, 1)
            .unwrap()
            .items;
        store.get(newest[0].id).unwrap()
    }

    /// The app's debugger is the library's: what arrived at a real listener is explained by
    /// the library's findings, in its words; the pasted key is checked beside the known ones.
    #[tokio::test]
    async fn the_signature_debugger_words_the_librarys_diagnosis() {
        let keys = Arc::new(MemoryKeys::new());
        keys.insert(SUB, KEY);
        let (running, dir) = running_listener_with(keys.clone()).await;
        let now = chrono::Utc::now();

        let valid = deliver(&running, KEY, COMPACT, COMPACT).await;
        let view = signature_view(&valid, keys.as_ref(), None, now);
        assert!(view.checks[0].matches, "{view:?}");
        assert!(
            view.explanation
                .starts_with("The signature matches the current key"),
            "{}",
            view.explanation
        );

        // Signed compact, re-serialised on the way (keys already sorted, as serde_json writes
        // them): a finding only the library's debugger makes.
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(COMPACT).unwrap(),
        )
        .unwrap();
        let reserialised = deliver(&running, KEY, COMPACT, &pretty).await;
        let view = signature_view(&reserialised, keys.as_ref(), None, now);
        assert!(!view.checks[0].matches);
        assert!(
            view.explanation.contains("re-serialised"),
            "{}",
            view.explanation
        );

        // Another sender's key: nothing known explains it until the user pastes that key.
        let foreign = deliver(&running, OTHER, COMPACT, COMPACT).await;
        let view = signature_view(&foreign, keys.as_ref(), None, now);
        assert!(
            view.explanation
                .starts_with("No known key gives this signature"),
            "{}",
            view.explanation
        );
        let view = signature_view(&foreign, keys.as_ref(), Some(Secret::new(OTHER)), now);
        let pasted = view
            .checks
            .iter()
            .find(|c| c.key_label == PASTED_KEY)
            .unwrap();
        assert!(pasted.matches);
        assert!(
            view.explanation
                .starts_with("The signature matches the pasted key"),
            "{}",
            view.explanation
        );
        assert!(
            !view.explanation.contains("No known key"),
            "{}",
            view.explanation
        );
        let shown = format!("{view:?}");
        assert!(
            !shown.contains(KEY) && !shown.contains(OTHER),
            "no key in the report"
        );

        running.stop.cancel();
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The notifications the service should have sent the listener and that never arrived.
#[tauri::command]
pub async fn find_missed(
    app: AppHandle,
    form: crate::bridge::MissedForm,
) -> Result<partner_local::missed::MissedReport> {
    crate::services::missed::find(&app, form).await
}

#[tauri::command]
pub fn cancel_missed(state: State<'_, AppState>) {
    crate::services::missed::cancel(&state);
}

/// Writes a redacted evidence bundle (HAR 1.2 and a Markdown summary) for a support ticket.
#[tauri::command]
pub async fn evidence_bundle(
    state: State<'_, AppState>,
    form: crate::bridge::EvidenceForm,
) -> Result<crate::bridge::EvidenceResult> {
    crate::services::evidence::bundle(&state, form).await
}

/// What the service did: the sandbox's delivery records, with the captures of each.
#[tauri::command]
pub async fn sandbox_deliveries(
    state: State<'_, AppState>,
) -> Result<Vec<crate::bridge::DeliveryView>> {
    crate::services::deliveries::list(&state).await
}

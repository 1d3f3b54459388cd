//! Webhooks screen: the listener on/off, tunnel URL (its check is `commands::tunnel`), test
//! mode, the inspector's captures, the signature debugger, replay and export.
use crate::bridge::{
    CaptureDetail, CaptureSummary, ExportFormat, ExportResult, ListenerView, ReplayForm,
    ReplayResult, SignatureCheck, SignatureReport, TestMode,
};
use crate::commands::listings::{export_path, write_export};
use crate::error::{AppError, ErrorKind, Result};
use crate::events::{start_listener, summary};
use crate::state::AppState;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::{Capture, CaptureFilter, KeySource};
use std::time::Duration;
use tauri::{AppHandle, State};

/// The listener's test mode from the screen's (on/off, status, delay).
pub fn listener_test_mode(mode: &TestMode) -> partner_listener::TestMode {
    if !mode.enabled {
        return partner_listener::TestMode::default();
    }
    partner_listener::TestMode {
        status: Some(mode.status),
        delay: (mode.delay_ms > 0).then(|| Duration::from_millis(mode.delay_ms)),
        ..partner_listener::TestMode::default()
    }
}

fn view(state: &AppState) -> ListenerView {
    let inner = state.lock();
    let running = inner.listener.as_ref();
    ListenerView {
        running: running.is_some(),
        address: running.map(|r| r.addr.ip().to_string()),
        port: running.map(|r| r.addr.port()).or(inner.listener_port),
        callback_url: inner
            .tunnel_url
            .clone()
            .or_else(|| running.map(|r| r.url())),
        tunnel_url: inner.tunnel_url.clone(),
        test_mode: inner.test_mode.clone(),
    }
}

#[tauri::command]
pub fn listener_status(state: State<'_, AppState>) -> ListenerView {
    view(&state)
}

#[tauri::command]
pub async fn listener_start(
    app: AppHandle,
    state: State<'_, AppState>,
    port: Option<u16>,
) -> Result<ListenerView> {
    if state.lock().listener.is_none() {
        start_listener(&app, port.unwrap_or(0)).await?;
    }
    Ok(view(&state))
}

#[tauri::command]
pub fn listener_stop(state: State<'_, AppState>) -> ListenerView {
    if let Some(running) = state.lock().listener.take() {
        running.stop.cancel();
    }
    view(&state)
}

#[tauri::command]
pub fn set_tunnel_url(state: State<'_, AppState>, url: Option<String>) -> Result<ListenerView> {
    let url = url
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .filter(|u| !u.is_empty());
    if let Some(url) = &url {
        partner_api::product::check_callback_url(url, true)
            .map_err(|e| AppError::invalid(format!("The tunnel {e}.")))?;
    }
    state.lock().tunnel_url = url;
    Ok(view(&state))
}

#[tauri::command]
pub fn set_test_mode(state: State<'_, AppState>, mode: TestMode) -> Result<ListenerView> {
    let listener_mode = listener_test_mode(&mode);
    listener_mode.validate()?;
    if let Some(running) = state.lock().listener.as_ref() {
        running.listener.set_test_mode(listener_mode)?;
    }
    state.lock().test_mode = mode;
    Ok(view(&state))
}

fn store(state: &AppState) -> Result<partner_listener::Store> {
    Ok(state.listener()?.listener.store().clone())
}

/// Every capture's summary, newest first.
#[tauri::command]
pub async fn captures(state: State<'_, AppState>) -> Result<Vec<CaptureSummary>> {
    let mut all = read_all(store(&state)?, summary).await?;
    all.reverse();
    Ok(all)
}

/// Every stored capture through `row`, oldest first, read on the blocking pool: at 100,000
/// captures the read takes long enough that it must not hold an async worker.
async fn read_all<T: Send + 'static>(
    store: partner_listener::Store,
    row: impl Fn(&Capture) -> T + Send + 'static,
) -> Result<Vec<T>> {
    tauri::async_runtime::spawn_blocking(move || {
        let mut rows = Vec::new();
        store.for_each(&CaptureFilter::default(), |c| {
            rows.push(row(&c));
            Ok(())
        })?;
        Ok::<_, AppError>(rows)
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Reading captures failed: {e}."),
            "Try again.",
        )
    })?
}

/// The transaction id in a `resourceRef` (`…/transactions/<id>[/events/<event>]`).
fn transaction_of(resource_ref: &str) -> Option<String> {
    let rest = resource_ref.split("/transactions/").nth(1)?;
    let id = rest.split('/').next()?;
    (!id.is_empty()).then(|| id.to_string())
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
        transaction_id: capture
            .fields
            .resource_ref
            .as_deref()
            .and_then(transaction_of),
        attempts,
        answered_status: capture.response.status,
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
    Ok(signature_view(
        &capture,
        state.keys.as_ref(),
        pasted,
        chrono::Utc::now(),
    ))
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

/// Replays a capture to this listener: unchanged, or with an edited body re-signed with the
/// subscription's current key (the listener's rule).
#[tauri::command]
pub async fn replay_capture(state: State<'_, AppState>, form: ReplayForm) -> Result<ReplayResult> {
    let running = state.listener()?;
    let target = url::Url::parse(&running.url()).map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Bad listener URL: {e}."),
            "Restart the listener.",
        )
    })?;
    let record = running
        .listener
        .replay(
            form.capture_id,
            Some(target),
            form.body.map(String::into_bytes),
        )
        .await?;
    let status = record.status.ok_or_else(|| {
        AppError::new(
            ErrorKind::Listener,
            record
                .error
                .clone()
                .unwrap_or_else(|| "The replay got no answer.".into()),
            "Check that the listener is running.",
        )
    })?;
    // The replayed request is the newest capture of the store.
    let newest = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 1)?
        .items
        .into_iter()
        .next();
    Ok(ReplayResult {
        status,
        verdict: newest.map(|c| c.verdict),
    })
}

#[tauri::command]
pub async fn export_captures(
    state: State<'_, AppState>,
    format: ExportFormat,
    path: Option<String>,
) -> Result<ExportResult> {
    let store = store(&state)?;
    let path = export_path(&state, path.as_deref(), "captures", format)?;
    let rows = read_all(store, export_row).await?;
    write_export(&path, format, &rows)?;
    Ok(ExportResult {
        path: path.display().to_string(),
        count: rows.len() as u64,
    })
}

/// A capture as an export row: its summary, its body as text and its signature header.
fn export_row(c: &Capture) -> serde_json::Value {
    let mut row = serde_json::to_value(summary(c)).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut row {
        map.insert(
            "body".into(),
            serde_json::Value::String(c.body_text().unwrap_or_default()),
        );
        map.insert(
            "signature".into(),
            c.header(SIGNATURE_HEADER)
                .map(|s| serde_json::Value::String(s.into()))
                .unwrap_or_default(),
        );
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::tunnel::tests::running_listener_with;
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
        let newest = store.query(&CaptureFilter::default(), 0, 1).unwrap().items;
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

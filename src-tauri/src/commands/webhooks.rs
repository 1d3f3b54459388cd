//! Webhooks screen: the listener on/off, tunnel URL and check, test mode, the inspector's
//! captures, the signature debugger, replay and export.
use crate::bridge::{
    CaptureDetail, CaptureSummary, ExportFormat, ExportResult, ListenerView, ReplayForm,
    ReplayResult, SignatureCheck, SignatureReport, TestMode,
};
use crate::commands::listings::{export_path, write_export};
use crate::error::{AppError, ErrorKind, Result};
use crate::events::{start_listener, summary, verdict};
use crate::state::AppState;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::{CaptureFilter, KeySource};
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
    let store = store(&state)?;
    tauri::async_runtime::spawn_blocking(move || {
        let mut all = Vec::new();
        store.for_each(&CaptureFilter::default(), |c| {
            all.push(summary(&c));
            Ok(())
        })?;
        all.reverse();
        Ok::<_, AppError>(all)
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

/// The signature debugger: the received `Svc-Signature` beside what each known key (and an
/// optional pasted one, never stored) gives over the exact bytes that arrived.
#[tauri::command]
pub fn signature_report(
    state: State<'_, AppState>,
    id: i64,
    pasted_key: Option<String>,
) -> Result<SignatureReport> {
    let capture = store(&state)?.get(id)?;
    let body = capture.body.clone().unwrap_or_default();
    let received = capture.header(SIGNATURE_HEADER).map(str::to_string);
    let subscription = capture
        .header(SUBSCRIPTION_HEADER)
        .unwrap_or_default()
        .to_string();
    let mut keys: Vec<(String, Secret)> = Vec::new();
    if let Some(known) = state.keys.keys(&subscription) {
        keys.push(("current key".into(), known.current.clone()));
        if let Some(previous) = known.previous {
            keys.push(("previous key".into(), previous.key));
        }
    }
    if let Some(pasted) = pasted_key.filter(|k| !k.is_empty()) {
        keys.push(("pasted key".into(), Secret::new(pasted)));
    }
    let checks: Vec<SignatureCheck> = keys
        .iter()
        .map(|(label, key)| SignatureCheck {
            key_label: label.clone(),
            expected: signature::sign(key.expose().as_bytes(), &body),
            matches: received
                .as_deref()
                .is_some_and(|r| signature::verify(key.expose().as_bytes(), &body, r)),
        })
        .collect();
    let explanation = match (&received, checks.iter().find(|c| c.matches)) {
        (None, _) => "No Svc-Signature header arrived: the sender did not sign this request. Check that the subscription has a signing key.".to_string(),
        (Some(_), Some(hit)) => format!("The signature matches the {}: the body arrived exactly as signed.", hit.key_label),
        (Some(_), None) if checks.is_empty() => format!("The listener has no key for subscription `{subscription}`: add the subscription from this console, or paste its key to check it."),
        (Some(_), None) => "No known key gives this signature: the sender signs with another key (rotate the key or paste the sender's to compare), or the body was changed on the way.".to_string(),
    };
    Ok(SignatureReport {
        received,
        body_bytes: u32::try_from(body.len()).unwrap_or(u32::MAX),
        body_sha256: sha256_hex(&body),
        checks,
        explanation,
    })
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
        verdict: newest.map(|c| verdict(c.verdict)),
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
    let rows = tauri::async_runtime::spawn_blocking(move || {
        let mut rows = Vec::new();
        store.for_each(&CaptureFilter::default(), |c| {
            let mut row = serde_json::to_value(summary(&c)).unwrap_or_default();
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
            rows.push(row);
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
    })??;
    write_export(&path, format, &rows)?;
    Ok(ExportResult {
        path: path.display().to_string(),
        count: rows.len() as u64,
    })
}

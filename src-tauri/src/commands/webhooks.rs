//! Webhooks screen: the listener on/off and its address, the tunnel URL (its check is
//! `commands::tunnel`), test mode, retention, the inspector's captures, clear, the signature
//! debugger, replay, comparison and export. Adapters over `services::listener`, `services::captures`,
//! `services::tunnel` and `services::signatures`.
use partner_console_core::bridge::{
    CaptureDetail, CaptureExportForm, CaptureFilter, CaptureSummary, ClearCapturesForm,
    ClearResult, Comparison, FileJobResult, ForwardRuleView, InspectorFacets, InspectorPage,
    InspectorQuery, ListenerAddressForm, ListenerView, ReplayForm, ReplayResult, RetentionForm,
    SignatureReport, TestMode, TunnelSaved,
};
use partner_console_core::Result;

use partner_console_core::services::{captures, desktop_notices, listener, tunnel};
use partner_console_core::Console;
use partner_local::DesktopNotices;
use tauri::State;

#[tauri::command]
pub fn listener_status(state: State<'_, Console>) -> ListenerView {
    listener::view(&state)
}

#[tauri::command]
pub async fn listener_start(state: State<'_, Console>) -> Result<ListenerView> {
    listener::view_after(&state, listener::start(&state).await)
}

#[tauri::command]
pub fn listener_stop(state: State<'_, Console>) -> ListenerView {
    listener::stop(&state)
}

/// Moves the listener to another address and path (kept in the settings).
#[tauri::command]
pub async fn set_listener_address(
    state: State<'_, Console>,
    form: ListenerAddressForm,
) -> Result<ListenerView> {
    listener::view_after(&state, listener::move_to(&state, form).await)
}

#[tauri::command]
pub async fn set_retention(state: State<'_, Console>, form: RetentionForm) -> Result<ListenerView> {
    listener::view_after(&state, listener::set_retention(&state, form).await)
}

/// Deletes the given captures (what the inspector's filter shows), or all of them.
#[tauri::command]
pub async fn clear_captures(
    state: State<'_, Console>,
    form: ClearCapturesForm,
) -> Result<ClearResult> {
    captures::clear(&state, form)
        .await
        .map(|cleared| ClearResult { cleared })
}

/// Saves the active connection's tunnel URL, checks it in the background, and offers to
/// re-point the subscriptions that still use the URL it replaced.
#[tauri::command]
pub async fn set_tunnel_url(state: State<'_, Console>, url: Option<String>) -> Result<TunnelSaved> {
    tunnel::save_url(&state, url).await
}

/// Saves the forward rules and applies them to the running listener.
#[tauri::command]
pub async fn set_forward_rules(
    state: State<'_, Console>,
    rules: Vec<ForwardRuleView>,
) -> Result<ListenerView> {
    state
        .blocking(move |console| {
            listener::view_after(console, listener::set_forward_rules(console, rules))
        })
        .await
}

#[tauri::command]
pub async fn set_test_mode(state: State<'_, Console>, mode: TestMode) -> Result<ListenerView> {
    state
        .blocking(move |console| {
            listener::view_after(console, listener::set_test_mode(console, mode))
        })
        .await
}

/// One window of the inspector's list, read from the store.
#[tauri::command]
pub async fn inspector_page(
    state: State<'_, Console>,
    query: InspectorQuery,
) -> Result<InspectorPage> {
    captures::page(&state, query).await
}

/// The inspector filter's choices and the verdict counts.
#[tauri::command]
pub async fn inspector_facets(
    state: State<'_, Console>,
    filter: CaptureFilter,
) -> Result<InspectorFacets> {
    captures::facets(&state, filter).await
}

/// Readies the store's read connections for the inspector's first searches.
#[tauri::command]
pub async fn inspector_warm_up(state: State<'_, Console>) -> Result<()> {
    captures::warm_up(&state).await
}

/// The attempts folded under a notification's row.
#[tauri::command]
pub async fn capture_attempts(state: State<'_, Console>, id: i64) -> Result<Vec<CaptureSummary>> {
    captures::attempts(&state, id).await
}

#[tauri::command]
pub async fn capture_detail(state: State<'_, Console>, id: i64) -> Result<CaptureDetail> {
    state
        .blocking(move |console| captures::detail(console, id))
        .await
}

#[tauri::command]
pub async fn compare_captures(
    state: State<'_, Console>,
    first: i64,
    second: i64,
) -> Result<Comparison> {
    state
        .blocking(move |console| captures::compare(console, first, second))
        .await
}

/// Replays a capture to this listener or to any URL: unchanged, or with an edited body
/// re-signed with the subscription's current key. Either way it carries `Svc-Replay: 1` and is
/// kept as a replay, never counted as the service's attempt.
#[tauri::command]
pub async fn replay_capture(state: State<'_, Console>, form: ReplayForm) -> Result<ReplayResult> {
    listener::replay(&state, form).await
}

/// Sends the chosen or filtered captures again to a receiver, paced, as a job; each answer is
/// kept beside its capture.
#[tauri::command]
pub async fn send_captures_again(
    state: State<'_, Console>,
    form: partner_console_core::bridge::SendAgainForm,
) -> Result<partner_console_core::bridge::SendReport> {
    partner_console_core::services::send_again::send_again(&state, form).await
}

/// Exports the chosen or filtered captures (JSON Lines or HAR 1.2) through the save dialog.
#[tauri::command]
pub async fn export_captures(
    state: State<'_, Console>,
    form: CaptureExportForm,
) -> Result<FileJobResult> {
    captures::export(&state, form).await
}

/// Imports captures from JSON Lines through the open dialog.
#[tauri::command]
pub async fn import_captures(state: State<'_, Console>, job_id: String) -> Result<FileJobResult> {
    captures::import(&state, job_id).await
}

/// Stops an export or import.
#[tauri::command]
pub fn cancel_job(state: State<'_, Console>, job_id: String) {
    partner_console_core::services::jobs::cancel(&state, &job_id);
}

/// The notifications the service should have sent the listener and that never arrived.
#[tauri::command]
pub async fn find_missed(
    state: State<'_, Console>,
    form: partner_console_core::bridge::MissedForm,
) -> Result<partner_local::missed::MissedReport> {
    partner_console_core::services::missed::find(&state, form).await
}

/// Sends missed notifications again, built and signed as the service would have sent them.
#[tauri::command]
pub async fn recover_missed(
    state: State<'_, Console>,
    form: partner_console_core::bridge::RecoverForm,
) -> Result<partner_local::recover::RecoveryReport> {
    partner_console_core::services::missed::resend(&state, form).await
}

#[tauri::command]
pub fn cancel_missed(state: State<'_, Console>) {
    partner_console_core::services::missed::cancel(&state);
}

/// Writes a redacted evidence bundle (HAR 1.2 and a Markdown summary) for a support ticket.
#[tauri::command]
pub async fn evidence_bundle(
    state: State<'_, Console>,
    form: partner_console_core::bridge::EvidenceForm,
) -> Result<partner_console_core::bridge::EvidenceResult> {
    partner_console_core::services::evidence::bundle(&state, form).await
}

/// What the service did: the sandbox's delivery records, with the captures of each.
#[tauri::command]
pub async fn sandbox_deliveries(
    state: State<'_, Console>,
) -> Result<Vec<partner_console_core::bridge::DeliveryView>> {
    partner_console_core::services::deliveries::list(&state).await
}

/// The signature debugger: `partner_listener::debugger`'s diagnosis over the subscription's
/// keys and an optional pasted key (never stored).
#[tauri::command]
pub async fn signature_report(
    state: State<'_, Console>,
    id: i64,
    pasted_key: Option<String>,
) -> Result<SignatureReport> {
    state
        .blocking(move |console| {
            partner_console_core::services::signatures::report(console, id, pasted_key)
        })
        .await
}

/// Which desktop notifications are on.
#[tauri::command]
pub fn desktop_notices(state: State<'_, Console>) -> DesktopNotices {
    desktop_notices::get(&state)
}

/// Turns desktop notifications on or off, each kind on its own.
#[tauri::command]
pub async fn set_desktop_notices(
    state: State<'_, Console>,
    notices: DesktopNotices,
) -> Result<DesktopNotices> {
    state
        .blocking(move |console| desktop_notices::set(console, notices))
        .await
}

//! Support screen and "Go to": the active connection's local index (sync, questions, export,
//! forget) and opening anything by its id. Thin adapters over `services::support`.
use partner_console_core::bridge::{
    FileJobResult, GoToTarget, SupportCounts, SupportExportForm, SupportFilter, SupportIndexView,
    SupportPage, SupportQuery, SupportSyncForm, SupportSyncResult,
};
use partner_console_core::services::support;
use partner_console_core::Console;
use partner_console_core::Result;
use tauri::State;

#[tauri::command]
pub async fn support_index(state: State<'_, Console>) -> Result<SupportIndexView> {
    support::view(&state).await
}

#[tauri::command]
pub async fn support_sync(
    state: State<'_, Console>,
    form: SupportSyncForm,
) -> Result<SupportSyncResult> {
    support::sync(&state, form).await
}

#[tauri::command]
pub async fn support_find(state: State<'_, Console>, query: SupportQuery) -> Result<SupportPage> {
    support::find(&state, query).await
}

#[tauri::command]
pub async fn support_counts(
    state: State<'_, Console>,
    filter: SupportFilter,
) -> Result<SupportCounts> {
    support::counts(&state, filter).await
}

#[tauri::command]
pub async fn support_export(
    state: State<'_, Console>,
    form: SupportExportForm,
) -> Result<FileJobResult> {
    support::export(&state, form).await
}

#[tauri::command]
pub async fn support_forget(state: State<'_, Console>) -> Result<SupportIndexView> {
    support::forget(&state).await
}

/// Opens anything by its id or `resourceRef`, on the active connection.
#[tauri::command]
pub async fn go_to(state: State<'_, Console>, text: String) -> Result<GoToTarget> {
    support::go_to(&state, &text).await
}

/// The `partner-console://` link to a transaction (or one of its events) or a product on the
/// active connection.
#[tauri::command]
pub fn resource_link(
    state: State<'_, Console>,
    screen: String,
    id: String,
    event_id: Option<String>,
) -> Result<String> {
    partner_console_core::services::links::link_to(&state, &screen, &id, event_id.as_deref())
}

/// The route a link asked for before the page was listening, once.
#[tauri::command]
pub fn take_pending_link(state: State<'_, Console>) -> Option<String> {
    partner_console_core::services::links::take_pending(&state)
}

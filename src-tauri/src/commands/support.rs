//! Support screen and "Go to": the active connection's local index (sync, questions, export,
//! forget) and opening anything by its id. Thin adapters over `services::support`.
use crate::bridge::{
    FileJobResult, GoToTarget, SupportCounts, SupportExportForm, SupportFilter, SupportIndexView,
    SupportPage, SupportQuery, SupportSyncForm, SupportSyncResult,
};
use crate::error::Result;
use crate::services::support;
use crate::state::AppState;
use tauri::{AppHandle, State};

#[tauri::command]
pub async fn support_index(state: State<'_, AppState>) -> Result<SupportIndexView> {
    support::view(&state).await
}

#[tauri::command]
pub async fn support_sync(app: AppHandle, form: SupportSyncForm) -> Result<SupportSyncResult> {
    support::sync(&app, form).await
}

#[tauri::command]
pub async fn support_find(state: State<'_, AppState>, query: SupportQuery) -> Result<SupportPage> {
    support::find(&state, query).await
}

#[tauri::command]
pub async fn support_counts(
    state: State<'_, AppState>,
    filter: SupportFilter,
) -> Result<SupportCounts> {
    support::counts(&state, filter).await
}

#[tauri::command]
pub async fn support_export(app: AppHandle, form: SupportExportForm) -> Result<FileJobResult> {
    support::export(&app, form).await
}

#[tauri::command]
pub async fn support_forget(state: State<'_, AppState>) -> Result<SupportIndexView> {
    support::forget(&state).await
}

/// Opens anything by its id or `resourceRef`, on the active connection.
#[tauri::command]
pub async fn go_to(state: State<'_, AppState>, text: String) -> Result<GoToTarget> {
    support::go_to(&state, &text).await
}

/// The `partner-console://` link to a transaction (or one of its events) or a product on the
/// active connection.
#[tauri::command]
pub fn resource_link(
    state: State<'_, AppState>,
    screen: String,
    id: String,
    event_id: Option<String>,
) -> Result<String> {
    crate::services::links::link_to(&state, &screen, &id, event_id.as_deref())
}

/// The route a link asked for before the page was listening, once.
#[tauri::command]
pub fn take_pending_link(state: State<'_, AppState>) -> Option<String> {
    crate::services::links::take_pending(&state)
}

//! The Calls and Audit log screens: thin adapters over `services::calls` and `services::audit`.
use partner_console_core::bridge::{AuditLogView, CallList, ExportFormat, FileJobResult};
use partner_console_core::Result;
use partner_console_core::{services, Console};
use tauri::State;

/// The active connection's calls after call `since` (0 for all kept).
#[tauri::command]
pub fn list_calls(state: State<'_, Console>, since: u64) -> Result<CallList> {
    services::calls::list(&state, since)
}

/// One call as a curl command, its secrets as shell variables.
#[tauri::command]
pub fn call_as_curl(state: State<'_, Console>, seq: u64) -> Result<String> {
    services::calls::curl(&state, seq)
}

/// The newest writes of the audit log (every connection, the CLI's too).
#[tauri::command]
pub async fn audit_log(state: State<'_, Console>) -> Result<AuditLogView> {
    services::audit::list(&state).await
}

/// The whole audit log, written where the user chooses.
#[tauri::command]
pub async fn export_audit_log(
    state: State<'_, Console>,
    format: ExportFormat,
) -> Result<FileJobResult> {
    services::audit::export(&state, format).await
}

//! The Calls panel: thin adapters over `services::calls`.
use partner_console_core::bridge::CallList;
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

//! The Calls panel and a saved connection's company network. Thin adapters over
//! `services::calls` and `services::connection_network`.
use partner_console_core::bridge::{AppStatus, CallList, NetworkChange};
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

/// New company-network settings for a saved connection, tried by signing in first.
#[tauri::command]
pub async fn change_connection_network(
    state: State<'_, Console>,
    change: NetworkChange,
) -> Result<AppStatus> {
    state.status_after(services::connection_network::change(&state, change).await)
}

//! The tunnel check of the Webhooks screen.
use partner_console_core::bridge::TunnelCheck;
use partner_console_core::{Console, Result};
use tauri::State;

#[tauri::command]
pub async fn check_tunnel(state: State<'_, Console>) -> Result<TunnelCheck> {
    partner_console_core::services::tunnel::check_now(&state).await
}

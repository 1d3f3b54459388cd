//! The tunnel check of the Webhooks screen: `services::tunnel` over the running listener.
use crate::bridge::TunnelCheck;
use crate::error::{AppError, ErrorKind, Result};
use crate::services::tunnel::run_tunnel_check;
use crate::state::AppState;
use partner_listener::tunnel;
use tauri::State;

/// The tunnel check: a probe signed with a one-time key goes to the tunnel URL and the running
/// listener's live feed is watched for it, so "reached" means this listener recorded it.
#[tauri::command]
pub async fn check_tunnel(state: State<'_, AppState>) -> Result<TunnelCheck> {
    let running = state.listener()?;
    let Some(tunnel) = crate::services::listener::tunnel_url(&state) else {
        return Err(AppError::new(
            ErrorKind::InvalidInput,
            "No tunnel URL is set.",
            "Paste the https:// URL your tunnel tool (ngrok, cloudflared) prints, save it, then check.",
        ));
    };
    Ok(run_tunnel_check(&running, &tunnel, tunnel::DEFAULT_TIMEOUT).await)
}

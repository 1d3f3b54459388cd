//! Token screen: state with deadlines, refresh now, revoke, introspection.
use partner_console_core::bridge::TokenView;
use partner_console_core::services::token;
use partner_console_core::{Console, Result};
use tauri::State;

#[tauri::command]
pub async fn token_state(state: State<'_, Console>) -> Result<TokenView> {
    token::current(&state)
}

/// Replaces the token with a new one now: the old one is revoked, a fresh one issued.
#[tauri::command]
pub async fn token_refresh(state: State<'_, Console>) -> Result<TokenView> {
    token::refresh(&state).await
}

#[tauri::command]
pub async fn token_revoke(state: State<'_, Console>) -> Result<TokenView> {
    token::revoke(&state).await
}

#[tauri::command]
pub async fn token_introspect(state: State<'_, Console>) -> Result<partner_api::Introspection> {
    token::introspect(&state).await
}

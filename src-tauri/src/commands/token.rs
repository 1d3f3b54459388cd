//! Token screen: state with deadlines, refresh now, revoke, introspection.
use crate::bridge::TokenView;
use crate::error::Result;
use crate::services::token::{now, token_view};
use crate::state::AppState;
use tauri::State;

#[tauri::command]
pub async fn token_state(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    Ok(token_view(&state, &client.tokens().state(), now(&state)))
}

/// Replaces the token with a new one now: the old one is revoked, a fresh one issued.
#[tauri::command]
pub async fn token_refresh(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    client.tokens().ensure_fresh().await?;
    Ok(token_view(&state, &client.tokens().state(), now(&state)))
}

#[tauri::command]
pub async fn token_revoke(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    Ok(token_view(&state, &client.tokens().state(), now(&state)))
}

#[tauri::command]
pub async fn token_introspect(state: State<'_, AppState>) -> Result<partner_api::Introspection> {
    Ok(state.client()?.tokens().introspect().await?)
}

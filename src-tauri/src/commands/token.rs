//! Token screen: state with deadlines, refresh now, revoke, introspection.
use crate::bridge::{TokenHistoryEntry, TokenPhase, TokenView};
use crate::error::Result;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use partner_client::TokenState;
use tauri::State;

/// The token view of a state, with the history so far.
pub fn token_view(state: &AppState, token: &TokenState, now: DateTime<Utc>) -> TokenView {
    let (phase, idle, max, error) = match token {
        TokenState::NoToken => (TokenPhase::None, None, None, None),
        TokenState::Active {
            idle_deadline,
            max_deadline,
        } => {
            let phase = if token.has_lapsed(now) {
                TokenPhase::Expired
            } else {
                TokenPhase::Active
            };
            (phase, Some(*idle_deadline), Some(*max_deadline), None)
        }
        TokenState::Refreshing => (TokenPhase::Active, None, None, None),
        TokenState::Revoked => (TokenPhase::Revoked, None, None, None),
        TokenState::Error { message } => (TokenPhase::Failed, None, None, Some(message.clone())),
    };
    TokenView {
        phase,
        issued_at: token.issued_at().map(|at| at.to_rfc3339()),
        idle_expires_at: idle.map(|d| d.to_rfc3339()),
        max_expires_at: max.map(|d| d.to_rfc3339()),
        now: now.to_rfc3339(),
        last_error: error,
        history: state.lock().token_history.clone(),
    }
}

/// A history line for a token state change.
pub fn history_entry(
    previous: &TokenState,
    next: &TokenState,
    now: DateTime<Utc>,
) -> Option<TokenHistoryEntry> {
    let (kind, detail) = match (previous, next) {
        (_, TokenState::Refreshing) => return None,
        (
            TokenState::Active {
                max_deadline: a, ..
            },
            TokenState::Active {
                max_deadline: b,
                idle_deadline,
            },
        ) if a == b => (
            "used",
            format!("idle expiry moved to {}", idle_deadline.format("%H:%M:%S")),
        ),
        (TokenState::Active { .. }, TokenState::Active { max_deadline, .. }) => (
            "refreshed",
            format!(
                "new token, lapses by {} at the latest",
                max_deadline.format("%H:%M:%S")
            ),
        ),
        (_, TokenState::Active { max_deadline, .. }) => (
            "issued",
            format!(
                "lapses by {} at the latest",
                max_deadline.format("%H:%M:%S")
            ),
        ),
        (_, TokenState::Revoked) => ("revoked", "the token was revoked".to_string()),
        (_, TokenState::Error { message }) => ("failed", message.clone()),
        (_, TokenState::NoToken) => ("cleared", "no token held".to_string()),
    };
    Some(TokenHistoryEntry {
        at: now.to_rfc3339(),
        kind: kind.to_string(),
        detail,
    })
}

fn now_of(state: &AppState) -> DateTime<Utc> {
    crate::embedded::now(state)
}

#[tauri::command]
pub async fn token_state(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    Ok(token_view(&state, &client.tokens().state(), now_of(&state)))
}

/// Replaces the token with a new one now: the old one is revoked, a fresh one issued.
#[tauri::command]
pub async fn token_refresh(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    client.tokens().ensure_fresh().await?;
    Ok(token_view(&state, &client.tokens().state(), now_of(&state)))
}

#[tauri::command]
pub async fn token_revoke(state: State<'_, AppState>) -> Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    Ok(token_view(&state, &client.tokens().state(), now_of(&state)))
}

#[tauri::command]
pub async fn token_introspect(state: State<'_, AppState>) -> Result<partner_api::Introspection> {
    Ok(state.client()?.tokens().introspect().await?)
}

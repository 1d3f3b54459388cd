//! The token as the Token screen and the top bar show it, and the watcher that sends every
//! change of it to the UI and into the history.
use crate::bridge::{TokenHistoryEntry, TokenPhase, TokenView};
use crate::console::{AppEvent, Console};
use crate::state::locked;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use partner_client::{PartnerClient, TokenState};
use tokio_util::sync::CancellationToken;

/// The time the token countdowns run on: the embedded sandbox's clock when it is the active
/// connection (so "advance clock" moves them), the system clock otherwise.
pub fn now(state: &AppState) -> DateTime<Utc> {
    state.now()
}

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
        history: locked(&state.token_history).clone(),
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

/// Sends every token state change of `client` to the UI and into the history, until `stop`.
pub fn watch(app: Console, client: PartnerClient, stop: CancellationToken) {
    app.clone().spawn(async move {
        let mut rx = client.tokens().subscribe();
        let mut previous = rx.borrow().clone();
        loop {
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                () = stop.cancelled() => return,
            }
            let next = rx.borrow_and_update().clone();
            let state = app.state();
            let now = now(state);
            if let Some(entry) = history_entry(&previous, &next, now) {
                state.record_token_event(entry);
            }
            app.emit(AppEvent::Token(token_view(state, &next, now)));
            previous = next;
        }
    });
}

/// The active connection's token as the Token screen shows it.
pub fn current(state: &AppState) -> crate::error::Result<TokenView> {
    let client = state.client()?;
    Ok(token_view(state, &client.tokens().state(), now(state)))
}

/// Replaces the token with a new one now: the old one is revoked, a fresh one issued.
pub async fn refresh(state: &AppState) -> crate::error::Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    client.tokens().ensure_fresh().await?;
    Ok(token_view(state, &client.tokens().state(), now(state)))
}

/// Revokes the token; the next call issues a new one.
pub async fn revoke(state: &AppState) -> crate::error::Result<TokenView> {
    let client = state.client()?;
    client.tokens().revoke().await?;
    Ok(token_view(state, &client.tokens().state(), now(state)))
}

/// What the service says of the token in use.
pub async fn introspect(state: &AppState) -> crate::error::Result<partner_api::Introspection> {
    Ok(state.client()?.tokens().introspect().await?)
}

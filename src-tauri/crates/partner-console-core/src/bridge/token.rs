//! The Token screen: the token's phase, deadlines and history.

use serde::Serialize;
use ts_rs::TS;

/// The token's state, without the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TokenPhase {
    None,
    Active,
    Expired,
    Revoked,
    Failed,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenHistoryEntry {
    /// ISO 8601 UTC.
    pub at: String,
    /// `issued`, `refreshed`, `used`, `expired`, `revoked`, `failed`.
    pub kind: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    pub phase: TokenPhase,
    pub issued_at: Option<String>,
    /// When the token lapses if it is not used again (15 minutes after last use).
    pub idle_expires_at: Option<String>,
    /// When it lapses however much it is used (120 minutes after issue).
    pub max_expires_at: Option<String>,
    /// The clock the countdowns run on (the sandbox clock for the embedded sandbox).
    pub now: String,
    pub last_error: Option<String>,
    pub history: Vec<TokenHistoryEntry>,
}

//! The Calls panel: every call the active connection's client made, as its call log keeps it
//! (redacted there: no token, secret or key in any field).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One call, summarised for the panel's row and its details.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CallSummary {
    /// Its number in the connection's call log, from 1.
    #[ts(type = "number")]
    pub seq: u64,
    /// When it started (RFC 3339).
    pub started_at: String,
    pub method: String,
    /// `/path?query`, secret-named query values replaced.
    pub target: String,
    /// The status the service answered with; none when it did not answer.
    pub status: Option<u16>,
    /// Why there was no answer (`timeout`, `network error`, `cancelled`, ...).
    pub error: Option<String>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Transient retries (not the waits the service asked for).
    pub retries: u32,
    /// Time spent waiting as the service asked (`Retry-After`).
    #[ts(type = "number")]
    pub waited_ms: u64,
    /// `header=value` of the service's request id.
    pub request_id: Option<String>,
    /// The answer's body size in bytes.
    #[ts(type = "number | null")]
    pub response_bytes: Option<u64>,
}

/// New calls of the active connection, batched (a few events a second at most).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CallBatch {
    /// The connection whose client made them.
    pub connection_id: String,
    pub calls: Vec<CallSummary>,
}

/// The calls kept for the active connection, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CallList {
    pub connection_id: String,
    pub calls: Vec<CallSummary>,
    /// Older calls the bounded log has let go.
    #[ts(type = "number")]
    pub dropped: u64,
}

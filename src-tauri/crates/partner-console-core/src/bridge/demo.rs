//! The Demo screen: what the lender's buttons did.

use serde::Serialize;
use ts_rs::TS;

/// What the demo buttons did, in words.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DemoOutcome {
    pub message: String,
    pub transaction_id: Option<String>,
    pub sandbox_now: String,
}

/// A fault on demand as the Demo screen asks for it (the sandbox's `NewFault`).
#[derive(Debug, Clone, serde::Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FaultForm {
    /// `any`, `token`, `introspection`, `revocation`, `products` or `transactions`.
    pub endpoint: String,
    pub status: Option<u16>,
    #[ts(type = "number | null")]
    pub retry_after_seconds: Option<u64>,
    #[ts(type = "number | null")]
    pub latency_ms: Option<u64>,
    pub drop: bool,
    /// The next N matching calls.
    pub count: u32,
}

/// A fault in force on the embedded sandbox.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FaultView {
    #[ts(type = "number")]
    pub id: u64,
    /// In one line: `products → 429 (Retry-After 2 s) · next 3 calls · applied 1`.
    pub description: String,
    #[ts(type = "number")]
    pub applied: u64,
}

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

//! Transaction detail: the partner's response.

use serde::Deserialize;
use ts_rs::TS;

/// The partner's response form for a transaction.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RespondForm {
    pub transaction_id: String,
    /// The response as the window wrote it, JSON: every field of the field notes (status,
    /// partnerStatus, referenceNumber, respondingParty, loan, resources, errors), checked by
    /// `TransactionResponse::from_json` before anything is sent.
    pub response: String,
    /// The transaction's id once more: a final status is sent only with it (the window asks
    /// first, and on a production connection has the user type it).
    pub confirm: Option<String>,
}

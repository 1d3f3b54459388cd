//! Transaction detail: the partner's response.

use serde::Deserialize;
use ts_rs::TS;

/// The partner's response form for a transaction.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RespondForm {
    pub transaction_id: String,
    pub status: partner_api::ResponseStatus,
    pub partner_status: Option<String>,
    pub reference_number: Option<String>,
}

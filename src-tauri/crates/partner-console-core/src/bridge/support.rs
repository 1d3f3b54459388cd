//! The support desk's local copy: questions, counts, sync, export, and Go to.

use super::listings::ExportFormat;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A loan field to match in the support index: `request.loan.<field>` equal to `value`.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoanFieldFilter {
    pub field: String,
    pub value: String,
}

/// A question to the connection's local index: every field set must hold; empty ones are
/// ignored. Times are RFC 3339.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SupportFilter {
    /// As the service writes it (a value the console does not know too).
    pub status: Option<String>,
    /// A product's id or name.
    pub product: Option<String>,
    pub request_type: Option<String>,
    /// As the service writes it.
    pub response_status: Option<String>,
    pub created_since: Option<String>,
    pub created_before: Option<String>,
    pub updated_since: Option<String>,
    pub updated_before: Option<String>,
    pub partner_status: Option<String>,
    pub reference_number: Option<String>,
    /// Part of the requesting party's name.
    pub requesting_party: Option<String>,
    pub loan: Vec<LoanFieldFilter>,
    /// Words of the request or the response (word prefixes, all of them).
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportQuery {
    pub filter: SupportFilter,
    #[ts(type = "number")]
    pub offset: u64,
    pub limit: u32,
}

/// What the local index holds, for the active connection.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportIndexView {
    /// Whether this connection has a local index at all.
    pub exists: bool,
    /// When it was last brought up to date (answers are "as of" it).
    pub as_of: Option<String>,
    /// Whether the first fill went through the whole listing (else the next sync resumes it).
    pub filled: bool,
    #[ts(type = "number")]
    pub fill_position: u64,
    #[ts(type = "number | null")]
    pub fill_total: Option<u64>,
    #[ts(type = "number")]
    pub transactions: u64,
    #[ts(type = "number")]
    pub products: u64,
    /// A production connection: the user is asked before a local copy is made.
    pub production: bool,
    pub connection_label: String,
    /// The index file (encrypted; its key is in the keychain); the workspace's URL when joined.
    pub path: String,
    /// Joined to a team workspace: its URL. The answers then come from the team's index, kept
    /// by its servers, and nothing is copied to this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace: Option<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportSyncForm {
    pub job_id: String,
    /// The user agreed to a local copy of a production connection's data.
    pub allow_production: bool,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportSyncResult {
    /// Stopped by the user: what was stored stays, the next sync continues from there.
    pub cancelled: bool,
    #[ts(type = "number")]
    pub filled: u64,
    #[ts(type = "number")]
    pub created: u64,
    #[ts(type = "number")]
    pub updated: u64,
    /// What the sync did instead of what the service refused (a full walk where it does not
    /// sort by `updated`), in words.
    pub fallbacks: Vec<String>,
    pub index: SupportIndexView,
}

/// One page of the index's answers, newest first.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportPage {
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub offset: u64,
    /// Each as the service sent it, with its view.
    pub items: Vec<crate::bridge::Received<partner_api::read::TransactionView>>,
    pub as_of: Option<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportCount {
    /// A status, or a product's id.
    pub key: String,
    /// What to show: the status, or the product's name.
    pub label: String,
    #[ts(type = "number")]
    pub count: u64,
}

/// How many transactions the filter selects, per status and per product.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportCounts {
    #[ts(type = "number")]
    pub total: u64,
    pub by_status: Vec<SupportCount>,
    pub by_product: Vec<SupportCount>,
    pub as_of: Option<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportExportForm {
    pub job_id: String,
    pub format: ExportFormat,
    pub filter: SupportFilter,
}

/// Where "Go to" takes the user, or why nowhere.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum GoToTarget {
    Transaction {
        #[serde(rename = "transactionId")]
        transaction_id: String,
        /// The event within it, when an event id (or its notification) was given.
        #[serde(rename = "eventId")]
        event_id: Option<String>,
    },
    Product {
        #[serde(rename = "productId")]
        product_id: String,
    },
    /// Not found on the active connection: what was looked for, in words.
    NotFound { message: String },
}

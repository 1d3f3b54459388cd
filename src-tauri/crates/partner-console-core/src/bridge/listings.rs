//! Products and transactions listings: a page, a search across every page, an export.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which listing a paged command reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ListingKind {
    Products,
    Transactions,
}

/// One page request: `start`, `limit` (≤ 50) and the sort string `A,-B,C`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageQuery {
    #[ts(type = "number")]
    pub start: u64,
    pub limit: u32,
    pub sort: String,
}

/// One page of a listing and the total from `X-Total-Count`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageView<T: TS> {
    pub items: Vec<T>,
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub start: u64,
    pub limit: u32,
    pub sort: String,
}

/// The sortable keys of both listings, from `partner-api`'s `Sortable` impls.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SortKeys {
    pub products: Vec<String>,
    pub transactions: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    /// Chosen by the UI; progress events and cancel name it.
    pub search_id: String,
    pub kind: ListingKind,
    pub sort: String,
    pub text: String,
}

/// Progress of a search walking every page (event `search-progress`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchProgress {
    pub search_id: String,
    #[ts(type = "number")]
    pub scanned: u64,
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub matched: u64,
}

/// What a finished (or cancelled) search found.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub search_id: String,
    pub cancelled: bool,
    #[ts(type = "number")]
    pub scanned: u64,
    #[ts(type = "Array<Record<string, unknown>>")]
    pub items: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    /// The id progress events carry and `cancel_job` names.
    pub job_id: String,
    pub kind: ListingKind,
    pub format: ExportFormat,
    pub sort: String,
}

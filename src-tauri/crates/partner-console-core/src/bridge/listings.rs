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
    /// Send the sort even if this service refused one of its keys before (the user asked).
    #[serde(default)]
    #[ts(optional)]
    pub try_refused: Option<bool>,
    /// The sort is the screen's own default (the user chose none): where the service does not
    /// sort by it, the page comes in the service's own order with a note, not as an error.
    #[serde(default)]
    #[ts(optional)]
    pub default_sort: Option<bool>,
}

/// A product, transaction or event as the service sent it: the typed view the screens read
/// (`partner_api::read`: only what the spec pins is required, unknown values kept as sent), and
/// the service's own document beside it, every field as it arrived (unknown ones included), for
/// "Raw JSON" and exports. Why both: a view re-serialised would drop what the console does not
/// know, and a document read as is would break a screen on a value of an unexpected shape.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Received<T: TS> {
    #[serde(flatten)]
    #[ts(flatten)]
    pub view: T,
    #[ts(type = "Record<string, unknown>")]
    pub document: serde_json::Map<String, serde_json::Value>,
}

impl<T: TS> From<partner_api::read::Document<T>> for Received<T> {
    fn from(document: partner_api::read::Document<T>) -> Self {
        let (document, view) = document.into_parts();
        Self { view, document }
    }
}

impl<T: TS> std::ops::Deref for Received<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.view
    }
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
    /// The sort the page is in: the one asked for, or empty when a default sort the service
    /// does not take was left out (`sort_note` says so).
    pub sort: String,
    /// Why the page is in the service's own order, when the screen's default sort was left
    /// out: "… this service does not sort by listingName".
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sort_note: Option<String>,
}

/// How the active connection sorts, for the column headers: the sandbox's keys of both
/// listings (`partner-api`'s `Sortable` impls), whether they are the active service's (the
/// embedded sandbox: other keys are refused before sending), and otherwise what the service
/// said of keys tried (accepted, or refused in its words; a key not listed is not tried yet).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SortKeys {
    pub products: Vec<String>,
    pub transactions: Vec<String>,
    /// The active connection is the sandbox, whose keys are known.
    pub known: bool,
    pub tried_products: Vec<TriedSortKey>,
    pub tried_transactions: Vec<TriedSortKey>,
}

/// A key sent to the active service and what it said.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TriedSortKey {
    pub key: String,
    /// Refused, in the service's words; none: accepted.
    pub refusal: Option<String>,
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
    /// A word on the walk's way, when there is one: "waiting 2 s: rate limited" while the
    /// service asked it to wait, or a fallback the walk took.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
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

//! The inspector: captures, their filter, pages and counts, detail, exports, clears, and the signature report.

use super::listener::OutboundView;
/// Two captures side by side (`partner_listener::compare`), as the window shows them.
pub use partner_listener::compare::Comparison;
use partner_listener::{CaptureFilter, Verdict};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The captures to delete: those the inspector's filter shows, or all (no filter).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClearCapturesForm {
    pub filter: Option<CaptureFilter>,
    /// Only captures up to this id: what was there when the user was asked, not what arrived
    /// while they read the confirmation.
    #[ts(type = "number")]
    pub up_to_id: i64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClearResult {
    #[ts(type = "number")]
    pub cleared: u64,
}

/// One row of the inspector.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureSummary {
    #[ts(type = "number")]
    pub id: i64,
    pub received_at: String,
    pub verdict: Verdict,
    pub event_type: String,
    pub resource_type: String,
    pub resource_id: String,
    pub instance_id: String,
    pub event_id: String,
    pub subscription_id: String,
    /// How many times this notification (subscription, resource type, eventId) has arrived.
    pub attempts: u32,
    /// Whether it was replayed from the console rather than delivered.
    pub replayed: bool,
    /// In the inspector's grouped view, how many of its notification's attempts the filter
    /// selects (this row is the newest of them); 1 in the view of every attempt.
    pub group_attempts: u32,
}

/// One window of the inspector's list, read from the capture store.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorQuery {
    pub filter: CaptureFilter,
    /// One row per notification (its attempts folded under it) instead of one per attempt.
    pub grouped: bool,
    #[ts(type = "number")]
    pub offset: u64,
    pub limit: u32,
    /// A search's count goes on past the page (up to the store's cap). False when the caller
    /// takes the count from [`InspectorFacets::total`], read beside the page anyway: the page
    /// then counts only through itself and one hit more (the count would walk the same hits
    /// twice).
    pub count_past_page: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorPage {
    #[ts(type = "number")]
    pub offset: u64,
    pub items: Vec<CaptureSummary>,
    /// Rows (or notifications, grouped) the filter selects; at least that many when capped.
    #[ts(type = "number")]
    pub total: u64,
    /// A search or grouped count stopped counting (the store walks those hits): "N+".
    pub total_capped: bool,
    /// Captures a search did not look at yet, the index catching up: "still indexing".
    #[ts(type = "number")]
    pub unsearched: u64,
}

/// The filter's choices and counts, from the store.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorFacets {
    /// Captures per verdict under the rest of the filter.
    #[ts(as = "std::collections::BTreeMap<Verdict, u32>")]
    pub verdicts: std::collections::BTreeMap<Verdict, u64>,
    pub event_types: Vec<String>,
    pub resource_types: Vec<String>,
    pub subscriptions: Vec<String>,
    /// Captures in the store.
    #[ts(type = "number")]
    pub stored: u64,
    /// Captures matching the whole filter (a lower bound when `capped`).
    #[ts(type = "number")]
    pub total: u64,
    /// A search's counts stopped counting: lower bounds.
    pub capped: bool,
}

/// The file formats captures are exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CaptureFileFormat {
    /// One capture per line, lossless: imported back as it was.
    Jsonl,
    /// HAR 1.2, for browser dev tools and HTTP tools.
    Har,
}

/// Export the chosen captures, or those the filter shows.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureExportForm {
    pub job_id: String,
    pub format: CaptureFileFormat,
    pub filter: CaptureFilter,
    /// Only these (the selection); none exports what the filter shows.
    #[ts(type = "Array<number> | null")]
    pub ids: Option<Vec<i64>>,
}

/// Send the chosen captures, or those the filter shows, again to a receiver.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SendAgainForm {
    pub job_id: String,
    pub filter: CaptureFilter,
    /// Only these (the selection); none sends what the filter shows.
    #[ts(type = "Array<number> | null")]
    pub ids: Option<Vec<i64>>,
    /// Where to (none or empty: this app's listener).
    pub target: Option<String>,
    /// Sends in flight at most.
    pub concurrency: u32,
    /// Sends started per second at most; none: as fast as `concurrency` allows.
    pub per_second: Option<f64>,
    /// Sign each body again with its subscription's current key (else as it came).
    pub resign: bool,
}

/// Where "Open" takes the user from a capture, or why it is not offered.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum OpenResource {
    Transaction {
        #[serde(rename = "transactionId")]
        transaction_id: String,
    },
    Event {
        #[serde(rename = "transactionId")]
        transaction_id: String,
        #[serde(rename = "eventId")]
        event_id: String,
    },
    /// Not offered, and why.
    Refused { reason: String },
}

/// New captures, batched (event `captures`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureBatch {
    pub captures: Vec<CaptureSummary>,
    /// Captures the live feed dropped because the UI fell behind: reload from the store.
    #[ts(type = "number")]
    pub missed: u64,
}

/// A capture with everything the detail pane shows.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureDetail {
    pub summary: CaptureSummary,
    pub headers: Vec<(String, String)>,
    pub raw_body: String,
    pub pretty_body: Option<String>,
    pub resource_ref: Option<String>,
    /// How the notification departs from the shape the spec shows, in words (no `meta`, an
    /// `eventTime` in another form, a type the spec does not show); empty for a spec-shaped one
    /// and for a request that is not a notification at all. It is taken anyway (issue #46).
    pub departures: Vec<String>,
    pub attempts: Vec<CaptureSummary>,
    /// The status the listener answered with.
    pub answered_status: u16,
    /// Forwards and replays of it, oldest first.
    pub outbound: Vec<OutboundView>,
    /// What "Open" shows: the event within its transaction, or the transaction.
    pub open: OpenResource,
}

/// The signature debugger: what arrived against what each known key gives.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignatureReport {
    pub received: Option<String>,
    pub body_bytes: u32,
    pub body_sha256: String,
    pub checks: Vec<SignatureCheck>,
    /// The verdict in words, with what to do.
    pub explanation: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignatureCheck {
    /// `current key`, `previous key`, `pasted key`.
    pub key_label: String,
    pub expected: String,
    pub matches: bool,
}

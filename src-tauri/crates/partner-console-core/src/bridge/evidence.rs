//! Evidence bundles for a support ticket.

use partner_listener::CaptureFilter;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which captures go into an evidence bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum EvidenceScope {
    /// The capture shown.
    Capture,
    /// Every attempt of its notification.
    Notification,
    /// The captures the inspector's filter shows.
    Shown,
}

/// The most captures an evidence bundle of "the captures shown" holds: a ticket needs the few
/// that tell the story, not the store.
pub const EVIDENCE_MOST_SHOWN: u64 = 1000;

/// An evidence bundle to write: a redacted HAR 1.2 file and a Markdown summary.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceForm {
    #[ts(type = "number")]
    pub capture_id: i64,
    pub scope: EvidenceScope,
    /// With `Shown`: the inspector's filter (at most [`EVIDENCE_MOST_SHOWN`] captures).
    pub shown: Option<CaptureFilter>,
    /// Body fields to mask (`borrower.name` or `/borrower/name`).
    pub mask_fields: Vec<String>,
    /// The files' base path (`.har` and `.md` are added); none: the export folder.
    pub path: Option<String>,
}

/// What an evidence bundle holds, and where it went.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceResult {
    pub har_path: String,
    pub summary_path: String,
    #[ts(type = "number")]
    pub captures: u64,
    #[ts(type = "number")]
    pub headers_masked: u64,
    #[ts(type = "number")]
    pub fields_masked: u64,
    #[ts(type = "number")]
    pub secrets_masked: u64,
    #[ts(type = "number")]
    pub bodies_withheld: u64,
    /// The service's delivery records are in the summary (a sandbox connection).
    pub with_deliveries: bool,
}

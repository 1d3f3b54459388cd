//! Long file jobs: their progress and result.

use serde::Serialize;
use ts_rs::TS;

/// How far a long file job is (event `job-progress`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    pub job_id: String,
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    /// A word on the walk's way, when there is one: "waiting 2 s: rate limited" while the
    /// service asked it to wait, or a fallback the walk took.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// What a save-dialog export did: nothing when the dialog was closed.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileJobResult {
    /// The file written or read; none when the user closed the dialog.
    pub path: Option<String>,
    /// Items written or imported.
    #[ts(type = "number")]
    pub count: u64,
    /// Items an import skipped because the store already held them.
    #[ts(type = "number")]
    pub skipped: u64,
    /// Stopped by the user: an export leaves no file, an import keeps what it added.
    pub cancelled: bool,
}

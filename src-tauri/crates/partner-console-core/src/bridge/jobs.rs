//! Long jobs: their progress (one shape for all of them) and a file job's result.

use serde::Serialize;
use ts_rs::TS;

/// How far a long job is: one shape for every progress bar but a search's (which counts its
/// matches too: `SearchProgress`). An export, import or send (event `job-progress`), the support
/// desk's sync (`support-sync-progress`), the missed-notification check (`missed-progress`).
/// Why one: the three were the same fields under three names, each read by its own code.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// The job's id, as the UI gave it; none for the missed-notification check (one runs at a
    /// time).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub job_id: Option<String>,
    /// The step it is at, where the job has steps: a sync's `products`, `fill` or `refresh`,
    /// the missed check's in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub phase: Option<String>,
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

//! Notes: a team member's words on a transaction or a capture, kept by the team workspace.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a note is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum NoteKind {
    Transaction,
    Capture,
}

/// One note as the notes panel shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NoteView {
    #[ts(type = "number")]
    pub id: i64,
    pub kind: NoteKind,
    /// The transaction's id, or the capture's (as text).
    pub target_id: String,
    /// The member who wrote it, as the workspace names them.
    pub author: String,
    /// When the workspace took it (RFC 3339).
    pub at: String,
    pub text: String,
}

/// A note to write, as the member joined.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NoteForm {
    pub kind: NoteKind,
    pub target_id: String,
    pub text: String,
}

//! The audit log as the UI shows it, newest first: every write this console sent or refused,
//! or, while the app is joined to a team workspace, every member's writes there.
//!
//! Why one view for both logs: the screen, its filter and its outcome pills are the same for
//! both; a workspace entry fills what it has (when, action, target, outcome, the recorded
//! detail as the answer) and names its `member` and `role`, and leaves empty what only this
//! machine's writes have (the connection, the call sent, its status and request id, the body).
use serde::Serialize;
use ts_rs::TS;

/// One write: when, on which connection (or by which member of the team workspace), what, and
/// what the service (or the workspace) said.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryView {
    /// RFC 3339, UTC.
    pub at: String,
    /// The connection's name ("" for a workspace's entry: `member` made it through the
    /// workspace).
    pub connection: String,
    /// The service's URL; for a workspace's entry, the workspace's.
    pub base_url: String,
    /// The connection's client id ("" for a workspace's entry).
    pub client_id: String,
    /// `app` or `cli`; `workspace` for a workspace's entry.
    pub via: String,
    /// The team workspace's member who made the write (`None` in this machine's log).
    pub member: Option<String>,
    /// That member's role when they made it: viewer, support, developer or admin.
    pub role: Option<String>,
    /// In words: "respond to a transaction", "rotate a signing key", …; a workspace's entry
    /// has the name the workspace records ("write-note", "clear", "respond", …).
    pub action: String,
    /// "transaction t_9", "product p_1, subscription s_2".
    pub target: String,
    /// `PATCH /partner/v2/transactions/t_9/response` (empty for a write refused before it was
    /// built).
    pub call: String,
    /// `done`, `failed` or `refused`.
    pub outcome: String,
    pub status: Option<u16>,
    pub request_id: Option<String>,
    /// The service's answer or the refusal, in words; a workspace's entry has the detail the
    /// workspace recorded ("note 12", "3 cleared"; "" for a refusal).
    pub answer: String,
    /// The body sent, every secret-named value replaced, as pretty JSON ("" when none).
    pub sent: String,
}

/// The newest entries of the audit log: this machine's, or the team workspace's while joined.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditLogView {
    pub entries: Vec<AuditEntryView>,
    /// Entries in the log; `entries` are the newest of them. The workspace does not count its
    /// log: there it is the entries shown, and `older` says whether there are more.
    #[ts(type = "number")]
    pub total: u64,
    /// The log holds entries older than `entries` that `total` does not count (the
    /// workspace's log past the newest shown; the export has them all).
    pub older: bool,
    /// Lines of the file that are not entries (kept in the file, not shown).
    #[ts(type = "number")]
    pub unreadable: u64,
    /// Of `unreadable`, the lines sealed with another data key than this console's (the key
    /// may differ from the one that wrote them).
    #[ts(type = "number")]
    pub unopened: u64,
    /// Where the log is: this machine's file, for the user who wants to `tail` it, or the
    /// workspace's URL.
    pub path: String,
    /// Joined to a team workspace: its URL. The entries are then the workspace's, every
    /// member's writes there, not this machine's.
    pub workspace: Option<String>,
}

impl From<&partner_local::AuditEntry> for AuditEntryView {
    fn from(entry: &partner_local::AuditEntry) -> Self {
        use partner_client::WriteOutcome;
        let write = &entry.write;
        let (status, request_id) = match &write.outcome {
            WriteOutcome::Done { status, request_id } => (Some(*status), request_id.clone()),
            WriteOutcome::Failed {
                status, request_id, ..
            } => (*status, request_id.clone()),
            WriteOutcome::Refused { .. } => (None, None),
        };
        Self {
            at: write
                .at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            connection: entry.connection.clone(),
            base_url: write.base_url.clone(),
            client_id: write.client_id.clone(),
            via: entry.via.clone(),
            member: None,
            role: None,
            action: write.action.describe().to_owned(),
            target: write.target.clone(),
            call: write.call.clone(),
            outcome: partner_local::audit::outcome_word(&write.outcome).to_owned(),
            status,
            request_id,
            answer: partner_local::audit::answer_words(&write.outcome),
            sent: if write.sent.is_null() {
                String::new()
            } else {
                serde_json::to_string_pretty(&write.sent).unwrap_or_default()
            },
        }
    }
}

impl AuditEntryView {
    /// An entry of the team workspace `url`'s log.
    pub fn of_workspace(entry: &partner_workspace::AuditEntry, url: &str) -> Self {
        Self {
            at: entry
                .at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            connection: String::new(),
            base_url: url.to_owned(),
            client_id: String::new(),
            via: "workspace".to_owned(),
            member: Some(entry.member.clone()),
            role: Some(entry.role.clone()),
            action: entry.action.clone(),
            target: entry.target.clone(),
            call: String::new(),
            outcome: entry.outcome.clone(),
            status: None,
            request_id: None,
            answer: entry.detail.clone(),
            sent: String::new(),
        }
    }
}

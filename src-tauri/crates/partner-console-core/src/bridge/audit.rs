//! The audit log as the UI shows it: every write the console sent or refused, newest first.
use serde::Serialize;
use ts_rs::TS;

/// One write: when, on which connection, what, and what the service said.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryView {
    /// RFC 3339, UTC.
    pub at: String,
    pub connection: String,
    pub base_url: String,
    pub client_id: String,
    /// `app` or `cli`.
    pub via: String,
    /// In words: "respond to a transaction", "rotate a signing key", …
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
    /// The service's answer or the refusal, in words.
    pub answer: String,
    /// The body sent, every secret-named value replaced, as pretty JSON ("" when none).
    pub sent: String,
}

/// The newest entries of the audit log.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditLogView {
    pub entries: Vec<AuditEntryView>,
    /// Entries in the log; `entries` are the newest of them.
    #[ts(type = "number")]
    pub total: u64,
    /// Lines of the file that are not entries (kept in the file, not shown).
    #[ts(type = "number")]
    pub unreadable: u64,
    /// Of `unreadable`, the lines sealed with another data key than this console's (the key
    /// may differ from the one that wrote them).
    #[ts(type = "number")]
    pub unopened: u64,
    /// Where the log is, for the user who wants to `tail` it.
    pub path: String,
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

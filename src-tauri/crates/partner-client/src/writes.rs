//! Writes: the calls that change something at the service, each named, guarded and journaled.
//!
//! A connection may be read-only (support staff looking at production): then every write is
//! refused here, before a token is taken or a byte is sent, and the refusal says which write
//! and why. Every write, sent or refused, is handed to the connection's [`WriteJournal`] (the
//! console's audit log) as a [`WriteRecord`]: when, which service and client, what was asked
//! (the body with every key-, secret- and token-named value replaced), and the service's answer
//! as its call log saw it (status and request id). The journal is told after the answer, never
//! before, so a record is what happened, not what was meant.
//!
//! One home for "is this a write": the client's calls that send one go through
//! `PartnerClient::write`; nothing else in the crate sends a POST or PATCH to the API.

use crate::call_log::CallOutcome;
use crate::error::{ClientError, Result};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What a write does, in the words the audit log shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WriteAction {
    CreateProduct,
    ChangeProduct,
    Subscribe,
    ChangeSubscription,
    Unsubscribe,
    RotateKey,
    Respond,
}

/// The target a write on transaction `id` is recorded under (`transaction t_9`): what the audit
/// log says, and what the console looks a transaction's responses up by.
pub fn transaction_target(id: &str) -> String {
    format!("transaction {id}")
}

impl WriteAction {
    pub fn describe(self) -> &'static str {
        match self {
            WriteAction::CreateProduct => "create a product",
            WriteAction::ChangeProduct => "change a product",
            WriteAction::Subscribe => "add a webhook subscription",
            WriteAction::ChangeSubscription => "change a webhook subscription",
            WriteAction::Unsubscribe => "delete a webhook subscription",
            WriteAction::RotateKey => "rotate a signing key",
            WriteAction::Respond => "respond to a transaction",
        }
    }
}

impl std::fmt::Display for WriteAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// One write about to be sent: what, to which resource, with which body.
#[derive(Debug, Clone)]
pub struct Write {
    pub action: WriteAction,
    /// The resource in words: "product p_1", "transaction t_9", "product p_1, subscription s_2".
    pub target: String,
    /// The body as sent, secrets replaced ([`redact`]).
    pub sent: Value,
}

impl Write {
    pub fn new(action: WriteAction, target: impl Into<String>, body: &Value) -> Self {
        Self {
            action,
            target: target.into(),
            sent: redact(body),
        }
    }
}

/// How a write ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WriteOutcome {
    /// Not sent: the connection is read-only.
    Refused { reason: String },
    /// The service answered with a success status.
    Done {
        status: u16,
        #[serde(rename = "requestId", default)]
        request_id: Option<String>,
    },
    /// The service refused or failed it, or it could not be sent; `error` in the service's
    /// words where it gave some.
    Failed {
        #[serde(default)]
        status: Option<u16>,
        error: String,
        #[serde(rename = "requestId", default)]
        request_id: Option<String>,
    },
}

/// One write as the journal keeps it. Holds no secret: the body is redacted, the error
/// messages of the client never hold one.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteRecord {
    pub at: DateTime<Utc>,
    pub base_url: String,
    pub client_id: String,
    pub action: WriteAction,
    pub target: String,
    /// `PATCH /partner/v2/transactions/t_9/response`.
    pub call: String,
    pub sent: Value,
    pub outcome: WriteOutcome,
}

/// Where a connection's writes are recorded (the console's audit log). Called once per write,
/// after it ended; must not block for long (it runs on the caller's task).
pub trait WriteJournal: Send + Sync {
    fn record(&self, record: &WriteRecord);
}

/// A connection's read-only switch and journal, shared by the client's clones.
#[derive(Clone, Default)]
pub(crate) struct WriteGuard {
    read_only: Arc<AtomicBool>,
    journal: Arc<Mutex<Option<Arc<dyn WriteJournal>>>>,
}

impl std::fmt::Debug for WriteGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteGuard")
            .field("read_only", &self.is_read_only())
            .finish_non_exhaustive()
    }
}

impl WriteGuard {
    pub fn new(read_only: bool) -> Self {
        Self {
            read_only: Arc::new(AtomicBool::new(read_only)),
            journal: Arc::default(),
        }
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only.load(Ordering::SeqCst)
    }

    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::SeqCst);
    }

    pub fn set_journal(&self, journal: Option<Arc<dyn WriteJournal>>) {
        *self.journal.lock().unwrap_or_else(|e| e.into_inner()) = journal;
    }

    /// The refusal of `write` on a read-only connection, or `None` when it may be sent.
    pub fn refusal(&self, write: &Write) -> Option<ClientError> {
        self.is_read_only().then(|| ClientError::ReadOnly {
            action: write.action.describe().to_owned(),
            target: write.target.clone(),
        })
    }

    pub fn record(&self, record: WriteRecord) {
        let journal = self
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match journal {
            Some(journal) => journal.record(&record),
            None => tracing::debug!(action = %record.action, "a write with no journal"),
        }
    }
}

/// The outcome of a write from its result and the call log's record of it (status and
/// request id as the transport saw them).
pub(crate) fn outcome<T>(result: &Result<T>, logged: Option<&crate::CallRecord>) -> WriteOutcome {
    let status = logged.and_then(|c| match c.outcome {
        CallOutcome::Answered { status } => Some(status),
        _ => None,
    });
    let request_id = logged
        .and_then(|c| c.request_id.as_ref())
        .map(|r| r.value.clone());
    match result {
        Ok(_) => WriteOutcome::Done {
            status: status.unwrap_or(200),
            request_id,
        },
        Err(error) => WriteOutcome::Failed {
            status,
            error: error.to_string(),
            request_id,
        },
    }
}

/// Whether a JSON key names a secret: signing keys, client secrets, tokens, passwords. The
/// audit log keeps everything else of a body as sent.
fn secret_named(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["key", "secret", "token", "password", "credential"]
        .iter()
        .any(|word| key.contains(word))
}

/// `value` with the value of every secret-named key (at any depth) replaced by `"[redacted]"`.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let kept = if secret_named(k) && !v.is_null() {
                        Value::String("[redacted]".into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), kept)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redact_replaces_every_secret_named_value_at_any_depth() {
        let body = json!({
            "name": "Loans",
            "webhooks": [{"url": "https://x", "signingkey": "abc", "signingKey": "def"}],
            "nested": {"client_secret": "s", "accessToken": "t", "keep": "k"},
            "previousSigningKey": null
        });
        let redacted = redact(&body);
        let text = redacted.to_string();
        for secret in ["\"abc\"", "\"def\"", "\"s\"", "\"t\""] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert_eq!(redacted["webhooks"][0]["url"], "https://x");
        assert_eq!(redacted["nested"]["keep"], "k");
        assert_eq!(redacted["previousSigningKey"], Value::Null);
    }

    #[test]
    fn a_read_only_guard_refuses_and_names_the_write() {
        let guard = WriteGuard::new(true);
        let write = Write::new(WriteAction::Respond, "transaction t_1", &json!({}));
        let refusal = guard.refusal(&write).expect("refused");
        assert_eq!(refusal.kind(), crate::ErrorKind::ReadOnly);
        assert!(refusal.to_string().contains("respond to a transaction"));
        guard.set_read_only(false);
        assert!(guard.refusal(&write).is_none());
    }
}

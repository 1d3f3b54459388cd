//! What the other service holds while it runs: the tokens it issued, its products with their
//! subscriptions (and the keys it signs with), transactions and events, behind one lock
//! ([`Shared`], the handlers' state), and the token lifetimes the spec states.

use super::dialect::Dialect;
use chrono::{DateTime, Duration as TimeDelta, Utc};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) dialect: Dialect,
    /// Answers so far, for each answer's request id.
    pub(super) answers: AtomicU64,
    pub(super) base_url: String,
    pub(super) client_id: String,
    pub(super) client_secret: String,
    pub(super) calls: AtomicU64,
    pub(super) data: Mutex<Data>,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Data> {
        // A panic while holding the lock is a bug in a test; the data is still usable.
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Debug)]
pub(super) struct IssuedToken {
    pub(super) issued: DateTime<Utc>,
    pub(super) last_used: DateTime<Utc>,
    pub(super) revoked: bool,
}

#[derive(Debug, Clone)]
pub(super) struct Webhook {
    pub(super) id: String,
    /// Every field but the key, as shown.
    pub(super) shown: Map<String, Value>,
    pub(super) signing_key: String,
}

#[derive(Debug, Clone)]
pub(super) struct StoredProduct {
    pub(super) fields: Map<String, Value>,
    pub(super) webhooks: Vec<Webhook>,
}

impl StoredProduct {
    pub(super) fn shown(&self) -> Value {
        let mut fields = self.fields.clone();
        fields.insert(
            "webhooks".into(),
            Value::Array(
                self.webhooks
                    .iter()
                    .map(|w| Value::Object(w.shown.clone()))
                    .collect(),
            ),
        );
        Value::Object(fields)
    }

    pub(super) fn id(&self) -> &str {
        self.fields.get("id").and_then(Value::as_str).unwrap_or("")
    }
}

#[derive(Debug)]
pub(super) struct Data {
    pub(super) tokens: HashMap<String, IssuedToken>,
    pub(super) products: Vec<StoredProduct>,
    pub(super) transactions: Vec<Value>,
    pub(super) events: HashMap<String, Vec<Value>>,
    pub(super) next_id: u64,
}

/// The partner id the service shows on its products and tokens.
pub(super) const PARTNER_ID: &str = "partner-7f3a";
pub(super) const IDLE_MINUTES: i64 = 15;
pub(super) const MAX_MINUTES: i64 = 120;

impl Data {
    pub(super) fn active(&self, token: &str, now: DateTime<Utc>) -> bool {
        self.tokens.get(token).is_some_and(|t| {
            !t.revoked
                && now - t.last_used < TimeDelta::minutes(IDLE_MINUTES)
                && now - t.issued < TimeDelta::minutes(MAX_MINUTES)
        })
    }

    pub(super) fn fresh_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!(
            "{prefix}-{:08x}-{}",
            self.next_id,
            uuid::Uuid::new_v4().simple()
        )
    }
}

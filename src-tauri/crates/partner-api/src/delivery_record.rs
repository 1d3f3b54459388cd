//! What became of each notification sent to each subscription: the wire shape of the
//! sandbox's `GET /sandbox/v1/deliveries`.
//!
//! Defined here, below every crate that touches it, so there is one type: the sandbox's
//! dispatcher keeps and serves these records, clients of `/sandbox/v1` read them back,
//! and the listener's evidence bundle quotes them. Plain data, no I/O.

use crate::{EventType, ResourceType};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Not delivered yet: an attempt is running or a retry is due at `nextAttemptAt`.
    Pending,
    /// A receiver answered 200-399.
    Delivered,
    /// Every attempt failed; the notification was dropped.
    Discarded,
}

impl DeliveryState {
    /// The state's wire word (`pending`, `delivered`, `discarded`), for reports that quote it.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Discarded => "discarded",
        }
    }
}

impl std::fmt::Display for DeliveryState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One notification to one subscription, and what became of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRecord {
    /// The sandbox's id of this delivery (not part of the partner API).
    pub id: String,
    pub event_id: String,
    pub subscription_id: String,
    pub url: String,
    pub resource_type: ResourceType,
    pub resource_id: String,
    pub event_type: EventType,
    pub state: DeliveryState,
    /// When the notification was queued (sandbox clock).
    pub enqueued_at: DateTime<Utc>,
    /// Finished attempts, oldest first.
    pub attempts: Vec<DeliveryAttempt>,
    /// When the next attempt is due (sandbox clock), while a retry is waiting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why it was discarded without an attempt (too many notifications already waiting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_sent_because: Option<String>,
}

/// One finished attempt: the receiver's status, or why there was none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    /// 1 for the first attempt.
    pub number: u32,
    /// Sandbox clock.
    pub started_at: DateTime<Utc>,
    /// Sandbox clock.
    pub finished_at: DateTime<Utc>,
    /// Real time the attempt took.
    pub duration_ms: u64,
    /// The receiver's HTTP status, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why there was no answer: `timed out after 30s`, `connection refused`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

//! What became of each notification sent to each subscription: the records the dispatcher
//! (`dispatch`) keeps and updates, `GET /sandbox/v1/deliveries` shows and the data file
//! (`data_file`) writes through and loads back.
//!
//! Plain data in a module of its own, below both: the dispatcher writes through the data file,
//! so the data file needing the dispatcher for these types made the two need each other.
//! `dispatch` re-exports them, where callers have always found them.

use chrono::{DateTime, Utc};
use partner_api::{EventType, ResourceType};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Not delivered yet: an attempt is running or a retry is due at `nextAttemptAt`.
    Pending,
    /// A receiver answered 200-399.
    Delivered,
    /// Every attempt failed; the notification was dropped.
    Discarded,
}

/// One notification to one subscription, and what became of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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

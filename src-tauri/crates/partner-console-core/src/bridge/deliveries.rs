//! What a sandbox service sent: its delivery records beside the captures.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One notification as a sandbox delivered it (`GET /sandbox/v1/deliveries`), with the
/// captures the listener kept of it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    pub event_id: String,
    pub subscription_id: String,
    pub url: String,
    pub resource_type: String,
    pub resource_id: String,
    pub event_type: String,
    /// `pending`, `delivered` or `discarded`.
    pub state: String,
    #[ts(type = "string")]
    pub enqueued_at: chrono::DateTime<chrono::Utc>,
    pub attempts: Vec<DeliveryAttemptView>,
    #[serde(default)]
    #[ts(type = "string | null")]
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(default)]
    pub not_sent_because: Option<String>,
    /// The listener's captures of this notification (subscription, resource type, eventId).
    #[serde(default)]
    #[ts(type = "Array<number>")]
    pub capture_ids: Vec<i64>,
}

/// One attempt of a sandbox's delivery.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttemptView {
    pub number: u32,
    #[ts(type = "string")]
    pub started_at: chrono::DateTime<chrono::Utc>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub error: Option<String>,
}

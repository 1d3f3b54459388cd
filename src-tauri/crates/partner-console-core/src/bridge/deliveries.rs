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

impl DeliveryView {
    /// The view of one of the sandbox's records, before its captures are matched to it.
    pub fn of(record: &partner_api::DeliveryRecord) -> Self {
        Self {
            event_id: record.event_id.clone(),
            subscription_id: record.subscription_id.clone(),
            url: record.url.clone(),
            resource_type: record.resource_type.as_str().to_string(),
            resource_id: record.resource_id.clone(),
            event_type: record.event_type.as_str().to_string(),
            state: record.state.as_str().to_string(),
            enqueued_at: record.enqueued_at,
            attempts: record
                .attempts
                .iter()
                .map(|a| DeliveryAttemptView {
                    number: a.number,
                    started_at: a.started_at,
                    duration_ms: a.duration_ms,
                    status: a.status,
                    error: a.error.clone(),
                })
                .collect(),
            next_attempt_at: record.next_attempt_at,
            not_sent_because: record.not_sent_because.clone(),
            capture_ids: Vec::new(),
        }
    }
}

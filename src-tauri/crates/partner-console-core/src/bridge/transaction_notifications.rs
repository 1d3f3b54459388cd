//! "Did they get it?": every notification the console knows about for one transaction, as a
//! timeline per notification.

use super::Verdict;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The notifications of one transaction: its own and its events', each with what happened to
/// it, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TransactionNotifications {
    pub transaction_id: String,
    pub notifications: Vec<NotificationStory>,
    /// Why the service's own delivery records are not in the timeline (a production service
    /// keeps none; a sandbox's could not be read); `None` when they are.
    pub deliveries_note: Option<String>,
    /// Why the listener's captures are not in it (the store is not open); `None` when they are.
    pub captures_note: Option<String>,
    /// More captures matched than are shown (the newest are).
    pub captures_capped: bool,
}

/// One notification (a subscription, resource type and eventId, what the service repeats on
/// every attempt) and everything that happened to it, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NotificationStory {
    pub subscription_id: String,
    pub resource_type: String,
    pub event_type: String,
    pub event_id: String,
    /// The answer in a word: `delivered`, `discarded` or `pending` (the service's record),
    /// else `acknowledged` or `refused` (the listener's last answer to the service), else
    /// `recovered` or `replayed` (only the console sent it).
    pub outcome: String,
    /// When the service queued it (its delivery record's clock), where it keeps records.
    #[ts(type = "string | null")]
    pub queued_at: Option<chrono::DateTime<chrono::Utc>>,
    pub entries: Vec<StoryEntry>,
}

/// What kind of step a timeline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum StoryStep {
    /// The service's attempt, from its delivery record (a sandbox's).
    ServiceAttempt,
    /// The service's record ends: it gave up on the notification.
    ServiceGaveUp,
    /// The listener received it (an attempt of the service's).
    Captured,
    /// The listener received a replay of it, sent by the console.
    ReplayCaptured,
    /// The listener received a recovery of it (`Svc-Replay: recovery`).
    RecoveryCaptured,
    /// The console passed it on to the user's own app.
    Forwarded,
    /// The console sent a capture of it again.
    Replayed,
}

/// One step of a notification's timeline.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoryEntry {
    #[ts(type = "string")]
    pub at: chrono::DateTime<chrono::Utc>,
    pub step: StoryStep,
    /// The capture it is, or was sent from (opens in the inspector).
    #[ts(type = "number | null")]
    pub capture_id: Option<i64>,
    /// The service's attempt number (from its record or the listener's count).
    pub attempt: Option<u32>,
    /// The answer: the listener's to the service, or a receiver's to the console.
    pub status: Option<u16>,
    pub verdict: Option<Verdict>,
    /// Which of the subscription's keys verified a capture: `current`, or `previous` while a
    /// rotation's old key still verifies.
    #[ts(type = "\"current\" | \"previous\" | null")]
    pub matched_key: Option<partner_listener::MatchedKey>,
    pub error: Option<String>,
    /// Where it went (a forward or replay target, the service's subscription URL).
    pub url: Option<String>,
    #[ts(type = "number | null")]
    pub elapsed_ms: Option<u64>,
}

//! The missed-notification check: its form and progress, and the form that sends them again.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What to look for among the notifications that never arrived.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissedForm {
    /// Only this subscription (none: every one the store has captured something of).
    pub subscription_id: Option<String>,
    /// From this time for every subscription (none: each one's default, the listener's last
    /// down time or its first capture).
    #[ts(type = "string | null")]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Also the last two minutes' notifications, which the service may still be retrying.
    pub include_recent: bool,
    /// Also subscriptions this store never captured anything of.
    pub all_subscriptions: bool,
}

/// Which missed notifications to send again, and where.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RecoverForm {
    /// As the check reported them (the rows chosen, or all of them).
    pub notifications: Vec<partner_local::missed::MissedNotification>,
    /// Where to (none or empty: this app's listener).
    pub target: Option<String>,
}

/// Where a missed-notification check is, for its progress bar.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissedProgressView {
    /// What it is doing, in words.
    pub stage: String,
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    /// A word on the walk's way, when there is one: "waiting 2 s: rate limited" while the
    /// service asked it to wait, or a fallback the walk took.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

impl From<&partner_local::missed::MissedProgress> for MissedProgressView {
    fn from(progress: &partner_local::missed::MissedProgress) -> Self {
        use partner_local::missed::MissedProgress;
        match progress {
            MissedProgress::Subscriptions => Self {
                stage: "Reading the products and their subscriptions".into(),
                done: 0,
                total: None,
                note: None,
            },
            MissedProgress::Walking(walk) => Self {
                stage: "Walking the transactions changed since then".into(),
                done: walk.yielded,
                total: None,
                note: walk.fallback_note(),
            },
            MissedProgress::Events { done, total } => Self {
                stage: "Reading their events".into(),
                done: *done,
                total: Some(*total),
                note: None,
            },
        }
    }
}

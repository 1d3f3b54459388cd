//! The missed-notification check: its form, its progress (as the one `Progress` of every job), and
//! the form that sends them again.

use serde::Deserialize;
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
impl From<&partner_local::missed::MissedProgress> for super::Progress {
    fn from(progress: &partner_local::missed::MissedProgress) -> Self {
        use partner_local::missed::MissedProgress;
        match progress {
            MissedProgress::Subscriptions => Self {
                job_id: None,
                phase: Some("Reading the products and their subscriptions".into()),
                done: 0,
                total: None,
                note: None,
            },
            MissedProgress::Walking(walk) => Self {
                job_id: None,
                phase: Some("Walking the transactions changed since then".into()),
                done: walk.yielded,
                total: None,
                note: walk.fallback_note(),
            },
            MissedProgress::Events { done, total } => Self {
                job_id: None,
                phase: Some("Reading their events".into()),
                done: *done,
                total: Some(*total),
                note: None,
            },
        }
    }
}

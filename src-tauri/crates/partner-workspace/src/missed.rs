//! The missed-notification check and its recovery, asked of a team workspace
//! (`POST /api/v1/missed`, `POST /api/v1/missed/recover`): the server runs partner-local's own
//! `find_missed` over the workspace's captures with the team's service connection, and sends
//! the recoveries signed with the keys only it holds. The answers are partner-local's own
//! [`MissedReport`] and [`RecoveryReport`], so a console prints a workspace's check with the
//! code that prints its own.
//!
//! The request types live here, beside the client, and the server reads the same ones: one
//! home for the body's shape.

use crate::client::WorkspaceClient;
use crate::error::Result;
use chrono::{DateTime, Utc};
use partner_local::missed::MissedReport;
use partner_local::recover::RecoveryReport;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long a check (or a recovery, which checks first) may take: it walks every transaction
/// changed in its window and reads their events from the service, which an ordinary call's
/// minute does not always cover.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// What to check (`partner_local::missed::MissedQuery` as a member may ask it: the workspace
/// has no listener of its own, so nothing says whether one is serving).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MissedRequest {
    /// From this time for every subscription; none: each one's first capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// Up to this time (service clock); none: now less the service's give-up window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
    /// Only this subscription.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
    /// Also the subscriptions the workspace never captured anything of.
    pub all_subscriptions: bool,
}

/// The check, then what it found sent again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RecoverRequest {
    #[serde(flatten)]
    pub missed: MissedRequest,
    /// Where to send them (an http(s) URL); none: the workspace's own webhook intake, so they
    /// become the workspace's captures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Only these of what the check finds (the rows a member chose); empty: all of them. Only
    /// found ones are sent: the server signs nothing it did not work out itself.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<NotificationKey>,
}

/// What a notification is matched by: its subscription, resource type and eventId.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationKey {
    pub subscription_id: String,
    /// As the notification names it (`$.meta.resourceType`).
    pub resource_type: String,
    pub event_id: String,
}

impl From<&partner_local::recover::RecoveryOutcome> for NotificationKey {
    fn from(outcome: &partner_local::recover::RecoveryOutcome) -> Self {
        Self {
            subscription_id: outcome.subscription_id.clone(),
            resource_type: outcome.resource_type.as_str().to_string(),
            event_id: outcome.event_id.clone(),
        }
    }
}

impl From<&partner_local::missed::MissedNotification> for NotificationKey {
    fn from(missed: &partner_local::missed::MissedNotification) -> Self {
        Self {
            subscription_id: missed.subscription_id.clone(),
            resource_type: missed.resource_type.as_str().to_string(),
            event_id: missed.event_id.clone(),
        }
    }
}

impl WorkspaceClient {
    /// The notifications the service gave up on that never reached the workspace (viewer and
    /// up).
    pub async fn missed(&self, request: &MissedRequest) -> Result<MissedReport> {
        self.post_waiting("/api/v1/missed", request, CHECK_TIMEOUT)
            .await
    }

    /// The check, then each notification it found sent again by the server, signed with the
    /// subscription's key it holds (developer and up).
    pub async fn recover(&self, request: &RecoverRequest) -> Result<RecoveryReport> {
        self.post_waiting("/api/v1/missed/recover", request, CHECK_TIMEOUT)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recover_request_is_the_check_s_body_plus_where_to() {
        let request = RecoverRequest {
            missed: MissedRequest {
                subscription_id: Some("sub-1".into()),
                all_subscriptions: true,
                ..MissedRequest::default()
            },
            to: Some("https://receiver.example/hooks".into()),
            only: Vec::new(),
        };
        let sent = serde_json::to_value(&request).expect("writes");
        assert_eq!(
            sent,
            serde_json::json!({
                "subscriptionId": "sub-1",
                "allSubscriptions": true,
                "to": "https://receiver.example/hooks"
            })
        );
        let read: RecoverRequest = serde_json::from_value(sent).expect("reads");
        assert_eq!(read, request);
        let empty: RecoverRequest = serde_json::from_str("{}").expect("reads an empty body");
        assert_eq!(empty, RecoverRequest::default());
    }
}

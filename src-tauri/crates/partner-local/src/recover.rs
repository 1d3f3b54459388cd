//! Sending again the notifications that never arrived ([`crate::missed`]): each one built as the
//! service would have sent it, signed with its subscription's key, to the listener or any URL.
//!
//! Why it can be rebuilt at all: a notification's body is made of what the API still tells
//! (the event's id and time, the event type, the product's `name`, the resource's id, type and
//! `resourceRef`, field notes "Webhooks"), and the service signs the body's bytes with the
//! subscription's key, which the console holds. So a recovered notification is, byte for byte,
//! one the service could have sent: the receiver verifies it and deduplicates it on the same
//! `eventId` as a real delivery.
//!
//! What tells it apart: it carries `Svc-Replay: recovery` (the listener's replay header with its
//! own value). A listener stores it as a replay (never forwarded, not counted as an attempt of
//! the service), and a receiver of the user's own can tell it from the service's deliveries.
//! Once a recovery is stored by the listener, the missed check counts its notification as
//! arrived: the matching rule is subscription, resource type and `eventId`.
//!
//! Nothing is stored here: the outcomes are returned (the app shows them per row, the CLI prints
//! them), and a recovery sent to the console's own listener is a capture like any other.

use crate::missed::MissedNotification;
use crate::{Error, Result};
use partner_api::delivery::{acknowledges, SignedNotification};
use partner_api::notification::{Notification, NotificationMeta};
use partner_api::ResourceType;
use partner_listener::capture::{Header, OutboundKind};
use partner_listener::keys::KeySource;
use partner_listener::outbound::{self, RECOVERY, REPLAY_HEADER};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Recoveries sent at once: a receiver that was just down should not get a burst.
pub const RECOVERIES_IN_FLIGHT: usize = 4;

/// What happened to one recovered notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecoveryOutcome {
    pub subscription_id: String,
    pub resource_type: ResourceType,
    pub event_id: String,
    /// Where it was sent.
    pub url: String,
    /// The receiver's answer; `None` when there was none (see `error`).
    pub status: Option<u16>,
    /// The answer is one the service takes as delivered (2xx or 3xx).
    pub acknowledged: bool,
    /// Why it was not sent, or why no answer came.
    pub error: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
}

/// Every outcome, in the order of the notifications given, and whether the run was cancelled
/// (then the notifications not yet sent have no outcome).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecoveryReport {
    pub outcomes: Vec<RecoveryOutcome>,
    pub cancelled: bool,
}

impl RecoveryReport {
    /// How many the receiver acknowledged.
    pub fn acknowledged(&self) -> usize {
        self.outcomes.iter().filter(|o| o.acknowledged).count()
    }
}

/// The body the service would have sent for `missed`, and its headers (the service's four, and
/// `Svc-Replay: recovery`), signed with the subscription's current key from `keys`.
pub fn recovery_request(
    missed: &MissedNotification,
    keys: &dyn KeySource,
) -> Result<(Vec<Header>, Vec<u8>)> {
    let subscription = &missed.subscription_id;
    let key = keys.keys(subscription).ok_or_else(|| {
        Error::Invalid(format!(
            "no signing key is known for subscription {subscription} (rotate its key in the console, or give it with --key)"
        ))
    })?;
    let notification = Notification {
        event_id: missed.event_id.clone(),
        event_time: missed.sent_at,
        event_type: missed.event_type,
        meta: NotificationMeta {
            instance_id: missed.product_name.clone(),
            resource_id: missed.resource_id.clone(),
            resource_type: missed.resource_type,
            resource_ref: missed.resource_ref.clone(),
        },
    };
    let signed = SignedNotification::new(&notification, &key.current)
        .map_err(|e| Error::Invalid(format!("the notification could not be written: {e}")))?;
    let mut headers: Vec<Header> = signed
        .headers(subscription)
        .into_iter()
        .map(|(name, value)| Header::new(name, value))
        .collect();
    headers.push(Header::new(REPLAY_HEADER, RECOVERY));
    Ok((headers, signed.body))
}

/// Sends each of `missed` to `target` ([`RECOVERIES_IN_FLIGHT`] at a time), telling
/// `progress(done, total)` as each ends. A notification without a key, or a receiver that does
/// not answer, is an outcome with an error, not an `Err`: the others are still sent.
pub async fn recover(
    http: &reqwest::Client,
    target: &url::Url,
    missed: &[MissedNotification],
    keys: &dyn KeySource,
    cancel: &CancellationToken,
    mut progress: impl FnMut(usize, usize),
) -> RecoveryReport {
    let total = missed.len();
    // Each send owns what it needs (a clone of the client is a handle), so the stream's futures
    // borrow nothing and the whole run can be spawned.
    let prepared: Vec<_> = missed
        .iter()
        .map(|m| {
            let request = recovery_request(m, keys);
            let outcome = RecoveryOutcome {
                subscription_id: m.subscription_id.clone(),
                resource_type: m.resource_type,
                event_id: m.event_id.clone(),
                url: target.to_string(),
                status: None,
                acknowledged: false,
                error: None,
                elapsed_ms: 0,
            };
            (outcome, request, http.clone(), target.clone())
        })
        .collect();
    let sends = prepared
        .into_iter()
        .map(|(mut outcome, request, http, target)| async move {
            match request {
                Ok((headers, body)) => {
                    let record =
                        outbound::send(&http, 0, OutboundKind::Replay, &target, headers, body)
                            .await;
                    outcome.status = record.status;
                    outcome.acknowledged = record.status.is_some_and(acknowledges);
                    outcome.error = record.error;
                    outcome.elapsed_ms = record.elapsed_ms;
                }
                Err(e) => outcome.error = Some(e.to_string()),
            }
            outcome
        });
    let (outcomes, cancelled) =
        partner_listener::bulk::in_order(sends, RECOVERIES_IN_FLIGHT, cancel, |done| {
            progress(done, total)
        })
        .await;
    RecoveryReport {
        outcomes,
        cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use partner_api::secret::Secret;
    use partner_api::EventType;
    use partner_listener::keys::MemoryKeys;

    fn missed() -> MissedNotification {
        MissedNotification {
            subscription_id: "sub-1".into(),
            product_id: "p-1".into(),
            product_name: "Shop".into(),
            resource_type: ResourceType::Transaction,
            event_type: EventType::Updated,
            event_id: "ev-1".into(),
            resource_id: "tx-1".into(),
            resource_ref: "http://svc/partner/v1/transactions/tx-1".into(),
            transaction_id: "tx-1".into(),
            sent_at: chrono::Utc.with_ymd_and_hms(2026, 3, 4, 5, 6, 7).unwrap(),
        }
    }

    #[test]
    fn a_recovery_is_the_notification_signed_with_the_current_key_and_marked() {
        let keys = MemoryKeys::new();
        keys.insert("sub-1", Secret::new("k".repeat(32)));
        let (headers, body) = recovery_request(&missed(), &keys).unwrap();
        let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(sent["eventId"], "ev-1");
        assert_eq!(sent["eventType"], "updated");
        assert_eq!(sent["eventTime"], "2026-03-04T05:06:07Z");
        assert_eq!(sent["meta"]["instanceId"], "Shop");
        assert_eq!(sent["meta"]["resourceId"], "tx-1");
        assert_eq!(sent["meta"]["resourceType"], "urn:svc:partner:transaction");
        let header = |name: &str| {
            headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| h.value.clone())
        };
        assert_eq!(header("Svc-SubscriptionId").as_deref(), Some("sub-1"));
        assert_eq!(header("Svc-Replay").as_deref(), Some(RECOVERY));
        let signature = header("Svc-Signature").unwrap();
        assert!(partner_api::signature::verify(
            "k".repeat(32).as_bytes(),
            &body,
            &signature
        ));
    }

    #[test]
    fn no_key_says_which_subscription_and_never_a_secret() {
        let error = recovery_request(&missed(), &MemoryKeys::new()).unwrap_err();
        assert!(error.to_string().contains("sub-1"), "{error}");
    }
}

//! How a notification goes out and what counts as delivered: the spec's "Delivery and retry"
//! and "Headers of a notification", in one place for the sandbox's dispatcher (the sender)
//! and the conformance check (which plays the sender against a partner's receiver).
//!
//! A [`SignedNotification`] is serialised once and signed over those very bytes; whoever sends
//! it sends [`SignedNotification::body`] unchanged, so the signature always covers what went
//! on the wire.

use crate::notification::Notification;
use crate::secret::Secret;
use crate::signature::{
    self, ENVIRONMENT, ENVIRONMENT_HEADER, SIGNATURE_HEADER, SUBSCRIPTION_HEADER,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long the service waits for a receiver's answer to one attempt (spec: 30 seconds).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// The wait after a failed attempt before the next one (spec: 20 seconds).
pub const RETRY_DELAY: Duration = Duration::from_secs(20);
/// Attempts before a notification is discarded (spec: 3).
pub const MAX_ATTEMPTS: u32 = 3;
/// The longest the service can take from a notification's event to giving it up: every attempt
/// timing out, with the delays between them (spec: 3 × 30 s + 2 × 20 s = 130 s). A notification
/// younger than this may still be on its way, so it is not yet missing.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(
    ATTEMPT_TIMEOUT.as_secs() * MAX_ATTEMPTS as u64
        + RETRY_DELAY.as_secs() * (MAX_ATTEMPTS as u64 - 1),
);
/// A service's delivery rules: the spec's by default ([`DeliverySettings::spec`]), a sandbox's
/// own as `GET /sandbox/v1/delivery` tells them (a demo sandbox retries after 2 s, not 20).
/// What the missed-notification check takes as the window in which a notification may still
/// be on its way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliverySettings {
    /// The wait after a failed attempt before the next one, in milliseconds.
    pub retry_delay_ms: u64,
    /// How long one attempt may take, in milliseconds.
    pub attempt_timeout_ms: u64,
    /// Attempts before a notification is discarded.
    pub max_attempts: u32,
    /// The longest from an event to its notification given up, in milliseconds: every attempt
    /// timing out, with the waits between them.
    pub give_up_after_ms: u64,
}

impl DeliverySettings {
    pub fn new(attempt_timeout: Duration, retry_delay: Duration, max_attempts: u32) -> Self {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let attempts = u64::from(max_attempts.max(1));
        let (timeout, delay) = (millis(attempt_timeout), millis(retry_delay));
        Self {
            retry_delay_ms: delay,
            attempt_timeout_ms: timeout,
            max_attempts: max_attempts.max(1),
            give_up_after_ms: timeout
                .saturating_mul(attempts)
                .saturating_add(delay.saturating_mul(attempts - 1)),
        }
    }

    /// The spec's rules: three attempts of 30 s, 20 s apart.
    pub fn spec() -> Self {
        Self::new(ATTEMPT_TIMEOUT, RETRY_DELAY, MAX_ATTEMPTS)
    }

    /// [`Self::give_up_after_ms`] as a duration.
    pub fn give_up_after(&self) -> Duration {
        Duration::from_millis(self.give_up_after_ms)
    }
}

/// The `Content-Type` of a notification.
pub const CONTENT_TYPE: &str = "application/json";

/// Whether a receiver's status acknowledges a notification (spec: 200-399; anything else, a
/// timeout or a connection error makes the service retry).
pub fn acknowledges(status: u16) -> bool {
    (200..=399).contains(&status)
}

/// A notification serialised once, and the `Svc-Signature` of exactly those bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedNotification {
    /// The bytes to send, unchanged.
    pub body: Vec<u8>,
    /// Base64 HMAC-SHA256 of `body` under the subscription's key.
    pub signature: String,
}

impl SignedNotification {
    /// Serialises `notification` (compact, fields in the spec's order) and signs the bytes.
    pub fn new(notification: &Notification, key: &Secret) -> Result<Self, serde_json::Error> {
        let body = serde_json::to_vec(notification)?;
        let signature = signature::sign(key.expose().as_bytes(), &body);
        Ok(Self { body, signature })
    }

    /// The headers the service sends with it (besides `Content-Length`), as name and value.
    pub fn headers(&self, subscription_id: &str) -> [(&'static str, String); 4] {
        headers(subscription_id, &self.signature)
    }
}

/// The headers of a notification to `subscription_id` carrying `signature` (besides
/// `Content-Length`), as name and value.
pub fn headers(subscription_id: &str, signature: &str) -> [(&'static str, String); 4] {
    [
        ("Content-Type", CONTENT_TYPE.to_owned()),
        (SIGNATURE_HEADER, signature.to_owned()),
        (SUBSCRIPTION_HEADER, subscription_id.to_owned()),
        (ENVIRONMENT_HEADER, ENVIRONMENT.to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notification::{EventType, ResourceType};

    #[test]
    fn the_service_gives_up_130_seconds_after_the_event() {
        assert_eq!(GIVE_UP_AFTER, Duration::from_secs(130));
        assert_eq!(DeliverySettings::spec().give_up_after(), GIVE_UP_AFTER);
        let quick = DeliverySettings::new(Duration::from_secs(2), Duration::from_millis(500), 2);
        assert_eq!(quick.give_up_after(), Duration::from_millis(4500));
        assert_eq!(
            DeliverySettings::new(Duration::ZERO, Duration::ZERO, 0).max_attempts,
            1
        );
    }

    #[test]
    fn acknowledgement_is_200_to_399() {
        assert!(!acknowledges(199));
        assert!(acknowledges(200));
        assert!(acknowledges(302));
        assert!(acknowledges(399));
        assert!(!acknowledges(400));
        assert!(!acknowledges(500));
    }

    #[test]
    fn the_signature_covers_the_bytes_sent() {
        let key = Secret::new("Abcdefghijklmnopqrstuvwxyz0123!@");
        let notification = Notification::transaction(
            "e1",
            "2024-05-01T10:00:00Z".parse().unwrap(),
            EventType::Created,
            "acme",
            "t1",
            "https://svc.example",
        );
        let signed = SignedNotification::new(&notification, &key).unwrap();
        assert!(signature::verify(
            key.expose().as_bytes(),
            &signed.body,
            &signed.signature
        ));
        let back: Notification = serde_json::from_slice(&signed.body).unwrap();
        assert_eq!(back, notification);
        assert_eq!(back.meta.resource_type, ResourceType::Transaction);
        let headers = signed.headers("sub-1");
        assert!(headers.contains(&(SIGNATURE_HEADER, signed.signature.clone())));
        assert!(headers.contains(&(SUBSCRIPTION_HEADER, "sub-1".to_owned())));
        assert!(headers.contains(&(ENVIRONMENT_HEADER, "prod".to_owned())));
    }
}

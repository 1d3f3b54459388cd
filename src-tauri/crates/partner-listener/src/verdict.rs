//! What the listener decides about one request, as a pure function of its headers, its raw body
//! and the known keys, so the decision is tested without a socket.
//!
//! Verification runs over the body bytes exactly as they arrived (`partner_api::signature`), and
//! only then is the body parsed. The body is parsed for display whatever the verdict, but a parse
//! never feeds back into verification.

use crate::keys::{KeySource, SubscriptionKeys};
use chrono::{DateTime, Utc};
use partner_api::{signature, Notification, NotificationText, Secret};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The listener's judgement of one request.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Signed by a key of the named subscription; the body is a notification.
    Valid,
    /// The signature matches no key of the subscription.
    InvalidSignature,
    /// No `Svc-Signature` header.
    MissingSignature,
    /// No `Svc-SubscriptionId` header, or one the listener has no key for.
    UnknownSubscription,
    /// Correctly signed, but the body is not a notification.
    MalformedBody,
    /// The body was over the limit; recorded without it.
    TooLarge,
    /// The client did not send its whole body in time (or hung up while sending it).
    Incomplete,
    /// The request arrived on another path than the listener's.
    WrongPath,
    /// The request was not a `POST`.
    WrongMethod,
}

impl Verdict {
    pub const ALL: [Verdict; 9] = [
        Verdict::Valid,
        Verdict::InvalidSignature,
        Verdict::MissingSignature,
        Verdict::UnknownSubscription,
        Verdict::MalformedBody,
        Verdict::TooLarge,
        Verdict::Incomplete,
        Verdict::WrongPath,
        Verdict::WrongMethod,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::InvalidSignature => "invalid-signature",
            Verdict::MissingSignature => "missing-signature",
            Verdict::UnknownSubscription => "unknown-subscription",
            Verdict::MalformedBody => "malformed-body",
            Verdict::TooLarge => "too-large",
            Verdict::Incomplete => "incomplete",
            Verdict::WrongPath => "wrong-path",
            Verdict::WrongMethod => "wrong-method",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }

    /// The status and the generic body the listener answers with. The bodies are the same for
    /// every authentication failure so an attacker learns nothing about keys or subscriptions;
    /// the detail stays in the store.
    pub fn response(self) -> (u16, &'static str) {
        match self {
            Verdict::Valid => (200, "ok\n"),
            Verdict::InvalidSignature
            | Verdict::MissingSignature
            | Verdict::UnknownSubscription => (401, "rejected\n"),
            Verdict::MalformedBody => (400, "bad request\n"),
            Verdict::TooLarge => (413, "payload too large\n"),
            Verdict::Incomplete => (408, "request timeout\n"),
            Verdict::WrongPath => (404, "not found\n"),
            Verdict::WrongMethod => (405, "method not allowed\n"),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of a subscription's keys verified the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchedKey {
    Current,
    Previous,
}

impl MatchedKey {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedKey::Current => "current",
            MatchedKey::Previous => "previous",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "current" => Some(MatchedKey::Current),
            "previous" => Some(MatchedKey::Previous),
            _ => None,
        }
    }
}

/// The notification fields read from a body, each present only if the body had it as a string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationFields {
    pub event_id: Option<String>,
    pub event_time: Option<String>,
    pub event_type: Option<String>,
    pub instance_id: Option<String>,
    pub resource_id: Option<String>,
    pub resource_type: Option<String>,
    pub resource_ref: Option<String>,
}

impl NotificationFields {
    /// Reads what it can from any body; returns the fields and whether the body is a whole,
    /// well-formed notification.
    ///
    /// Every valid notification passes here, so the common case takes one borrowing pass over
    /// the bytes, and the spec's rules (`partner_api`'s `Notification`) are applied to the
    /// fields it read, with no second parse and no `serde_json::Value` tree. Anything unusual (a field
    /// missing or not a string, a duplicate key, not JSON at all) takes the general path below,
    /// which reads whatever fields it can.
    pub fn read(body: &[u8]) -> (Self, bool) {
        // Only an object takes the fast path: serde's derived structs would also accept an array.
        if body.trim_ascii_start().first() == Some(&b'{') {
            if let Ok(text) = serde_json::from_slice::<NotificationText<'_>>(body) {
                let well_formed = text.to_notification().is_ok();
                return (fields_of(text), well_formed);
            }
        }
        Self::read_any(body)
    }

    fn read_any(body: &[u8]) -> (Self, bool) {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
            return (Self::default(), false);
        };
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let fields = Self {
            event_id: text("/eventId"),
            event_time: text("/eventTime"),
            event_type: text("/eventType"),
            instance_id: text("/meta/instanceId"),
            resource_id: text("/meta/resourceId"),
            resource_type: text("/meta/resourceType"),
            resource_ref: text("/meta/resourceRef"),
        };
        let well_formed = Notification::deserialize(&value).is_ok();
        (fields, well_formed)
    }
}

/// The fields of a notification read as sent.
fn fields_of(text: NotificationText<'_>) -> NotificationFields {
    NotificationFields {
        event_id: Some(text.event_id.into_owned()),
        event_time: Some(text.event_time.into_owned()),
        event_type: Some(text.event_type.into_owned()),
        instance_id: Some(text.meta.instance_id.into_owned()),
        resource_id: Some(text.meta.resource_id.into_owned()),
        resource_type: Some(text.meta.resource_type.into_owned()),
        resource_ref: Some(text.meta.resource_ref.into_owned()),
    }
}

/// The outcome of checking one request on the listener's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub matched_key: Option<MatchedKey>,
    pub fields: NotificationFields,
}

/// Judges a `POST` on the listener's path from its two headers and raw body.
pub fn judge(
    signature_header: Option<&str>,
    subscription_header: Option<&str>,
    body: &[u8],
    keys: &dyn KeySource,
    now: DateTime<Utc>,
) -> Judgement {
    let lookup = subscription_header.and_then(|id| keys.keys(id));
    judge_with(
        signature_header,
        lookup.as_ref(),
        keys.previous_key_grace(),
        body,
        now,
    )
}

/// As [`judge`], with the subscription's keys already looked up (`None`: unknown).
pub fn judge_with(
    signature_header: Option<&str>,
    keys: Option<&SubscriptionKeys>,
    previous_grace: chrono::Duration,
    body: &[u8],
    now: DateTime<Utc>,
) -> Judgement {
    let (fields, well_formed) = NotificationFields::read(body);
    let outcome = |verdict, matched_key| Judgement {
        verdict,
        matched_key,
        fields,
    };
    let Some(signature) = signature_header else {
        return outcome(Verdict::MissingSignature, None);
    };
    let Some(keys) = keys else {
        return outcome(Verdict::UnknownSubscription, None);
    };
    let matched = if verifies(&keys.current, body, signature) {
        Some(MatchedKey::Current)
    } else if keys
        .previous_in_grace(now, previous_grace)
        .is_some_and(|previous| verifies(previous, body, signature))
    {
        Some(MatchedKey::Previous)
    } else {
        None
    };
    match matched {
        None => outcome(Verdict::InvalidSignature, None),
        Some(key) if well_formed => outcome(Verdict::Valid, Some(key)),
        Some(key) => outcome(Verdict::MalformedBody, Some(key)),
    }
}

fn verifies(key: &Secret, body: &[u8], signature: &str) -> bool {
    signature::verify(key.expose().as_bytes(), body, signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path must read exactly what the general path reads, for every kind of body.
    #[test]
    fn fast_and_general_reads_agree() {
        let meta = r#""meta":{"instanceId":"i","resourceId":"r","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/x"}"#;
        let bodies = [
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#" {{"eventId":"e\u0031","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta},"extra":[1,2]}}"#),
            format!(r#"{{"eventId":"e1","eventTime":"yesterday","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"deleted",{meta}}}"#),
            format!(r#"{{"eventId":"e1","eventId":"e2","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":7,"eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            r#"{"eventId":"e1","eventType":"created"}"#.to_string(),
            r#"["e1","2024-05-01T10:00:00Z","created",["i","r","urn:svc:partner:transaction","x"]]"#.to_string(),
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}} trailing"#),
            "not json".to_string(),
            String::new(),
        ];
        for body in &bodies {
            assert_eq!(
                NotificationFields::read(body.as_bytes()),
                NotificationFields::read_any(body.as_bytes()),
                "{body}"
            );
        }
        assert!(NotificationFields::read(bodies[0].as_bytes()).1);
        assert_eq!(
            NotificationFields::read(bodies[1].as_bytes())
                .0
                .event_id
                .as_deref(),
            Some("e1")
        );
    }
}

//! What the listener decides about one request, as a pure function of its headers, its raw body
//! and the known keys, so the decision is tested without a socket.
//!
//! Verification runs over the body bytes exactly as they arrived (`partner_api::signature`), and
//! only then is the body parsed. The body is parsed for display whatever the verdict, but a parse
//! never feeds back into verification.
//!
//! What the service signed is taken (issue #46): a body whose signature verifies is `valid`
//! whatever its `eventType`, `resourceType`, `meta` or extra fields, as long as it is a
//! notification at all (`partner_api::NotificationFields::is_notification`: a JSON object with an
//! `eventId`). A service may add event types the spec does not show; refusing them would make it
//! retry and then discard every one. Only a body that cannot be a notification is
//! `malformed-body`. The table of verdicts is in the README ("A webhook listener").

use crate::keys::{KeySource, SubscriptionKeys};
use chrono::{DateTime, Utc};
use partner_api::{signature, Secret};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The listener's judgement of one request.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Signed by a key of the named subscription; the body is a notification (it has an
    /// `eventId`), whatever its event type, resource type or other fields.
    Valid,
    /// The signature matches no key of the subscription.
    InvalidSignature,
    /// No `Svc-Signature` header.
    MissingSignature,
    /// No `Svc-SubscriptionId` header, or one the listener has no key for.
    UnknownSubscription,
    /// Correctly signed, but the body cannot be a notification at all: not JSON, not an object,
    /// or no `eventId` (a string, not empty).
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

/// The fields read from a body: `partner_api`'s receiver's reading, which also holds the rule of
/// what is a notification at all (an `eventId`) and what departs from the spec's shape.
pub use partner_api::NotificationFields;

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
    let (fields, is_notification) = NotificationFields::read(body);
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
        Some(key) if is_notification => outcome(Verdict::Valid, Some(key)),
        Some(key) => outcome(Verdict::MalformedBody, Some(key)),
    }
}

fn verifies(key: &Secret, body: &[u8], signature: &str) -> bool {
    signature::verify(key.expose().as_bytes(), body, signature)
}

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
//!
//! A subscription the service names only in its notifications (issue #46): when a signed
//! notification names a `Svc-SubscriptionId` the keys do not know, the keys of the subscriptions
//! not bound to an id yet whose URL has the request's path are tried ([`KeySource::unbound`]).
//! One that verifies binds the id to its subscription ([`KeySource::bind`]), so the next
//! notification is verified directly; where several verify, the one whose resource is the body's
//! `meta.resourceType` is bound, and where that cannot tell them apart none is bound (the
//! notification is still valid: it was signed by a key of this URL). The header is not covered by
//! the signature, as with any receiver: a replay of a real notification with another id before
//! the first real one arrived would bind that id; the subscription's own notifications then show
//! as `unknown-subscription` until its element is subscribed again.

use crate::keys::{KeySource, SubscriptionKeys, UnboundSubscription};
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
    judge_at(signature_header, subscription_header, None, body, keys, now)
}

/// As [`judge`], for a request on `path` (its target's path): a subscription id the keys do not
/// know is bound to the first subscription not bound yet, of a URL with that path (any, when
/// `path` is `None`), whose key verifies the notification.
pub fn judge_at(
    signature_header: Option<&str>,
    subscription_header: Option<&str>,
    path: Option<&str>,
    body: &[u8],
    keys: &dyn KeySource,
    now: DateTime<Utc>,
) -> Judgement {
    let grace = keys.previous_key_grace();
    let lookup = subscription_header.and_then(|id| keys.keys(id));
    if lookup.is_none() {
        if let (Some(id), Some(signature)) = (subscription_header, signature_header) {
            if let Some(judgement) = bind_by_trial(id, signature, path, body, keys, grace, now) {
                return judgement;
            }
        }
    }
    judge_with(signature_header, lookup.as_ref(), grace, body, now)
}

/// Tries the keys of the subscriptions not bound yet (of a URL with `path`); binds `id` to the
/// one that verifies, and judges with its keys. `None` when no key verifies.
fn bind_by_trial(
    id: &str,
    signature: &str,
    path: Option<&str>,
    body: &[u8],
    keys: &dyn KeySource,
    grace: chrono::Duration,
    now: DateTime<Utc>,
) -> Option<Judgement> {
    let verifying: Vec<(UnboundSubscription, Judgement)> = keys
        .unbound()
        .into_iter()
        .filter(|candidate| path.is_none_or(|path| candidate.is_for_path(path)))
        .filter_map(|candidate| {
            let judgement = judge_with(Some(signature), Some(&candidate.keys), grace, body, now);
            (judgement.matched_key.is_some()).then_some((candidate, judgement))
        })
        .collect();
    let chosen = match verifying.as_slice() {
        [] => return None,
        [only] => Some(only),
        several => {
            let same_resource: Vec<_> = several
                .iter()
                .filter(|(candidate, judgement)| {
                    judgement.fields.resource_type.as_deref() == Some(candidate.resource.as_str())
                })
                .collect();
            match same_resource.as_slice() {
                [only] => Some(*only),
                _ => None,
            }
        }
    };
    match chosen {
        Some((candidate, judgement)) => {
            keys.bind(id, candidate);
            Some(judgement.clone())
        }
        None => verifying.into_iter().next().map(|(_, judgement)| judgement),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::MemoryKeys;

    const KEY_A: &str = "Key-A!aaaaaaaaaaaaaaaaaaaaaaaaaaaa1";
    const KEY_B: &str = "Key-B!bbbbbbbbbbbbbbbbbbbbbbbbbbbb2";
    const BODY: &[u8] = br#"{"eventId":"e1","eventType":"created","meta":{"resourceType":"urn:svc:partner:transaction"}}"#;

    fn unbound(element: &str, url: &str, resource: &str, key: &str) -> UnboundSubscription {
        UnboundSubscription {
            element: element.into(),
            url: url.into(),
            resource: resource.into(),
            keys: SubscriptionKeys::new(Secret::new(key)),
        }
    }

    fn sign(key: &str) -> String {
        signature::sign(key.as_bytes(), BODY)
    }

    #[test]
    fn the_first_notification_binds_its_id_and_the_next_is_verified_directly() {
        let keys = MemoryKeys::new();
        keys.insert_unbound(unbound(
            "a",
            "https://t.example/hook",
            "urn:svc:partner:transaction",
            KEY_A,
        ));
        let now = Utc::now();
        let first = judge_at(
            Some(&sign(KEY_A)),
            Some("whs-1"),
            Some("/hook/"),
            BODY,
            &keys,
            now,
        );
        assert_eq!(first.verdict, Verdict::Valid);
        assert_eq!(first.matched_key, Some(MatchedKey::Current));
        assert!(keys.unbound().is_empty());
        assert!(keys.keys("whs-1").is_some());
        let next = judge(Some(&sign(KEY_A)), Some("whs-1"), BODY, &keys, now);
        assert_eq!(next.verdict, Verdict::Valid);
        let wrong = judge(Some(&sign(KEY_B)), Some("whs-1"), BODY, &keys, now);
        assert_eq!(wrong.verdict, Verdict::InvalidSignature);
    }

    #[test]
    fn a_wrong_key_or_another_path_binds_nothing() {
        let keys = MemoryKeys::new();
        keys.insert_unbound(unbound(
            "a",
            "https://t.example/hook",
            "urn:svc:partner:transaction",
            KEY_A,
        ));
        let now = Utc::now();
        let wrong = judge_at(
            Some(&sign(KEY_B)),
            Some("whs-1"),
            Some("/hook"),
            BODY,
            &keys,
            now,
        );
        assert_eq!(wrong.verdict, Verdict::UnknownSubscription);
        let elsewhere = judge_at(
            Some(&sign(KEY_A)),
            Some("whs-1"),
            Some("/other"),
            BODY,
            &keys,
            now,
        );
        assert_eq!(elsewhere.verdict, Verdict::UnknownSubscription);
        assert_eq!(keys.unbound().len(), 1);
        assert!(keys.keys("whs-1").is_none());
    }

    #[test]
    fn one_key_on_two_resources_binds_the_one_the_body_names() {
        let keys = MemoryKeys::new();
        keys.insert_unbound(unbound(
            "events",
            "https://t.example/hook",
            "urn:svc:partner:transaction:event",
            KEY_A,
        ));
        keys.insert_unbound(unbound(
            "transactions",
            "https://t.example/hook",
            "urn:svc:partner:transaction",
            KEY_A,
        ));
        let judged = judge_at(
            Some(&sign(KEY_A)),
            Some("whs-t"),
            Some("/hook"),
            BODY,
            &keys,
            Utc::now(),
        );
        assert_eq!(judged.verdict, Verdict::Valid);
        let left: Vec<String> = keys.unbound().into_iter().map(|u| u.element).collect();
        assert_eq!(left, vec!["events".to_string()]);
    }
}

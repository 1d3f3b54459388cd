//! The notifications a check sends, and sending one.
//!
//! Every probe is a real notification body built by `partner-api`'s builders, marked as a
//! check (`meta.instanceId` = [`crate::CHECK_INSTANCE_ID`]) and carrying made-up ids (fresh
//! UUIDs), so no receiver can take it for a real transaction. Each is serialised and signed
//! once by [`SignedNotification`] and sent with the service's headers
//! ([`partner_api::delivery::headers`]); the negative probes are made from a correctly signed
//! one by changing exactly one thing.

use crate::report::Exchange;
use crate::secrets::{excerpt, stack_trace_in, SecretForms, MASK};
use chrono::Utc;
use partner_api::signature::SIGNATURE_HEADER;
use partner_api::SignedNotification;
use partner_api::{delivery, signing_key, EventType, Notification, ResourceType, Secret};
use serde_json::Value;
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How much of a response body is read (and searched for the key); the rest is ignored.
pub const BODY_READ_LIMIT: usize = 64 * 1024;
/// How many characters of a response body the report keeps.
pub const EXCERPT_CHARS: usize = 200;

/// What a probe is, each changing one thing of a correctly signed notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Correctly signed: must be acknowledged.
    Signed,
    /// The same bytes and signature again: must be acknowledged again.
    Redelivery,
    /// Signed with another (made-up) key.
    WrongSignature,
    /// No `Svc-Signature` header at all.
    MissingSignature,
    /// One byte of the body changed after signing.
    TamperedBody,
    /// Correctly signed over its own bytes, but written pretty (two-space indents, as another
    /// sender may write JSON): must be acknowledged; a receiver that verifies its own compact
    /// re-serialisation refuses it.
    NotCompact,
    /// The same keys in the same order with other spacing, under the original's signature (made
    /// over the compact form): acknowledged by a receiver that verifies its compact
    /// re-serialisation in arrival order (`JSON.stringify(req.body)`).
    OtherSpacing,
    /// The body as the service writes it, signed over its keys sorted (compact): acknowledged
    /// by a receiver that verifies a sorted-key re-serialisation.
    SignedOverSortedKeys,
    /// The body as the service writes it, signed over it pretty-printed (two-space indents):
    /// acknowledged by a receiver that verifies `JSON.stringify(req.body, null, 2)`.
    SignedOverPretty,
}

impl Probe {
    /// The probes that must be refused.
    pub const NEGATIVE: [Probe; 6] = [
        Probe::WrongSignature,
        Probe::MissingSignature,
        Probe::TamperedBody,
        Probe::OtherSpacing,
        Probe::SignedOverSortedKeys,
        Probe::SignedOverPretty,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Probe::Signed => "a correctly signed notification",
            Probe::Redelivery => "the same notification again (same eventId, body and signature)",
            Probe::WrongSignature => "a notification signed with another key",
            Probe::MissingSignature => "a notification without Svc-Signature",
            Probe::TamperedBody => "a notification whose body was changed by one byte after signing",
            Probe::NotCompact => {
                "a correctly signed notification written pretty (not compact), as another sender may write it"
            }
            Probe::OtherSpacing => {
                "the same JSON with other spacing (same key order), under the compact form's signature"
            }
            Probe::SignedOverSortedKeys => {
                "the notification signed over its keys sorted, not over the bytes sent"
            }
            Probe::SignedOverPretty => {
                "the notification signed over it pretty-printed, not over the bytes sent"
            }
        }
    }
}

/// A probe ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub probe: Probe,
    pub event_id: String,
    pub body: Vec<u8>,
    /// `None`: sent without `Svc-Signature`.
    pub signature: Option<String>,
}

impl Prepared {
    /// The same bytes and signature, sent again.
    pub fn redelivery(&self) -> Self {
        Self {
            probe: Probe::Redelivery,
            ..self.clone()
        }
    }
}

/// A fresh notification of `resource`, marked as a check, with made-up ids.
fn notification(resource: ResourceType, base_url: &str) -> Notification {
    let event_id = uuid::Uuid::new_v4().to_string();
    let transaction_id = uuid::Uuid::new_v4().to_string();
    match resource {
        ResourceType::Transaction => Notification::transaction(
            &event_id,
            Utc::now(),
            EventType::Created,
            crate::CHECK_INSTANCE_ID,
            &transaction_id,
            base_url,
        ),
        ResourceType::TransactionEvent => Notification::transaction_event(
            &event_id,
            Utc::now(),
            crate::CHECK_INSTANCE_ID,
            &transaction_id,
            base_url,
        ),
    }
}

/// The probe `probe`, built on a fresh notification of `resource` signed with `key`.
pub fn prepare(
    probe: Probe,
    resource: ResourceType,
    base_url: &str,
    key: &Secret,
) -> Result<Prepared, String> {
    let notification = notification(resource, base_url);
    let event_id = notification.event_id.clone();
    let sign = |key: &Secret| {
        SignedNotification::new(&notification, key)
            .map_err(|e| format!("a notification could not be serialised: {e}"))
    };
    let signed = if probe == Probe::WrongSignature {
        sign(&signing_key::generate())?
    } else {
        sign(key)?
    };
    let (body, signature) = match probe {
        Probe::Signed | Probe::Redelivery | Probe::WrongSignature => {
            (signed.body, Some(signed.signature))
        }
        Probe::MissingSignature => (signed.body, None),
        Probe::TamperedBody => (
            change_one_byte(&signed.body, &event_id)?,
            Some(signed.signature),
        ),
        Probe::NotCompact => {
            let pretty = pretty(&notification)?;
            let signature = partner_api::signature::sign(key.expose().as_bytes(), &pretty);
            (pretty, Some(signature))
        }
        Probe::OtherSpacing => (respace(&signed.body), Some(signed.signature)),
        Probe::SignedOverSortedKeys => {
            let sorted = sorted_compact(&signed.body)?;
            let signature = partner_api::signature::sign(key.expose().as_bytes(), &sorted);
            (signed.body, Some(signature))
        }
        Probe::SignedOverPretty => {
            let signature =
                partner_api::signature::sign(key.expose().as_bytes(), &pretty(&notification)?);
            (signed.body, Some(signature))
        }
    };
    Ok(Prepared {
        probe,
        event_id,
        body,
        signature,
    })
}

/// `body` with the last character of the `eventId` (a hex digit of a UUID) changed: one byte,
/// still valid JSON, still a well-formed notification.
fn change_one_byte(body: &[u8], event_id: &str) -> Result<Vec<u8>, String> {
    let start = body
        .windows(event_id.len())
        .position(|window| window == event_id.as_bytes())
        .ok_or("the eventId is not in the body")?;
    let last = start + event_id.len() - 1;
    let mut changed = body.to_vec();
    changed[last] = if changed[last] == b'a' { b'b' } else { b'a' };
    Ok(changed)
}

/// The notification pretty-printed in the service's key order, two-space indents (what
/// `JSON.stringify(value, null, 2)` and `serde_json::to_vec_pretty` write).
fn pretty(notification: &Notification) -> Result<Vec<u8>, String> {
    serde_json::to_vec_pretty(notification)
        .map_err(|e| format!("a notification could not be serialised: {e}"))
}

/// The same JSON with a space after every `:` and `,` outside strings: other bytes, the same
/// keys in the same order.
pub fn respace(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 8);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in body {
        out.push(byte);
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b':' || byte == b',' {
            out.push(b' ');
        }
    }
    out
}

/// The same JSON value written compact with every object's keys sorted.
pub fn sorted_compact(body: &[u8]) -> Result<Vec<u8>, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("a notification body is not JSON: {e}"))?;
    let mut out = String::new();
    write_sorted(&value, &mut out);
    Ok(out.into_bytes())
}

fn write_sorted(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(*key) {
                    write_sorted(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_sorted(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What one request found.
#[derive(Debug, Clone)]
pub struct Sent {
    pub probe: Probe,
    pub exchange: Exchange,
    /// The form of the signing key the response carried (body or a header), if any.
    pub key_leak: Option<&'static str>,
    /// The runtime whose stack trace the body looks like, if any.
    pub stack_trace: Option<&'static str>,
    /// No connection could be made at all (refused, DNS, ...).
    pub connect_failed: bool,
}

/// Sends probes to one receiver: the service's headers, no redirects followed, at most
/// [`crate::MAX_REQUESTS`] requests.
#[derive(Debug)]
pub struct Sender {
    pub client: reqwest::Client,
    pub url: url::Url,
    pub subscription_id: String,
    /// How long one request may take before it is given up.
    pub wait: Duration,
    pub key_forms: SecretForms,
    pub sent: AtomicUsize,
}

impl Sender {
    pub fn requests_sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }

    pub async fn send(&self, prepared: &Prepared) -> Sent {
        let mut sent = Sent {
            probe: prepared.probe,
            exchange: Exchange {
                sent: prepared.probe.describe().to_owned(),
                event_id: prepared.event_id.clone(),
                status: None,
                error: None,
                duration_ms: 0,
                body_excerpt: None,
            },
            key_leak: None,
            stack_trace: None,
            connect_failed: false,
        };
        if self.sent.fetch_add(1, Ordering::SeqCst) >= crate::MAX_REQUESTS {
            self.sent.fetch_sub(1, Ordering::SeqCst);
            sent.exchange.error = Some(format!(
                "not sent: a check sends at most {} requests",
                crate::MAX_REQUESTS
            ));
            return sent;
        }
        let mut request = self
            .client
            .post(self.url.clone())
            .timeout(self.wait)
            .body(prepared.body.clone());
        let signature = prepared.signature.as_deref().unwrap_or_default();
        for (name, value) in delivery::headers(&self.subscription_id, signature) {
            if name == SIGNATURE_HEADER && prepared.signature.is_none() {
                continue;
            }
            request = request.header(name, value);
        }
        let started = Instant::now();
        let result = request.send().await;
        sent.exchange.duration_ms = millis(started.elapsed());
        let mut response = match result {
            Ok(response) => response,
            Err(error) => {
                sent.connect_failed = error.is_connect();
                sent.exchange.error = Some(describe(&error, self.wait));
                return sent;
            }
        };
        sent.exchange.status = Some(response.status().as_u16());
        tracing::debug!(
            probe = ?prepared.probe,
            event_id = %prepared.event_id,
            status = response.status().as_u16(),
            duration_ms = sent.exchange.duration_ms,
            "conformance probe answered"
        );
        let headers: String = response
            .headers()
            .iter()
            .map(|(name, value)| format!("{name}: {}\n", String::from_utf8_lossy(value.as_bytes())))
            .collect();
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = BODY_READ_LIMIT.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if body.len() >= BODY_READ_LIMIT {
                        break;
                    }
                }
                Ok(None) => break,
                // The status is what counts; a body cut short is shown as far as it came.
                Err(_) => break,
            }
        }
        let text = String::from_utf8_lossy(&body);
        sent.key_leak = self
            .key_forms
            .found_in(&text)
            .or_else(|| self.key_forms.found_in(&headers));
        sent.stack_trace = stack_trace_in(&text);
        if !text.trim().is_empty() {
            sent.exchange.body_excerpt =
                Some(excerpt(&self.key_forms.mask(&text, MASK), EXCERPT_CHARS));
        }
        sent
    }
}

pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A request's failure in words, from the innermost cause (reqwest's own text carries the URL,
/// which the report already has).
fn describe(error: &reqwest::Error, wait: Duration) -> String {
    if error.is_timeout() {
        return format!(
            "no answer within {}",
            crate::report::format_ms(millis(wait))
        );
    }
    let mut innermost: Option<&(dyn std::error::Error + 'static)> = None;
    let mut cause = error.source();
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return "connection refused".into(),
                std::io::ErrorKind::ConnectionReset => return "connection reset".into(),
                _ => {}
            }
        }
        innermost = Some(current);
        cause = current.source();
    }
    let text = innermost.map_or_else(|| "the request failed".to_owned(), ToString::to_string);
    if error.is_connect() {
        format!("could not connect: {text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_api::signature;

    fn key() -> Secret {
        Secret::new("Abcdefghijklmnopqrstuvwxyz0123!@")
    }

    #[test]
    fn every_probe_is_a_marked_notification_that_differs_in_one_thing() {
        let key = key();
        let raw = key.expose().as_bytes();
        for resource in ResourceType::ALL {
            let signed = prepare(Probe::Signed, resource, "https://svc.example", &key).unwrap();
            let parsed: Notification = serde_json::from_slice(&signed.body).unwrap();
            assert_eq!(parsed.meta.instance_id, crate::CHECK_INSTANCE_ID);
            assert_eq!(parsed.meta.resource_type, resource);
            assert_eq!(parsed.event_id, signed.event_id);
            uuid::Uuid::parse_str(&parsed.event_id).unwrap();
            assert!(signature::verify(
                raw,
                &signed.body,
                signed.signature.as_deref().unwrap()
            ));

            let wrong = prepare(Probe::WrongSignature, resource, "https://h", &key).unwrap();
            assert!(!signature::verify(
                raw,
                &wrong.body,
                wrong.signature.as_deref().unwrap()
            ));

            let missing = prepare(Probe::MissingSignature, resource, "https://h", &key).unwrap();
            assert!(missing.signature.is_none());

            let tampered = prepare(Probe::TamperedBody, resource, "https://h", &key).unwrap();
            let tampered_json: Notification = serde_json::from_slice(&tampered.body).unwrap();
            assert_ne!(
                tampered_json.event_id, tampered.event_id,
                "one byte changed"
            );
            assert!(!signature::verify(
                raw,
                &tampered.body,
                tampered.signature.as_deref().unwrap()
            ));

            // Each re-serialisation probe: the same notification in other bytes, the signature
            // matching exactly one re-serialisation of it.
            let same = |body: &[u8]| serde_json::from_slice::<Notification>(body).unwrap();
            let compact = |body: &[u8]| serde_json::to_vec(&same(body)).unwrap();
            let spaced = prepare(Probe::OtherSpacing, resource, "https://h", &key).unwrap();
            let sig = spaced.signature.as_deref().unwrap();
            assert_ne!(compact(&spaced.body), spaced.body, "other bytes");
            assert!(!signature::verify(raw, &spaced.body, sig));
            assert!(
                signature::verify(raw, &compact(&spaced.body), sig),
                "over the compact form"
            );
            assert!(
                !String::from_utf8_lossy(&spaced.body).contains("\":\""),
                "a space after each colon"
            );

            let sorted = prepare(Probe::SignedOverSortedKeys, resource, "https://h", &key).unwrap();
            let sig = sorted.signature.as_deref().unwrap();
            assert!(!signature::verify(raw, &sorted.body, sig));
            assert!(signature::verify(
                raw,
                &sorted_compact(&sorted.body).unwrap(),
                sig
            ));
            assert_ne!(
                sorted_compact(&sorted.body).unwrap(),
                sorted.body,
                "the service's order is not sorted"
            );

            let pretty_signed =
                prepare(Probe::SignedOverPretty, resource, "https://h", &key).unwrap();
            let sig = pretty_signed.signature.as_deref().unwrap();
            assert!(!signature::verify(raw, &pretty_signed.body, sig));
            let printed = serde_json::to_vec_pretty(&same(&pretty_signed.body)).unwrap();
            assert!(signature::verify(raw, &printed, sig));

            let not_compact = prepare(Probe::NotCompact, resource, "https://h", &key).unwrap();
            assert!(not_compact.body.contains(&b'\n'), "written pretty");
            assert!(
                signature::verify(
                    raw,
                    &not_compact.body,
                    not_compact.signature.as_deref().unwrap()
                ),
                "signed over its own bytes"
            );
        }
    }

    #[test]
    fn respacing_leaves_strings_alone() {
        let body = br#"{"a":"x:y, \"q\":1","b":[1,2]}"#;
        assert_eq!(
            String::from_utf8(respace(body)).unwrap(),
            r#"{"a": "x:y, \"q\":1", "b": [1, 2]}"#
        );
    }

    #[test]
    fn a_redelivery_is_the_same_bytes_and_signature() {
        let signed = prepare(
            Probe::Signed,
            ResourceType::Transaction,
            "https://h",
            &key(),
        )
        .unwrap();
        let again = signed.redelivery();
        assert_eq!(again.body, signed.body);
        assert_eq!(again.signature, signed.signature);
        assert_eq!(again.event_id, signed.event_id);
        assert_eq!(again.probe, Probe::Redelivery);
    }
}

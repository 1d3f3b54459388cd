//! Two captures side by side: what differs in their bodies, path by path when both are JSON,
//! their headers row by row, and each one's verdict and answer. For "this notification was
//! accepted yesterday and refused today", a redelivery against its first attempt, or a body
//! the partner's app re-serialised against the one the service signed.
//!
//! Why it is done this way:
//! - The body's differences are RFC 6902's, from `json-patch`'s `diff` (kept by the crate that
//!   Tauri uses too), read back as paths (`/loan/amount`) with the value on each side, so the
//!   window can show both without applying anything.
//! - Bodies that are not both JSON are compared as bytes: equal or not, and their sizes; a body
//!   that was not kept (too large, incomplete) is said to be missing, never taken as empty.
//! - Header names are compared case-insensitively (HTTP's rule), each name once, in the first
//!   capture's order and then the second's.

use crate::capture::Capture;
use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// One capture's side of a comparison.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComparedCapture {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: i64,
    pub received_at: DateTime<Utc>,
    pub verdict: Verdict,
    /// The status the listener answered with.
    pub answered: u16,
    pub event_id: Option<String>,
    pub event_type: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub body_size: u64,
}

/// How one path of the bodies differs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BodyChange {
    /// Only in the second body.
    Added,
    /// Only in the first body.
    Removed,
    /// In both, with other values.
    Changed,
}

/// A path whose value differs, with the value on each side (none where it is absent).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BodyDifference {
    /// A JSON pointer (RFC 6901): `/loan/amount`, `/resources/0/name`.
    pub path: String,
    pub change: BodyChange,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub first: Option<Value>,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub second: Option<Value>,
}

/// What the bodies' comparison found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum BodyComparison {
    /// Byte for byte the same.
    Identical,
    /// Both JSON: the paths that differ (none when only the bytes differ: the same document
    /// serialised in another way, which breaks a signature all the same).
    Json { differences: Vec<BodyDifference> },
    /// Not both JSON, and not the same bytes.
    Bytes,
    /// One body or both were not kept (too large, or never completed).
    Missing,
}

/// One header name and its value in each capture (none where it was not sent).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeaderRow {
    pub name: String,
    pub first: Option<String>,
    pub second: Option<String>,
    pub same: bool,
}

/// Two captures compared.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub first: ComparedCapture,
    pub second: ComparedCapture,
    pub body: BodyComparison,
    pub headers: Vec<HeaderRow>,
}

/// Compares `first` with `second`.
pub fn compare(first: &Capture, second: &Capture) -> Comparison {
    Comparison {
        first: side(first),
        second: side(second),
        body: bodies(first.body.as_deref(), second.body.as_deref()),
        headers: headers(first, second),
    }
}

fn side(capture: &Capture) -> ComparedCapture {
    ComparedCapture {
        id: capture.id,
        received_at: capture.received_at,
        verdict: capture.verdict,
        answered: capture.response.status,
        event_id: capture.fields.event_id.clone(),
        event_type: capture.fields.event_type.clone(),
        body_size: capture.body_size,
    }
}

fn bodies(first: Option<&[u8]>, second: Option<&[u8]>) -> BodyComparison {
    let (Some(first), Some(second)) = (first, second) else {
        return BodyComparison::Missing;
    };
    if first == second {
        return BodyComparison::Identical;
    }
    let (Ok(left), Ok(right)) = (
        serde_json::from_slice::<Value>(first),
        serde_json::from_slice::<Value>(second),
    ) else {
        return BodyComparison::Bytes;
    };
    let differences = json_patch::diff(&left, &right)
        .0
        .into_iter()
        .filter_map(|operation| {
            use json_patch::PatchOperation as Op;
            let (path, change) = match &operation {
                Op::Add(op) => (op.path.to_string(), BodyChange::Added),
                Op::Remove(op) => (op.path.to_string(), BodyChange::Removed),
                Op::Replace(op) => (op.path.to_string(), BodyChange::Changed),
                // `diff` only adds, removes and replaces.
                Op::Move(_) | Op::Copy(_) | Op::Test(_) => return None,
            };
            Some(BodyDifference {
                first: left.pointer(&path).cloned(),
                second: right.pointer(&path).cloned(),
                path,
                change,
            })
        })
        .collect();
    BodyComparison::Json { differences }
}

fn headers(first: &Capture, second: &Capture) -> Vec<HeaderRow> {
    let mut names: Vec<String> = Vec::new();
    for header in first.headers.iter().chain(&second.headers) {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&header.name)) {
            names.push(header.name.clone());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let first = first.header(&name).map(str::to_owned);
            let second = second.header(&name).map(str::to_owned);
            HeaderRow {
                same: first == second,
                name,
                first,
                second,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Header;
    use crate::verdict::NotificationFields;

    fn capture(id: i64, body: Option<&str>, headers: &[(&str, &str)], verdict: Verdict) -> Capture {
        let fields = NotificationFields::read(body.unwrap_or_default().as_bytes()).0;
        Capture {
            id,
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/webhooks".into(),
            headers: headers.iter().map(|(n, v)| Header::new(*n, *v)).collect(),
            body: body.map(|b| b.as_bytes().to_vec()),
            body_size: body.map_or(4_000_000, |b| b.len() as u64),
            peer: None,
            verdict,
            matched_key: None,
            subscription_id: Some("s".into()),
            fields,
            attempt: 1,
            notification_id: Some(id),
            response: crate::ResponseRecord {
                status: if verdict == Verdict::Valid { 200 } else { 401 },
                body: String::new(),
                from_test_mode: false,
                delay_ms: 0,
            },
            processing_micros: 0,
            replay: false,
        }
    }

    #[test]
    fn json_bodies_differ_path_by_path_with_both_values() {
        let first = capture(
            1,
            Some(r#"{"eventId":"e1","loan":{"amount":100,"state":"WA"},"tags":["a"]}"#),
            &[
                ("Svc-Signature", "t=1,v1=aa"),
                ("Content-Type", "application/json"),
            ],
            Verdict::Valid,
        );
        let second = capture(
            2,
            Some(r#"{"eventId":"e1","loan":{"amount":250},"tags":["a","b"],"extra":true}"#),
            &[
                ("svc-signature", "t=1,v1=bb"),
                ("Content-Type", "application/json"),
                ("X-Other", "1"),
            ],
            Verdict::InvalidSignature,
        );
        let compared = compare(&first, &second);
        assert_eq!(
            (compared.first.answered, compared.second.answered),
            (200, 401)
        );
        let BodyComparison::Json { differences } = &compared.body else {
            panic!("{:?}", compared.body);
        };
        let by_path = |path: &str| differences.iter().find(|d| d.path == path).cloned();
        let amount = by_path("/loan/amount").expect("changed");
        assert_eq!(amount.change, BodyChange::Changed);
        assert_eq!(
            (amount.first, amount.second),
            (Some(100.into()), Some(250.into()))
        );
        let state = by_path("/loan/state").expect("removed");
        assert_eq!((state.change, state.second), (BodyChange::Removed, None));
        assert_eq!(by_path("/extra").expect("added").change, BodyChange::Added);
        assert_eq!(by_path("/tags/1").expect("added").second, Some("b".into()));
        assert!(
            by_path("/eventId").is_none(),
            "the same value is no difference"
        );

        // Names once, whatever their case; values side by side.
        let signature = &compared.headers[0];
        assert_eq!(signature.name, "Svc-Signature");
        assert_eq!(signature.second.as_deref(), Some("t=1,v1=bb"));
        assert!(!signature.same);
        assert!(compared.headers[1].same);
        let other = &compared.headers[2];
        assert_eq!(
            (other.first.as_deref(), other.second.as_deref()),
            (None, Some("1"))
        );
    }

    #[test]
    fn other_bodies_are_identical_reserialised_bytes_or_missing() {
        let json = r#"{"a":1,"b":2}"#;
        let same = compare(
            &capture(1, Some(json), &[], Verdict::Valid),
            &capture(2, Some(json), &[], Verdict::Valid),
        );
        assert_eq!(same.body, BodyComparison::Identical);
        // The same document in other bytes: no path differs, yet a signature would.
        let spaced = compare(
            &capture(1, Some(json), &[], Verdict::Valid),
            &capture(
                2,
                Some(r#"{ "b": 2, "a": 1 }"#),
                &[],
                Verdict::InvalidSignature,
            ),
        );
        assert_eq!(
            spaced.body,
            BodyComparison::Json {
                differences: vec![]
            }
        );
        let text = compare(
            &capture(1, Some("hello"), &[], Verdict::MalformedBody),
            &capture(2, Some("hullo"), &[], Verdict::MalformedBody),
        );
        assert_eq!(text.body, BodyComparison::Bytes);
        let missing = compare(
            &capture(1, None, &[], Verdict::TooLarge),
            &capture(2, Some(json), &[], Verdict::Valid),
        );
        assert_eq!(missing.body, BodyComparison::Missing);
    }
}

//! The record of one request as it arrived, and of what the listener and the user's app answered.
//!
//! A capture keeps the raw body bytes, never a re-encoding of them: the signature debugger, replay
//! and export all need the exact bytes. On the wire (JSON Lines, the app) the body travels as
//! Base64 beside a UTF-8 text rendering for people to read.

use crate::verdict::{MatchedKey, NotificationFields, Verdict};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One header as it arrived (names lower-cased by HTTP/1 parsing; values read as UTF-8, lossy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl Header {
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// The first value of a header, by case-insensitive name.
pub fn header_value<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// What the listener answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseRecord {
    pub status: u16,
    pub body: String,
    /// The status came from the test mode rather than from the verdict.
    #[serde(default)]
    pub from_test_mode: bool,
    /// The answer was held back this many milliseconds by the test mode.
    #[serde(default)]
    pub delay_ms: u64,
}

/// One request that arrived at the listener, whatever its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    /// Assigned by the store; 0 before the capture is stored.
    pub id: i64,
    pub received_at: DateTime<Utc>,
    pub method: String,
    /// Path and query as requested.
    pub path: String,
    pub headers: Vec<Header>,
    /// The raw body; `None` when it was not kept (over the limit, or never completed).
    #[serde(with = "body_base64", rename = "bodyBase64")]
    pub body: Option<Vec<u8>>,
    /// Bytes announced or received, also when the body was not kept.
    pub body_size: u64,
    pub peer: Option<String>,
    pub verdict: Verdict,
    pub matched_key: Option<MatchedKey>,
    pub subscription_id: Option<String>,
    #[serde(flatten)]
    pub fields: NotificationFields,
    /// 1 for the first delivery of a (subscription, resource type, eventId), 2 for the next...
    pub attempt: u32,
    /// The id of the first attempt of the same notification (itself for the first).
    pub notification_id: Option<i64>,
    pub response: ResponseRecord,
    /// From the request's arrival to its verdict (reading the body, verifying, parsing); the
    /// commit and any test-mode delay come after and are not counted.
    pub processing_micros: u64,
    /// The request carried `Svc-Replay: 1` (the console replayed it) or `Svc-Replay: recovery`
    /// (the console rebuilt a notification that never arrived).
    pub replay: bool,
}

impl Capture {
    /// The body as text, for people (invalid UTF-8 shown with replacement characters).
    pub fn body_text(&self) -> Option<String> {
        self.body
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }

    /// The service's notification this capture is an attempt of: its subscription id, resource
    /// type and eventId, when it names all three and is an attempt of the service's at all: a
    /// replay is the console's, not the service's ([`crate::redelivery`]). Every store that
    /// numbers attempts (the local store, the team server's) links captures by it.
    pub fn notification_of(&self) -> Option<(&str, &str, &str)> {
        if self.replay {
            return None;
        }
        Some((
            self.subscription_id.as_deref()?,
            self.fields.resource_type.as_deref()?,
            self.fields.event_id.as_deref()?,
        ))
    }
}

/// What kind of request the console sent on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutboundKind {
    /// `--forward-to`: a valid notification passed on unchanged.
    Forward,
    /// A capture sent again, unchanged.
    Replay,
    /// A capture sent again with an edited body, re-signed with the current key.
    ReplayEdited,
}

impl OutboundKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboundKind::Forward => "forward",
            OutboundKind::Replay => "replay",
            OutboundKind::ReplayEdited => "replay-edited",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "forward" => Some(OutboundKind::Forward),
            "replay" => Some(OutboundKind::Replay),
            "replay-edited" => Some(OutboundKind::ReplayEdited),
            _ => None,
        }
    }
}

/// A request the console sent for a capture (forward or replay) and what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboundRecord {
    pub id: i64,
    pub capture_id: i64,
    pub kind: OutboundKind,
    pub url: String,
    pub sent_at: DateTime<Utc>,
    pub request_headers: Vec<Header>,
    #[serde(with = "body_base64", rename = "requestBodyBase64")]
    pub request_body: Option<Vec<u8>>,
    /// `None` when no answer came (see `error`).
    pub status: Option<u16>,
    pub response_headers: Vec<Header>,
    /// The answer's body as text, cut at 64 KiB.
    pub response_body: Option<String>,
    pub elapsed_ms: u64,
    pub error: Option<String>,
}

mod body_base64 {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(body: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match body {
            Some(bytes) => s.serialize_str(&STANDARD.encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| STANDARD.decode(t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

//! Spec-shaped captures made up in bulk, for `benches/query.rs` and `examples/seed_captures.rs`:
//! what a store holds after months of real traffic, as JSON Lines (`partner listen export`'s
//! format), so a store is built through the import the user has.
//!
//! Each capture has a ~2 KiB notification body as the service sends it (the spec's fields plus
//! a `data` object of realistic words, so full-text search meets varied text rather than one
//! long token), the headers a delivery carries, and a mix of verdicts, event types, resource
//! types and subscriptions. Every 10 captures hold 8 notifications: one of them delivered three
//! times (a redelivery chain), so grouping has work to do. Words the query bench looks for:
//! [`COMMON_WORD`] is in every body, [`RARE_WORD`] in one capture in [`RARE_EVERY`],
//! [`ABSENT_WORD`] in none. Deterministic: the same count gives the same captures.

#![allow(dead_code)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, Read};

pub const COMMON_WORD: &str = "partner";
pub const RARE_WORD: &str = "quetzalcoatl";
pub const RARE_EVERY: u64 = 10_000;
pub const ABSENT_WORD: &str = "xylophonist";
pub const BODY_SIZE: usize = 2048;

pub const SUBSCRIPTIONS: [&str; 5] = [
    "3f1c2a9e-5b7d-4e21-9a0f-1d2c3b4a5e6f",
    "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
    "b1c2d3e4-f5a6-4b7c-9d8e-0f1a2b3c4d5e",
    "c9d8e7f6-a5b4-4c3d-8e2f-1a0b9c8d7e6f",
    "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f7a",
];
pub const EVENT_TYPES: [&str; 4] = ["created", "updated", "deleted", "statusChanged"];
pub const RESOURCE_TYPES: [&str; 3] = [
    "urn:svc:partner:transaction",
    "urn:svc:partner:product",
    "urn:svc:partner:lender",
];
const WORDS: [&str; 48] = [
    "loan",
    "amount",
    "currency",
    "borrower",
    "approved",
    "pending",
    "review",
    "disbursed",
    "interest",
    "rate",
    "term",
    "months",
    "lender",
    "branch",
    "office",
    "collateral",
    "vehicle",
    "property",
    "income",
    "verified",
    "document",
    "signature",
    "consent",
    "address",
    "street",
    "city",
    "postal",
    "region",
    "country",
    "phone",
    "email",
    "status",
    "reason",
    "code",
    "channel",
    "online",
    "mobile",
    "agent",
    "fee",
    "schedule",
    "payment",
    "first",
    "monthly",
    "insurance",
    "credit",
    "score",
    "bureau",
    "report",
];

/// Capture `index` (0-based) of the corpus, as one line of JSON Lines (no newline).
pub fn capture_line(index: u64, base: DateTime<Utc>) -> String {
    let mut rng = StdRng::seed_from_u64(index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xc0ffee);
    let id = index as i64 + 1;
    // Within each 10: 0 is a notification's first attempt, 1 and 2 its redeliveries.
    let (attempt, first) = match index % 10 {
        1 => (2, id - 1),
        2 => (3, id - 2),
        _ => (1, id),
    };
    // A notification's attempts share its identity: derive it from its first capture.
    let first_index = (first - 1) as u64;
    let mut identity = StdRng::seed_from_u64(first_index ^ 0x5eed);
    let event_id = uuid::Uuid::from_u128(identity.random()).to_string();
    let subscription = SUBSCRIPTIONS[identity.random_range(0..SUBSCRIPTIONS.len())];
    let event_type = EVENT_TYPES[identity.random_range(0..EVENT_TYPES.len())];
    let resource_type = RESOURCE_TYPES[identity.random_range(0..RESOURCE_TYPES.len())];
    let resource_id = uuid::Uuid::from_u128(identity.random()).to_string();
    let verdict = match rng.random_range(0..100) {
        0..=89 => "valid",
        90..=93 => "invalid-signature",
        94..=95 => "missing-signature",
        96..=97 => "unknown-subscription",
        98 => "malformed-body",
        _ => "wrong-path",
    };
    let resource_ref = format!(
        "https://svc.example/partner/v2/{}s/{resource_id}",
        resource_type.rsplit(':').next().unwrap_or("resource")
    );
    let mut words = String::new();
    while words.len() < 1500 {
        words.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        words.push(' ');
    }
    if index % RARE_EVERY == RARE_EVERY / 2 {
        words.push_str(RARE_WORD);
        words.push(' ');
    }
    let head = format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"{event_type}","meta":{{"instanceId":"{COMMON_WORD}-console-sandbox","resourceId":"{resource_id}","resourceType":"{resource_type}","resourceRef":"{resource_ref}"}},"data":{{"amount":{},"currency":"EUR","note":""#,
        rng.random_range(1_000..500_000)
    );
    let tail = r#""}}"#;
    let room = BODY_SIZE.saturating_sub(head.len() + tail.len());
    let note: String = words.chars().take(room).collect();
    let body = format!("{head}{note:<room$}{tail}");
    let received_at = base + Duration::milliseconds(index as i64 * 250);
    let status = match verdict {
        "valid" => 200,
        "malformed-body" => 400,
        "wrong-path" => 404,
        _ => 401,
    };
    let (path, sub_field, matched_key) = match verdict {
        "wrong-path" => ("/other", serde_json::Value::Null, serde_json::Value::Null),
        "valid" => ("/webhooks", subscription.into(), "current".into()),
        _ => ("/webhooks", subscription.into(), serde_json::Value::Null),
    };
    let signature: [u8; 32] = rng.random();
    serde_json::json!({
        "id": id,
        "receivedAt": received_at,
        "method": "POST",
        "path": path,
        "headers": [
            {"name": "host", "value": "127.0.0.1:8787"},
            {"name": "content-type", "value": "application/json"},
            {"name": "svc-subscriptionid", "value": subscription},
            {"name": "svc-signature", "value": STANDARD.encode(signature)},
            {"name": "x-request-id", "value": uuid::Uuid::from_u128(rng.random()).to_string()},
            {"name": "user-agent", "value": "svc-webhooks/2.4"},
        ],
        "bodyBase64": STANDARD.encode(body.as_bytes()),
        "bodySize": body.len(),
        "peer": "127.0.0.1:50000",
        "verdict": verdict,
        "matchedKey": matched_key,
        "subscriptionId": sub_field,
        "eventId": event_id,
        "eventTime": "2024-05-01T10:00:00Z",
        "eventType": event_type,
        "instanceId": format!("{COMMON_WORD}-console-sandbox"),
        "resourceId": resource_id,
        "resourceType": resource_type,
        "resourceRef": resource_ref,
        "attempt": attempt,
        "notificationId": first,
        "response": {"status": status, "body": "ok\n", "fromTestMode": false, "delayMs": 0},
        "processingMicros": 180,
        "replay": false,
    })
    .to_string()
}

/// The corpus as a reader of JSON Lines, made as it is read (no file, flat memory).
pub struct CorpusReader {
    next: u64,
    count: u64,
    base: DateTime<Utc>,
    buffer: Vec<u8>,
    position: usize,
}

impl CorpusReader {
    pub fn new(count: u64) -> Self {
        Self {
            next: 0,
            count,
            base: Utc::now() - Duration::milliseconds(count as i64 * 250),
            buffer: Vec::new(),
            position: 0,
        }
    }
}

impl Read for CorpusReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for CorpusReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.position == self.buffer.len() && self.next < self.count {
            self.buffer.clear();
            self.position = 0;
            let end = (self.next + 64).min(self.count);
            for index in self.next..end {
                self.buffer
                    .extend_from_slice(capture_line(index, self.base).as_bytes());
                self.buffer.push(b'\n');
            }
            self.next = end;
        }
        Ok(&self.buffer[self.position..])
    }

    fn consume(&mut self, amount: usize) {
        self.position = (self.position + amount).min(self.buffer.len());
    }
}

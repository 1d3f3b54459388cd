//! What both benches send and how they are told how much: one 2 KiB notification shape, so the
//! store bench's numbers stay comparable with the end-to-end `ack` bench's.

/// Size of every notification body the benches send.
pub const BODY_SIZE: usize = 2048;

/// A whole number from the environment, or `default` when unset or not a number.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A valid notification of exactly [`BODY_SIZE`] bytes, shaped as the service sends them: the
/// spec's fields with real-looking values (`resourceId` is the eventId, as for a transaction
/// notification, and `resourceRef` its URL), made up to 2 KiB with one more field, which a
/// receiver keeps in the body and does not parse. (Until BENCHMARKS.md's round 4 the padding
/// was inside `resourceRef`, a 1.9 KB URL no service sends, which the store then kept twice.)
pub fn body(event_id: &str) -> Vec<u8> {
    let head = format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"bench","resourceId":"{event_id}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/partner/v2/transactions/{event_id}"}},"padding":""#
    );
    let tail = r#""}"#;
    let padding = BODY_SIZE.saturating_sub(head.len() + tail.len());
    let text = format!("{head}{}{tail}", "x".repeat(padding));
    assert_eq!(
        text.len(),
        BODY_SIZE,
        "event id too long for a {BODY_SIZE}-byte body"
    );
    text.into_bytes()
}

/// A new eventId as the service makes them: a random UUID, so consecutive notifications do not
/// sort next to each other.
pub fn random_event_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

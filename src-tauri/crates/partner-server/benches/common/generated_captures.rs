//! The search bench's captures, made inside PostgreSQL with `generate_series` (a million HTTP
//! deliveries would measure the intake, which the ack bench does): each a capture record the
//! API decodes, 20 subscriptions, 6 event types, 5% refused signatures, one every 2.592 s from
//! 2026-11-01 (30 days at a million), a word found in 1 capture of 10,000 (`needle` and the
//! row's ten-thousand), a person's name in 1 of 5,000, and a notification's retries (every
//! 50th event sent three times). Shared with the page tests (`tests/capture_pages.rs`), which
//! need more captures than the count's cap and know the data's shape from here.

#![allow(dead_code, clippy::unwrap_used)]

use sqlx::PgPool;

/// Inserts `rows` captures with ids 1 to `rows` and moves the id sequence past them.
pub async fn insert(pool: &PgPool, rows: i64) {
    let template = r#"{"id":@ID@,"receivedAt":"@AT@","method":"POST","path":"/webhooks","headers":[{"name":"svc-subscriptionid","value":"@SUB@"},{"name":"content-type","value":"application/json"}],"bodyBase64":"@BODY@","bodySize":@SIZE@,"peer":"203.0.113.7:443","verdict":"@VERDICT@","matchedKey":null,"subscriptionId":"@SUB@","eventId":"@EVENT@","eventType":"@TYPE@","resourceType":"urn:svc:partner:transaction","attempt":1,"notificationId":@ID@,"response":{"status":200,"body":"ok\n","fromTestMode":false,"delayMs":0},"processingMicros":180,"replay":false}"#;
    sqlx::query(
        "INSERT INTO captures (id, received_at, verdict, subscription_id, event_type, \
         resource_type, event_id, attempt, notification_id, status, record, search) \
         SELECT g, at, verdict, sub, type, 'urn:svc:partner:transaction', 'evt-' || first, \
         1 + g - first, first, \
         CASE WHEN verdict = 'valid' THEN 200 ELSE 401 END, \
         convert_to(replace(replace(replace(replace(replace(replace(replace(replace($1, \
           '@ID@', g::text), '@AT@', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')), \
           '@SUB@', sub), '@BODY@', translate(encode(convert_to(body, 'UTF8'), 'base64'), E'\\n', '')), \
           '@SIZE@', octet_length(body)::text), '@VERDICT@', verdict), '@EVENT@', 'evt-' || first), '@TYPE@', type), 'UTF8'), \
         to_tsvector('simple', body || ' ' || sub) \
         FROM (SELECT g, \
           timestamptz '2026-11-01' + (g * interval '2.592 seconds') AS at, \
           CASE WHEN g % 20 = 0 THEN 'invalid-signature' ELSE 'valid' END AS verdict, \
           'sub-' || (g % 20) AS sub, \
           (ARRAY['TransactionCreated','TransactionUpdated','TransactionApproved','TransactionDeclined','EventAdded','ProductChanged'])[1 + g % 6] AS type, \
           CASE WHEN g % 50 < 3 AND g >= 50 THEN g - g % 50 ELSE g END AS first, \
           '{\"eventId\":\"evt-' || g || '\",\"eventType\":\"T' || (g % 6) || '\",\"data\":{\"borrower\":\"person' || (g % 5000) || '\",\"note\":\"' || \
             CASE WHEN g % 10000 = 7 THEN 'needle' || (g / 10000) ELSE 'ordinary' END || '\",\"amount\":' || (g % 100000) || '}}' AS body \
           FROM generate_series(1, $2) AS g) AS rows",
    )
    .bind(template)
    .bind(rows)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query("SELECT setval('captures_id_seq', $1)")
        .bind(rows)
        .execute(pool)
        .await
        .unwrap();
}

//! The evidence bundle for a support ticket: captures made over real HTTP (by hand, and by the
//! real sandbox retrying), bundled with `partner_listener::evidence`. Each bundle is checked to
//! be valid HAR 1.2 with a Markdown summary, to hold no key, client secret or token in any
//! form (looked for independently of the code under test, `partner_testkit::leaks`), and to
//! mask what it must.

use crate::end_to_end::{World, KEY_A};
use crate::support::*;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::evidence::{
    build, select, Bundle, EvidenceOptions, FieldPath, Selection, MASKED, SECRET_MASK,
};
use partner_listener::{ListenerConfig, MemoryKeys, OutboundKind, TestMode, Verdict};
use partner_testkit::har::har_1_2_problems;
use partner_testkit::leaks::assert_no_secret;
use serde_json::Value;
use std::time::Duration;

const TOKEN: &str = "eyTokenOfTheCaller.0123456789abcdefXYZ";
const COOKIE: &str = "session-cookie-value-0123456789";
const CLIENT_SECRET: &str = "client-secret-of-the-partner-0123456789";
const SSN: &str = "123-45-6789";

/// A notification with a field a user would mask, and the client secret in URL-safe Base64 in
/// a field nobody thought of (the secret scan has to catch that one).
fn body_with_personal_data(event_id: &str) -> Vec<u8> {
    format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"{event_id}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/partner/v2/transactions/t1"}},"borrower":{{"name":"Ada","ssn":"{SSN}"}},"debug":"{}"}}"#,
        URL_SAFE_NO_PAD.encode(CLIENT_SECRET)
    )
    .into_bytes()
}

async fn post_with_credentials(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    body: Vec<u8>,
) -> u16 {
    client
        .post(url)
        .header(SUBSCRIPTION_HEADER, SUB)
        .header(SIGNATURE_HEADER, sign(key.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Cookie", format!("session={COOKIE}; theme=dark"))
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Every way the bundle could leak a secret of this test.
fn assert_no_secret_in(bundle: &Bundle, secrets: &[(&str, &str)]) {
    for (what, text) in [("HAR file", &bundle.har), ("summary", &bundle.summary)] {
        for (label, secret) in secrets {
            assert_no_secret(what, text, label, secret);
        }
    }
}

fn parse_valid_har(bundle: &Bundle) -> Value {
    let document: Value = serde_json::from_str(&bundle.har).unwrap();
    let problems = har_1_2_problems(&document);
    assert!(problems.is_empty(), "not HAR 1.2: {problems:?}");
    document
}

async fn wait_for_forward(store: &partner_listener::StoreReader, capture_id: i64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while store.outbound_of(capture_id).unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the forward of capture {capture_id} was never recorded"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_notification_and_its_attempts_become_one_redacted_bundle() {
    let app = start(ListenerConfig::default()).await;
    let running = start(ListenerConfig {
        forward_to: Some(app.url.parse().unwrap()),
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    // Attempt 1 signed with a key the listener does not hold, attempt 2 signed right.
    let body = body_with_personal_data("ev-evidence");
    assert_eq!(
        post_with_credentials(&client, &running.url, OTHER_KEY, body.clone()).await,
        401
    );
    assert_eq!(
        post_with_credentials(&client, &running.url, KEY, body.clone()).await,
        200
    );
    // Another notification, not part of the bundle.
    post_signed(&client, &running.url, SUB, KEY, tx_body("ev-other")).await;

    let store = running.listener.store();
    let selection = Selection::Notification {
        event_id: "ev-evidence".into(),
        subscription_id: None,
        resource_type: None,
    };
    let first = select(store, &selection).unwrap();
    assert_eq!(first.captures.len(), 2);
    let valid_id = first.captures[1].id;
    wait_for_forward(store, valid_id).await;
    let evidence = select(store, &selection).unwrap();
    assert_eq!(
        evidence
            .captures
            .iter()
            .map(|c| (c.attempt, c.verdict))
            .collect::<Vec<_>>(),
        vec![(1, Verdict::InvalidSignature), (2, Verdict::Valid)]
    );
    assert_eq!(evidence.outbound.len(), 1);
    assert_eq!(evidence.outbound[0].kind, OutboundKind::Forward);

    // The keys of the debugger: the listener's, plus a second subscription's with its
    // previous key, all of which must stay out of the bundle.
    let keys = MemoryKeys::new();
    keys.insert(SUB, KEY);
    keys.insert("sub-2", "Second0123456789abcdefghijklmn!@");
    keys.rotate("sub-2", "Third0123456789abcdefghijklmno#$");
    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.keys = Some(&keys);
    options.mask_body_fields = vec![
        FieldPath::parse("borrower.ssn").unwrap(),
        FieldPath::parse("/meta/resourceRef").unwrap(),
        FieldPath::parse("no.such.field").unwrap(),
    ];
    options.other_secrets = vec![Secret::new(CLIENT_SECRET)];
    let bundle = build(&evidence, &options).unwrap();

    let har = parse_valid_har(&bundle);
    assert_no_secret_in(
        &bundle,
        &[
            ("the signing key", KEY),
            ("sub-2's current key", "Third0123456789abcdefghijklmno#$"),
            ("sub-2's previous key", "Second0123456789abcdefghijklmn!@"),
            ("the bearer token", TOKEN),
            ("the session cookie", COOKIE),
            ("the client secret", CLIENT_SECRET),
            ("the masked field", SSN),
        ],
    );
    // The key the sender wrongly used is nobody's secret here, and the debugger cannot know it.
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    for entry in entries {
        let headers = entry["request"]["headers"].as_array().unwrap();
        let value_of = |name: &str| {
            headers
                .iter()
                .find(|h| h["name"].as_str().unwrap().eq_ignore_ascii_case(name))
                .map(|h| h["value"].as_str().unwrap().to_string())
        };
        assert_eq!(value_of("authorization").as_deref(), Some(MASKED));
        assert_eq!(value_of("cookie").as_deref(), Some(MASKED));
        assert!(value_of("svc-signature").is_some());
        let text = entry["request"]["postData"]["text"].as_str().unwrap();
        let posted: Value = serde_json::from_str(text).unwrap();
        assert_eq!(posted["borrower"]["ssn"], MASKED);
        assert_eq!(posted["borrower"]["name"], "Ada");
        assert_eq!(posted["meta"]["resourceRef"], MASKED);
        assert_eq!(posted["debug"], SECRET_MASK);
        assert_eq!(posted["eventId"], "ev-evidence");
        assert!(entry["comment"]
            .as_str()
            .unwrap()
            .contains("the signature no longer matches"));
    }
    assert_eq!(entries[0]["response"]["status"], 401);
    assert_eq!(entries[1]["response"]["status"], 200);
    assert_eq!(entries[1]["_outbound"][0]["status"], 200);
    assert_eq!(bundle.report.headers_masked, 4);
    assert_eq!(bundle.report.fields_masked, 4);
    assert!(bundle.report.secrets_masked >= 2);

    let summary = &bundle.summary;
    assert!(summary.starts_with("# Webhook evidence: notification ev-evidence"));
    assert!(
        summary.contains("Verdict: **invalid-signature**"),
        "{summary}"
    );
    assert!(summary.contains("Verdict: **valid** (matched the current key)"));
    // The debugger's diagnosis of each attempt.
    assert!(summary.contains("No known key gives this signature"));
    assert!(summary.contains("The signature matches the current key"));
    // Attempts with their timing.
    assert!(summary.contains(
        "| Capture | Received (UTC) | Attempt | Verdict | Answer | Processing | After previous |"
    ));
    let rows: Vec<&str> = summary.lines().filter(|l| l.starts_with("| #")).collect();
    assert_eq!(rows.len(), 2, "{summary}");
    assert!(rows[0].contains("| 1 | invalid-signature | 401 |") && rows[0].contains(" ms |"));
    assert!(rows[1].contains("| 2 | valid | 200 |") && rows[1].ends_with(" s |"));
    // The forward's answer.
    assert!(summary.contains(&format!("- Forwarded to {}", app.url)));
    assert!(summary.contains(": answered 200 in "));
    // What was masked, and the warning about the signature.
    assert!(summary.contains("Masked headers: authorization, cookie."));
    assert!(summary.contains("`borrower.ssn`, `/meta/resourceRef`"));
    assert!(summary.contains("A masked body no longer matches its signature"));
    assert!(!summary.contains("## The service's delivery record"));

    // Files side by side.
    let dir = tempfile::tempdir().unwrap();
    let (har_path, md_path) = bundle.write(&dir.path().join("ticket-42.har")).unwrap();
    assert_eq!(har_path, dir.path().join("ticket-42.har"));
    assert_eq!(md_path, dir.path().join("ticket-42.md"));
    assert_eq!(std::fs::read_to_string(har_path).unwrap(), bundle.har);
    assert_eq!(std::fs::read_to_string(md_path).unwrap(), bundle.summary);

    running.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn without_keys_there_is_no_diagnosis_and_without_masks_the_body_is_as_it_arrived() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let body = tx_body("ev-plain");
    // Credentials the export is not told about, named as such: a header and a query parameter.
    let api_key = "api-key-of-some-gateway-0123456789";
    let query_token = "query/token+0123456789 abc";
    let status = client
        .post(format!(
            "{}?access_token={}&page=2",
            running.url,
            query_token
                .replace('/', "%2F")
                .replace('+', "%2B")
                .replace(' ', "+")
        ))
        .header(SUBSCRIPTION_HEADER, SUB)
        .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Cookie", format!("session={COOKIE}; theme=dark"))
        .header("X-Api-Key", api_key)
        .body(body.clone())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let store = running.listener.store();
    let evidence = select(store, &Selection::Ids(vec![1])).unwrap();
    let bundle = build(&evidence, &EvidenceOptions::new(chrono::Utc::now())).unwrap();
    let har = parse_valid_har(&bundle);
    assert_eq!(
        har["log"]["entries"][0]["request"]["postData"]["text"],
        String::from_utf8(body).unwrap()
    );
    assert!(bundle
        .summary
        .contains("Signature debugger: not run (no signing keys were given"));
    assert_no_secret_in(
        &bundle,
        &[
            ("the token", TOKEN),
            ("the cookie", COOKIE),
            ("the API key", api_key),
            ("the query's token", query_token),
            (
                "the query's token as sent",
                "query%2Ftoken%2B0123456789+abc",
            ),
        ],
    );
    let entry = &har["log"]["entries"][0];
    assert!(entry["request"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["name"] == "x-api-key" && h["value"] == SECRET_MASK));
    assert!(entry["request"]["queryString"]
        .as_array()
        .unwrap()
        .iter()
        .any(|q| q["name"] == "access_token" && q["value"] == SECRET_MASK));
    assert!(entry["request"]["queryString"]
        .as_array()
        .unwrap()
        .iter()
        .any(|q| q["name"] == "page" && q["value"] == "2"));

    // Bad selections are refused with words.
    let missing = select(store, &Selection::Ids(vec![99])).unwrap_err();
    assert_eq!(missing.to_string(), "no capture with id 99");
    let none = select(
        store,
        &Selection::Notification {
            event_id: "nope".into(),
            subscription_id: None,
            resource_type: None,
        },
    )
    .unwrap_err();
    assert!(none
        .to_string()
        .contains("no capture of a notification with eventId \"nope\""));
    assert!(FieldPath::parse("a..b").is_err());
    running.stop().await;
}

#[tokio::test]
async fn the_same_event_id_for_two_subscriptions_must_be_narrowed() {
    let running = start(ListenerConfig::default()).await;
    running.keys.insert("sub-b", OTHER_KEY);
    let client = reqwest::Client::new();
    post_signed(&client, &running.url, SUB, KEY, tx_body("ev-twice")).await;
    post_signed(
        &client,
        &running.url,
        "sub-b",
        OTHER_KEY,
        tx_body("ev-twice"),
    )
    .await;
    let store = running.listener.store();
    let wide = Selection::Notification {
        event_id: "ev-twice".into(),
        subscription_id: None,
        resource_type: None,
    };
    let error = select(store, &wide).unwrap_err().to_string();
    assert!(error.contains("more than one notification"), "{error}");
    let narrow = Selection::Notification {
        event_id: "ev-twice".into(),
        subscription_id: Some("sub-b".into()),
        resource_type: None,
    };
    let evidence = select(store, &narrow).unwrap();
    assert_eq!(evidence.captures.len(), 1);
    assert_eq!(
        evidence.captures[0].subscription_id.as_deref(),
        Some("sub-b")
    );
    running.stop().await;
}

#[tokio::test]
async fn a_key_encoded_inside_a_body_is_masked() {
    // A receiver's debug output that echoes the key as Base64 and as upper-case hex.
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let leak = format!(
        r#"{{"eventId":"ev-leak","note":"{}","hex":"{}"}}"#,
        STANDARD.encode(KEY),
        KEY.bytes().map(|b| format!("{b:02X}")).collect::<String>()
    );
    post_signed(&client, &running.url, SUB, KEY, leak.into_bytes()).await;
    let store = running.listener.store();
    let evidence = select(store, &Selection::Ids(vec![1])).unwrap();
    let keys = MemoryKeys::new();
    keys.insert(SUB, KEY);
    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.keys = Some(&keys);
    let bundle = build(&evidence, &options).unwrap();
    parse_valid_har(&bundle);
    assert_no_secret_in(&bundle, &[("the signing key", KEY)]);
    assert!(bundle.report.secrets_masked >= 2);
    assert!(bundle.summary.contains(&format!(
        "; {} occurrence(s) were replaced by `[secret]`",
        bundle.report.secrets_masked
    )));
    running.stop().await;
}

#[tokio::test]
async fn a_sandbox_notification_carries_the_services_delivery_record() {
    let mut world = World::start(ListenerConfig {
        test_mode: TestMode {
            fail_first_attempts: 1,
            ..TestMode::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    world.lender_creates().await;
    let attempts = world.next_captures(2).await;
    let event_id = attempts[0].fields.event_id.clone().unwrap();
    let settled = world.settled_delivery(&event_id).await;
    assert_eq!(settled["state"], "delivered");
    let deliveries: Vec<partner_api::DeliveryRecord> =
        serde_json::from_value(world.deliveries(&event_id).await).unwrap();
    assert_eq!(deliveries.len(), 1);

    let store = world.listener.listener.store();
    let evidence = select(
        store,
        &Selection::Notification {
            event_id: event_id.clone(),
            subscription_id: Some(world.subscription_id.clone()),
            resource_type: Some(crate::end_to_end::TX.into()),
        },
    )
    .unwrap();
    assert_eq!(evidence.captures.len(), 2);
    let keys = MemoryKeys::new();
    keys.insert(&world.subscription_id, KEY_A);
    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.keys = Some(&keys);
    options.deliveries = Some(deliveries);
    options.other_secrets = vec![
        world.sandbox.client_secret().clone(),
        Secret::new(world.token.clone()),
    ];
    let bundle = build(&evidence, &options).unwrap();
    parse_valid_har(&bundle);
    assert_no_secret_in(
        &bundle,
        &[
            ("the signing key", KEY_A),
            ("the client secret", world.sandbox.client_secret().expose()),
            ("the access token", &world.token),
        ],
    );
    let summary = &bundle.summary;
    assert!(
        summary.contains("## The service's delivery record"),
        "{summary}"
    );
    assert!(summary.contains(&format!(
        "### eventId `{event_id}` to subscription `{}`",
        world.subscription_id
    )));
    assert!(summary.contains("State **delivered**"));
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |"))
        .collect();
    assert_eq!(rows.len(), 2, "{summary}");
    let first_capture = evidence.captures[0].id;
    let second_capture = evidence.captures[1].id;
    assert!(
        rows[0].contains("| 500 |") && rows[0].ends_with(&format!("| #{first_capture} (valid) |")),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("| 200 |") && rows[1].ends_with(&format!("| #{second_capture} (valid) |")),
        "{}",
        rows[1]
    );
    assert!(rows.iter().all(|r| r.contains(" ms |")));
    assert!(summary.contains("500 (test mode)"));
    world.stop().await;
}

#[tokio::test]
async fn a_body_that_is_not_text_and_holds_a_key_is_withheld() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let mut body = vec![0xff, 0xfe, b' '];
    body.extend_from_slice(KEY.as_bytes());
    post_signed(&client, &running.url, SUB, KEY, body).await;
    let store = running.listener.store();
    let evidence = select(store, &Selection::Ids(vec![1])).unwrap();
    let keys = MemoryKeys::new();
    keys.insert(SUB, KEY);
    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.keys = Some(&keys);
    let bundle = build(&evidence, &options).unwrap();
    let har = parse_valid_har(&bundle);
    assert_no_secret_in(&bundle, &[("the signing key", KEY)]);
    assert!(har["log"]["entries"][0]["request"]
        .get("postData")
        .is_none());
    assert_eq!(bundle.report.bodies_withheld, 1);
    assert!(bundle
        .summary
        .contains("Body withheld: it is not UTF-8 text and holds a known secret."));
    running.stop().await;
}

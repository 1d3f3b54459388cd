//! The lender side, the clock and latency controls, and the end-to-end path: a lender's
//! change reaches a real receiver, signed with the subscription's key (checked with an HMAC
//! computed here), and a key rotated by PATCH signs the next notification while other
//! subscriptions keep theirs.

use crate::support::{expect_error, hook, product, Api, KEY_A, KEY_B, KEY_C};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::SandboxConfig;
use partner_testkit::{ReceivedRequest, TestReceiver};
use serde_json::{json, Value};
use sha2::Sha256;
use std::time::Duration;

const TX: &str = "urn:svc:partner:transaction";
const EV: &str = "urn:svc:partner:transaction:event";
const WAIT: Duration = Duration::from_secs(10);

fn independent_signature(key: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(body);
    STANDARD.encode(mac.finalize().into_bytes())
}

fn body_of(request: &ReceivedRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

#[tokio::test]
async fn lender_writes_and_their_errors() {
    let api = Api::start().await;
    let token = api.token().await;
    let created = api.create_product(&token, &product("p")).await;
    let product_id = created["id"].as_str().unwrap();
    let transaction = api.lender_create(product_id).await;
    let id = transaction["id"].as_str().unwrap();
    assert_eq!(transaction["status"], "created");
    assert_eq!(transaction["product"]["id"], product_id);
    assert_eq!(transaction["request"]["type"], "NEW_REQUEST");
    assert_eq!(transaction["request"]["options"], json!({}));

    expect_error(
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": "nope", "requestType": "NEW_REQUEST"}),
        )
        .await,
        404,
    )
    .await;
    expect_error(
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": product_id, "requestType": "OTHER"}),
        )
        .await,
        400,
    )
    .await;
    expect_error(
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": product_id, "requestType": "NEW_REQUEST", "loan": 5}),
        )
        .await,
        400,
    )
    .await;
    expect_error(
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"productId": product_id, "requestType": "NEW_REQUEST", "x": 1}),
        )
        .await,
        400,
    )
    .await;
    expect_error(
        api.post_json(
            "/sandbox/v1/transactions",
            None,
            &json!({"requestType": "NEW_REQUEST"}),
        )
        .await,
        400,
    )
    .await;
    let form = api
        .http
        .post(api.url("/sandbox/v1/transactions"))
        .body("productId=x")
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .unwrap();
    expect_error(form, 415).await;

    let update = api
        .patch_raw(
            &format!("/sandbox/v1/transactions/{id}"),
            None,
            "application/json",
            r#"{"loan":{"loanAmount":300000},"options":{"rush":true}}"#,
        )
        .await;
    assert_eq!(update.status(), 200);
    let updated: Value = update.json().await.unwrap();
    assert_eq!(updated["request"]["loan"]["loanAmount"], 300000);
    assert_eq!(updated["request"]["options"]["rush"], true);
    expect_error(
        api.patch_raw(
            &format!("/sandbox/v1/transactions/{id}"),
            None,
            "application/json",
            "{}",
        )
        .await,
        400,
    )
    .await;
    expect_error(
        api.patch_raw(
            "/sandbox/v1/transactions/nope",
            None,
            "application/json",
            r#"{"loan":{}}"#,
        )
        .await,
        404,
    )
    .await;

    let events = format!("/sandbox/v1/transactions/{id}/events");
    let note = api
        .post_json(
            &events,
            None,
            &json!({"type": "urn:lender:note", "text": "Call me", "comments": "after 5pm"}),
        )
        .await;
    assert_eq!(note.status(), 201);
    let note: Value = note.json().await.unwrap();
    assert_eq!(note["from"], "Sandbox Lender");
    assert_eq!(note["comments"], "after 5pm");
    for bad in [
        json!({"type": "note", "text": "x"}),
        json!({"type": "urn:svc:partner:transaction:response:failed", "text": "x"}),
        json!({"type": "urn:lender:note", "text": ""}),
        json!({"type": "urn:lender:note"}),
        json!({"type": "urn:lender:note", "text": "t".repeat(513)}),
    ] {
        expect_error(api.post_json(&events, None, &bad).await, 400).await;
    }
    expect_error(
        api.post_json(
            "/sandbox/v1/transactions/nope/events",
            None,
            &json!({"type": "urn:a:b", "text": "x"}),
        )
        .await,
        404,
    )
    .await;

    let partner_events = api
        .get_json(&format!("/partner/v2/transactions/{id}/events"), &token)
        .await;
    let types: Vec<&str> = partner_events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "urn:svc:partner:transaction:request:created",
            "urn:svc:partner:transaction:request:updated",
            "urn:lender:note"
        ]
    );
}

#[tokio::test]
async fn the_clock_control_checks_its_input() {
    let api = Api::start().await;
    let before = api.sandbox.clock().now();
    let response = api
        .post_json("/sandbox/v1/clock/advance", None, &json!({"seconds": 3600}))
        .await;
    assert_eq!(response.status(), 200);
    let state: Value = response.json().await.unwrap();
    assert_eq!(state["offsetSeconds"], 3600);
    assert!(api.sandbox.clock().now() - before >= chrono::TimeDelta::seconds(3600));
    for bad in [
        json!({}),
        json!({"seconds": 0}),
        json!({"seconds": -5}),
        json!({"seconds": "60"}),
        json!({"seconds": 1.5}),
        json!({"seconds": 999_999_999_999u64}),
        json!({"seconds": 1, "x": 2}),
    ] {
        expect_error(
            api.post_json("/sandbox/v1/clock/advance", None, &bad).await,
            400,
        )
        .await;
    }
}

/// `POST /sandbox/v1/latency` delays every partner API request (not the controls) until set
/// back to 0, and refuses what is not a whole number of milliseconds up to a minute.
#[tokio::test]
async fn the_latency_control_slows_the_partner_api_only() {
    let api = Api::start().await;
    let token = api.token().await;
    let timed = |path: &'static str| {
        let api = &api;
        let token = token.clone();
        async move {
            let started = std::time::Instant::now();
            let response = api.get(path, &token).await;
            assert_eq!(response.status(), 200, "{path}");
            started.elapsed()
        }
    };
    let set = |milliseconds: Value| {
        let api = &api;
        async move {
            api.post_json(
                "/sandbox/v1/latency",
                None,
                &json!({ "milliseconds": milliseconds }),
            )
            .await
        }
    };

    let response = set(json!(400)).await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["milliseconds"], 400);
    for path in ["/partner/v2/products", "/partner/v2/transactions"] {
        let took = timed(path).await;
        assert!(took >= Duration::from_millis(400), "{path} took {took:?}");
    }
    // The controls themselves answer at once.
    let started = std::time::Instant::now();
    assert_eq!(set(json!(400)).await.status(), 200);
    assert!(started.elapsed() < Duration::from_millis(400));

    assert_eq!(set(json!(0)).await.status(), 200);
    let took = timed("/partner/v2/products").await;
    assert!(
        took < Duration::from_millis(400),
        "back to no delay: {took:?}"
    );

    for bad in [
        json!(-1),
        json!("100"),
        json!(1.5),
        json!(60_001),
        json!(null),
    ] {
        expect_error(set(bad).await, 400).await;
    }
    expect_error(
        api.post_json(
            "/sandbox/v1/latency",
            None,
            &json!({"milliseconds": 1, "x": 2}),
        )
        .await,
        400,
    )
    .await;
}

#[tokio::test]
async fn a_lender_create_reaches_a_real_receiver_signed() {
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let api = Api::start().await;
    let token = api.token().await;
    let url = receiver.url();
    let mut body = product("acme-valuation");
    body["webhooks"] = json!([
        hook(&url, TX, &["created", "updated"], KEY_A),
        hook(&url, EV, &["created"], KEY_B),
        hook(&url, TX, &["updated"], KEY_C),
    ]);
    let created = api.create_product(&token, &body).await;
    let subs: Vec<String> = created["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["subscriptionId"].as_str().unwrap().to_string())
        .collect();
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let transaction_id = transaction["id"].as_str().unwrap();

    let got = receiver.take(2, WAIT).await;
    assert_eq!(
        got.len(),
        2,
        "one per matching subscription; the updated-only one gets nothing"
    );
    let by_sub = |sub: &str| {
        got.iter()
            .find(|r| r.header("svc-subscriptionid") == Some(sub))
            .unwrap()
    };
    let on_transaction = by_sub(&subs[0]);
    let on_event = by_sub(&subs[1]);
    for (request, key) in [(on_transaction, KEY_A), (on_event, KEY_B)] {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, url::Url::parse(&url).unwrap().path());
        assert_eq!(
            request.header("svc-signature").unwrap(),
            independent_signature(key, &request.body)
        );
        assert_eq!(request.header("svc-environment"), Some("prod"));
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(
            request.header("content-length").unwrap(),
            request.body.len().to_string()
        );
    }
    let t = body_of(on_transaction);
    let e = body_of(on_event);
    let base = api.sandbox.base_url();
    assert_eq!(t["eventType"], "created");
    assert_eq!(t["meta"]["resourceType"], TX);
    assert_eq!(t["meta"]["resourceId"], transaction_id);
    assert_eq!(t["meta"]["instanceId"], "acme-valuation");
    assert_eq!(
        t["meta"]["resourceRef"],
        format!("{base}/partner/v2/transactions/{transaction_id}")
    );
    assert_eq!(e["eventType"], "created");
    assert_eq!(e["meta"]["resourceType"], EV);
    assert_eq!(
        e["eventId"], t["eventId"],
        "the same event stands behind both"
    );
    assert_eq!(e["meta"]["resourceId"], e["eventId"]);
    let event_id = e["eventId"].as_str().unwrap();
    assert_eq!(
        e["meta"]["resourceRef"],
        format!("{base}/partner/v2/transactions/{transaction_id}/events/{event_id}")
    );
    // The resourceRef really is where the event lives.
    let event = api
        .get_json(
            &format!("/partner/v2/transactions/{transaction_id}/events/{event_id}"),
            &token,
        )
        .await;
    assert_eq!(event["type"], "urn:svc:partner:transaction:request:created");
    assert_eq!(
        event["sent"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap(),
        e["eventTime"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    );

    // The deliveries view shows both, delivered, with their attempt.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let records: Value = api
            .http
            .get(api.url(&format!("/sandbox/v1/deliveries?eventId={event_id}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let records = records.as_array().unwrap().clone();
        if records.len() == 2 && records.iter().all(|r| r["state"] == "delivered") {
            assert!(records.iter().all(|r| r["attempts"][0]["status"] == 200));
            let text = serde_json::to_string(&records).unwrap();
            assert!(!text.contains(KEY_A) && !text.contains(KEY_B));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "deliveries: {records:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    expect_error(
        api.http
            .get(api.url("/sandbox/v1/deliveries?event=x"))
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    let none: Value = api
        .http
        .get(api.url("/sandbox/v1/deliveries?eventId=none"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(none, json!([]));
}

#[tokio::test]
async fn a_rotated_key_signs_the_next_notification_and_others_keep_theirs() {
    let mut receiver = TestReceiver::always(204).await.unwrap();
    let api = Api::start().await;
    let token = api.token().await;
    let url = receiver.url();
    let mut body = product("rotating");
    body["webhooks"] = json!([
        hook(&url, TX, &["created", "updated"], KEY_A),
        hook(&url, EV, &["created"], KEY_B)
    ]);
    let created = api.create_product(&token, &body).await;
    let path = format!("/partner/v2/products/{}", created["id"].as_str().unwrap());
    let first = created["webhooks"][0]["subscriptionId"]
        .as_str()
        .unwrap()
        .to_string();
    let second = created["webhooks"][1]["subscriptionId"]
        .as_str()
        .unwrap()
        .to_string();
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    assert_eq!(receiver.take(2, WAIT).await.len(), 2);

    let rotate = json!({"webhooks": [{"subscriptionId": first, "signingkey": KEY_C}, {"subscriptionId": second}]});
    assert_eq!(api.merge_patch(&path, &token, &rotate).await.status(), 200);

    // The partner responds: transaction `updated` + two event `created`s.
    let id = transaction["id"].as_str().unwrap();
    let response = api
        .patch_raw(
            &format!("/partner/v2/transactions/{id}/response"),
            Some(&token),
            "application/json",
            r#"{"status":"processing"}"#,
        )
        .await;
    assert_eq!(response.status(), 200);
    let got = receiver.take(3, WAIT).await;
    assert_eq!(got.len(), 3);
    let on_first: Vec<_> = got
        .iter()
        .filter(|r| r.header("svc-subscriptionid") == Some(first.as_str()))
        .collect();
    let on_second: Vec<_> = got
        .iter()
        .filter(|r| r.header("svc-subscriptionid") == Some(second.as_str()))
        .collect();
    assert_eq!(on_first.len(), 1);
    assert_eq!(on_second.len(), 2);
    let signature = on_first[0].header("svc-signature").unwrap();
    assert_eq!(
        signature,
        independent_signature(KEY_C, &on_first[0].body),
        "the new key signs"
    );
    assert_ne!(signature, independent_signature(KEY_A, &on_first[0].body));
    for request in on_second {
        assert_eq!(
            request.header("svc-signature").unwrap(),
            independent_signature(KEY_B, &request.body),
            "untouched key"
        );
        assert_eq!(body_of(request)["eventType"], "created");
    }
    let t = body_of(on_first[0]);
    assert_eq!(t["eventType"], "updated");
    let events = api
        .get_json(&format!("/partner/v2/transactions/{id}/events"), &token)
        .await;
    let updated_event = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "urn:svc:partner:transaction:response:updated")
        .unwrap();
    assert_eq!(t["eventId"], updated_event["id"]);
}

#[tokio::test]
async fn a_failing_receiver_gets_three_attempts_through_the_api() {
    let mut receiver = TestReceiver::always(500).await.unwrap();
    let api = Api::with(SandboxConfig {
        allow_http_callbacks: true,
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(100),
            attempt_timeout: Duration::from_millis(500),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let token = api.token().await;
    let mut body = product("failing");
    body["webhooks"] = json!([hook(&receiver.url(), TX, &["created"], KEY_A)]);
    let created = api.create_product(&token, &body).await;
    api.lender_create(created["id"].as_str().unwrap()).await;
    let got = receiver.take(3, WAIT).await;
    assert_eq!(got.len(), 3);
    assert!(
        got.windows(2).all(|w| w[0].body == w[1].body),
        "the same bytes each time"
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let records = api.sandbox.handle().deliveries(None);
        if records.len() == 1 && serde_json::to_value(&records[0]).unwrap()["state"] == "discarded"
        {
            assert_eq!(records[0].attempts.len(), 3);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

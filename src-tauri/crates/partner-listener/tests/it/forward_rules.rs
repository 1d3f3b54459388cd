//! Forward rules over real HTTP: the real sandbox delivers a transaction notification and a
//! transaction-event notification (a lender creating a transaction fires both), and each goes
//! to its rule's receiver only; the first matching rule wins before a catch-all; no match means
//! no forward; `forward_to` is the catch-all after the rules; the answer (status, body) or the
//! error (connection refused) of each forward is recorded with the rule's URL.

use crate::end_to_end::{KEY_A, TX};
use crate::support::*;
use partner_api::signature::SIGNATURE_HEADER;
use partner_listener::{
    CaptureFilter, ForwardRule, ForwardRules, ListenerConfig, LiveEvent, OutboundKind,
    OutboundRecord,
};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::SandboxConfig;
use partner_testkit::{refused_url, Reply, TestReceiver, TestSandbox};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const EVENT: &str = "urn:svc:partner:transaction:event";
const WAIT: Duration = Duration::from_secs(15);

async fn next_outbound(
    feed: &mut tokio::sync::broadcast::Receiver<LiveEvent>,
) -> Arc<OutboundRecord> {
    loop {
        let event = tokio::time::timeout(WAIT, feed.recv())
            .await
            .expect("no forward was recorded")
            .unwrap();
        if let LiveEvent::Outbound(record) = event {
            return record;
        }
    }
}

fn rule(spec: &str) -> ForwardRule {
    ForwardRules::parse_cli(spec).unwrap()
}

/// A sandbox product with two subscriptions pointing at `url`: transactions and transaction
/// events. Returns the product's id and the subscription ids.
async fn product_subscribed_to_both(sandbox: &TestSandbox, url: &str) -> (String, Vec<String>) {
    let http = reqwest::Client::new();
    let response = http
        .post(sandbox.url("/oauth2/v1/token"))
        .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let token = response.json::<Value>().await.unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let product = json!({
        "name": "forward-rules",
        "listingName": "Forward rules",
        "requestTypes": ["NEW_REQUEST"],
        "webhooks": [
            {"url": url, "resource": TX, "events": ["created", "updated"], "signingkey": KEY_A},
            {"url": url, "resource": EVENT, "events": ["created"], "signingkey": KEY_A},
        ],
    });
    let response = http
        .post(sandbox.url("/partner/v2/products"))
        .bearer_auth(&token)
        .json(&product)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
    let created: Value = response.json().await.unwrap();
    let product_id = created["id"].as_str().unwrap().to_string();
    let subscriptions = created["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["subscriptionId"].as_str().unwrap().to_string())
        .collect();
    (product_id, subscriptions)
}

/// The lender starts a transaction: fires a transaction `created` notification and a
/// transaction-event `created` notification.
async fn lender_creates_a_transaction(sandbox: &TestSandbox, product_id: &str) {
    let response = reqwest::Client::new()
        .post(sandbox.url("/sandbox/v1/transactions"))
        .json(&json!({"productId": product_id, "requestType": "NEW_REQUEST", "loan": {"loanAmount": 250000}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}

#[tokio::test]
async fn the_sandboxs_notifications_go_to_the_receiver_of_their_resource_type_only() {
    let mut transactions = TestReceiver::always(200).await.unwrap();
    let mut events = TestReceiver::always(202).await.unwrap();
    let running = start(ListenerConfig {
        forward_rules: vec![
            rule(&format!("transaction={}", transactions.url())),
            rule(&format!("transaction:event={}", events.url())),
        ],
        ..ListenerConfig::default()
    })
    .await;
    let sandbox = TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(5),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let mut feed = running.listener.subscribe();
    // The keys are known before the lender's transaction fires anything (creating the product
    // sends nothing).
    let (product_id, subscriptions) = product_subscribed_to_both(&sandbox, &running.url).await;
    for subscription in &subscriptions {
        running.keys.insert(subscription, KEY_A);
    }
    lender_creates_a_transaction(&sandbox, &product_id).await;
    assert_eq!(subscriptions.len(), 2);

    let outcomes = [
        next_outbound(&mut feed).await,
        next_outbound(&mut feed).await,
    ];
    let at_transactions = transactions.next(WAIT).await.expect("nothing forwarded");
    let at_events = events.next(WAIT).await.expect("nothing forwarded");
    let resource_of = |body: &[u8]| {
        serde_json::from_slice::<Value>(body).unwrap()["meta"]["resourceType"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(resource_of(&at_transactions.body), TX);
    assert_eq!(resource_of(&at_events.body), EVENT);
    // One each: the transaction receiver never gets the event and the other way round.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(transactions.drain().is_empty());
    assert!(events.drain().is_empty());

    // Passed on unchanged: the body bytes and signature the service sent.
    let captures = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap()
        .items;
    assert_eq!(captures.len(), 2);
    for (arrived, receiver_url, status) in [
        (&at_transactions, transactions.url(), 200),
        (&at_events, events.url(), 202),
    ] {
        let capture = captures
            .iter()
            .find(|c| c.body.as_deref() == Some(arrived.body.as_ref()))
            .expect("the forwarded body is a captured body, byte for byte");
        assert_eq!(
            arrived.header(SIGNATURE_HEADER),
            capture.header(SIGNATURE_HEADER)
        );
        let records = running.listener.store().outbound_of(capture.id).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].kind, OutboundKind::Forward);
        assert_eq!(
            records[0].url, receiver_url,
            "the record names the rule's URL"
        );
        assert_eq!(records[0].status, Some(status));
    }
    assert!(outcomes.iter().all(|r| r.error.is_none()));
    sandbox.stop().await;
    running.stop().await;
}

#[tokio::test]
async fn the_first_matching_rule_wins_then_forward_to_catches_the_rest() {
    let mut created = TestReceiver::always(201).await.unwrap();
    let mut catch_all = TestReceiver::always(200).await.unwrap();
    let mut fallback = TestReceiver::always(200).await.unwrap();
    let running = start(ListenerConfig {
        forward_rules: vec![
            rule(&format!("transaction:created={}", created.url())),
            rule(&format!("*:updated={}", catch_all.url())),
        ],
        forward_to: Some(fallback.url().parse().unwrap()),
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    let created_body = tx_body("first-wins");
    let updated_body = String::from_utf8(tx_body("updated-one"))
        .unwrap()
        .replace("\"created\"", "\"updated\"")
        .into_bytes();
    let event_body = body("event-one", EVENT);
    for sent in [&created_body, &updated_body, &event_body] {
        assert_eq!(
            post_signed(&client, &running.url, SUB, KEY, sent.clone())
                .await
                .status(),
            200
        );
    }
    let got = created.next(WAIT).await.unwrap();
    assert_eq!(got.body.as_ref(), created_body.as_slice());
    assert_eq!(
        catch_all.next(WAIT).await.unwrap().body.as_ref(),
        updated_body.as_slice()
    );
    assert_eq!(
        fallback.next(WAIT).await.unwrap().body.as_ref(),
        event_body.as_slice(),
        "forward_to takes what no rule takes"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(created.drain().is_empty() && catch_all.drain().is_empty());
    assert!(fallback.drain().is_empty(), "no capture goes to two places");

    // Rules changed while running take effect for the next capture; a bad one changes nothing.
    assert!(running
        .listener
        .set_forward_rules(vec![
            rule(&format!("*={}", catch_all.url())),
            ForwardRule {
                resource_type: Some("product".into()),
                event_type: None,
                url: "ftp://127.0.0.1/hooks".parse().unwrap(),
            },
        ])
        .is_err());
    assert_eq!(running.listener.forward_rules().len(), 2);
    running
        .listener
        .set_forward_rules(vec![rule(&format!("={}", catch_all.url()))])
        .unwrap();
    post_signed(&client, &running.url, SUB, KEY, tx_body("after-change")).await;
    assert_eq!(
        catch_all.next(WAIT).await.unwrap().body.as_ref(),
        tx_body("after-change").as_slice()
    );
    running.stop().await;
}

#[tokio::test]
async fn no_matching_rule_means_no_forward() {
    let mut events_only = TestReceiver::always(200).await.unwrap();
    let running = start(ListenerConfig {
        forward_rules: vec![rule(&format!("transaction:event={}", events_only.url()))],
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("unmatched"))
            .await
            .status(),
        200
    );
    assert!(
        events_only.next(Duration::from_millis(800)).await.is_none(),
        "a transaction notification matched a transaction-event rule"
    );
    let id = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 1)
        .unwrap()
        .items[0]
        .id;
    assert!(running.listener.store().outbound_of(id).unwrap().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn each_forwards_answer_or_error_is_recorded_with_the_rules_url() {
    // The "app" answering is another listener (it answers 200 "ok\n"), so the body is checked.
    let app = start(ListenerConfig::default()).await;
    let failing = TestReceiver::start([Reply::Status(500)]).await.unwrap();
    let down = refused_url().await.unwrap();
    let running = start(ListenerConfig {
        forward_rules: vec![
            rule(&format!("transaction:created={}", app.url)),
            rule(&format!("transaction:updated={}", failing.url())),
            rule(&format!("transaction:event={down}")),
        ],
        ..ListenerConfig::default()
    })
    .await;
    let mut feed = running.listener.subscribe();
    let client = reqwest::Client::new();

    post_signed(&client, &running.url, SUB, KEY, tx_body("answered")).await;
    let answered = next_outbound(&mut feed).await;
    assert_eq!(answered.url, app.url);
    assert_eq!(answered.status, Some(200));
    assert_eq!(answered.response_body.as_deref(), Some("ok\n"));
    assert!(answered.elapsed_ms < 15_000 && answered.error.is_none());

    let updated = String::from_utf8(tx_body("failed"))
        .unwrap()
        .replace("\"created\"", "\"updated\"")
        .into_bytes();
    post_signed(&client, &running.url, SUB, KEY, updated).await;
    let failed = next_outbound(&mut feed).await;
    assert_eq!(failed.url, failing.url());
    assert_eq!(failed.status, Some(500), "a 5xx is an answer, recorded");

    post_signed(&client, &running.url, SUB, KEY, body("refused", EVENT)).await;
    let refused = next_outbound(&mut feed).await;
    assert_eq!(refused.url, down);
    assert_eq!(refused.status, None);
    assert!(
        refused.error.as_deref().unwrap().contains("connect"),
        "{:?}",
        refused.error
    );
    // Each is in the store beside its capture.
    for record in [&answered, &failed, &refused] {
        let stored = running
            .listener
            .store()
            .outbound_of(record.capture_id)
            .unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].status, record.status);
        assert_eq!(stored[0].url, record.url);
    }
    running.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn a_rule_naming_an_event_and_a_resource_the_spec_does_not_show_forwards_them() {
    let mut reassigned = TestReceiver::always(200).await.unwrap();
    let mut documents = TestReceiver::always(200).await.unwrap();
    let mut rest = TestReceiver::always(200).await.unwrap();
    let running = start(ListenerConfig {
        forward_rules: vec![
            rule(&format!("*:reassigned={}", reassigned.url())),
            rule(&format!("transaction:document:*={}", documents.url())),
            rule(&format!("*={}", rest.url())),
        ],
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    let reassigned_body = String::from_utf8(tx_body("re-1"))
        .unwrap()
        .replace("\"created\"", "\"reassigned\"")
        .into_bytes();
    let document_body = body("doc-1", "urn:svc:partner:transaction:document");
    for sent in [&reassigned_body, &document_body, &tx_body("plain-1")] {
        let answer = post_signed(&client, &running.url, SUB, KEY, sent.clone()).await;
        assert_eq!(answer.status(), 200);
    }
    assert_eq!(
        reassigned.next(WAIT).await.unwrap().body.as_ref(),
        reassigned_body.as_slice()
    );
    assert_eq!(
        documents.next(WAIT).await.unwrap().body.as_ref(),
        document_body.as_slice()
    );
    assert_eq!(
        rest.next(WAIT).await.unwrap().body.as_ref(),
        tx_body("plain-1").as_slice()
    );
    // The app's rules (set by hand, any names) work the same.
    running
        .listener
        .set_forward_rules(vec![ForwardRule {
            resource_type: None,
            event_type: Some("reassigned".into()),
            url: documents.url().parse().unwrap(),
        }])
        .unwrap();
    let again = String::from_utf8(tx_body("re-2"))
        .unwrap()
        .replace("\"created\"", "\"reassigned\"")
        .into_bytes();
    post_signed(&client, &running.url, SUB, KEY, again.clone()).await;
    assert_eq!(
        documents.next(WAIT).await.unwrap().body.as_ref(),
        again.as_slice()
    );
    running.stop().await;
}

//! The real sandbox delivering to the real listener: a product whose subscription points at the
//! listener, the lender creating and updating a transaction through `/sandbox/v1/transactions`,
//! a key rotated by PATCH, the previous key during a rotation, a wrong key and an unknown
//! subscription (both retried by the sandbox, every attempt linked), and the test mode making the
//! sandbox go through all three attempts. Requests the sandbox never sends (no headers, a
//! malformed or oversized body) are sent by hand to the same listener.

use crate::support::*;
use partner_api::signature::{SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{
    Capture, CaptureFilter, ListenerConfig, LiveEvent, MatchedKey, TestMode, Verdict,
};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::SandboxConfig;
use partner_testkit::TestSandbox;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub(crate) const TX: &str = "urn:svc:partner:transaction";
pub(crate) const KEY_A: &str = "Kp9!rT2#vX8@mQ4$zL6^wN1^bH3&jF5*";
const KEY_B: &str = "Bq7@yU3#cV9!nM2$xK5^sD8&gH1*fJ4a";
const KEY_C: &str = "Cz1*aS4^dF7@gH0#jK3$lQ6!wE9&rT2y";
const WAIT: Duration = Duration::from_secs(15);

pub(crate) struct World {
    pub(crate) sandbox: TestSandbox,
    pub(crate) listener: Running,
    http: reqwest::Client,
    pub(crate) token: String,
    product_id: String,
    pub(crate) subscription_id: String,
    feed: tokio::sync::broadcast::Receiver<LiveEvent>,
}

impl World {
    pub(crate) async fn start(listener_config: ListenerConfig) -> Self {
        let listener = start(listener_config).await;
        listener.keys.remove(SUB);
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
            "name": "listener-e2e",
            "listingName": "Listener end to end",
            "requestTypes": ["NEW_REQUEST"],
            "webhooks": [{"url": listener.url, "resource": TX, "events": ["created", "updated"], "signingkey": KEY_A}],
        });
        let response = http
            .post(sandbox.url("/partner/v2/products"))
            .bearer_auth(&token)
            .json(&product)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let created: Value = response.json().await.unwrap();
        let product_id = created["id"].as_str().unwrap().to_string();
        let subscription_id = created["webhooks"][0]["subscriptionId"]
            .as_str()
            .unwrap()
            .to_string();
        listener.keys.insert(&subscription_id, KEY_A);
        let feed = listener.listener.subscribe();
        Self {
            sandbox,
            listener,
            http,
            token,
            product_id,
            subscription_id,
            feed,
        }
    }

    /// The lender starts a transaction; returns its id.
    pub(crate) async fn lender_creates(&self) -> String {
        let response = self
            .http
            .post(self.sandbox.url("/sandbox/v1/transactions"))
            .json(&json!({"productId": self.product_id, "requestType": "NEW_REQUEST", "loan": {"loanAmount": 250000}}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        response.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The lender updates a transaction (fires an `updated` notification).
    async fn lender_updates(&self, transaction_id: &str, amount: u64) {
        let response = self
            .http
            .patch(
                self.sandbox
                    .url(&format!("/sandbox/v1/transactions/{transaction_id}")),
            )
            .header("content-type", "application/json")
            .body(json!({"loan": {"loanAmount": amount}}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    async fn rotate_in_sandbox(&self, key: &str) {
        let response = self
            .http
            .patch(
                self.sandbox
                    .url(&format!("/partner/v2/products/{}", self.product_id)),
            )
            .bearer_auth(&self.token)
            .header("content-type", "application/merge-patch+json")
            .body(
                json!({"webhooks": [{"subscriptionId": self.subscription_id, "signingkey": key}]})
                    .to_string(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    }

    /// The next capture from the sandbox (`attempts` of one notification when it retries).
    pub(crate) async fn next_captures(&mut self, count: usize) -> Vec<Arc<Capture>> {
        let mut found = Vec::new();
        while found.len() < count {
            let event = tokio::time::timeout(WAIT, self.feed.recv())
                .await
                .expect("no capture arrived")
                .unwrap();
            if let LiveEvent::Captured(capture) = event {
                found.push(capture);
            }
        }
        found
    }

    pub(crate) async fn deliveries(&self, event_id: &str) -> Value {
        self.http
            .get(
                self.sandbox
                    .url(&format!("/sandbox/v1/deliveries?eventId={event_id}")),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until the sandbox has settled the delivery of `event_id` (delivered or discarded).
    pub(crate) async fn settled_delivery(&self, event_id: &str) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let deliveries = self.deliveries(event_id).await;
            let list = deliveries.as_array().cloned().unwrap_or_default();
            if let Some(done) = list.iter().find(|d| d["state"] != "pending") {
                return done.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "delivery of {event_id} never settled: {deliveries}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn stop(self) {
        self.sandbox.stop().await;
        self.listener.stop().await;
    }
}

#[tokio::test]
async fn the_sandbox_delivers_and_the_listener_judges_every_kind_of_notification() {
    let mut world = World::start(ListenerConfig {
        body_limit: 64 * 1024,
        ..ListenerConfig::default()
    })
    .await;

    // Valid, signed with the current key.
    let transaction_id = world.lender_creates().await;
    let created = world.next_captures(1).await.remove(0);
    assert_eq!(created.verdict, Verdict::Valid);
    assert_eq!(created.matched_key, Some(MatchedKey::Current));
    assert_eq!(
        created.subscription_id.as_deref(),
        Some(world.subscription_id.as_str())
    );
    assert_eq!(created.fields.event_type.as_deref(), Some("created"));
    assert_eq!(
        created.fields.resource_id.as_deref(),
        Some(transaction_id.as_str())
    );
    assert_eq!(created.fields.instance_id.as_deref(), Some("listener-e2e"));
    assert_eq!(created.header("svc-environment"), Some("prod"));
    let event_id = created.fields.event_id.clone().unwrap();
    assert_eq!(
        world.settled_delivery(&event_id).await["state"],
        "delivered"
    );

    // A key rotated by PATCH: the sandbox signs with the new key, the listener knows both.
    world.rotate_in_sandbox(KEY_B).await;
    world.listener.keys.rotate(&world.subscription_id, KEY_B);
    world.lender_updates(&transaction_id, 300_000).await;
    let rotated = world.next_captures(1).await.remove(0);
    assert_eq!(
        (rotated.verdict, rotated.matched_key),
        (Verdict::Valid, Some(MatchedKey::Current))
    );
    assert_eq!(rotated.fields.event_type.as_deref(), Some("updated"));

    // The previous key: the listener has moved on to KEY_C, the sandbox still signs with KEY_B.
    world.listener.keys.rotate(&world.subscription_id, KEY_C);
    world.lender_updates(&transaction_id, 310_000).await;
    let previous = world.next_captures(1).await.remove(0);
    assert_eq!(
        (previous.verdict, previous.matched_key),
        (Verdict::Valid, Some(MatchedKey::Previous))
    );

    // A wrong key: rejected every time; the sandbox retries and the attempts are linked.
    world.listener.keys.insert(&world.subscription_id, KEY_A);
    world.lender_updates(&transaction_id, 320_000).await;
    let attempts = world.next_captures(3).await;
    assert!(attempts
        .iter()
        .all(|c| c.verdict == Verdict::InvalidSignature && c.response.status == 401));
    assert_eq!(
        attempts.iter().map(|c| c.attempt).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(attempts
        .iter()
        .all(|c| c.notification_id == Some(attempts[0].id)));
    let wrong_event = attempts[0].fields.event_id.clone().unwrap();
    let discarded = world.settled_delivery(&wrong_event).await;
    assert_eq!(discarded["state"], "discarded");
    assert_eq!(discarded["attempts"].as_array().unwrap().len(), 3);

    // An unknown subscription: the listener knows no key for it.
    world.listener.keys.remove(&world.subscription_id);
    world.lender_updates(&transaction_id, 330_000).await;
    let unknown = world.next_captures(3).await;
    assert!(unknown
        .iter()
        .all(|c| c.verdict == Verdict::UnknownSubscription && c.response.status == 401));

    // What the sandbox never sends, sent by hand to the same listener.
    world.listener.keys.insert(&world.subscription_id, KEY_B);
    let body = created.body.clone().unwrap();
    let url = world.listener.url.clone();
    let no_headers = world
        .http
        .post(&url)
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(no_headers.status(), 401);
    let no_signature = world
        .http
        .post(&url)
        .header(SUBSCRIPTION_HEADER, &world.subscription_id)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(no_signature.status(), 401);
    let malformed = post_signed(
        &world.http,
        &url,
        &world.subscription_id,
        KEY_B,
        b"{\"eventId\":".to_vec(),
    )
    .await;
    assert_eq!(malformed.status(), 400);
    let oversized = post_signed(
        &world.http,
        &url,
        &world.subscription_id,
        KEY_B,
        vec![b' '; 100 * 1024],
    )
    .await;
    assert_eq!(oversized.status(), 413);
    let counts = world
        .listener
        .listener
        .store()
        .count_by_verdict(&CaptureFilter::default())
        .unwrap();
    assert_eq!(counts[&Verdict::Valid], 3);
    assert_eq!(counts[&Verdict::InvalidSignature], 3);
    assert_eq!(counts[&Verdict::UnknownSubscription], 3);
    assert_eq!(counts[&Verdict::MissingSignature], 2);
    assert_eq!(counts[&Verdict::MalformedBody], 1);
    assert_eq!(counts[&Verdict::TooLarge], 1);
    let signature_of_created = created.header(SIGNATURE_HEADER).unwrap().to_string();
    assert!(!signature_of_created.is_empty());
    world.stop().await;
}

#[tokio::test]
async fn the_test_mode_makes_the_sandbox_use_all_three_attempts() {
    let mut world = World::start(ListenerConfig {
        test_mode: TestMode {
            status: Some(500),
            ..TestMode::default()
        },
        ..ListenerConfig::default()
    })
    .await;
    world.lender_creates().await;
    let attempts = world.next_captures(3).await;
    assert!(attempts.iter().all(|c| c.verdict == Verdict::Valid
        && c.response.status == 500
        && c.response.from_test_mode));
    assert_eq!(
        attempts.iter().map(|c| c.attempt).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let event_id = attempts[0].fields.event_id.clone().unwrap();
    let record = world.settled_delivery(&event_id).await;
    assert_eq!(record["state"], "discarded");
    let statuses: Vec<u64> = record["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, vec![500, 500, 500]);

    // Failing only the first two attempts: the third one delivers.
    world
        .listener
        .listener
        .set_test_mode(TestMode {
            fail_first_attempts: 2,
            ..TestMode::default()
        })
        .unwrap();
    world.lender_creates().await;
    let attempts = world.next_captures(3).await;
    assert_eq!(
        attempts
            .iter()
            .map(|c| c.response.status)
            .collect::<Vec<_>>(),
        vec![500, 500, 200]
    );
    let event_id = attempts[0].fields.event_id.clone().unwrap();
    let record = world.settled_delivery(&event_id).await;
    assert_eq!(record["state"], "delivered");
    assert_eq!(record["attempts"].as_array().unwrap().len(), 3);
    world.stop().await;
}

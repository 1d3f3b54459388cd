//! Verdicts over real HTTP: each kind of request gets its verdict, its status and its record.

use crate::support::*;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{CaptureFilter, ListenerConfig, MatchedKey, Verdict};

#[tokio::test]
async fn a_valid_notification_is_acknowledged_after_it_is_stored_exactly() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let sent = tx_body("e-1");
    let response = post_signed(&client, &running.url, SUB, KEY, sent.clone()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "ok\n");

    // The answer came after the commit, so the capture is readable now.
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(page.total, 1);
    let capture = &page.items[0];
    assert_eq!(capture.verdict, Verdict::Valid);
    assert_eq!(capture.matched_key, Some(MatchedKey::Current));
    assert_eq!(capture.body.as_deref(), Some(sent.as_slice()));
    assert_eq!(capture.body_size, sent.len() as u64);
    assert_eq!(capture.method, "POST");
    assert_eq!(capture.path, "/webhooks");
    assert_eq!(capture.subscription_id.as_deref(), Some(SUB));
    assert_eq!(capture.fields.event_id.as_deref(), Some("e-1"));
    assert_eq!(capture.fields.event_type.as_deref(), Some("created"));
    assert_eq!(capture.fields.instance_id.as_deref(), Some("acme"));
    assert_eq!(
        capture.fields.resource_type.as_deref(),
        Some("urn:svc:partner:transaction")
    );
    assert_eq!(
        capture.fields.event_time.as_deref(),
        Some("2024-05-01T10:00:00Z")
    );
    assert_eq!(capture.response.status, 200);
    assert_eq!(capture.attempt, 1);
    assert_eq!(capture.notification_id, Some(capture.id));
    assert!(capture.peer.as_deref().unwrap().starts_with("127.0.0.1:"));
    assert_eq!(capture.header("content-type"), Some("application/json"));
    assert!(capture.header(SIGNATURE_HEADER).is_some());
    running.stop().await;
}

#[tokio::test]
async fn during_a_rotation_both_keys_verify_and_the_verdict_says_which() {
    let running = start(ListenerConfig::default()).await;
    running.keys.rotate(SUB, OTHER_KEY);
    let client = reqwest::Client::new();
    let new = post_signed(&client, &running.url, SUB, OTHER_KEY, tx_body("r-new")).await;
    let old = post_signed(&client, &running.url, SUB, KEY, tx_body("r-old")).await;
    assert_eq!(new.status(), 200);
    assert_eq!(old.status(), 200);
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    let by_event = |id: &str| {
        page.items
            .iter()
            .find(|c| c.fields.event_id.as_deref() == Some(id))
            .unwrap()
    };
    assert_eq!(by_event("r-new").matched_key, Some(MatchedKey::Current));
    assert_eq!(by_event("r-old").matched_key, Some(MatchedKey::Previous));

    // Past the grace period the previous key no longer verifies.
    running.keys.rotate_at(
        SUB,
        "Qwertyuiopasdfghjklzxcvbnm0123^&",
        chrono::Utc::now() - chrono::Duration::days(2),
    );
    let stale = post_signed(&client, &running.url, SUB, OTHER_KEY, tx_body("r-stale")).await;
    assert_eq!(stale.status(), 401);
    running.stop().await;
}

#[tokio::test]
async fn every_rejection_is_recorded_with_its_verdict_and_a_generic_answer() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let body = tx_body("bad-1");

    let wrong_key = post_signed(&client, &running.url, SUB, OTHER_KEY, body.clone()).await;
    let missing_signature = client
        .post(&running.url)
        .header(SUBSCRIPTION_HEADER, SUB)
        .body(body.clone())
        .send()
        .await
        .unwrap();
    let unknown = post_signed(&client, &running.url, "sub-nobody", KEY, body.clone()).await;
    let no_subscription = client
        .post(&running.url)
        .header(SIGNATURE_HEADER, signature::sign(KEY.as_bytes(), &body))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    let malformed = post_signed(
        &client,
        &running.url,
        SUB,
        KEY,
        b"{\"eventId\": 12".to_vec(),
    )
    .await;
    let not_a_notification =
        post_signed(&client, &running.url, SUB, KEY, b"[1,2,3]".to_vec()).await;

    let mut auth_bodies = Vec::new();
    for response in [wrong_key, missing_signature, unknown, no_subscription] {
        assert_eq!(response.status(), 401);
        auth_bodies.push(response.text().await.unwrap());
    }
    // The same short answer whatever went wrong: nothing tells keys or subscriptions apart.
    assert!(auth_bodies.iter().all(|b| b == "rejected\n"));
    for response in [malformed, not_a_notification] {
        assert_eq!(response.status(), 400);
        let text = response.text().await.unwrap();
        assert_eq!(text, "bad request\n");
        assert!(!text.contains(KEY));
    }

    let counts = running
        .listener
        .store()
        .count_by_verdict(&CaptureFilter::default())
        .unwrap();
    assert_eq!(counts.get(&Verdict::InvalidSignature), Some(&1));
    assert_eq!(counts.get(&Verdict::MissingSignature), Some(&1));
    assert_eq!(counts.get(&Verdict::UnknownSubscription), Some(&2));
    assert_eq!(counts.get(&Verdict::MalformedBody), Some(&2));
    assert_eq!(counts.get(&Verdict::Valid), None);
    // The malformed body is kept as it arrived.
    let page = running
        .listener
        .store()
        .query(
            &CaptureFilter {
                verdicts: vec![Verdict::MalformedBody],
                ..Default::default()
            },
            0,
            10,
        )
        .unwrap();
    assert!(page
        .items
        .iter()
        .any(|c| c.body.as_deref() == Some(b"{\"eventId\": 12".as_slice())));
    running.stop().await;
}

#[tokio::test]
async fn other_paths_and_methods_are_recorded_too() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let elsewhere = post_signed(
        &client,
        &format!("{}/other?x=1", running.base()),
        SUB,
        KEY,
        tx_body("p-1"),
    )
    .await;
    assert_eq!(elsewhere.status(), 404);
    let get = client.get(&running.url).send().await.unwrap();
    assert_eq!(get.status(), 405);
    let trailing_slash = post_signed(
        &client,
        &format!("{}/", running.url),
        SUB,
        KEY,
        tx_body("p-2"),
    )
    .await;
    assert_eq!(trailing_slash.status(), 200);

    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(page.total, 3);
    let wrong_path = page
        .items
        .iter()
        .find(|c| c.verdict == Verdict::WrongPath)
        .unwrap();
    assert_eq!(wrong_path.path, "/other?x=1");
    assert_eq!(wrong_path.fields.event_id.as_deref(), Some("p-1"));
    assert!(page
        .items
        .iter()
        .any(|c| c.verdict == Verdict::WrongMethod && c.method == "GET"));
    running.stop().await;
}

#[tokio::test]
async fn redeliveries_are_linked_as_attempts_of_one_notification() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    for _ in 0..3 {
        post_signed(&client, &running.url, SUB, KEY, tx_body("same")).await;
    }
    // Same eventId for the other resource type is another notification.
    post_signed(
        &client,
        &running.url,
        SUB,
        KEY,
        body("same", "urn:svc:partner:transaction:event"),
    )
    .await;

    let store = running.listener.store();
    let page = store.query(&CaptureFilter::default(), 0, 10).unwrap();
    assert_eq!(page.total, 4, "redeliveries are shown, never hidden");
    let tx: Vec<_> = page
        .items
        .iter()
        .filter(|c| c.fields.resource_type.as_deref() == Some("urn:svc:partner:transaction"))
        .collect();
    let first_id = tx.iter().map(|c| c.id).min().unwrap();
    let mut attempts: Vec<u32> = tx.iter().map(|c| c.attempt).collect();
    attempts.sort();
    assert_eq!(attempts, vec![1, 2, 3]);
    assert!(tx.iter().all(|c| c.notification_id == Some(first_id)));
    let event = page
        .items
        .iter()
        .find(|c| c.fields.resource_type.as_deref() != Some("urn:svc:partner:transaction"))
        .unwrap();
    assert_eq!(event.attempt, 1);
    assert_eq!(store.attempts_of(tx[0].id).unwrap().len(), 3);
    running.stop().await;
}

#[tokio::test]
async fn no_signing_key_appears_in_any_answer_or_record_of_an_answer() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let mut texts = Vec::new();
    for (sub, key) in [(SUB, KEY), (SUB, OTHER_KEY), ("nobody", KEY)] {
        let response = post_signed(&client, &running.url, sub, key, tx_body("k")).await;
        texts.push(format!("{:?}", response.headers()));
        texts.push(response.text().await.unwrap());
    }
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    for capture in &page.items {
        texts.push(capture.response.body.clone());
    }
    texts.push(format!("{:?}", running.keys));
    for text in texts {
        assert!(
            !text.contains(KEY) && !text.contains(OTHER_KEY),
            "a key leaked: {text}"
        );
    }
    running.stop().await;
}

/// Keys that cannot be read just now (a locked keychain).
#[derive(Debug)]
struct LockedKeys;

impl partner_listener::KeySource for LockedKeys {
    fn keys(&self, _: &str) -> Option<partner_listener::SubscriptionKeys> {
        None
    }
    fn all(&self) -> Vec<(String, partner_listener::SubscriptionKeys)> {
        Vec::new()
    }
    fn unavailable(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn with_its_keys_unreadable_the_listener_keeps_the_capture_and_asks_for_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        partner_listener::Store::open(dir.path().join("c.sqlite3"), Default::default()).unwrap();
    let listener = partner_listener::Listener::new(
        ListenerConfig::default(),
        store,
        std::sync::Arc::new(LockedKeys),
    )
    .unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/webhooks", tcp.local_addr().unwrap());
    let serving = listener.clone();
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move { serving.serve(tcp, stopped.cancelled_owned()).await });

    let client = reqwest::Client::new();
    let response = post_signed(&client, &url, SUB, KEY, tx_body("e-locked")).await;
    assert_eq!(
        response.status(),
        503,
        "the service is asked to try again later"
    );
    let page = listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(page.total, 1, "the capture is kept");
    assert_eq!(page.items[0].verdict, Verdict::UnknownSubscription);
    assert_eq!(page.items[0].response.status, 503);

    // No subscription header at all is still refused for good: no key could ever match.
    let bare = client
        .post(&url)
        .header(SIGNATURE_HEADER, "x")
        .body(tx_body("e-bare"))
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 401);
    stop.cancel();
}

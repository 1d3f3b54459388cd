//! Forwarding to the user's app and replaying captures. The "user's app" here is a second real
//! listener holding the same key, so it proves the bytes and signature arrived unchanged.

use crate::support::*;
use partner_api::signature::SIGNATURE_HEADER;
use partner_listener::{
    CaptureFilter, ListenerConfig, LiveEvent, MatchedKey, OutboundKind, Verdict,
};
use std::time::Duration;

async fn next_outbound(
    rx: &mut tokio::sync::broadcast::Receiver<LiveEvent>,
) -> std::sync::Arc<partner_listener::OutboundRecord> {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let LiveEvent::Outbound(record) = event {
            return record;
        }
    }
}

#[tokio::test]
async fn valid_notifications_are_forwarded_unchanged_and_the_answer_recorded() {
    let app = start(ListenerConfig::default()).await;
    let running = start(ListenerConfig {
        forward_to: Some(app.url.parse().unwrap()),
        ..ListenerConfig::default()
    })
    .await;
    let mut feed = running.listener.subscribe();
    let client = reqwest::Client::new();
    let sent = tx_body("fwd-1");
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, sent.clone())
            .await
            .status(),
        200
    );
    // An invalid one is not forwarded.
    assert_eq!(
        post_signed(&client, &running.url, SUB, OTHER_KEY, tx_body("fwd-2"))
            .await
            .status(),
        401
    );

    let record = next_outbound(&mut feed).await;
    assert_eq!(record.kind, OutboundKind::Forward);
    assert_eq!(record.status, Some(200));
    assert_eq!(record.response_body.as_deref(), Some("ok\n"));
    assert!(record
        .response_headers
        .iter()
        .any(|h| h.name == "content-type"));
    assert!(record.error.is_none());

    let at_app = app
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(at_app.total, 1);
    assert_eq!(at_app.items[0].verdict, Verdict::Valid);
    assert_eq!(at_app.items[0].body.as_deref(), Some(sent.as_slice()));
    assert!(!at_app.items[0].replay);
    let capture_id = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap()
        .items[1]
        .id;
    assert_eq!(
        running
            .listener
            .store()
            .outbound_of(capture_id)
            .unwrap()
            .len(),
        1
    );
    running.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn a_forward_back_to_the_listener_itself_does_not_loop() {
    let running = start(ListenerConfig::default()).await;
    running
        .listener
        .set_forward_to(Some(running.url.parse().unwrap()));
    let mut feed = running.listener.subscribe();
    let client = reqwest::Client::new();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("loop"))
            .await
            .status(),
        200
    );
    let record = next_outbound(&mut feed).await;
    assert_eq!(record.status, Some(200));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The original and the one forwarded copy; the copy is not forwarded again.
    assert_eq!(
        running
            .listener
            .store()
            .query(&CaptureFilter::default(), 0, 10)
            .unwrap()
            .total,
        2
    );
    running.listener.set_forward_to(None);
    running.stop().await;
}

#[tokio::test]
async fn a_forward_to_an_app_that_is_down_is_recorded_with_its_error() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_url = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let running = start(ListenerConfig {
        forward_to: Some(dead_url.parse().unwrap()),
        ..ListenerConfig::default()
    })
    .await;
    let mut feed = running.listener.subscribe();
    let client = reqwest::Client::new();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, tx_body("down"))
            .await
            .status(),
        200
    );
    let record = next_outbound(&mut feed).await;
    assert_eq!(record.status, None);
    assert!(
        record.error.as_deref().unwrap().contains("connect"),
        "{:?}",
        record.error
    );
    running.stop().await;
}

#[tokio::test]
async fn replays_unchanged_or_edited_and_resigned_are_marked() {
    let app = start(ListenerConfig::default()).await;
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    let original = tx_body("rp-1");
    post_signed(&client, &running.url, SUB, KEY, original.clone()).await;
    let id = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 1)
        .unwrap()
        .items[0]
        .id;

    // No target and no forward URL: a clear error.
    assert!(running.listener.replay(id, None, None).await.is_err());

    let target: url::Url = app.url.parse().unwrap();
    let unchanged = running
        .listener
        .replay(id, Some(target.clone()), None)
        .await
        .unwrap();
    assert_eq!(unchanged.kind, OutboundKind::Replay);
    assert_eq!(unchanged.status, Some(200));
    assert!(unchanged
        .request_headers
        .iter()
        .any(|h| h.name == "Svc-Replay" && h.value == "1"));

    let edited_body = tx_body("rp-1-edited");
    let edited = running
        .listener
        .replay(id, Some(target), Some(edited_body.clone()))
        .await
        .unwrap();
    assert_eq!(edited.kind, OutboundKind::ReplayEdited);
    assert_eq!(
        edited.status,
        Some(200),
        "the edited body was re-signed with the current key"
    );
    let original_signature = running
        .listener
        .store()
        .get(id)
        .unwrap()
        .header(SIGNATURE_HEADER)
        .unwrap()
        .to_string();
    let new_signature = edited
        .request_headers
        .iter()
        .find(|h| h.name == SIGNATURE_HEADER)
        .unwrap();
    assert_ne!(new_signature.value, original_signature);

    let at_app = app
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 10)
        .unwrap();
    assert_eq!(at_app.total, 2);
    assert!(at_app.items.iter().all(|c| c.replay
        && c.verdict == Verdict::Valid
        && c.matched_key == Some(MatchedKey::Current)));
    assert!(at_app
        .items
        .iter()
        .any(|c| c.body.as_deref() == Some(original.as_slice())));
    assert!(at_app
        .items
        .iter()
        .any(|c| c.body.as_deref() == Some(edited_body.as_slice())));
    assert_eq!(running.listener.store().outbound_of(id).unwrap().len(), 2);

    // An edited replay for a subscription without a known key cannot be signed.
    running.keys.remove(SUB);
    assert!(running
        .listener
        .replay(id, Some(app.url.parse().unwrap()), Some(b"{}".to_vec()))
        .await
        .is_err());
    running.stop().await;
    app.stop().await;
}

//! Replays are replays: sent elsewhere they carry the original headers and body byte for byte
//! (an edited body re-signed with the current key); sent back to this listener they are stored
//! with `replay = true`, named to the caller by capture id, and are not attempts of their
//! notification (the next real redelivery is numbered as if they had never come).

use crate::end_to_end::TX;
use crate::support::*;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::outbound::{FORWARDED_HEADER, REPLAY_HEADER, REPLAY_ID_HEADER};
use partner_listener::{CaptureFilter, ListenerConfig, OutboundKind, Verdict};
use partner_testkit::TestReceiver;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);
/// Headers that belong to one hop of HTTP: the client sending the replay sets its own.
const HOP: [&str; 3] = ["host", "content-length", "connection"];

async fn one_capture(running: &Running, body: Vec<u8>) -> partner_listener::Capture {
    let client = reqwest::Client::new();
    assert_eq!(
        post_signed(&client, &running.url, SUB, KEY, body)
            .await
            .status(),
        200
    );
    running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 1)
        .unwrap()
        .items
        .remove(0)
}

#[tokio::test]
async fn a_replay_elsewhere_carries_the_original_bytes_or_a_valid_new_signature() {
    let running = start(ListenerConfig::default()).await;
    let original = one_capture(&running, tx_body("elsewhere")).await;
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let target: url::Url = receiver.url().parse().unwrap();

    let unchanged = running
        .listener
        .replay(original.id, Some(target.clone()), None)
        .await
        .unwrap();
    assert_eq!(unchanged.kind, OutboundKind::Replay);
    assert_eq!(unchanged.status, Some(200));
    assert_eq!(
        unchanged.capture_id, None,
        "the target is not this listener"
    );
    let arrived = receiver.next(WAIT).await.unwrap();
    assert_eq!(arrived.body.as_ref(), original.body.as_deref().unwrap());
    for header in &original.headers {
        if HOP.contains(&header.name.as_str()) {
            continue;
        }
        assert_eq!(
            arrived.header(&header.name),
            Some(header.value.as_str()),
            "{} changed on the way",
            header.name
        );
    }
    assert_eq!(arrived.header(REPLAY_HEADER), Some("1"));
    assert_eq!(arrived.header(REPLAY_ID_HEADER), None);
    assert_eq!(arrived.header(FORWARDED_HEADER), None);

    let edited_body = tx_body("elsewhere-edited");
    let edited = running
        .listener
        .replay(original.id, Some(target), Some(edited_body.clone()))
        .await
        .unwrap();
    assert_eq!(edited.kind, OutboundKind::ReplayEdited);
    let arrived = receiver.next(WAIT).await.unwrap();
    assert_eq!(arrived.body.as_ref(), edited_body.as_slice());
    let new_signature = arrived.header(SIGNATURE_HEADER).unwrap();
    assert!(
        signature::verify(KEY.as_bytes(), &edited_body, new_signature),
        "the edited body is signed with the subscription's current key"
    );
    assert_ne!(Some(new_signature), original.header(SIGNATURE_HEADER));
    assert_eq!(arrived.header(SUBSCRIPTION_HEADER), Some(SUB));
    assert_eq!(arrived.header(REPLAY_HEADER), Some("1"));
    running.stop().await;
}

#[tokio::test]
async fn a_replay_to_this_listener_is_named_stored_as_a_replay_and_is_not_an_attempt() {
    let running = start(ListenerConfig::default()).await;
    let original = one_capture(&running, tx_body("not-an-attempt")).await;
    assert_eq!(original.attempt, 1);
    let here: url::Url = running.url.parse().unwrap();

    let unchanged = running
        .listener
        .replay(original.id, Some(here.clone()), None)
        .await
        .unwrap();
    assert_eq!(unchanged.status, Some(200));
    let replay_id = unchanged.capture_id.expect("the replay's capture is named");
    let replayed = running.listener.store().get(replay_id).unwrap();
    assert!(replayed.replay);
    assert_eq!(replayed.verdict, Verdict::Valid);
    assert_eq!(replayed.body, original.body);
    assert_eq!(replayed.notification_id, None, "not linked as an attempt");

    let edited = running
        .listener
        .replay(
            original.id,
            Some(here.clone()),
            Some(tx_body("edited-here")),
        )
        .await
        .unwrap();
    let edited_id = edited.capture_id.unwrap();
    assert_ne!(edited_id, replay_id);
    assert!(running.listener.store().get(edited_id).unwrap().replay);

    // Through `localhost` too; and replays at once each get their own capture.
    let localhost: url::Url = format!("http://localhost:{}/webhooks", running.addr.port())
        .parse()
        .unwrap();
    let (a, b, c) = tokio::join!(
        running.listener.replay(original.id, Some(localhost), None),
        running
            .listener
            .replay(original.id, Some(here.clone()), None),
        running
            .listener
            .replay(original.id, Some(here.clone()), None),
    );
    let mut ids: Vec<i64> = [a, b, c]
        .into_iter()
        .map(|outcome| outcome.unwrap().capture_id.unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3);

    // The service's next real redelivery is its attempt 2, whatever was replayed meanwhile.
    assert_eq!(
        running
            .listener
            .store()
            .prior_attempts(SUB, TX, "not-an-attempt"),
        1
    );
    let redelivery = one_capture(&running, tx_body("not-an-attempt")).await;
    assert!(!redelivery.replay);
    assert_eq!(redelivery.attempt, 2);
    assert_eq!(redelivery.notification_id, Some(original.id));
    let attempts = running.listener.store().attempts_of(original.id).unwrap();
    assert_eq!(
        attempts.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![original.id, redelivery.id]
    );
    // Replays are never forwarded, and the replays sent here were recorded as outbound.
    assert_eq!(
        running
            .listener
            .store()
            .outbound_of(original.id)
            .unwrap()
            .len(),
        5
    );
    running.stop().await;
}

#[tokio::test]
async fn a_replay_to_a_target_that_is_not_http_is_refused() {
    let running = start(ListenerConfig::default()).await;
    let original = one_capture(&running, tx_body("bad-target")).await;
    let error = running
        .listener
        .replay(
            original.id,
            Some("ftp://127.0.0.1/x".parse().unwrap()),
            None,
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("http://"), "{error}");
    running.stop().await;
}

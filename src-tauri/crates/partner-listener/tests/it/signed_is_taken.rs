//! What the service signed is taken (issue #46), over real HTTP: a validly signed notification
//! of an event type or a resource type the spec does not show, or without `meta`, or with an
//! `eventTime` in another form, is answered 2xx and stored `valid`, kept as sent, filterable by
//! its types, counted in the facets and grouped with its redelivery by (subscription, resource
//! type as sent, eventId); what is not signed, or cannot be a notification at all, keeps its
//! verdict.

use crate::support::*;
use partner_api::signature::{SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{CaptureFilter, CaptureQuery, Grouping, HitCount, ListenerConfig, Verdict};

const DOCUMENT: &str = "urn:svc:partner:transaction:document";

fn reassigned(event_id: &str) -> Vec<u8> {
    String::from_utf8(tx_body(event_id))
        .unwrap()
        .replace("\"created\"", "\"reassigned\"")
        .into_bytes()
}

#[tokio::test]
async fn signed_notifications_of_unknown_types_or_without_meta_are_valid_and_grouped() {
    let running = start(ListenerConfig::default()).await;
    let client = reqwest::Client::new();
    // Each is sent twice: the service's redelivery of the same notification.
    let unknown_event = reassigned("re-1");
    let unknown_resource = body("doc-1", DOCUMENT);
    let no_meta =
        br#"{"eventId":"bare-1","eventTime":"2024-05-01 10:00","eventType":"created","extra":[1]}"#
            .to_vec();
    for sent in [&unknown_event, &unknown_resource, &no_meta] {
        for _ in 0..2 {
            let answer = post_signed(&client, &running.url, SUB, KEY, sent.clone()).await;
            assert_eq!(answer.status(), 200, "{}", String::from_utf8_lossy(sent));
            assert_eq!(answer.text().await.unwrap(), "ok\n");
        }
    }
    // Not signed or ill-signed: today's verdicts, whatever the event type.
    let ill_signed = post_signed(&client, &running.url, SUB, OTHER_KEY, reassigned("re-bad")).await;
    assert_eq!(ill_signed.status(), 401);
    let unsigned = client
        .post(&running.url)
        .header(SUBSCRIPTION_HEADER, SUB)
        .body(reassigned("re-unsigned"))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    // Signed, but not a notification at all: no eventId, or not JSON.
    for sent in [
        br#"{"eventType":"reassigned","meta":{}}"#.to_vec(),
        b"reassigned".to_vec(),
    ] {
        let answer = post_signed(&client, &running.url, SUB, KEY, sent).await;
        assert_eq!(answer.status(), 400);
    }

    let store = running.listener.store();
    let by_event = CaptureFilter {
        event_type: Some("reassigned".into()),
        ..CaptureFilter::default()
    };
    let verdicts = store.count_by_verdict(&by_event).unwrap();
    assert_eq!(verdicts.get(&Verdict::Valid), Some(&2));
    assert_eq!(verdicts.get(&Verdict::InvalidSignature), Some(&1));
    assert_eq!(verdicts.get(&Verdict::MissingSignature), Some(&1));
    assert_eq!(verdicts.get(&Verdict::MalformedBody), Some(&1));

    let facets = store.facets(&CaptureFilter::default()).unwrap();
    assert!(facets.event_types.contains(&"reassigned".to_string()));
    assert!(facets.resource_types.contains(&DOCUMENT.to_string()));
    assert_eq!(facets.verdicts.get(&Verdict::Valid), Some(&6));
    assert_eq!(facets.verdicts.get(&Verdict::MalformedBody), Some(&2));
    let facets = store
        .facets(&CaptureFilter {
            verdicts: vec![Verdict::Valid],
            resource_type: Some(DOCUMENT.into()),
            ..CaptureFilter::default()
        })
        .unwrap();
    assert_eq!(facets.total, 2);

    // Filtered by the types as sent, and grouped with the redelivery.
    for (filter, event_id) in [
        (
            CaptureFilter {
                verdicts: vec![Verdict::Valid],
                ..by_event.clone()
            },
            "re-1",
        ),
        (
            CaptureFilter {
                verdicts: vec![Verdict::Valid],
                resource_type: Some(DOCUMENT.into()),
                ..CaptureFilter::default()
            },
            "doc-1",
        ),
    ] {
        let every = store.query(&filter, 0, 10).unwrap();
        assert_eq!(every.total, 2, "{filter:?}");
        let newest = &every.items[0];
        let first = &every.items[1];
        assert_eq!(newest.fields.event_id.as_deref(), Some(event_id));
        assert_eq!((first.attempt, newest.attempt), (1, 2));
        assert_eq!(newest.notification_id, Some(first.id));
        let grouped = store
            .page(&CaptureQuery {
                filter: filter.clone(),
                grouping: Grouping::ByNotification,
                offset: 0,
                limit: 10,
                count: HitCount::default(),
            })
            .unwrap();
        assert_eq!(grouped.items.len(), 1, "{filter:?}");
        assert_eq!(grouped.items[0].group_attempts, 2);
    }
    let document = store
        .query(
            &CaptureFilter {
                resource_type: Some(DOCUMENT.into()),
                ..CaptureFilter::default()
            },
            0,
            1,
        )
        .unwrap();
    let document = &document.items[0];
    assert_eq!(document.body.as_deref(), Some(unknown_resource.as_slice()));
    assert_eq!(
        document
            .fields
            .departures()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![format!(
            "resource type {DOCUMENT:?} is not one the spec shows"
        )]
    );

    // Without meta: valid, kept as sent, with what is missing said.
    let bare = store
        .query(
            &CaptureFilter {
                text: Some("bare-1".into()),
                ..CaptureFilter::default()
            },
            0,
            10,
        )
        .unwrap();
    assert_eq!(bare.total, 2);
    let bare = &bare.items[0];
    assert_eq!(bare.verdict, Verdict::Valid);
    assert_eq!(bare.response.status, 200);
    assert_eq!(bare.body.as_deref(), Some(no_meta.as_slice()));
    assert_eq!(bare.fields.resource_type, None);
    let missing: Vec<String> = bare
        .fields
        .departures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        missing,
        [
            "eventTime \"2024-05-01 10:00\" is not an RFC 3339 date-time",
            "no meta (instanceId, resourceId, resourceType, resourceRef)",
        ]
    );
    assert!(bare.header(SIGNATURE_HEADER).is_some());
    running.stop().await;
}

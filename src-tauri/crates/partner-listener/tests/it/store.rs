//! Queries, counts, retention and clearing of the capture store.

use crate::support::*;
use chrono::{Duration, Utc};
use partner_listener::{
    Capture, CaptureFilter, Header, ListenerConfig, NotificationFields, ResponseRecord, Retention,
    Store, Verdict,
};

fn capture(event_id: &str, verdict: Verdict, minutes_ago: i64) -> Capture {
    let body = tx_body(event_id);
    Capture {
        id: 0,
        received_at: Utc::now() - Duration::minutes(minutes_ago),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: vec![
            Header::new("svc-subscriptionid", SUB),
            Header::new("x-trace", format!("trace-{event_id}")),
        ],
        body_size: body.len() as u64,
        fields: NotificationFields::read(&body).0,
        body: Some(body),
        peer: None,
        verdict,
        matched_key: None,
        subscription_id: Some(SUB.into()),
        attempt: 0,
        notification_id: None,
        response: ResponseRecord {
            status: verdict.response().0,
            body: verdict.response().1.into(),
            from_test_mode: false,
            delay_ms: 0,
        },
        processing_micros: 5,
        replay: false,
    }
}

#[tokio::test]
async fn queries_page_newest_first_and_filter_on_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    for i in 0..30 {
        let verdict = if i % 3 == 0 {
            Verdict::InvalidSignature
        } else {
            Verdict::Valid
        };
        store
            .insert(capture(&format!("ev-{i:02}"), verdict, 60 - i))
            .await
            .unwrap();
    }
    let all = CaptureFilter::default();
    let first = store.query(&all, 0, 10).unwrap();
    assert_eq!(first.total, 30);
    assert_eq!(first.items[0].fields.event_id.as_deref(), Some("ev-29"));
    let second = store.query(&all, 10, 10).unwrap();
    assert_eq!(second.items[0].fields.event_id.as_deref(), Some("ev-19"));
    assert!(store.query(&all, 40, 10).unwrap().items.is_empty());

    let invalid = CaptureFilter {
        verdicts: vec![Verdict::InvalidSignature],
        ..Default::default()
    };
    assert_eq!(store.query(&invalid, 0, 50).unwrap().total, 10);
    let counts = store.count_by_verdict(&all).unwrap();
    assert_eq!(
        (counts[&Verdict::Valid], counts[&Verdict::InvalidSignature]),
        (20, 10)
    );

    let text = CaptureFilter {
        text: Some("EV-07".into()),
        ..Default::default()
    };
    assert_eq!(
        store.query(&text, 0, 50).unwrap().total,
        1,
        "body search is case-insensitive"
    );
    let header_text = CaptureFilter {
        text: Some("trace-ev-1".into()),
        ..Default::default()
    };
    assert_eq!(store.query(&header_text, 0, 50).unwrap().total, 10);
    let wildcard = CaptureFilter {
        text: Some("%".into()),
        ..Default::default()
    };
    assert_eq!(
        store.query(&wildcard, 0, 50).unwrap().total,
        0,
        "% is matched literally"
    );

    let range = CaptureFilter {
        since: Some(Utc::now() - Duration::minutes(45)),
        until: Some(Utc::now() - Duration::minutes(40)),
        ..Default::default()
    };
    let in_range = store.query(&range, 0, 50).unwrap();
    assert_eq!(
        in_range.total,
        5,
        "{:?}",
        in_range
            .items
            .iter()
            .map(|c| &c.fields.event_id)
            .collect::<Vec<_>>()
    );

    let none = CaptureFilter {
        event_type: Some("updated".into()),
        ..Default::default()
    };
    assert_eq!(store.query(&none, 0, 50).unwrap().total, 0);
    let created = CaptureFilter {
        event_type: Some("created".into()),
        resource_type: Some("urn:svc:partner:transaction".into()),
        subscription_id: Some(SUB.into()),
        ..Default::default()
    };
    assert_eq!(store.query(&created, 0, 50).unwrap().total, 30);
    let other_sub = CaptureFilter {
        subscription_id: Some("sub-x".into()),
        ..Default::default()
    };
    assert_eq!(store.count_by_verdict(&other_sub).unwrap().len(), 0);

    let ids = CaptureFilter {
        ids: vec![first.items[0].id, first.items[1].id],
        ..Default::default()
    };
    assert_eq!(store.query(&ids, 0, 50).unwrap().total, 2);
}

#[tokio::test]
async fn retention_prunes_the_oldest_and_clear_all_empties() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    for i in 0..20 {
        store
            .insert(capture(&format!("r-{i}"), Verdict::Valid, 100 - i))
            .await
            .unwrap();
    }
    let pruned = store
        .prune(Retention {
            max_count: Some(15),
            max_age: None,
        })
        .await
        .unwrap();
    assert_eq!(pruned, 5);
    let page = store.query(&CaptureFilter::default(), 0, 50).unwrap();
    assert_eq!(page.total, 15);
    assert_eq!(
        page.items.last().unwrap().fields.event_id.as_deref(),
        Some("r-5")
    );

    // Ages run from 95 (r-5) down to 81 minutes (r-19).
    let pruned = store
        .prune(Retention {
            max_count: None,
            max_age: Some(Duration::seconds(90 * 60 + 30)),
        })
        .await
        .unwrap();
    assert_eq!(pruned, 5);
    assert_eq!(
        store.query(&CaptureFilter::default(), 0, 50).unwrap().total,
        10
    );

    store.clear_all().await.unwrap();
    assert_eq!(
        store.query(&CaptureFilter::default(), 0, 50).unwrap().total,
        0
    );
}

#[tokio::test]
async fn a_retention_limit_is_applied_while_receiving() {
    let running = start_with(
        ListenerConfig::default(),
        Retention {
            max_count: Some(100),
            max_age: None,
        },
    )
    .await;
    let client = reqwest::Client::new();
    for i in 0..300 {
        post_signed(
            &client,
            &running.url,
            SUB,
            KEY,
            tx_body(&format!("keep-{i}")),
        )
        .await;
    }
    let page = running
        .listener
        .store()
        .query(&CaptureFilter::default(), 0, 1)
        .unwrap();
    assert!(
        page.total <= 300 - 100,
        "nothing was pruned: {}",
        page.total
    );
    assert_eq!(
        page.items[0].fields.event_id.as_deref(),
        Some("keep-299"),
        "the newest stay"
    );
    running.stop().await;
}

#[tokio::test]
async fn the_store_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    {
        let store = Store::open(&path, Retention::default()).unwrap();
        store
            .insert(capture("persist", Verdict::Valid, 1))
            .await
            .unwrap();
    }
    let store = Store::open(&path, Retention::default()).unwrap();
    let page = store.query(&CaptureFilter::default(), 0, 5).unwrap();
    assert_eq!(page.items[0].fields.event_id.as_deref(), Some("persist"));
    assert!(matches!(
        store.get(9999),
        Err(partner_listener::Error::NoSuchCapture(9999))
    ));
}

/// Under a load that never pauses, passive checkpoints alone never let SQLite start the WAL
/// over, and the WAL grew as long as the load lasted (5x from the first second to the fifth).
/// The writer now restarts it after each checkpoint round, so its size levels off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_bounded_under_sustained_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let wal_path = dir.path().join("s.db-wal");
    let store = Store::open(&path, Retention::default()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut stored = 0u64;
                while std::time::Instant::now() < deadline {
                    let event_id = format!("load-{task}-{stored}");
                    store
                        .insert(capture(&event_id, Verdict::Valid, 0))
                        .await
                        .unwrap();
                    stored += 1;
                }
                stored
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let early = std::fs::metadata(&wal_path).unwrap().len();
    let mut stored = 0u64;
    for task in tasks {
        stored += task.await.unwrap();
    }
    let late = std::fs::metadata(&wal_path).unwrap().len();
    assert!(stored > 100, "the load ran: {stored} captures");
    assert!(
        late < early * 5 / 2,
        "the WAL kept growing with the load: {early} bytes after 1 s, {late} after 5 s \
         ({stored} captures)"
    );
}

/// Inserts are answered by a task in the runtime they wait in. A store outlives runtimes (the
/// app keeps one store while views come and go), so an insert in a second runtime, after the
/// first one and its task are gone, and one outside any Tokio runtime, are still answered.
#[test]
fn inserts_are_answered_in_any_runtime_and_outside_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    for round in 0..2 {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let stored = runtime.block_on(async {
            let inserts = (0..20).map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .insert(capture(&format!("rt{round}-{i}"), Verdict::Valid, 0))
                        .await
                })
            });
            futures::future::join_all(inserts).await
        });
        assert_eq!(stored.len(), 20);
        for insert in stored {
            assert!(insert.unwrap().unwrap().id > 0);
        }
        drop(runtime);
    }
    let outside =
        futures::executor::block_on(store.insert(capture("outside", Verdict::Valid, 0))).unwrap();
    assert_eq!(outside.id, 41);
    assert_eq!(
        store.count_by_verdict(&CaptureFilter::default()).unwrap()[&Verdict::Valid],
        41
    );
}

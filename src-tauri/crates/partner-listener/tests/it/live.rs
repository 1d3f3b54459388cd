//! The live feed: every committed capture is broadcast, and the coalescer batches bursts.

use crate::support::*;
use partner_listener::{Coalescer, ListenerConfig, LiveEvent};
use std::time::Duration;

#[tokio::test]
async fn a_burst_arrives_in_few_batches_with_nothing_lost() {
    let running = start(ListenerConfig::default()).await;
    let mut coalescer = Coalescer::new(
        running.listener.subscribe(),
        Duration::from_millis(100),
        10_000,
    );
    let client = reqwest::Client::new();
    let sends = (0..60).map(|i| {
        let client = client.clone();
        let url = running.url.clone();
        async move { post_signed(&client, &url, SUB, KEY, tx_body(&format!("burst-{i}"))).await }
    });
    let responses = futures::future::join_all(sends).await;
    assert!(responses.iter().all(|r| r.status() == 200));

    let mut seen = std::collections::BTreeSet::new();
    let mut batches = 0;
    while seen.len() < 60 {
        let batch = tokio::time::timeout(Duration::from_secs(5), coalescer.next_batch())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(batch.missed, 0);
        batches += 1;
        for event in batch.events {
            if let LiveEvent::Captured(capture) = event {
                assert!(capture.id > 0, "only committed captures are broadcast");
                seen.insert(capture.fields.event_id.clone().unwrap());
            }
        }
    }
    assert!(
        batches < 60,
        "{batches} batches for 60 captures: nothing was coalesced"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_is_told_how_much_it_missed() {
    let running = start(ListenerConfig::default()).await;
    let (tx, rx) = tokio::sync::broadcast::channel(4);
    let mut coalescer = Coalescer::new(rx, Duration::from_millis(10), 100);
    let mut feed = running.listener.subscribe();
    let client = reqwest::Client::new();
    for i in 0..10 {
        post_signed(
            &client,
            &running.url,
            SUB,
            KEY,
            tx_body(&format!("lag-{i}")),
        )
        .await;
        tx.send(feed.recv().await.unwrap()).unwrap();
    }
    let batch = coalescer.next_batch().await.unwrap();
    assert_eq!(batch.missed, 6);
    assert_eq!(batch.events.len(), 4);
    drop(tx);
    assert!(coalescer.next_batch().await.is_none());
    running.stop().await;
}

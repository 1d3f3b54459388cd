//! Junk evicts nothing real (issue #46): retention by class under a count limit and a byte
//! budget, the summary of a flood of junk, and a delivery answered while slow connections hold
//! the listener's slots. Real HTTP on loopback.

use crate::support::*;
use futures::StreamExt;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{CaptureFilter, ListenerConfig, Retention, Verdict};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The junk a scanner sends through a tunnel, request `i` of them: bad signatures, absent ones,
/// `/wp-login.php` probes, random paths, other methods.
async fn junk(client: &reqwest::Client, base: &str, url: &str, i: usize) -> u16 {
    let request = match i % 5 {
        0 => client
            .post(url)
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(SIGNATURE_HEADER, "bm90IGEgc2lnbmF0dXJl")
            .body(tx_body(&format!("forged-{i}"))),
        1 => client.post(url).body(format!("{{\"n\":{i}}}")),
        2 => client.get(format!("{base}/wp-login.php")),
        3 => client
            .post(format!("{base}/random/{i:x}"))
            .body("x".repeat(200)),
        _ => client.put(url).body("{}"),
    };
    request.send().await.unwrap().status().as_u16()
}

async fn count(running: &Running, verdicts: Vec<Verdict>) -> u64 {
    running
        .listener
        .store()
        .count(&CaptureFilter {
            verdicts,
            ..CaptureFilter::default()
        })
        .unwrap()
}

const JUNK_VERDICTS: [Verdict; 4] = [
    Verdict::InvalidSignature,
    Verdict::MissingSignature,
    Verdict::WrongPath,
    Verdict::WrongMethod,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_junk_requests_among_fifty_valid_prune_none_of_the_fifty() {
    let limit = Retention {
        max_count: Some(500),
        ..Retention::default()
    };
    let config = ListenerConfig {
        // Every request stored: the retention, not the flood summary, is under test.
        junk_rate: None,
        ..ListenerConfig::default()
    };
    let running = start_with(config, limit).await;
    let client = reqwest::Client::new();
    let base = running.base();
    for i in 0..40 {
        let response =
            post_signed(&client, &running.url, SUB, KEY, tx_body(&format!("v{i}"))).await;
        assert_eq!(response.status(), 200);
    }
    // A hundred notifications of a subscription without a key here: they may be real.
    for i in 0..100 {
        let response = post_signed(
            &client,
            &running.url,
            "sub-elsewhere",
            KEY,
            tx_body(&format!("u{i}")),
        )
        .await;
        assert_eq!(response.status(), 401);
    }
    let statuses: Vec<u16> = futures::stream::iter(0..3000)
        .map(|i| junk(&client, &base, &running.url, i))
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(
        statuses.iter().all(|status| *status < 500),
        "no 5xx for junk"
    );
    for i in 40..50 {
        let response =
            post_signed(&client, &running.url, SUB, KEY, tx_body(&format!("v{i}"))).await;
        assert_eq!(response.status(), 200);
    }
    // The tables apply the limit every few hundred captures; once more makes the end exact.
    running.listener.store().prune(limit).await.unwrap();

    assert_eq!(
        count(&running, vec![Verdict::Valid]).await,
        50,
        "every valid one is kept"
    );
    assert_eq!(
        count(&running, vec![Verdict::UnknownSubscription]).await,
        100,
        "the unverified go only after the junk"
    );
    let junk_kept = count(&running, JUNK_VERDICTS.to_vec()).await;
    assert!(
        junk_kept <= 50,
        "junk holds its share (10%) only: {junk_kept}"
    );
    assert!(
        running
            .listener
            .store()
            .count(&CaptureFilter::default())
            .unwrap()
            <= 500
    );
    let sizes = running.listener.store().retention_sizes();
    assert_eq!(sizes.signed.captures, 50);
    assert_eq!(sizes.signed.pruned, 0);
    assert_eq!(sizes.unverified.captures, 100);
    assert_eq!(sizes.junk.captures, junk_kept);
    assert_eq!(sizes.junk.pruned + junk_kept, 3000);
    running.stop().await;
}

/// A notification of about a megabyte, signed.
fn large_notification(i: usize) -> Vec<u8> {
    let pad = "p".repeat(1_000_000);
    format!(
        r#"{{"eventId":"big-{i}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"r{i}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/t"}},"pad":"{pad}"}}"#
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_budget_is_never_exceeded_by_bodies_of_a_megabyte() {
    const BUDGET: u64 = 8 << 20;
    let budget = Retention {
        max_bytes: Some(BUDGET),
        ..Retention::default()
    };
    let running = start_with(ListenerConfig::default(), budget).await;
    let store = running.listener.store().clone();
    // Watches the store's sizes all along, not only at the end.
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let watching = tokio::spawn(async move {
        let mut most = 0;
        while stopped.try_recv().is_err() {
            most = most.max(store.retention_sizes().bytes());
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        most
    });
    let client = reqwest::Client::new();
    let statuses: Vec<u16> = futures::stream::iter(0..40)
        .map(|i| {
            let (client, url) = (client.clone(), running.url.clone());
            async move {
                // Every fourth a forgery of the same size: junk, whose share is 10% of the budget.
                let key = if i % 4 == 3 { OTHER_KEY } else { KEY };
                post_signed(&client, &url, SUB, key, large_notification(i))
                    .await
                    .status()
                    .as_u16()
            }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 30);
    let sizes = running.listener.store().retention_sizes();
    assert!(sizes.bytes() <= BUDGET, "{sizes:?}");
    assert!(sizes.signed.captures >= 6, "the budget is used: {sizes:?}");
    assert_eq!(
        sizes.junk.captures, 0,
        "a forged megabyte is past junk's share"
    );
    // What the store holds, read from its captures, agrees with the kept sizes.
    let mut stored = 0u64;
    running
        .listener
        .store()
        .for_each(&CaptureFilter::default(), |capture| {
            stored += capture.body.as_ref().map_or(0, |body| body.len() as u64);
            Ok(())
        })
        .unwrap();
    assert!(stored <= BUDGET && stored > BUDGET / 2, "{stored}");
    stop.send(()).unwrap();
    let most = watching.await.unwrap();
    assert!(most <= BUDGET, "at most {most} bytes held at any time");
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_junk_is_counted_past_its_rate_and_a_sample_kept() {
    let config = ListenerConfig {
        junk_rate: Some(10),
        ..ListenerConfig::default()
    };
    let running = start(config).await;
    let client = reqwest::Client::new();
    let base = running.base();
    let statuses: Vec<u16> = futures::stream::iter(0..1000)
        .map(|i| junk(&client, &base, &running.url, i))
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(
        statuses.iter().all(|status| *status < 500),
        "answered as ever"
    );
    let response = post_signed(&client, &running.url, SUB, KEY, tx_body("amid-the-flood")).await;
    assert_eq!(response.status(), 200);

    let summary = running.listener.flood_summary();
    let stored = count(&running, JUNK_VERDICTS.to_vec()).await;
    assert_eq!(
        summary.summarised + stored,
        1000,
        "{summary:?}, {stored} stored"
    );
    assert!(summary.summarised >= 800, "{summary:?}");
    assert!(summary.sampled >= 5, "a sample is kept: {summary:?}");
    assert_eq!(summary.junk_rate, Some(10));
    assert_eq!(count(&running, vec![Verdict::Valid]).await, 1);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_is_answered_in_time_while_a_thousand_slow_connections_are_open() {
    // The listener's defaults: 512 connections, 10 s for a head, 30 s for a body.
    let running = start(ListenerConfig::default()).await;
    let addr = running.addr;
    let mut slow = Vec::new();
    for i in 0..1000 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        match i % 2 {
            // Part of a head (kept trickling below).
            0 => stream
                .write_all(b"POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .unwrap(),
            // A head, then a little of the body it announces, then nothing.
            _ => stream
                .write_all(
                    b"POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"a\":",
                )
                .await
                .unwrap(),
        }
        slow.push(stream);
    }
    // The heads keep trickling a byte a second, as a slow-loris does.
    let trickling = tokio::spawn(async move {
        for _ in 0..40 {
            for stream in slow.iter_mut().step_by(2) {
                let _ = stream.write_all(b"a").await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        slow
    });

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let started = Instant::now();
    let body = tx_body("through-the-crowd");
    let response = client
        .post(&running.url)
        .header(SUBSCRIPTION_HEADER, SUB)
        .header(SIGNATURE_HEADER, signature::sign(KEY.as_bytes(), &body))
        .body(body)
        .send()
        .await
        .expect("answered within the service's 30 s");
    let took = started.elapsed();
    assert_eq!(response.status(), 200);
    // Within the service's 30 s, and well within: before, a connection part-way through a head
    // gave its slot up only when its 10 s ran out, and one whose body stalled when its 30 s
    // did, so the delivery waited behind them.
    assert!(took < Duration::from_secs(5), "{took:?}");
    eprintln!("a delivery behind 1,000 slow connections was answered in {took:?}");
    trickling.abort();
    running.stop().await;
}

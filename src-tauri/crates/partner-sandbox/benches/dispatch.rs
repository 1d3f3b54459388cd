//! Dispatcher benchmark: how long `enqueue` takes (it must never hold up an API call), how fast
//! notifications reach a real receiver on 127.0.0.1, what the kept records cost in memory, and
//! that a crowd of hanging receivers does not hold up a fast one.
//!
//! Run: `cargo bench -p partner-sandbox --bench dispatch` (add `-- N` for N notifications,
//! default 20,000: twice the 10,000 records kept, so eviction is exercised).

use chrono::Utc;
use partner_api::{EventType, Notification, NotificationMeta, ResourceType};
use partner_sandbox::dispatch::{
    DeliveryConfig, DeliveryState, Dispatcher, Outgoing, DEFAULT_RECORD_LIMIT,
};
use partner_sandbox::Clock;
use partner_testkit::{Reply, TestReceiver};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const KEY: &str = "Kp9!rT2#vX8@mQ4$zL6%wN1^bH3&jF5*";

fn outgoing(url: &str, n: usize) -> Outgoing {
    let event_id = format!("ev-{n:08}");
    Outgoing {
        subscription_id: format!("sub-{}", n % 16),
        url: url.to_owned(),
        signing_key: KEY.into(),
        notification: Notification {
            event_id: event_id.clone(),
            event_time: Utc::now(),
            event_type: EventType::Created,
            meta: NotificationMeta {
                instance_id: "acme-valuation".to_owned(),
                resource_id: event_id.clone(),
                resource_type: ResourceType::TransactionEvent,
                resource_ref: format!(
                    "http://127.0.0.1:7001/partner/v2/transactions/t1/events/{event_id}"
                ),
            },
        },
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// Polls (every 2 ms, so the check itself does not load the dispatcher) until `done`.
async fn wait_until(dispatcher: &Dispatcher, done: impl Fn(&Dispatcher) -> bool) {
    while !done(dispatcher) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Takes `expected` requests at the receiver (or as many as come, 30 s apart at most), then
/// waits until no kept record is pending; how many arrived.
async fn receive_and_settle(
    receiver: &mut TestReceiver,
    dispatcher: &Dispatcher,
    expected: usize,
) -> usize {
    let mut received = 0;
    while received < expected && receiver.next(Duration::from_secs(30)).await.is_some() {
        received += 1;
    }
    wait_until(dispatcher, |d| {
        d.deliveries(None)
            .iter()
            .all(|r| r.state != DeliveryState::Pending)
    })
    .await;
    received
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let shutdown = CancellationToken::new();
    let config = DeliveryConfig {
        retry_delay: Duration::from_millis(200),
        attempt_timeout: Duration::from_secs(5),
        max_attempts: 3,
        ..DeliveryConfig::default()
    };

    // 1. Throughput and enqueue latency against a receiver that answers 200.
    let mut receiver = TestReceiver::always(200).await?;
    let url = receiver.url();
    let dispatcher = Dispatcher::start(config, Clock::new(), shutdown.clone());
    let rss_before = rss_kib();
    let mut enqueue_times = Vec::with_capacity(total);
    let started = Instant::now();
    for n in 0..total {
        let item = outgoing(&url, n);
        let t = Instant::now();
        dispatcher.enqueue(item);
        enqueue_times.push(t.elapsed());
    }
    let enqueued_in = started.elapsed();
    let received = receive_and_settle(&mut receiver, &dispatcher, total).await;
    let delivered_in = started.elapsed();
    let records = dispatcher.deliveries(None);
    let delivered = records
        .iter()
        .filter(|r| r.state == DeliveryState::Delivered)
        .count();
    let rss_after = rss_kib();
    enqueue_times.sort();
    println!("notifications: {total} to one receiver answering 200 (records kept: {DEFAULT_RECORD_LIMIT})");
    println!(
        "enqueue: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs; all {total} queued in {:.0} ms",
        percentile(&enqueue_times, 0.50).as_secs_f64() * 1e6,
        percentile(&enqueue_times, 0.99).as_secs_f64() * 1e6,
        enqueue_times
            .last()
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e6,
        enqueued_in.as_secs_f64() * 1e3
    );
    println!(
        "delivery: {received} received in {:.2} s = {:.0} notifications/s; records kept {} ({} delivered)",
        delivered_in.as_secs_f64(),
        received as f64 / delivered_in.as_secs_f64(),
        records.len(),
        delivered
    );
    println!(
        "memory: RSS {} MiB before, {} MiB after (+{} MiB, includes the receiver and allocator slack)",
        rss_before / 1024,
        rss_after / 1024,
        rss_after.saturating_sub(rss_before) / 1024
    );
    drop(records);

    // 1b. The same again: with the records bounded, memory should not keep growing.
    for n in total..2 * total {
        dispatcher.enqueue(outgoing(&url, n));
    }
    let received_again = receive_and_settle(&mut receiver, &dispatcher, total).await;
    println!(
        "memory after another {received_again} deliveries: RSS {} MiB, records kept {}",
        rss_kib() / 1024,
        dispatcher.deliveries(None).len()
    );

    // 2. 500 receivers hanging (each attempt held 5 s) while one more notification goes to a
    //    fast receiver: how long the fast one takes.
    let hanging = TestReceiver::start([Reply::Hang]).await?;
    for n in 0..500 {
        dispatcher.enqueue(Outgoing {
            subscription_id: "sub-hanging".to_owned(),
            ..outgoing(&hanging.url(), 1_000_000 + n)
        });
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fast_id = format!("ev-{:08}", 2_000_000);
    let t = Instant::now();
    dispatcher.enqueue(outgoing(&url, 2_000_000));
    wait_until(&dispatcher, |d| {
        d.deliveries(Some(&fast_id))
            .first()
            .is_some_and(|r| r.state == DeliveryState::Delivered)
    })
    .await;
    println!(
        "with 500 deliveries hanging: a delivery to a fast receiver took {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    shutdown.cancel();
    dispatcher.stopped().await;
    Ok(())
}

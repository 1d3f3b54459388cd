//! A burst from the sandbox's own dispatcher to the listener, both as they ship: how long the
//! service's deliveries wait, and whether any fails, when a burst fills the listener's
//! connections.
//!
//! Why this bench besides `ack`: the dispatcher keeps up to 512 attempts in flight
//! (`partner_sandbox::dispatch::MAX_IN_FLIGHT`), and its HTTP pool opens a new connection
//! whenever none is free when an attempt starts, so a burst holds about as many connections as
//! the listener serves at once (`ListenerConfig::max_connections`, 512). What happens at that
//! cap decides whether a delivery waits milliseconds, waits for a kept-alive connection to time
//! out, or fails and is retried 20 s later. `ack` measures the listener's rate with a fixed
//! number of senders; this measures what the service would see.
//!
//! Run: `cargo bench -p partner-listener --bench burst` (env: BURST_NOTIFICATIONS, default
//! 10,000, at most the 10,000 delivery records the dispatcher keeps; BURST_ROUNDS, default 3).

use chrono::Utc;
use partner_api::{EventType, Notification, NotificationMeta, ResourceType};
use partner_listener::{CaptureFilter, Durability, Listener, ListenerConfig, MemoryKeys};
use partner_sandbox::dispatch::{
    DeliveryConfig, DeliveryRecord, DeliveryState, Dispatcher, Outgoing, DEFAULT_RECORD_LIMIT,
    MAX_IN_FLIGHT,
};
use partner_sandbox::Clock;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/payload.rs"]
#[allow(dead_code)]
mod payload;
#[path = "support/store.rs"]
mod support_store;
use payload::{env_number, random_event_id};
use support_store::fresh_store;

const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@";
const SUBSCRIPTIONS: usize = 16;

fn outgoing(url: &str, n: usize) -> Outgoing {
    let event_id = random_event_id();
    Outgoing {
        subscription_id: format!("sub-{}", n % SUBSCRIPTIONS),
        url: url.to_owned(),
        signing_key: KEY.into(),
        notification: Notification {
            event_id: event_id.clone(),
            event_time: Utc::now(),
            event_type: EventType::Created,
            meta: NotificationMeta {
                instance_id: "burst".to_owned(),
                resource_id: event_id.clone(),
                resource_type: ResourceType::TransactionEvent,
                resource_ref: format!("https://svc.example/partner/v2/transactions/{event_id}"),
            },
        },
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// One burst into a fresh listener; prints what the dispatcher recorded.
async fn burst(notifications: usize) {
    let (_dir, store) = fresh_store(Durability::Full);
    let keys = Arc::new(MemoryKeys::new());
    for n in 0..SUBSCRIPTIONS {
        keys.insert(format!("sub-{n}"), KEY);
    }
    let listener = Listener::new(ListenerConfig::default(), store, keys).expect("listener");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/webhooks", tcp.local_addr().expect("addr"));
    let serving = listener.clone();
    let stop = CancellationToken::new();
    let server = tokio::spawn({
        let stop = stop.clone();
        async move { serving.serve(tcp, stop.cancelled_owned()).await }
    });

    // The service's own settings (30 s per attempt, 3 attempts), but a retry 20 s later would
    // only stretch the run: 1 s still shows that one was needed.
    let dispatcher_stop = CancellationToken::new();
    let config = DeliveryConfig {
        retry_delay: Duration::from_secs(1),
        ..DeliveryConfig::default()
    };
    let dispatcher = Dispatcher::start(config, Clock::new(), dispatcher_stop.clone());
    let items: Vec<Outgoing> = (0..notifications).map(|n| outgoing(&url, n)).collect();
    let started = Instant::now();
    for item in items {
        dispatcher.enqueue(item);
    }
    let records = loop {
        let records = dispatcher.deliveries(None);
        if records.len() >= notifications
            && records.iter().all(|r| r.state != DeliveryState::Pending)
        {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let elapsed = started.elapsed();
    report(&records, elapsed);
    let stored: u64 = listener
        .store()
        .count_by_verdict(&CaptureFilter::default())
        .expect("count")
        .values()
        .sum();
    let delivered = records
        .iter()
        .filter(|r| r.state == DeliveryState::Delivered)
        .count();
    println!(
        "  listener stored {stored} captures for {delivered} delivered notifications (a retried \
         one may be stored once per attempt that reached it)"
    );
    dispatcher_stop.cancel();
    dispatcher.stopped().await;
    stop.cancel();
    let _ = server.await;
}

fn report(records: &[DeliveryRecord], elapsed: Duration) {
    let delivered = records
        .iter()
        .filter(|r| r.state == DeliveryState::Delivered)
        .count();
    let retried = records.iter().filter(|r| r.attempts.len() > 1).count();
    let mut first_attempt_ms: Vec<u64> = records
        .iter()
        .filter_map(|r| r.attempts.first())
        .map(|a| a.duration_ms)
        .collect();
    first_attempt_ms.sort_unstable();
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for attempt in records.iter().flat_map(|r| &r.attempts) {
        let failure = match (attempt.status, &attempt.error) {
            (Some(status), _) if !(200..400).contains(&status) => format!("status {status}"),
            (_, Some(error)) => error.clone(),
            _ => continue,
        };
        *failures.entry(failure).or_insert(0) += 1;
    }
    println!(
        "  {delivered} of {} delivered in {:.2} s ({:.0}/s); {retried} needed a second attempt",
        records.len(),
        elapsed.as_secs_f64(),
        delivered as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  first attempt: p50 {} ms, p99 {} ms, max {} ms; over 1 s: {}",
        percentile(&first_attempt_ms, 0.50),
        percentile(&first_attempt_ms, 0.99),
        first_attempt_ms.last().copied().unwrap_or_default(),
        first_attempt_ms.iter().filter(|&&ms| ms > 1000).count()
    );
    for (failure, count) in failures {
        println!("  {count} attempts failed: {failure}");
    }
}

fn main() {
    let notifications = env_number("BURST_NOTIFICATIONS", 10_000).min(DEFAULT_RECORD_LIMIT);
    let rounds = env_number("BURST_ROUNDS", 3).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "{notifications} notifications queued at once on the sandbox's dispatcher ({MAX_IN_FLIGHT} \
         attempts in flight at most), delivered to the listener (default config, FULL \
         durability) on loopback; {rounds} rounds"
    );
    runtime.block_on(async {
        for round in 1..=rounds {
            println!("-- round {round}");
            burst(notifications).await;
        }
    });
}

//! The capture store alone, without HTTP: captures per second through `Store::insert` (groups
//! appended to the journal and synced, the tables behind; `Durability::Full` unless told
//! otherwise) from concurrent tasks, and the CPU time each
//! thread spent per capture (the request tasks, the writer, the checkpointer), read from
//! `/proc/self/task`. It separates the store's cost from the HTTP stack's when the `ack` bench
//! says the listener is slow, and is far less noisy than the end-to-end run on a shared machine.
//!
//! Run: `cargo bench -p partner-listener --bench store` (env: STORE_CAPTURES, STORE_SENDERS,
//! STORE_DURABILITY=full|normal, STORE_FILE=an existing store to add to). Linux only (it reads
//! `/proc`).

use chrono::Utc;
use partner_listener::{
    Capture, Durability, Header, NotificationFields, ResponseRecord, Retention, Store,
    StoreOptions, Verdict,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/payload.rs"]
mod payload;
#[path = "support/store.rs"]
mod support_store;
use cpu::thread_cpu;
use payload::{body, env_number, BODY_SIZE};
use support_store::fresh_store;

/// A capture as the server builds it for a valid notification.
fn capture(event_id: &str) -> Capture {
    let body = body(event_id);
    let (fields, _) = NotificationFields::read(&body);
    Capture {
        id: 0,
        received_at: Utc::now(),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: vec![
            Header::new("svc-subscriptionid", "sub-bench"),
            Header::new(
                "svc-signature",
                "K0mJ6nYbqJ1Xo4mO0n2m3yq4Vd9lqkqjz1Qw3ZP7tDk=",
            ),
            Header::new("content-type", "application/json"),
            Header::new("accept", "*/*"),
            Header::new("host", "127.0.0.1:41234"),
            Header::new("content-length", BODY_SIZE.to_string()),
        ],
        body_size: body.len() as u64,
        body: Some(body),
        peer: Some("127.0.0.1:50000".into()),
        verdict: Verdict::Valid,
        matched_key: Some(partner_listener::MatchedKey::Current),
        subscription_id: Some("sub-bench".into()),
        fields,
        attempt: 0,
        notification_id: None,
        response: ResponseRecord {
            status: 200,
            body: "ok\n".into(),
            from_test_mode: false,
            delay_ms: 0,
        },
        processing_micros: 40,
        replay: false,
    }
}

fn main() {
    let captures = env_number("STORE_CAPTURES", 20_000);
    let senders = env_number("STORE_SENDERS", 32);
    let durability = match std::env::var("STORE_DURABILITY").as_deref() {
        Ok("normal") => Durability::Normal,
        _ => Durability::Full,
    };
    // Event ids as the service makes them (random UUIDs, as the ack bench sends them too), or
    // `ev-0`, `ev-1`... (STORE_IDS=sequential), which sort next to each other.
    let random_ids = std::env::var("STORE_IDS").map_or(true, |v| v != "sequential");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // STORE_FILE=PATH: adds the captures to that store (keep a copy: they stay in it) instead
    // of a new one, to see the writer's cost in a large store (its map of notifications).
    let (_dir, store) = match std::env::var("STORE_FILE") {
        Ok(path) => {
            let options = StoreOptions {
                retention: Retention::default(),
                durability,
                holder: "the store bench",
                ..StoreOptions::default()
            };
            (None, Store::open_with(path, options).expect("store"))
        }
        Err(_) => {
            let (dir, store) = fresh_store(durability);
            (Some(dir), store)
        }
    };
    let before = thread_cpu();
    let started = Instant::now();
    runtime.block_on(async {
        let next = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..senders)
            .map(|_| {
                let store = store.clone();
                let next = next.clone();
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= captures {
                            break;
                        }
                        let event_id = if random_ids {
                            payload::random_event_id()
                        } else {
                            format!("ev-{i}")
                        };
                        store.insert(capture(&event_id)).await.expect("insert");
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("sender");
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let after = thread_cpu();
    println!(
        "{captures} captures of {BODY_SIZE} bytes, {senders} concurrent inserts, {durability:?} \
         durability: {:.0} captures/s",
        captures as f64 / elapsed
    );
    let mut total = 0.0;
    for (name, seconds) in cpu::spent(&before, &after) {
        total += seconds;
        println!(
            "  {name:<18} {:>7.1} us CPU per capture",
            seconds / captures as f64 * 1e6
        );
    }
    println!(
        "  {:<18} {:>7.1} us CPU per capture",
        "all threads",
        total / captures as f64 * 1e6
    );
    drop(store);
}

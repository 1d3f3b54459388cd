//! The capture store alone, without HTTP: captures per second through `Store::insert` (group
//! commit, `synchronous=FULL` unless told otherwise) from concurrent tasks, and the CPU time each
//! thread spent per capture (the request tasks, the writer, the checkpointer), read from
//! `/proc/self/task`. It separates the store's cost from the HTTP stack's when the `ack` bench
//! says the listener is slow, and is far less noisy than the end-to-end run on a shared machine.
//!
//! Run: `cargo bench -p partner-listener --bench store` (env: STORE_CAPTURES, STORE_SENDERS,
//! STORE_DURABILITY=full|normal). Linux only (it reads `/proc`).

use chrono::Utc;
use partner_listener::{
    Capture, Durability, Header, NotificationFields, ResponseRecord, Retention, Store,
    StoreOptions, Verdict,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const BODY_SIZE: usize = 2048;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The same 2 KiB notification the `ack` bench sends.
fn body(event_id: &str) -> Vec<u8> {
    let head = format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"bench","resourceId":"{event_id}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/partner/v2/transactions/"#
    );
    let tail = r#""}}"#;
    let padding = BODY_SIZE.saturating_sub(head.len() + tail.len());
    format!("{head}{}{tail}", "x".repeat(padding)).into_bytes()
}

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

/// CPU seconds (user + system) per thread name, summed over threads of the same name.
fn thread_cpu() -> BTreeMap<String, f64> {
    let mut by_name = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return by_name;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ...`: the name may hold spaces, so split at the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        *by_name.entry(name).or_insert(0.0) += (ticks(11) + ticks(12)) / 100.0;
    }
    by_name
}

fn main() {
    let captures = env_number("STORE_CAPTURES", 20_000);
    let senders = env_number("STORE_SENDERS", 32);
    let durability = match std::env::var("STORE_DURABILITY").as_deref() {
        Ok("normal") => Durability::Normal,
        _ => Durability::Full,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_with(
        dir.path().join("bench.sqlite3"),
        StoreOptions {
            retention: Retention::default(),
            durability,
        },
    )
    .expect("store");
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
                        store
                            .insert(capture(&format!("ev-{i}")))
                            .await
                            .expect("insert");
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
    for (name, seconds) in &after {
        let spent = seconds - before.get(name).copied().unwrap_or(0.0);
        total += spent;
        if spent > 0.0 {
            println!(
                "  {name:<18} {:>7.1} us CPU per capture",
                spent / captures as f64 * 1e6
            );
        }
    }
    println!(
        "  {:<18} {:>7.1} us CPU per capture",
        "all threads",
        total / captures as f64 * 1e6
    );
    drop(store);
}

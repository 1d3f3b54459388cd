//! How long clearing a large store holds the writer, so how long an acknowledgement can wait
//! behind a clear: fills a store with `CLEAR_CAPTURES` (default 100,000) spec-shaped 2 KiB
//! captures, then clears them while one more capture is inserted right behind the clear, and
//! reports the clear's time, that insert's wait, and the database and WAL sizes. Twice: through
//! a filter that selects every capture (the row-by-row path of `Store::clear`) and as clear-all
//! (the path without WHERE). And through a search every capture matches, once the search index
//! has caught up (each row once looked up in the MATCH's result, not one MATCH per row).
//!
//! Run: `cargo bench -p partner-listener --bench clear` (env: CLEAR_CAPTURES).

use chrono::Utc;
use partner_listener::{
    Capture, CaptureFilter, Durability, Header, NotificationFields, ResponseRecord, Store, Verdict,
};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/payload.rs"]
mod payload;
#[path = "support/store.rs"]
mod support_store;
use payload::{body, env_number, random_event_id};
use support_store::fresh_store;

fn capture() -> Capture {
    let body = body(&random_event_id());
    let (fields, _) = NotificationFields::read(&body);
    Capture {
        id: 0,
        received_at: Utc::now(),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: vec![
            Header::new("svc-subscriptionid", "sub-bench"),
            Header::new("content-type", "application/json"),
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

async fn fill(store: &Store, captures: usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let store = store.clone();
            let next = next.clone();
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < captures {
                    store.insert(capture()).await.expect("insert");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("filler");
    }
}

fn mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / (1024.0 * 1024.0))
}

fn sizes(db: &Path) -> String {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    format!(
        "database {:.1} MiB, WAL {:.1} MiB",
        mib(db),
        mib(Path::new(&wal))
    )
}

/// Clears with `filter` while one capture is inserted right behind the clear.
async fn measure(store: &Store, captures: usize, filter: CaptureFilter, name: &str) {
    fill(store, captures).await;
    // Let the checkpointer (and the search indexer) catch up, so the clear does not pay for
    // the fill's WAL or search an unindexed tail.
    tokio::time::sleep(Duration::from_secs(2)).await;
    while store.search_backlog().expect("backlog") > 0 {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!("{name}: before, {}", sizes(store.path()));
    // The clear's first poll hands it to the writer, so the insert after it is queued behind
    // it (the writer takes its queue in order) and waits for as long as the clear holds it.
    let started = Instant::now();
    let mut clearing = Box::pin(store.clear(&filter));
    assert!(
        futures::poll!(&mut clearing).is_pending(),
        "cleared at once"
    );
    let inserting = async {
        let started = Instant::now();
        store
            .insert(capture())
            .await
            .expect("insert behind the clear");
        started.elapsed()
    };
    let (deleted, insert_wait) = tokio::join!(
        async {
            let deleted = (&mut clearing).await.expect("clear");
            (deleted, started.elapsed())
        },
        inserting
    );
    let (deleted, clear_time) = deleted;
    println!(
        "{name}: {deleted} captures deleted in {:.0} ms; an insert queued behind it was \
         answered after {:.0} ms",
        clear_time.as_secs_f64() * 1e3,
        insert_wait.as_secs_f64() * 1e3
    );
    println!("{name}: just after, {}", sizes(store.path()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("{name}: 2 s later, {}", sizes(store.path()));
    store.clear_all().await.expect("empty again");
}

fn main() {
    let captures = env_number("CLEAR_CAPTURES", 100_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (_dir, store) = fresh_store(Durability::Full);
    runtime.block_on(async {
        let every_valid = CaptureFilter {
            verdicts: vec![Verdict::Valid],
            ..CaptureFilter::default()
        };
        measure(&store, captures, every_valid, "clear by filter").await;
        // A word in every body: the search's path, once the index has caught up.
        let every_bench = CaptureFilter {
            text: Some("bench".into()),
            ..CaptureFilter::default()
        };
        measure(&store, captures, every_bench, "clear by search").await;
        measure(&store, captures, CaptureFilter::default(), "clear-all").await;
    });
}

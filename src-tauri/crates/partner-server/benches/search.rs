//! Search and filters over 1,000,000 captures, answered by the server over its API: p50 and
//! p95 per kind of question (issue #50 asks p95 < 100 ms).
//!
//! `cargo bench -p partner-server --bench search` (PostgreSQL's server binaries needed, as for
//! `ack`; `PARTNER_SEARCH_ROWS` sets another count; `PARTNER_SEARCH_ONLY=day,subscription` asks
//! only the questions naming one of the words). The captures are made inside PostgreSQL
//! (`common::generated_captures`, which says their shape). `VACUUM (ANALYZE)` runs after the
//! load, as autovacuum would on a live server (its statistics, and the visibility map that lets
//! a count read an index alone; without it the verdict's count read the heap for each entry).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, generated_captures, Bench};
use serde_json::{json, Value};
use std::time::Instant;

const RUNS: usize = 20;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let rows: i64 = std::env::var("PARTNER_SEARCH_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let bench = Bench::start().await;
    let pool = bench.pool.clone();
    let token = bench.viewer().await;

    let loading = Instant::now();
    generated_captures::insert(&pool, rows).await;
    sqlx::query("VACUUM (ANALYZE) captures")
        .execute(&pool)
        .await
        .unwrap();
    let loaded = loading.elapsed();

    let server = bench.server().await;
    let client = reqwest::Client::new();
    let page_url = format!("http://{}/api/v1/captures/page", server.local_addr);
    let query = |filter: Value, grouping: &str, extra: Value| {
        let mut body = json!({"filter": filter, "grouping": grouping, "offset": 0, "limit": 50, "count": "upToCap"});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        body
    };
    let questions = [
        (
            "newest page, no filter",
            query(json!({}), "everyAttempt", json!({})),
        ),
        (
            "a rare word (1 in 10,000)",
            query(json!({"text": "needle42"}), "everyAttempt", json!({})),
        ),
        (
            "a word in every capture (count capped)",
            query(json!({"text": "ordinary"}), "everyAttempt", json!({})),
        ),
        (
            "a person's name (200 captures)",
            query(json!({"text": "person1234"}), "everyAttempt", json!({})),
        ),
        (
            "an event id exactly",
            query(
                json!({"text": format!("evt-{}", rows / 2 + 1)}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "verdict invalid-signature (5%)",
            query(
                json!({"verdicts": ["invalid-signature"]}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "event type + subscription (1 in 60)",
            query(
                json!({"eventType": "TransactionApproved", "subscriptionId": "sub-4"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        // None match: sub-3's captures are odd-numbered, TransactionApproved's even.
        (
            "event type + subscription (none match)",
            query(
                json!({"eventType": "TransactionApproved", "subscriptionId": "sub-3"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "one day of thirty",
            query(
                json!({"since": "2026-11-15T00:00:00Z", "until": "2026-11-16T00:00:00Z"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "the last 29 days of thirty",
            query(
                json!({"since": "2026-11-02T00:00:00Z"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "days 10 to 20 of thirty",
            query(
                json!({"since": "2026-11-10T00:00:00Z", "until": "2026-11-20T00:00:00Z"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "one day of thirty, one subscription",
            query(
                json!({"since": "2026-11-15T00:00:00Z", "until": "2026-11-16T00:00:00Z", "subscriptionId": "sub-7"}),
                "everyAttempt",
                json!({}),
            ),
        ),
        (
            "a keyset page half way down",
            query(json!({}), "everyAttempt", json!({"before": rows / 2})),
        ),
        (
            "grouped by notification, no filter",
            query(json!({}), "byNotification", json!({})),
        ),
        (
            "grouped, one subscription",
            query(
                json!({"subscriptionId": "sub-7"}),
                "byNotification",
                json!({}),
            ),
        ),
        (
            "grouped, a rare word",
            query(json!({"text": "needle42"}), "byNotification", json!({})),
        ),
        (
            "grouped, one day of thirty",
            query(
                json!({"since": "2026-11-15T00:00:00Z", "until": "2026-11-16T00:00:00Z"}),
                "byNotification",
                json!({}),
            ),
        ),
    ];
    println!("partner-server search bench: {rows} captures loaded in {:.1} s; {RUNS} runs per question over HTTP (one server, PostgreSQL {})", loaded.as_secs_f64(),
        bench.server_version().await);
    // `PARTNER_SEARCH_ONLY=day,subscription` asks only the questions naming one of the words.
    let only: Vec<String> = std::env::var("PARTNER_SEARCH_ONLY")
        .map(|words| words.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    for (name, body) in questions {
        if !only.is_empty() && !only.iter().any(|word| name.contains(word.as_str())) {
            continue;
        }
        ask(&client, &page_url, &token, name, &body, RUNS, |page| {
            json!({"total": page["total"], "capped": page["totalCapped"], "items": page["items"].as_array().map(Vec::len)})
        })
        .await;
    }
    server.stop().await.unwrap();
}

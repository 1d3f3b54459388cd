//! Acknowledgements per second and their latency on PostgreSQL, beside the floor: a bare
//! batched INSERT of the same rows on the same database (issue #50's BENCHMARKS line).
//!
//! `cargo bench -p partner-server --bench ack` (needs PostgreSQL's server binaries: Debian's
//! `postgresql`, as `scripts/setup.sh` installs). It starts a throwaway PostgreSQL, a workspace
//! and one server in process, then:
//! - the server: N signed notifications from C concurrent senders over keep-alive HTTP, each
//!   timed from send to its 200 (committed); acknowledgements per second, p50 and p99;
//! - the floor: the same N rows (the same record bytes and search words) inserted with the same
//!   `INSERT … SELECT FROM UNNEST` in transactions of C rows, one after another, no HTTP, no
//!   verdict, no attempt numbering: rows per second.

#![allow(clippy::unwrap_used)]

mod common;

use common::{percentile, Bench};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_server::signing_keys;
use std::sync::Arc;
use std::time::Instant;

const N: usize = 20_000;
const SENDERS: usize = 64;

fn body(n: usize) -> Vec<u8> {
    format!(
        r#"{{"eventId":"bench-{n}","eventTime":"2026-12-06T10:00:00Z","eventType":"TransactionUpdated","meta":{{"instanceId":"acme","resourceId":"tx-{n}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/partner/v2/transactions/tx-{n}"}},"data":{{"status":"APPROVED","amount":{{"value":"1250.00","currency":"EUR"}}}}}}"#
    )
    .into_bytes()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let bench = Bench::start().await;
    let (pool, key) = (bench.pool.clone(), &bench.key);
    signing_keys::set(&pool, key, "sub-1", &Secret::new("whsec-bench"))
        .await
        .unwrap();
    let server = bench.server().await;
    let webhook = server.webhook_url("/webhooks");

    let bodies: Arc<Vec<Vec<u8>>> = Arc::new((0..N + 1000).map(body).collect());
    let send_range = |range: std::ops::Range<usize>| {
        let (webhook, bodies) = (webhook.clone(), bodies.clone());
        async move {
            let next = Arc::new(std::sync::atomic::AtomicUsize::new(range.start));
            let mut tasks = Vec::new();
            for _ in 0..SENDERS {
                let (webhook, bodies, next) = (webhook.clone(), bodies.clone(), next.clone());
                let end = range.end;
                tasks.push(tokio::spawn(async move {
                    let client = reqwest::Client::new();
                    let mut latencies = Vec::new();
                    loop {
                        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if n >= end {
                            return latencies;
                        }
                        let body = &bodies[n];
                        let started = Instant::now();
                        let status = client
                            .post(&webhook)
                            .header(SIGNATURE_HEADER, sign(b"whsec-bench", body))
                            .header(SUBSCRIPTION_HEADER, "sub-1")
                            .body(body.clone())
                            .send()
                            .await
                            .unwrap()
                            .status();
                        assert_eq!(status, 200);
                        latencies.push(started.elapsed());
                    }
                }));
            }
            let mut latencies = Vec::new();
            for task in tasks {
                latencies.extend(task.await.unwrap());
            }
            latencies
        }
    };
    send_range(N..N + 1000).await; // warm-up: connections, caches, the plan of each statement
    let started = Instant::now();
    let mut latencies = send_range(0..N).await;
    let took = started.elapsed();
    latencies.sort();
    let acks_per_second = N as f64 / took.as_secs_f64();

    // The floor: the same rows, bare.
    let rows: Vec<(Vec<u8>, String)> = sqlx::query_as::<_, (Vec<u8>, String)>(
        "SELECT record, event_id FROM captures WHERE event_id LIKE 'bench-%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    sqlx::query("CREATE TABLE floor (LIKE captures INCLUDING ALL)")
        .execute(&pool)
        .await
        .unwrap();
    let texts: Vec<String> = rows
        .iter()
        .map(|(record, _)| String::from_utf8_lossy(record).into_owned())
        .collect();
    let started = Instant::now();
    let mut id: i64 = 0;
    for (chunk, words) in rows.chunks(SENDERS).zip(texts.chunks(SENDERS)) {
        let ids: Vec<i64> = chunk
            .iter()
            .map(|_| {
                id += 1;
                id
            })
            .collect();
        let records: Vec<Vec<u8>> = chunk.iter().map(|(r, _)| r.clone()).collect();
        let event_ids: Vec<String> = chunk.iter().map(|(_, e)| e.clone()).collect();
        let mut tx = pool.begin().await.unwrap();
        sqlx::query(
            "INSERT INTO floor (id, received_at, verdict, subscription_id, event_type, \
             resource_type, event_id, attempt, notification_id, status, record, search) \
             SELECT id, now(), 'valid', 'sub-1', 'TransactionUpdated', 'transaction', event_id, \
             1, id, 200, record, to_tsvector('simple', words) \
             FROM UNNEST($1::bigint[], $2::text[], $3::bytea[], $4::text[]) \
             AS t(id, event_id, record, words)",
        )
        .bind(&ids)
        .bind(&event_ids)
        .bind(&records)
        .bind(words)
        .execute(&mut *tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
    }
    let floor_took = started.elapsed();
    let floor_per_second = N as f64 / floor_took.as_secs_f64();

    println!("partner-server ack bench: {N} signed notifications, {SENDERS} concurrent senders, one server, PostgreSQL {} (throwaway, fsync on)", server_version(&pool).await);
    println!(
        "  server: {acks_per_second:.0} acknowledgements/s ({:.2} s); latency p50 {:.1} ms, p99 {:.1} ms",
        took.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0
    );
    println!(
        "  floor:  {floor_per_second:.0} rows/s ({:.2} s): the same rows, bare batched INSERTs of {SENDERS} a commit",
        floor_took.as_secs_f64()
    );
    println!(
        "  server / floor: {:.2}",
        acks_per_second / floor_per_second
    );
    server.stop().await.unwrap();
}

async fn server_version(pool: &sqlx::PgPool) -> String {
    sqlx::query_scalar("SHOW server_version")
        .fetch_one(pool)
        .await
        .unwrap()
}

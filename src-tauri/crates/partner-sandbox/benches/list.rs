//! The list call and token issuance over loopback HTTP, with 100,000 transactions loaded, in
//! memory and in the persistent mode (`data_file`) one after the other in the same run, and
//! what a durable write costs in each.
//!
//! `cargo bench -p partner-sandbox --bench list` (env: `BENCH_TRANSACTIONS`, default 100000;
//! `BENCH_REQUESTS` per client, default 2000; `BENCH_CLIENTS`, default 1,4,16;
//! `BENCH_WRITES` per client, default 1000; `BENCH_MODES`, default `memory,file`;
//! `BENCH_DIR`, where the data file goes, default a temp dir).
//! For each mode and number of concurrent clients it prints requests/s and p50/p99/max latency
//! of `GET /partner/v2/transactions?sort=status,-created&start=N&limit=50` at random N, of
//! `POST /oauth2/v1/token`, of `PATCH /sandbox/v1/transactions/{id}` (a lender update: one
//! transaction row and one event row written, and the notifications it fires recorded), and of
//! the list call while 4 clients keep writing (do readers wait for the writers' fsync?).
//! Then the ratios file / memory per row. Latency is measured by the client, per request, end
//! to end.

use partner_sandbox::{DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

struct Stats {
    requests: usize,
    wall: Duration,
    latencies: Vec<Duration>,
}

impl Stats {
    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[index]
    }

    fn rate(&self) -> f64 {
        self.requests as f64 / self.wall.as_secs_f64()
    }

    fn row(&self, mode: &str, what: &str, clients: usize) -> String {
        format!(
            "| {mode} | {what} | {clients} | {} | {:.0} | {:.2} | {:.2} | {:.2} |",
            self.requests,
            self.requests as f64 / self.wall.as_secs_f64(),
            ms(self.percentile(0.50)),
            ms(self.percentile(0.99)),
            ms(*self.latencies.last().unwrap_or(&Duration::ZERO)),
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[derive(Clone)]
enum Call {
    List {
        total: usize,
    },
    Token,
    /// A lender update of one of these (unlocked) transactions, drawn at random.
    Update {
        ids: Arc<Vec<String>>,
    },
}

async fn run(
    http: &reqwest::Client,
    sandbox: &TestSandbox,
    token: &str,
    call: Call,
    clients: usize,
    per_client: usize,
) -> Stats {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let call = call.clone();
        let http = http.clone();
        let base = sandbox.base_url().to_string();
        let token = token.to_string();
        let id = sandbox.client_id().to_string();
        let secret = sandbox.client_secret().expose().to_string();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                let request = match &call {
                    Call::List { total } => {
                        let total = *total;
                        let start = rand::rng().random_range(0..=total - 50);
                        http.get(format!(
                            "{base}/partner/v2/transactions?sort=status,-created&start={start}&limit=50"
                        ))
                        .bearer_auth(&token)
                    }
                    Call::Token => http
                        .post(format!("{base}/oauth2/v1/token"))
                        .basic_auth(&id, Some(&secret))
                        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")]),
                    Call::Update { ids } => {
                        let (id, amount) = {
                            let mut rng = rand::rng();
                            (&ids[rng.random_range(0..ids.len())], rng.random_range(1..10_000))
                        };
                        http.patch(format!("{base}/sandbox/v1/transactions/{id}"))
                            .json(&serde_json::json!({"loan": {"loanAmount": amount * 1000}}))
                    }
                };
                let sent = Instant::now();
                let response = request.send().await.expect("request");
                let status = response.status();
                let body = response.bytes().await.expect("body");
                latencies.push(sent.elapsed());
                assert!(status.is_success(), "status {status}");
                assert!(!body.is_empty());
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("client task"));
    }
    let wall = started.elapsed();
    latencies.sort();
    Stats {
        requests: latencies.len(),
        wall,
        latencies,
    }
}

/// Ids of transactions a lender may still update (not completed, failed or canceled).
async fn updatable(http: &reqwest::Client, sandbox: &TestSandbox, token: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut start = 0;
    while ids.len() < 500 {
        let page: Vec<serde_json::Value> = http
            .get(sandbox.url(&format!("/partner/v2/transactions?start={start}&limit=50")))
            .bearer_auth(token)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("page");
        if page.is_empty() {
            break;
        }
        for transaction in &page {
            let status = transaction["status"].as_str().unwrap_or_default();
            if !matches!(status, "completed" | "failed" | "canceled") {
                ids.push(transaction["id"].as_str().expect("id").to_string());
            }
        }
        start += page.len();
    }
    assert!(!ids.is_empty(), "no updatable transactions");
    ids
}

const LIST: &str = "GET /partner/v2/transactions?sort=status,-created&start=N&limit=50";
const TOKEN: &str = "POST /oauth2/v1/token";
const UPDATE: &str = "PATCH /sandbox/v1/transactions/{id}";
const LIST_UNDER_WRITES: &str = "GET (same list) while 4 clients PATCH";

/// One mode's rows: (call, clients, stats).
async fn bench_mode(
    mode: &str,
    transactions: usize,
    per_client: usize,
    writes_per_client: usize,
    client_counts: &[usize],
) -> Vec<(&'static str, usize, Stats)> {
    let dir = match std::env::var("BENCH_DIR") {
        Ok(dir) => tempfile::tempdir_in(dir),
        Err(_) => tempfile::tempdir(),
    }
    .expect("temp dir");
    let data_file = (mode == "file").then(|| dir.path().join("sandbox.sqlite3"));
    let seeding = Instant::now();
    let sandbox = TestSandbox::start_with(SandboxConfig {
        demo: Some(DemoData { transactions }),
        data_file: data_file.clone(),
        data_key: Some(partner_sandbox::DataKey::generate()),
        ..SandboxConfig::default()
    })
    .await;
    println!(
        "[{mode}] seeded {transactions} transactions in {:.2} s{}",
        seeding.elapsed().as_secs_f64(),
        match &data_file {
            Some(path) => {
                let size =
                    |p: String| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
                format!(
                    " (data file {:.1} MB, WAL {:.1} MB)",
                    size(path.display().to_string()),
                    size(format!("{}-wal", path.display()))
                )
            }
            None => String::new(),
        }
    );
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(64)
        .build()
        .expect("client");
    let token = {
        let response = http
            .post(sandbox.url("/oauth2/v1/token"))
            .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
            .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
            .send()
            .await
            .expect("token");
        let body: serde_json::Value = response.json().await.expect("token body");
        body["access_token"]
            .as_str()
            .expect("access_token")
            .to_string()
    };
    let cold = Instant::now();
    let first = http
        .get(sandbox.url("/partner/v2/transactions?sort=status,-created&start=0&limit=50"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("first list");
    let total: usize = first.headers()["x-total-count"]
        .to_str()
        .expect("total")
        .parse()
        .expect("total");
    first.bytes().await.expect("first body");
    println!(
        "[{mode}] first sorted page (sort computed, cache empty): {:.1} ms",
        ms(cold.elapsed())
    );
    assert_eq!(total, transactions);
    let ids = Arc::new(updatable(&http, &sandbox, &token).await);

    let mut rows = Vec::new();
    for &clients in client_counts {
        let stats = run(
            &http,
            &sandbox,
            &token,
            Call::List { total },
            clients,
            per_client,
        )
        .await;
        rows.push((LIST, clients, stats));
    }
    for &clients in client_counts {
        let stats = run(
            &http,
            &sandbox,
            &token,
            Call::Token,
            clients,
            per_client / 2,
        )
        .await;
        rows.push((TOKEN, clients, stats));
    }
    for &clients in client_counts {
        let stats = run(
            &http,
            &sandbox,
            &token,
            Call::Update { ids: ids.clone() },
            clients,
            writes_per_client,
        )
        .await;
        rows.push((UPDATE, clients, stats));
    }
    // Readers beside writers: 4 list clients while 4 clients keep updating.
    {
        let stop = tokio_util::sync::CancellationToken::new();
        let mut writers = Vec::new();
        for _ in 0..4 {
            let http = http.clone();
            let base = sandbox.base_url().to_string();
            let ids = ids.clone();
            let stop = stop.clone();
            writers.push(tokio::spawn(async move {
                while !stop.is_cancelled() {
                    let (id, amount) = {
                        let mut rng = rand::rng();
                        (
                            ids[rng.random_range(0..ids.len())].clone(),
                            rng.random_range(1..10_000),
                        )
                    };
                    let response = http
                        .patch(format!("{base}/sandbox/v1/transactions/{id}"))
                        .json(&serde_json::json!({"loan": {"loanAmount": amount * 1000}}))
                        .send()
                        .await
                        .expect("update");
                    assert!(response.status().is_success());
                }
            }));
        }
        let stats = run(&http, &sandbox, &token, Call::List { total }, 4, per_client).await;
        stop.cancel();
        for writer in writers {
            writer.await.expect("writer");
        }
        rows.push((LIST_UNDER_WRITES, 4, stats));
    }
    sandbox.stop().await;
    rows
}

fn main() {
    let transactions: usize = env_or("BENCH_TRANSACTIONS", "100000")
        .parse()
        .expect("BENCH_TRANSACTIONS");
    let per_client: usize = env_or("BENCH_REQUESTS", "2000")
        .parse()
        .expect("BENCH_REQUESTS");
    let writes_per_client: usize = env_or("BENCH_WRITES", "1000")
        .parse()
        .expect("BENCH_WRITES");
    let client_counts: Vec<usize> = env_or("BENCH_CLIENTS", "1,4,16")
        .split(',')
        .map(|c| c.trim().parse().expect("BENCH_CLIENTS"))
        .collect();
    let modes: Vec<String> = env_or("BENCH_MODES", "memory,file")
        .split(',')
        .map(|m| m.trim().to_string())
        .collect();
    for mode in &modes {
        assert!(
            matches!(mode.as_str(), "memory" | "file"),
            "BENCH_MODES: memory, file"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let mut results = Vec::new();
        for mode in &modes {
            let rows = bench_mode(mode, transactions, per_client, writes_per_client, &client_counts).await;
            results.push((mode.clone(), rows));
        }
        println!();
        println!(
            "| mode | call | concurrent clients | requests | requests/s | p50 ms | p99 ms | max ms |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for (mode, rows) in &results {
            for (what, clients, stats) in rows {
                println!("{}", stats.row(mode, what, *clients));
            }
        }
        if let [(_, memory), (_, file)] = &results[..] {
            println!();
            println!("| call | concurrent clients | requests/s file/memory | p50 file/memory | p99 file/memory |");
            println!("|---|---|---|---|---|");
            for ((what, clients, m), (_, _, f)) in memory.iter().zip(file) {
                println!(
                    "| {what} | {clients} | {:.2} | {:.2} | {:.2} |",
                    f.rate() / m.rate(),
                    ms(f.percentile(0.5)) / ms(m.percentile(0.5)),
                    ms(f.percentile(0.99)) / ms(m.percentile(0.99)),
                );
            }
        }
    });
}

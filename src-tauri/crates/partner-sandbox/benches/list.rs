//! The list call and token issuance over loopback HTTP, with 100,000 transactions loaded.
//!
//! `cargo bench -p partner-sandbox --bench list` (env: `BENCH_TRANSACTIONS`, default 100000;
//! `BENCH_REQUESTS` per client, default 2000; `BENCH_CLIENTS`, default 1,4,16).
//! For each number of concurrent clients it prints requests/s and p50/p99/max latency of
//! `GET /partner/v2/transactions?sort=status,-created&start=N&limit=50` at random N, and of
//! `POST /oauth2/v1/token`. Latency is measured by the client, per request, end to end.

use partner_sandbox::{DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use rand::Rng;
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

    fn row(&self, what: &str, clients: usize) -> String {
        format!(
            "| {what} | {clients} | {} | {:.0} | {:.2} | {:.2} | {:.2} |",
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

#[derive(Clone, Copy)]
enum Call {
    List { total: usize },
    Token,
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
        let http = http.clone();
        let base = sandbox.base_url().to_string();
        let token = token.to_string();
        let id = sandbox.client_id().to_string();
        let secret = sandbox.client_secret().expose().to_string();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                let request = match call {
                    Call::List { total } => {
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

fn main() {
    let transactions: usize = env_or("BENCH_TRANSACTIONS", "100000")
        .parse()
        .expect("BENCH_TRANSACTIONS");
    let per_client: usize = env_or("BENCH_REQUESTS", "2000")
        .parse()
        .expect("BENCH_REQUESTS");
    let client_counts: Vec<usize> = env_or("BENCH_CLIENTS", "1,4,16")
        .split(',')
        .map(|c| c.trim().parse().expect("BENCH_CLIENTS"))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let seeding = Instant::now();
        let sandbox = TestSandbox::start_with(SandboxConfig {
            demo: Some(DemoData { transactions }),
            ..SandboxConfig::default()
        })
        .await;
        println!(
            "seeded {transactions} transactions in {:.2} s",
            seeding.elapsed().as_secs_f64()
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
            "first sorted page (sort computed, cache empty): {:.1} ms",
            ms(cold.elapsed())
        );
        assert_eq!(total, transactions);

        println!();
        println!(
            "| call | concurrent clients | requests | requests/s | p50 ms | p99 ms | max ms |"
        );
        println!("|---|---|---|---|---|---|---|");
        for &clients in &client_counts {
            let stats = run(
                &http,
                &sandbox,
                &token,
                Call::List { total },
                clients,
                per_client,
            )
            .await;
            println!(
                "{}",
                stats.row(
                    "GET /partner/v2/transactions?sort=status,-created&start=N&limit=50",
                    clients
                )
            );
        }
        for &clients in &client_counts {
            let stats = run(
                &http,
                &sandbox,
                &token,
                Call::Token,
                clients,
                per_client / 2,
            )
            .await;
            println!("{}", stats.row("POST /oauth2/v1/token", clients));
        }
        sandbox.stop().await;
    });
}

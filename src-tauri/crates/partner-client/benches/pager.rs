//! Walks all 100,000 sandbox transactions two ways in the same run: the client's pager (4 pages
//! in flight, order kept) and one sequential loop of plain reqwest calls (50 per page), both
//! deserialising every item into `partner_api::Transaction`. Loopback HTTP, real sandbox.
//!
//! `cargo bench -p partner-client --bench pager` (TRANSACTIONS=N and ROUNDS=N to change the size;
//! LATENCY_MS=N has the sandbox wait N ms before each partner API request, its latency control,
//! as a real network would; PAGE_SIZE=N for pages other than 50).

use futures::StreamExt;
use partner_api::{SortSpec, Transaction};
use partner_client::{ConnectionConfig, PagerOptions, PartnerClient};
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use std::time::{Duration, Instant};

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn pager_walk(
    client: &PartnerClient,
    sort: &SortSpec,
    concurrency: usize,
    page_size: u32,
) -> (usize, Duration) {
    let started = Instant::now();
    let mut stream = client
        .pager::<Transaction>(
            sort.clone(),
            PagerOptions {
                page_size,
                concurrency,
            },
        )
        .expect("a valid sort");
    let mut count = 0;
    while let Some(item) = stream.next().await {
        item.expect("a page");
        count += 1;
    }
    (count, started.elapsed())
}

async fn plain_loop(sandbox: &TestSandbox, sort: &SortSpec, page_size: u32) -> (usize, Duration) {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let token: serde_json::Value = http
        .post(sandbox.url("/oauth2/v1/token"))
        .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token body");
    let token = token["access_token"].as_str().expect("a token").to_string();
    let mut start = 0u64;
    let mut count = 0;
    loop {
        let mut query = vec![
            ("start", start.to_string()),
            ("limit", page_size.to_string()),
        ];
        if !sort.is_empty() {
            query.push(("sort", sort.to_string()));
        }
        let response = http
            .get(sandbox.url("/partner/v2/transactions"))
            .bearer_auth(&token)
            .query(&query)
            .send()
            .await
            .expect("a page");
        let total: u64 = response
            .headers()
            .get("x-total-count")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .expect("X-Total-Count");
        let items: Vec<Transaction> = response.json().await.expect("transactions");
        count += items.len();
        start += items.len() as u64;
        if items.is_empty() || start >= total {
            break;
        }
    }
    (count, started.elapsed())
}

fn summary(label: &str, runs: &mut [Duration], items: usize) {
    runs.sort();
    let median = runs[runs.len() / 2];
    let best = runs[0];
    println!(
        "{label:<44} median {:>8.1} ms  best {:>8.1} ms  {:>9.0} items/s (median)",
        median.as_secs_f64() * 1e3,
        best.as_secs_f64() * 1e3,
        items as f64 / median.as_secs_f64()
    );
}

fn main() {
    let transactions = env_number("TRANSACTIONS", 100_000);
    let rounds = env_number("ROUNDS", 3).max(1);
    let latency_ms = env_number("LATENCY_MS", 0);
    let page_size = env_number("PAGE_SIZE", 50).clamp(1, 50) as u32;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let loading = Instant::now();
        let sandbox = TestSandbox::start_with(SandboxConfig {
            clients: vec![ClientCredentials::generate()],
            demo: Some(DemoData { transactions }),
            ..SandboxConfig::default()
        })
        .await;
        println!(
            "sandbox with {transactions} transactions ready in {:.1} s",
            loading.elapsed().as_secs_f64()
        );
        if latency_ms > 0 {
            reqwest::Client::new()
                .post(sandbox.url("/sandbox/v1/latency"))
                .json(&serde_json::json!({ "milliseconds": latency_ms }))
                .send()
                .await
                .expect("the latency control")
                .error_for_status()
                .expect("latency set");
            let pages = transactions.div_ceil(page_size as usize);
            println!(
                "sandbox adds {latency_ms} ms per request: {pages} pages of {page_size} cost {:.2} s of latency one after another, {:.2} s at 4 in flight",
                (pages * latency_ms) as f64 / 1e3,
                (pages.div_ceil(4) * latency_ms) as f64 / 1e3
            );
        }
        let config = ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id(),
            sandbox.client_secret().clone(),
        )
        .expect("a config");
        let client = PartnerClient::new(config).expect("a client");
        let sorts = [
            ("natural order", SortSpec::default()),
            (
                "sort=status,-created",
                SortSpec::parse(
                    "status,-created",
                    <Transaction as partner_api::Sortable>::SORT_KEYS,
                )
                .expect("a sort"),
            ),
        ];
        for (sort_label, sort) in &sorts {
            // One untimed walk each warms the sandbox's sort cache and the connection pools.
            assert_eq!(plain_loop(&sandbox, sort, page_size).await.0, transactions);
            assert_eq!(pager_walk(&client, sort, 4, page_size).await.0, transactions);
            let mut plain = Vec::new();
            let mut pager = std::collections::BTreeMap::<usize, Vec<Duration>>::new();
            for _ in 0..rounds {
                let (n, elapsed) = plain_loop(&sandbox, sort, page_size).await;
                assert_eq!(n, transactions);
                plain.push(elapsed);
                for concurrency in [1, 4, 8] {
                    let (n, elapsed) = pager_walk(&client, sort, concurrency, page_size).await;
                    assert_eq!(n, transactions);
                    pager.entry(concurrency).or_default().push(elapsed);
                }
            }
            println!("-- {transactions} transactions, {sort_label}, {rounds} rounds");
            summary("plain reqwest loop, sequential", &mut plain, transactions);
            for (concurrency, runs) in pager.iter_mut() {
                summary(
                    &format!("pager, {concurrency} in flight"),
                    runs,
                    transactions,
                );
            }
        }
        sandbox.stop().await;
    });
}

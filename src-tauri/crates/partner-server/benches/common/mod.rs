//! What the workspace's benches share: a throwaway PostgreSQL with a workspace made by `init`,
//! a server on it, and the questions' timing (p50 and p95 of a call over HTTP).

// Not every bench uses every helper.
#![allow(dead_code, clippy::unwrap_used)]

pub mod generated_captures;

use partner_seal::DataKey;
use partner_server::database::{self, Pool};
use partner_server::intake::IntakeConfig;
use partner_server::{members, Role, RunningServer, ServerConfig};
use partner_testkit::postgres::Postgres;
use serde_json::Value;
use std::time::{Duration, Instant};

/// A workspace on its own PostgreSQL, gone with it.
pub struct Bench {
    _pg: Postgres,
    pub pool: Pool,
    pub key: DataKey,
}

impl Bench {
    pub async fn start() -> Self {
        let pg = tokio::task::spawn_blocking(Postgres::start)
            .await
            .unwrap()
            .unwrap();
        let url = pg.create_database("bench").unwrap();
        let pool = database::connect(&url, 16).await.unwrap();
        let key = DataKey::generate();
        database::init(&pool, &key).await.unwrap();
        Self { _pg: pg, pool, key }
    }

    /// A viewer's token.
    pub async fn viewer(&self) -> String {
        members::add(&self.pool, "bench", Role::Viewer, None)
            .await
            .unwrap()
            .expose()
            .to_string()
    }

    /// A server on the workspace: port 0, junk past 20 a second summarised, nothing pruned or
    /// synced on its own, plain HTTP.
    pub async fn server(&self) -> RunningServer {
        partner_server::start(
            self.pool.clone(),
            DataKey::from_hex(&self.key.to_hex()).unwrap(),
            ServerConfig {
                addr: "127.0.0.1:0".parse().unwrap(),
                intake: IntakeConfig::default(),
                junk_rate: Some(20),
                retention: partner_listener::Retention::default(),
                sync_every: None,
                tls: None,
            },
        )
        .await
        .unwrap()
    }

    pub async fn server_version(&self) -> String {
        sqlx::query_scalar("SHOW server_version")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }
}

/// The `p` quantile of sorted times.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// Asks `body` of `url` `runs` times as `token` and prints its p50 and p95 beside `name`, with
/// what `summary` makes of the last answer.
pub async fn ask(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    body: &Value,
    runs: usize,
    summary: impl Fn(&Value) -> Value,
) {
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut said = Value::Null;
    for _ in 0..runs {
        let started = Instant::now();
        let response = client
            .post(url)
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{name}");
        let answer: Value = response.json().await.unwrap();
        times.push(started.elapsed());
        said = summary(&answer);
    }
    times.sort();
    let ms = |p: f64| percentile(&times, p).as_secs_f64() * 1000.0;
    println!(
        "  {name:<42} p50 {:>7.1} ms  p95 {:>7.1} ms  {said}",
        ms(0.5),
        ms(0.95)
    );
}

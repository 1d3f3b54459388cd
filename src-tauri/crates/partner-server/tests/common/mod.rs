//! A team for the tests: a throwaway PostgreSQL (partner-testkit) with a workspace made by
//! `init`, its first admin's token, and servers started on it over real HTTP.

// Not every test file uses every helper.
#![allow(dead_code, clippy::unwrap_used)]

use partner_seal::DataKey;
use partner_server::database::{self, Pool};
use partner_server::intake::IntakeConfig;
use partner_server::tls::TlsConfig;
use partner_server::{members, Role, RunningServer, ServerConfig};
use partner_testkit::postgres::Postgres;
use serde_json::Value;

pub struct Team {
    _pg: Postgres,
    pub pool: Pool,
    pub key: DataKey,
    pub admin: String,
}

impl Team {
    pub async fn new() -> Self {
        let pg = tokio::task::spawn_blocking(Postgres::start)
            .await
            .unwrap()
            .unwrap();
        let url = pg.create_database("team").unwrap();
        let pool = database::connect(&url, 8).await.unwrap();
        let key = DataKey::generate();
        let report = database::init(&pool, &key).await.unwrap();
        let admin = report.admin_token.unwrap().expose().to_string();
        Self {
            _pg: pg,
            pool,
            key,
            admin,
        }
    }

    pub async fn server(&self) -> RunningServer {
        self.server_with(None).await
    }

    /// A server speaking HTTPS with `tls`, or plain HTTP.
    pub async fn server_with(&self, tls: Option<TlsConfig>) -> RunningServer {
        self.server_configured(ServerConfig { tls, ..config() })
            .await
    }

    /// A server run as `config` says.
    pub async fn server_configured(&self, config: ServerConfig) -> RunningServer {
        partner_server::start(
            self.pool.clone(),
            DataKey::from_hex(&self.key.to_hex()).unwrap(),
            config,
        )
        .await
        .unwrap()
    }

    pub async fn member(&self, name: &str, role: Role) -> String {
        members::add(&self.pool, name, role, Some("test"))
            .await
            .unwrap()
            .expose()
            .to_string()
    }
}

/// A workspace call: `GET` without a body, else `method` with it as JSON. The status and the
/// answer's JSON (null when it has none).
pub async fn call_as(
    server: &RunningServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let url = format!("http://{}{path}", server.local_addr);
    let mut request = reqwest::Client::new()
        .request(method, url)
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The tests' server: port 0, the listener's intake, junk past 20 a second summarised, no
/// retention, no scheduled sync, plain HTTP.
pub fn config() -> ServerConfig {
    ServerConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        intake: IntakeConfig::default(),
        junk_rate: Some(20),
        retention: partner_listener::Retention::default(),
        sync_every: None,
        tls: None,
    }
}

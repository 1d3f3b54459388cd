//! What every test needs: a sandbox, a client whose clock moves with the sandbox's, and the
//! captured log output of the whole process (client and in-process sandbox alike).

use partner_api::Secret;
use partner_client::{ConnectionConfig, ManualClock, PartnerClient};
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Every log line of the process at TRACE level, from the first test that asked for it.
static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the capturing subscriber once for the whole test binary.
pub fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Capture(buffer.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        buffer
    });
}

/// Everything logged so far.
pub fn logs() -> String {
    let buffer = LOGS.get().expect("capture_logs() was called");
    String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned()
}

/// How many times the sandbox logged that it issued a token to `client_id`.
pub fn issuances_logged(client_id: &str) -> usize {
    logs()
        .lines()
        .filter(|line| line.contains("access token issued") && line.contains(client_id))
        .count()
}

pub struct Setup {
    pub sandbox: TestSandbox,
    pub client: PartnerClient,
    pub clock: Arc<ManualClock>,
}

impl Setup {
    /// A sandbox with no data and a client for its demo client.
    pub async fn empty() -> Self {
        Self::with_config(SandboxConfig {
            allow_http_callbacks: true,
            clients: vec![ClientCredentials::generate()],
            ..SandboxConfig::default()
        })
        .await
    }

    /// A sandbox with demo data: products and `transactions` transactions.
    pub async fn demo(transactions: usize) -> Self {
        Self::with_config(SandboxConfig {
            allow_http_callbacks: true,
            clients: vec![ClientCredentials::generate()],
            demo: Some(DemoData { transactions }),
            ..SandboxConfig::default()
        })
        .await
    }

    pub async fn with_config(config: SandboxConfig) -> Self {
        capture_logs();
        let sandbox = TestSandbox::start_with(config).await;
        let clock = Arc::new(ManualClock::new());
        let client = client_for(&sandbox, clock.clone());
        Self {
            sandbox,
            client,
            clock,
        }
    }

    pub fn client_id(&self) -> &str {
        self.sandbox.client_id()
    }

    /// Moves the sandbox's clock (over HTTP, as a person would) and the client's together.
    pub async fn advance(&self, by: Duration) {
        advance_sandbox(&self.sandbox, by).await;
        self.clock.advance(by);
    }
}

pub fn client_for(sandbox: &TestSandbox, clock: Arc<ManualClock>) -> PartnerClient {
    let config = ConnectionConfig::new(
        sandbox.base_url(),
        sandbox.client_id(),
        sandbox.client_secret().clone(),
    )
    .unwrap();
    PartnerClient::with_clock(config, clock).unwrap()
}

/// `POST /sandbox/v1/clock/advance`, and nothing else.
pub async fn advance_sandbox(sandbox: &TestSandbox, by: Duration) {
    let response = reqwest::Client::new()
        .post(sandbox.url("/sandbox/v1/clock/advance"))
        .json(&serde_json::json!({ "seconds": by.as_secs() }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "clock advance");
}

/// Revokes a token directly at the service, behind the client's back.
pub async fn revoke_at_service(sandbox: &TestSandbox, token: &Secret) {
    let response = reqwest::Client::new()
        .post(sandbox.url("/oauth2/v1/token/revocation"))
        .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
        .form(&[("token", token.expose())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204, "revocation");
}

/// Introspects a token directly at the service: `Some(active)` or `None` for a 401.
pub async fn introspect_at_service(sandbox: &TestSandbox, token: &Secret) -> Option<bool> {
    let response = reqwest::Client::new()
        .post(sandbox.url("/oauth2/v1/token/introspection"))
        .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
        .form(&[("token", token.expose())])
        .send()
        .await
        .unwrap();
    if response.status() == 401 {
        return None;
    }
    let body: serde_json::Value = response.json().await.unwrap();
    body["active"].as_bool()
}

/// The sandbox's strict record of what the client read as a tolerant view. Our sandbox writes
/// every field of its records, so its documents read as them too; tests against the sandbox
/// compare whole records this way (tests against the other service read the views).
pub trait Strict {
    type Record;
    fn strict(&self) -> Self::Record;
}

fn as_record<R: serde::de::DeserializeOwned>(value: serde_json::Value) -> R {
    serde_json::from_value(value).expect("the sandbox writes whole records")
}

impl Strict for partner_api::read::Document<partner_api::read::ProductView> {
    type Record = partner_api::Product;
    fn strict(&self) -> Self::Record {
        as_record(serde_json::Value::Object(self.raw().clone()))
    }
}

impl Strict for partner_api::read::Document<partner_api::read::TransactionView> {
    type Record = partner_api::Transaction;
    fn strict(&self) -> Self::Record {
        as_record(serde_json::Value::Object(self.raw().clone()))
    }
}

impl Strict for partner_api::read::Document<partner_api::read::EventView> {
    type Record = partner_api::TransactionEvent;
    fn strict(&self) -> Self::Record {
        as_record(serde_json::Value::Object(self.raw().clone()))
    }
}

impl Strict for partner_api::read::SubscriptionView {
    type Record = partner_api::WebhookSubscription;
    fn strict(&self) -> Self::Record {
        as_record(serde_json::to_value(self).expect("a subscription serialises"))
    }
}

impl<T: Strict> Strict for Vec<T> {
    type Record = Vec<T::Record>;
    fn strict(&self) -> Self::Record {
        self.iter().map(Strict::strict).collect()
    }
}

impl<T: Strict> Strict for partner_client::Page<T> {
    type Record = partner_client::Page<T::Record>;
    fn strict(&self) -> Self::Record {
        partner_client::Page {
            items: self.items.strict(),
            total: self.total,
            start: self.start,
            limit: self.limit,
        }
    }
}

/// The partner's answer with `status`, a partner status and a reference number.
pub fn answer(status: partner_api::ResponseStatus) -> partner_api::TransactionResponse {
    partner_api::TransactionResponse {
        status,
        partner_status: Some("Ordered".into()),
        reference_number: Some("R-1".into()),
        responding_party: None,
        loan: None,
        resources: None,
        errors: None,
    }
}

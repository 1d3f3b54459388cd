//! Starting a real listener on port 0 with a temporary store, and sending signed notifications.

use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{Listener, ListenerConfig, MemoryKeys, Retention, Store};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::oneshot;

pub const SUB: &str = "sub-1";
pub const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@";
pub const OTHER_KEY: &str = "Zyxwvutsrqponmlkjihgfedcba9876#$";

pub struct Running {
    pub listener: Listener,
    pub keys: Arc<MemoryKeys>,
    pub addr: SocketAddr,
    /// `http://127.0.0.1:PORT/webhooks`
    pub url: String,
    pub _dir: tempfile::TempDir,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

pub async fn start(config: ListenerConfig) -> Running {
    start_with(config, Retention::default()).await
}

pub async fn start_with(config: ListenerConfig, retention: Retention) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("captures.sqlite3"), retention).unwrap();
    let keys = Arc::new(MemoryKeys::new());
    keys.insert(SUB, KEY);
    let path = config.path.clone();
    let listener = Listener::new(config, store, keys.clone()).unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let serving = listener.clone();
    let task = tokio::spawn(async move {
        serving
            .serve(tcp, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
    });
    Running {
        listener,
        keys,
        addr,
        url: format!("http://{addr}{path}"),
        _dir: dir,
        shutdown: Some(tx),
        task: Some(task),
    }
}

/// A notification body as the service writes it (compact JSON, field order of the spec).
pub fn body(event_id: &str, resource_type: &str) -> Vec<u8> {
    format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"{event_id}","resourceType":"{resource_type}","resourceRef":"https://svc.example/partner/v2/transactions/t1"}}}}"#
    )
    .into_bytes()
}

pub fn tx_body(event_id: &str) -> Vec<u8> {
    body(event_id, "urn:svc:partner:transaction")
}

pub async fn post_signed(
    client: &reqwest::Client,
    url: &str,
    sub: &str,
    key: &str,
    body: Vec<u8>,
) -> reqwest::Response {
    let signature = signature::sign(key.as_bytes(), &body);
    client
        .post(url)
        .header(SUBSCRIPTION_HEADER, sub)
        .header(SIGNATURE_HEADER, signature)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

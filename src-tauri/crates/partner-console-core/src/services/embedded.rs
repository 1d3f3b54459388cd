//! The embedded sandbox: `partner-sandbox` started in-process on loopback, always in the
//! connections list, keeping its data in the data folder (`embedded-sandbox.sqlite3`) so a demo
//! prepared yesterday is still there; "Reset sandbox" starts it again from the demo data.
//!
//! It signs in with a client of its own (`console-embedded`), whose secret is kept in the
//! keychain and handed to the sandbox at each start (the sandbox keeps only a digest of it).
//! At first run its first demo product is subscribed to the listener for both resource types
//! (keys generated, kept in the keychain), so notifications arrive verified with no set-up.
//! The Demo screen plays the sandbox's lender over its own `/sandbox/v1/` HTTP endpoints, and
//! moves its clock in-process.

use crate::bridge::{ConnectionView, DemoOutcome};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::state::{AppState, Inner};
use chrono::{DateTime, Utc};
use partner_api::{
    EventType, NewEvent, NewTransaction, ResourceType, Secret, Transaction, TransactionEvent,
    TransactionUpdate,
};
use partner_client::{ConnectionConfig, PageRequest, PartnerClient, SecretSlot};
use partner_local::settings::EMBEDDED_CONNECTION_ID;
use partner_sandbox::{ClientCredentials, DemoData, Sandbox, SandboxConfig, SandboxHandle};
use std::sync::Arc;
use std::time::Duration;

/// Transactions seeded into the embedded sandbox (enough to make paging and sorting real).
pub const DEMO_TRANSACTIONS: usize = 240;
pub use crate::bridge::EMBEDDED_CLIENT_ID as CLIENT_ID;
pub use crate::state::Embedded;

/// The embedded sandbox's row in the connections list, running or not.
pub fn view(inner: &Inner) -> ConnectionView {
    ConnectionView::embedded(inner.embedded.as_ref().map(|e| e.sandbox.base_url()))
}

/// The sandbox clock as the client's clock, so token deadlines follow "advance clock".
#[derive(Debug)]
struct SandboxTime(partner_sandbox::Clock);

impl partner_client::Clock for SandboxTime {
    fn now(&self) -> DateTime<Utc> {
        self.0.now()
    }
}

/// The keychain slot of the embedded client's secret (its base URL changes when its port is taken,
/// so the slot is named for the sandbox, not its address).
fn secret_slot() -> SecretSlot {
    SecretSlot::ClientSecret {
        base_url: EMBEDDED_CONNECTION_ID.into(),
        client_id: CLIENT_ID.into(),
    }
}

/// The embedded client's secret: the keychain's, or a new one kept there. When the keychain
/// does not answer, a new secret for this run (the sandbox takes whatever secret it is
/// started with for this client, so its data stays reachable).
fn client_secret(state: &AppState) -> Secret {
    let slot = secret_slot();
    if let Ok(Some(secret)) = state.secrets.get(&slot) {
        return secret;
    }
    let fresh = ClientCredentials::generate().client_secret;
    if let Err(error) = state.secrets.set(&slot, &fresh) {
        tracing::warn!(%error, "the embedded sandbox's client secret is kept for this run only");
    }
    fresh
}

/// The data file of the embedded sandbox.
pub fn data_file(state: &AppState) -> std::path::PathBuf {
    state.data_dir.join(partner_local::paths::EMBEDDED_SANDBOX)
}

/// The sandbox's loopback socket: on the port it took at its first start (kept in the
/// settings), so its base URL, named in captures and in its support copy's name, stays the
/// same from run to run. When that port is taken by another program, a new one, remembered in
/// its place (and the log says so).
async fn loopback_socket(state: &AppState) -> Result<tokio::net::TcpListener> {
    let remembered = state.lock().settings.embedded_sandbox_port;
    if let Some(port) = remembered {
        match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(socket) => return Ok(socket),
            Err(error) => tracing::warn!(
                port,
                %error,
                "the embedded sandbox's port is taken; it moves to another (captures of earlier runs name the old one)"
            ),
        }
    }
    let socket = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Could not open a loopback port for the sandbox: {e}."),
                "Restart the app.",
            )
        })?;
    let port = socket.local_addr().map(|a| a.port()).ok();
    if port.is_some() && port != remembered {
        if let Err(error) = crate::services::settings::update(state, |s| {
            s.embedded_sandbox_port = port;
        }) {
            tracing::warn!(%error, "the embedded sandbox's port is not remembered");
        }
    }
    Ok(socket)
}

/// Starts the embedded sandbox unless it runs, and returns its client (signed in). Starts are
/// one at a time, so two quick switches cannot start two sandboxes on one data file.
pub async fn ensure_started(app: &Console) -> Result<PartnerClient> {
    let state = app.state();
    let _one_at_a_time = state.embedded_start.lock().await;
    if let Some(embedded) = &state.lock().embedded {
        return Ok(embedded.client.clone());
    }
    let secret = tokio::task::spawn_blocking({
        let app = app.clone();
        move || client_secret(app.state())
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("A start-up task failed: {e}."),
            "Restart the app.",
        )
    })?;
    partner_local::paths::create_private_dir(&state.data_dir).map_err(|e| {
        AppError::new(
            ErrorKind::Io,
            format!("{e}."),
            "Check the data folder's permissions.",
        )
    })?;
    // The data file is encrypted with the console's data key.
    let data_key = crate::services::data_key::resolved(state).await?;
    let config = SandboxConfig {
        clients: vec![ClientCredentials::new(CLIENT_ID, secret)],
        demo: Some(DemoData {
            transactions: DEMO_TRANSACTIONS,
        }),
        allow_http_callbacks: true,
        data_file: Some(data_file(state)),
        data_key: Some(data_key.key.clone()),
        ..SandboxConfig::default()
    };
    let socket = loopback_socket(state).await?;
    let sandbox = Sandbox::start(config, socket).await.map_err(|e| {
        // Which key was tried, and where it lives (never the key).
        let key_note = match &e {
            partner_sandbox::Error::DataFileKey { .. } => {
                format!(" (the data key is in {})", data_key.home)
            }
            _ => String::new(),
        };
        AppError::new(
            ErrorKind::Internal,
            format!("The embedded sandbox did not start: {e}{key_note}."),
            "Use Reset sandbox in Connections to start it again from the demo data, or add a real connection meanwhile.",
        )
    })?;
    crate::milestones::milestone("sandbox started");
    let connection = config_of(&sandbox)?;
    let client =
        PartnerClient::with_clock(connection, Arc::new(SandboxTime(sandbox.clock().clone())))?;
    state.lock().embedded = Some(Embedded {
        client: client.clone(),
        sandbox: Arc::new(sandbox),
    });
    client.tokens().ensure_fresh().await?;
    crate::milestones::milestone("token issued");
    Ok(client)
}

/// The embedded sandbox's connection: its address and its demo client.
fn config_of(sandbox: &SandboxHandle) -> Result<ConnectionConfig> {
    let demo = sandbox.demo_client();
    Ok(ConnectionConfig::new(
        sandbox.base_url(),
        demo.client_id.clone(),
        demo.client_secret.clone(),
    )?)
}

/// The running embedded sandbox's connection (what "Check connection" checks).
pub fn client_config(state: &AppState) -> Result<ConnectionConfig> {
    let sandbox = state
        .lock()
        .embedded
        .as_ref()
        .map(|e| e.sandbox.clone())
        .ok_or_else(|| AppError::invalid("The embedded sandbox is not running."))?;
    config_of(&sandbox)
}

/// Points the first demo product at the listener, for transactions and for their events.
/// Returns the product's name (`None` when the sandbox has no product).
pub async fn subscribe_demo_product(
    state: &AppState,
    client: &PartnerClient,
    listener_url: &str,
) -> Result<Option<String>> {
    let listener_url = listener_url.to_string();
    // The first product in the Products screen's default order (by listing name).
    let by_listing_name = partner_api::SortSpec::parse(
        "listingName",
        <partner_api::Product as partner_api::Sortable>::SORT_KEYS,
    )
    .map_err(|e| AppError::invalid(format!("{e}.")))?;
    let first = PageRequest::new(0, 1)
        .map_err(|e| AppError::invalid(format!("{e}.")))?
        .sorted(by_listing_name);
    let Some(product) = client.list_products(&first).await?.items.into_iter().next() else {
        return Ok(None);
    };
    for (events, resource) in [
        (
            vec![EventType::Created, EventType::Updated],
            ResourceType::Transaction,
        ),
        (vec![EventType::Created], ResourceType::TransactionEvent),
    ] {
        // A run that failed half-way (the keychain locked, say) may have made the first one;
        // running again, after the user dealt with the cause, only adds what is missing.
        let already = product.webhooks.iter().any(|w| {
            w.url.as_deref() == Some(listener_url.as_str())
                && w.resource.as_ref().and_then(|r| r.known()) == Some(resource)
        });
        if already {
            continue;
        }
        let subscription = partner_client::NewSubscription {
            url: listener_url.clone(),
            events,
            resource,
        };
        crate::services::subscriptions::subscribe(client, state, &product.id, &subscription, None)
            .await?;
    }
    Ok(Some(product.display_name().to_owned()))
}

/// The embedded sandbox, when it is the active connection (the Demo screen needs it).
pub fn active_sandbox(state: &AppState) -> Result<Arc<SandboxHandle>> {
    let inner = state.lock();
    match (&inner.embedded, &inner.active) {
        (Some(embedded), Some(active)) if active.view.id == EMBEDDED_CONNECTION_ID => {
            Ok(embedded.sandbox.clone())
        }
        _ => Err(AppError::new(
            ErrorKind::InvalidInput,
            "The demo plays the lender of the embedded sandbox only.",
            "Switch to the embedded sandbox in Connections.",
        )),
    }
}

/// The lender's side of the embedded sandbox (its `/sandbox/v1/…` endpoints, open on loopback),
/// through the one client of them, and the answer read as `T`.
pub(crate) async fn lender<T: serde::de::DeserializeOwned>(
    state: &AppState,
    sandbox: &SandboxHandle,
    call: impl AsyncFnOnce(partner_client::SandboxControl) -> partner_client::Result<serde_json::Value>,
) -> Result<T> {
    let mut control = partner_client::SandboxControl::new(sandbox.base_url(), None)?;
    // Kept in the embedded connection's call log, so the Calls panel shows them.
    if let Some(log) = state
        .lock()
        .embedded
        .as_ref()
        .map(|e| e.client.calls().clone())
    {
        control = control.with_call_log(&log);
    }
    let answer = call(control).await?;
    serde_json::from_value(answer).map_err(|e| {
        AppError::new(
            ErrorKind::Server,
            format!("The sandbox answered something unexpected: {e}."),
            "Try again.",
        )
    })
}

pub(crate) fn outcome(
    sandbox: &SandboxHandle,
    message: String,
    transaction_id: Option<String>,
) -> DemoOutcome {
    DemoOutcome {
        message,
        transaction_id,
        sandbox_now: sandbox.clock().now().to_rfc3339(),
    }
}

pub async fn new_transaction(state: &AppState, product_id: String) -> Result<DemoOutcome> {
    let sandbox = active_sandbox(state)?;
    let body = NewTransaction {
        product_id,
        request_type: "NEW_REQUEST".into(),
        loan: Some(
            serde_json::json!({ "loanNumber": format!("DEMO-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]), "amount": 325_000 }),
        ),
        options: None,
    };
    let created: Transaction =
        lender(state, &sandbox, async |c| c.create_transaction(&body).await).await?;
    Ok(outcome(
        &sandbox,
        format!(
            "The lender created transaction {} on {}.",
            created.id, created.product.name
        ),
        Some(created.id),
    ))
}

pub async fn update_transaction(state: &AppState, transaction_id: String) -> Result<DemoOutcome> {
    let sandbox = active_sandbox(state)?;
    let body = TransactionUpdate {
        loan: Some(serde_json::json!({ "amount": 340_000, "note": "amount revised" })),
        options: None,
    };
    let updated: Transaction = lender(state, &sandbox, async |c| {
        c.update_transaction(&transaction_id, &body).await
    })
    .await?;
    Ok(outcome(
        &sandbox,
        format!("The lender updated transaction {}.", updated.id),
        Some(updated.id),
    ))
}

pub async fn custom_event(
    state: &AppState,
    transaction_id: String,
    text: String,
) -> Result<DemoOutcome> {
    let sandbox = active_sandbox(state)?;
    let body = NewEvent {
        event_type: "urn:demo:lender:note".into(),
        text,
        comments: None,
    };
    let event: TransactionEvent = lender(state, &sandbox, async |c| {
        c.add_event(&transaction_id, &body).await
    })
    .await?;
    Ok(outcome(
        &sandbox,
        format!(
            "The lender added event “{}” to {transaction_id}.",
            event.text
        ),
        Some(transaction_id),
    ))
}

pub fn advance_clock(state: &AppState, minutes: u32) -> Result<DemoOutcome> {
    let sandbox = active_sandbox(state)?;
    if minutes == 0 || minutes > 24 * 60 {
        return Err(AppError::invalid(
            "Advance the clock by 1 minute to 24 hours.",
        ));
    }
    sandbox
        .clock()
        .advance(Duration::from_secs(u64::from(minutes) * 60));
    Ok(outcome(
        &sandbox,
        format!("The sandbox clock moved {minutes} min ahead."),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use partner_client::{ClientError, MemoryStore, SecretSlot, SecretStore};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A keychain that refuses to store anything once it has stored `writes_left` secrets, as
    /// one locked part-way through a run would.
    #[derive(Debug)]
    struct LockingKeychain {
        inner: MemoryStore,
        writes_left: AtomicU32,
    }

    impl SecretStore for LockingKeychain {
        fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<partner_api::Secret>> {
            self.inner.get(slot)
        }

        fn set(
            &self,
            slot: &SecretSlot,
            value: &partner_api::Secret,
        ) -> partner_client::Result<()> {
            let allowed = self
                .writes_left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if !allowed {
                return Err(ClientError::Keychain {
                    message: "Cannot create an item in a locked collection".into(),
                });
            }
            self.inner.set(slot, value)
        }

        fn delete(&self, slot: &SecretSlot) -> partner_client::Result<()> {
            self.inner.delete(slot)
        }
    }

    #[tokio::test]
    async fn a_demo_subscription_run_again_adds_only_what_a_failed_run_left_out() {
        let sandbox = partner_testkit::TestSandbox::start_demo().await;
        let config = ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id().to_string(),
            sandbox.client_secret().clone(),
        )
        .expect("config");
        let client = PartnerClient::new(config).expect("client");
        // A new subscription's key is written twice (a pending slot, then its own), so the
        // keychain takes the first subscription and refuses the second.
        let keychain = Arc::new(LockingKeychain {
            inner: MemoryStore::new(),
            writes_left: AtomicU32::new(2),
        });
        let dir = std::env::temp_dir().join(format!("partner-demo-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("data dir");
        let state = crate::state::headless_state(dir.clone(), keychain.clone());
        let listener_url = "http://127.0.0.1:9/webhooks".to_string();
        let to_listener = |product: &partner_api::Product| -> Vec<ResourceType> {
            product
                .webhooks
                .iter()
                .filter(|w| w.url == listener_url)
                .map(|w| w.resource)
                .collect()
        };

        let failed = subscribe_demo_product(&state, &client, &listener_url).await;
        assert_eq!(
            failed.expect_err("the keychain locked").kind,
            ErrorKind::Keychain
        );
        let products = client
            .list::<partner_api::Product>(&PageRequest::new(0, 50).expect("page"))
            .await
            .expect("products")
            .items;
        let demo = products
            .iter()
            .find(|p| !to_listener(p).is_empty())
            .expect("the first run subscribed one resource");
        assert_eq!(to_listener(demo), vec![ResourceType::Transaction]);

        keychain.writes_left.store(u32::MAX, Ordering::SeqCst);
        let name = subscribe_demo_product(&state, &client, &listener_url)
            .await
            .expect("the run after the unlock");
        assert_eq!(name.as_deref(), Some(demo.listing_name.as_str()));
        subscribe_demo_product(&state, &client, &listener_url)
            .await
            .expect("a third run");
        let demo = client
            .get_product_as::<partner_api::Product>(&demo.id)
            .await
            .expect("the product");
        assert_eq!(
            to_listener(&demo),
            vec![ResourceType::Transaction, ResourceType::TransactionEvent],
            "one subscription per resource, none twice"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

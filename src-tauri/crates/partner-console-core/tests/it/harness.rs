//! A console without a window, started as the app starts it.
use partner_console_core::bridge::{AppStatus, StartupPhase, StepPhase};
use partner_console_core::services::startup;
use partner_console_core::state::headless_state;
use partner_console_core::{AppEvent, Console, FolderDialogs, RecordingSink};
use partner_testkit::other_service::OtherService;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub struct Headless {
    pub console: Console,
    /// The keychain, kept across a [`Headless::restart`].
    secrets: Arc<partner_client::MemoryStore>,
    pub sink: Arc<RecordingSink>,
    /// Where the dialogs save and open files.
    pub dialogs: PathBuf,
    _dir: tempfile::TempDir,
}

impl Headless {
    /// Starts the console as the app's first run does: the listener and the embedded sandbox,
    /// then (in the background) the demo product's subscription to the listener.
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_in(dir, Arc::new(partner_client::MemoryStore::new())).await
    }

    /// Quits the console and starts it again on the same data folder and keychain, as a
    /// second run of the app does.
    pub async fn restart(self) -> Self {
        self.restart_holding(|| ()).await.0
    }

    /// [`Headless::restart`], with `hold` run between the quit and the start (to take a port
    /// the app used, say); what it returns is kept until the caller drops it.
    pub async fn restart_holding<T>(self, hold: impl FnOnce() -> T) -> (Self, T) {
        let Self {
            console,
            secrets,
            _dir: dir,
            ..
        } = self;
        console.shutdown.cancel();
        startup::stop(console).await;
        let held = hold();
        (Self::start_in(dir, secrets).await, held)
    }

    async fn start_in(dir: tempfile::TempDir, secrets: Arc<partner_client::MemoryStore>) -> Self {
        let dialogs = dir.path().join("dialogs");
        std::fs::create_dir_all(&dialogs).expect("dialog folder");
        let state = headless_state(dir.path().join("data"), secrets.clone());
        let sink = RecordingSink::new();
        let console = Console::new(
            state,
            sink.clone(),
            Arc::new(FolderDialogs {
                folder: dialogs.clone(),
            }),
            tokio::runtime::Handle::current(),
        );
        startup::first_run(console.clone()).await;
        assert_eq!(
            console.phase(),
            StartupPhase::Ready,
            "{:?}",
            console.status()
        );
        Self {
            console,
            secrets,
            sink,
            dialogs,
            _dir: dir,
        }
    }

    /// Waits until the demo product is subscribed to the listener (it runs after start-up).
    pub async fn demo_subscribed(&self) -> AppStatus {
        self.wait_for("the demo subscription", || {
            let status = self.console.status();
            match status.demo_subscription.as_ref().map(|d| d.phase) {
                Some(StepPhase::Done) => Some(status),
                Some(StepPhase::Failed) => panic!("the demo subscription failed: {status:?}"),
                _ => None,
            }
        })
        .await
    }

    /// The id of the demo product subscribed to the listener at start-up (waits for it).
    pub async fn demo_product(&self) -> String {
        let name = self
            .demo_subscribed()
            .await
            .demo_subscription
            .and_then(|d| d.product_name)
            .expect("a subscribed product");
        let client = self.console.client().expect("client");
        let products = client
            .list_products(&partner_client::PageRequest::new(0, 50).expect("a page"))
            .await
            .expect("products");
        products
            .items
            .into_iter()
            .find(|p| p.listing_name.as_deref() == Some(name.as_str()))
            .map(|p| p.id.clone())
            .expect("the product")
    }

    /// The first capture the window was told of about `resource_id` (waits for it).
    pub async fn capture_of(
        &self,
        resource_id: &str,
    ) -> partner_console_core::bridge::CaptureSummary {
        self.wait_for("its notification in the window", || {
            self.events(|e| match e {
                AppEvent::Captures(batch) => Some(batch.captures.clone()),
                _ => None,
            })
            .into_iter()
            .flatten()
            .find(|c| c.resource_id == resource_id)
        })
        .await
    }

    /// Waits (up to 20 s) until `check` gives a value.
    pub async fn wait_for<T>(&self, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(value) = check() {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: not there after 20 s; events: {:?}",
                self.sink.names()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The events of one kind so far.
    pub fn events<T>(&self, pick: impl Fn(&AppEvent) -> Option<T>) -> Vec<T> {
        self.sink.events().iter().filter_map(pick).collect()
    }

    /// Adds `service` as a saved connection, signed in with its own secret, and makes it the
    /// active one.
    pub async fn connect_to(&self, service: &OtherService) {
        let secret = service.client_secret().expose().to_string();
        partner_console_core::services::connections::add(
            &self.console,
            form(other_service_connection(service, &secret)),
        )
        .await
        .expect("signed in");
    }

    /// The inspector's first page of captures, newest first, with their count.
    /// A new transaction of the lender's on the demo product, and the service's notification of
    /// it as the inspector lists it (waits for it).
    pub async fn new_transaction_notified(
        &self,
    ) -> (String, partner_console_core::bridge::CaptureSummary) {
        let product = self.demo_product().await;
        let transaction =
            partner_console_core::services::embedded::new_transaction(&self.console, product)
                .await
                .expect("the lender's transaction")
                .transaction_id
                .expect("its id");
        self.capture_of(&transaction).await;
        let notified = self
            .inspector()
            .await
            .items
            .into_iter()
            .find(|c| c.resource_id == transaction && !c.replayed)
            .expect("the service's notification");
        (transaction, notified)
    }

    pub async fn inspector(&self) -> partner_console_core::bridge::InspectorPage {
        partner_console_core::services::captures::page(
            &self.console,
            form(serde_json::json!({
                "filter": {"verdict": null, "eventType": null, "resourceType": null,
                           "subscriptionId": null, "since": null, "until": null, "text": null},
                "grouped": false, "offset": 0, "limit": 50, "countPastPage": true
            })),
        )
        .await
        .expect("a page")
    }

    /// Stops it as quitting the app does.
    pub async fn stop(self) {
        self.console.shutdown.cancel();
        startup::stop(self.console.clone()).await;
    }
}

/// A bridge form from its JSON, as the UI sends it.
pub fn form<T: serde::de::DeserializeOwned>(json: serde_json::Value) -> T {
    serde_json::from_value(json).expect("a valid form")
}

/// The Add-connection form for `service`, with `secret` as the client secret.
pub fn other_service_connection(service: &OtherService, secret: &str) -> serde_json::Value {
    serde_json::json!({
        "label": "Other service",
        "baseUrl": service.base_url(),
        "clientId": service.client_id(),
        "clientSecret": secret,
        "environment": "sandbox",
    })
}

//! Start-up, the status the window follows, connections, the token and quitting.
use crate::harness::{form, Headless};
use partner_console_core::bridge::StartupPhase;
use partner_console_core::services::{connections, startup};
use partner_console_core::AppEvent;
use partner_local::settings::EMBEDDED_CONNECTION_ID;

#[tokio::test]
async fn start_up_opens_the_embedded_sandbox_and_subscribes_its_demo_product_to_the_listener() {
    let app = Headless::start().await;
    let status = app.demo_subscribed().await;
    assert_eq!(status.phase, StartupPhase::Ready);
    assert_eq!(
        status.active.as_ref().map(|a| a.id.as_str()),
        Some(EMBEDDED_CONNECTION_ID)
    );
    assert!(status.listener.running, "{status:?}");
    assert!(status.embedded_sandbox.is_some());
    assert!(status.demo_subscription.unwrap().product_name.is_some());
    // Every step reached the window as a status, each newer than the one before.
    let versions = app.events(|e| match e {
        AppEvent::Status(status) => Some(status.version),
        _ => None,
    });
    assert!(versions.len() >= 3, "{versions:?}");
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_connection_is_added_opened_and_removed_and_the_token_reaches_the_window() {
    let app = Headless::start().await;
    let other = partner_testkit::TestSandbox::start_demo().await;
    connections::add(
        &app.console,
        form(serde_json::json!({
            "label": "Second sandbox",
            "baseUrl": other.base_url(),
            "clientId": other.client_id(),
            "clientSecret": other.client_secret().expose(),
            "environment": "sandbox",
        })),
    )
    .await
    .expect("added");
    let status = app.console.status();
    let added = status.active.clone().expect("the new connection is active");
    assert_eq!(added.label, "Second sandbox");
    assert!(status.connections.iter().any(|c| c.id == added.id));
    // Its token is watched: using the client issues one, and the window hears of it.
    let client = app.console.client().expect("client");
    client.tokens().ensure_fresh().await.expect("token");
    app.wait_for("a token event", || {
        app.events(|e| match e {
            AppEvent::Token(view) => Some(view.phase),
            _ => None,
        })
        .into_iter()
        .next()
    })
    .await;
    // Back to the embedded sandbox, then the added one is forgotten.
    connections::open(&app.console, EMBEDDED_CONNECTION_ID)
        .await
        .expect("opened");
    connections::remove(&app.console, &added.id).expect("removed");
    assert!(!app
        .console
        .status()
        .connections
        .iter()
        .any(|c| c.id == added.id));
    app.stop().await;
}

#[tokio::test]
async fn a_bad_connection_is_refused_with_a_clear_error_and_nothing_is_saved() {
    let app = Headless::start().await;
    let before = app.console.status().connections.len();
    let refused = connections::add(
        &app.console,
        form(serde_json::json!({
            "label": " ",
            "baseUrl": "http://127.0.0.1:9",
            "clientId": "x",
            "clientSecret": "y",
            "environment": "sandbox",
        })),
    )
    .await
    .expect_err("no name");
    assert_eq!(refused.kind, partner_console_core::ErrorKind::InvalidInput);
    assert_eq!(app.console.status().connections.len(), before);
    app.stop().await;
}

#[tokio::test]
async fn a_notice_is_dismissed_and_the_window_told() {
    let app = Headless::start().await;
    app.console
        .announce(|inner| inner.notices.push("read me".into()));
    let status = startup::dismiss_notice(&app.console, 0);
    assert!(status.notices.is_empty());
    let last = app
        .events(|e| match e {
            AppEvent::Status(status) => Some(status.notices.len()),
            _ => None,
        })
        .pop();
    assert_eq!(last, Some(0));
    app.stop().await;
}

#[tokio::test]
async fn quitting_stops_the_listener_and_the_embedded_sandbox() {
    let app = Headless::start().await;
    let url = app.console.listener().expect("listener").url();
    let console = app.console.clone();
    app.stop().await;
    assert!(console.lock().listener.is_none());
    assert!(console.lock().embedded.is_none());
    let refused = reqwest::Client::new().post(&url).body("{}").send().await;
    assert!(refused.is_err(), "nothing listens at {url} any more");
}

fn embedded_base_url(app: &Headless) -> String {
    let status = app.console.status();
    let embedded = status
        .connections
        .iter()
        .find(|c| c.id == EMBEDDED_CONNECTION_ID)
        .expect("the embedded sandbox is listed");
    embedded.base_url.clone()
}

#[tokio::test]
async fn the_embedded_sandbox_keeps_its_address_from_run_to_run() {
    let app = Headless::start().await;
    let first = embedded_base_url(&app);
    let app = app.restart().await;
    assert_eq!(
        embedded_base_url(&app),
        first,
        "captures and the support copy of the first run name this address"
    );

    // Another program on that port: the sandbox moves to another, and keeps to that one.
    let port = url::Url::parse(&first)
        .expect("a URL")
        .port()
        .expect("a port");
    let (app, _taken) = app
        .restart_holding(|| {
            std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free again")
        })
        .await;
    let moved = embedded_base_url(&app);
    assert_ne!(moved, first);
    assert!(app.console.client().is_ok(), "it started all the same");
    let app = app.restart().await;
    assert_eq!(embedded_base_url(&app), moved);
    app.stop().await;
}

/// "Try again" on the keychain banner probes the store (a marker written, read back and
/// deleted): one that says "done" and keeps nothing keeps the banner up, naming the store and
/// what to do; one that keeps what it is given takes the banner down.
#[tokio::test]
async fn try_again_keeps_the_banner_for_a_store_that_keeps_nothing() {
    use partner_client::{MemoryStore, SecretSlot, SecretStore};
    use partner_console_core::services::keys;
    use partner_console_core::state::headless_state;
    use partner_console_core::{Console, FolderDialogs, RecordingSink};
    use std::sync::Arc;

    #[derive(Debug)]
    struct KeepsNothing;
    impl SecretStore for KeepsNothing {
        fn get(&self, _: &SecretSlot) -> partner_client::Result<Option<partner_api::Secret>> {
            Ok(None)
        }
        fn set(&self, _: &SecretSlot, _: &partner_api::Secret) -> partner_client::Result<()> {
            Ok(())
        }
        fn delete(&self, _: &SecretSlot) -> partner_client::Result<()> {
            Ok(())
        }
    }
    let console_over = |dir: &std::path::Path, store: Arc<dyn SecretStore>| {
        Console::new(
            headless_state(dir.join("data"), store),
            RecordingSink::new(),
            Arc::new(FolderDialogs {
                folder: dir.to_path_buf(),
            }),
            tokio::runtime::Handle::current(),
        )
    };
    let dir = tempfile::tempdir().expect("temp dir");

    let dropping = console_over(dir.path(), Arc::new(KeepsNothing));
    keys::retry(&dropping)
        .await
        .expect("the probe's answer is the status");
    let keychain = dropping.status().keychain;
    assert!(!keychain.available);
    let message = keychain.message.expect("a message");
    assert!(
        message.contains("does not keep what it is given"),
        "{message}"
    );
    assert!(message.contains(partner_client::STORE_NAME), "{message}");
    assert!(message.contains("then try again"), "{message}");

    let keeping = console_over(dir.path(), Arc::new(MemoryStore::new()));
    keeping.state().keys.mark_unavailable("locked a moment ago");
    // No connection is open here, so the keys are not read; the store answered all the same.
    let _ = keys::retry(&keeping).await;
    assert!(keeping.status().keychain.available);
}

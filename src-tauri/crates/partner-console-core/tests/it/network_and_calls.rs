//! A connection from a company network (its own proxy with a password, an extra CA, a client
//! certificate) added, reopened and changed through the same service calls the app's commands
//! make, over real TLS and a real proxy on 127.0.0.1; and the Calls panel's feed, list and
//! curl text.
use crate::harness::{form, other_service_connection, Headless};
use partner_api::Secret;
use partner_client::SecretSlot;
use partner_console_core::bridge::NetworkChange;
use partner_console_core::services::{calls, connection_check, connections, listings};
use partner_console_core::{AppEvent, ErrorKind};
use partner_testkit::{Dialect, PrivateCaService, ProxyAuth, TestProxy};

const PROXY_PASSWORD: &str = "proxy-pass-42";
const EMBEDDED: &str = partner_local::settings::EMBEDDED_CONNECTION_ID;

fn with_network(
    service: &partner_testkit::OtherService,
    network: serde_json::Value,
) -> serde_json::Value {
    let mut json = other_service_connection(service, service.client_secret().expose());
    json["network"] = network;
    json
}

fn saved_connection(app: &Headless, base_url: &str) -> partner_local::SavedConnection {
    app.console
        .state()
        .lock()
        .settings
        .connections
        .iter()
        .find(|c| c.base_url == base_url.trim_end_matches('/'))
        .cloned()
        .expect("the connection is saved")
}

fn keychain(app: &Headless, slot: SecretSlot) -> Option<Secret> {
    app.console
        .state()
        .secrets
        .get(&slot)
        .expect("the store answers")
}

async fn list_products(app: &Headless) -> usize {
    let page = form(serde_json::json!({"start": 0, "limit": 10, "sort": ""}));
    listings::products(&app.console, &page)
        .await
        .expect("products through the connection's network")
        .items
        .len()
}

#[tokio::test]
async fn a_connection_through_a_proxy_with_a_password_and_an_extra_ca_is_saved_and_reopened() {
    let app = Headless::start().await;
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let proxy = TestProxy::start(Some(ProxyAuth {
        user: "alice".into(),
        password: PROXY_PASSWORD.into(),
    }))
    .await
    .unwrap();
    let network = serde_json::json!({
        "proxyUrl": proxy.url(),
        "proxyUser": "alice",
        "proxyPassword": PROXY_PASSWORD,
        "caCertFile": tls.ca_file.display().to_string(),
    });
    connections::add(&app.console, form(with_network(&tls.service, network)))
        .await
        .expect("signed in through the proxy, trusting the extra CA");
    assert!(proxy.relayed() >= 1, "the sign-in went through the proxy");

    let saved = saved_connection(&app, &tls.service.base_url());
    assert_eq!(saved.network.proxy_user.as_deref(), Some("alice"));
    assert_eq!(saved.network.ca_cert_file.as_ref(), Some(&tls.ca_file));
    let base_url = partner_client::parse_base_url(&saved.base_url).unwrap();
    let password = keychain(
        &app,
        SecretSlot::proxy_password(&base_url, &saved.client_id),
    );
    assert!(password.expect("in the keychain").ct_eq(PROXY_PASSWORD));
    let settings_file = app.console.state().lock().settings.clone();
    let written = serde_json::to_string(&settings_file).unwrap();
    assert!(!written.contains(PROXY_PASSWORD), "never in the settings");

    let view = app
        .console
        .status()
        .connections
        .into_iter()
        .find(|c| c.id == saved.id)
        .expect("listed");
    let port = proxy
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    assert_eq!(
        view.network.summary,
        format!("via proxy 127.0.0.1:{port} · extra CA")
    );

    // Reopened from the settings and the keychain: the calls still go through the proxy.
    connections::open(&app.console, EMBEDDED).await.ok();
    let relayed_before = proxy.relayed();
    connections::open(&app.console, &saved.id)
        .await
        .expect("reopened");
    assert_eq!(list_products(&app).await, 3);
    assert!(
        proxy.relayed() > relayed_before,
        "the reopened client uses the proxy"
    );

    // Removing it forgets the proxy password too.
    connections::open(&app.console, EMBEDDED)
        .await
        .expect("switch away");
    connections::remove(app.console.state(), &saved.id).expect("removed");
    assert!(keychain(
        &app,
        SecretSlot::proxy_password(&base_url, &saved.client_id)
    )
    .is_none());
    app.stop().await;
}

#[tokio::test]
async fn a_bad_ca_file_is_a_clear_error_and_nothing_is_saved() {
    let app = Headless::start().await;
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let dir = tempfile::tempdir().unwrap();
    let not_a_ca = dir.path().join("not-a-ca.pem");
    std::fs::write(&not_a_ca, "this is not a certificate").unwrap();
    let before = app.console.status().connections.len();
    for (file, words) in [
        (not_a_ca.display().to_string(), "holds no PEM certificate"),
        ("/nonexistent/ca.pem".to_string(), "could not be read"),
    ] {
        let network = serde_json::json!({ "caCertFile": file });
        let refused = connections::add(&app.console, form(with_network(&tls.service, network)))
            .await
            .expect_err("a bad CA file");
        assert_eq!(refused.kind, ErrorKind::InvalidInput, "{refused:?}");
        assert!(refused.message.contains(words), "{refused:?}");
        assert!(
            refused.message.contains(&file),
            "names the file: {refused:?}"
        );
    }
    // A proxy URL carrying credentials is refused by the library's own check.
    let network = serde_json::json!({ "proxyUrl": "http://me:pw@127.0.0.1:3128" });
    let refused = connections::add(&app.console, form(with_network(&tls.service, network)))
        .await
        .expect_err("credentials in the proxy URL");
    assert!(!format!("{refused:?}").contains("pw@"), "{refused:?}");
    assert_eq!(
        app.console.status().connections.len(),
        before,
        "nothing saved"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_client_certificate_s_key_is_kept_in_the_keychain_and_its_settings_can_change() {
    let app = Headless::start().await;
    let tls = PrivateCaService::start(Dialect::minimal(), true).await;
    let (cert, key) = tls.client_certificate("console-test");
    let network = serde_json::json!({
        "caCertFile": tls.ca_file.display().to_string(),
        "clientCertFile": cert.display().to_string(),
        "clientKeyFile": key.display().to_string(),
    });
    connections::add(&app.console, form(with_network(&tls.service, network)))
        .await
        .expect("signed in with the client certificate");
    let saved = saved_connection(&app, &tls.service.base_url());
    let base_url = partner_client::parse_base_url(&saved.base_url).unwrap();
    let key_slot = SecretSlot::client_certificate_key(&base_url, &saved.client_id);
    let kept = keychain(&app, key_slot.clone()).expect("the key in the keychain");
    assert!(kept.ct_eq(&std::fs::read_to_string(&key).unwrap()));
    assert_eq!(saved.network.client_cert_file.as_ref(), Some(&cert));

    // The key file may go: the keychain has the key; reopening works.
    std::fs::remove_file(&key).unwrap();
    connections::open(&app.console, EMBEDDED)
        .await
        .expect("away");
    connections::open(&app.console, &saved.id)
        .await
        .expect("reopened");
    assert_eq!(list_products(&app).await, 3);

    // Changing the network without the client certificate is tried first: this service
    // demands one, so the change is refused and the saved settings stay.
    let change = NetworkChange {
        id: saved.id.clone(),
        network: form(serde_json::json!({
            "caCertFile": tls.ca_file.display().to_string(),
        })),
    };
    connections::change_network(&app.console, change)
        .await
        .expect_err("no client certificate: refused by the service");
    assert_eq!(
        saved_connection(&app, &saved.base_url).network,
        saved.network
    );
    assert!(keychain(&app, key_slot.clone()).is_some(), "the key stays");

    // Keeping the certificate with a blank key file keeps the saved key.
    let change = NetworkChange {
        id: saved.id.clone(),
        network: form(serde_json::json!({
            "caCertFile": tls.ca_file.display().to_string(),
            "clientCertFile": cert.display().to_string(),
        })),
    };
    connections::change_network(&app.console, change)
        .await
        .expect("the same settings, the key kept");
    assert_eq!(list_products(&app).await, 3);

    // A missing key in the keychain is a Keychain error that says what to do.
    app.console.state().secrets.delete(&key_slot).unwrap();
    connections::open(&app.console, EMBEDDED)
        .await
        .expect("away");
    let missing = connections::open(&app.console, &saved.id)
        .await
        .expect_err("no key");
    assert_eq!(missing.kind, ErrorKind::Keychain, "{missing:?}");
    assert!(missing.hint.contains("Network…"), "{missing:?}");
    app.stop().await;
}

#[tokio::test]
async fn the_calls_panel_gets_each_call_as_it_ends_and_its_curl_has_no_secret() {
    let app = Headless::start().await;
    let service = partner_testkit::OtherService::start(Dialect::minimal()).await;
    app.connect_to(&service).await;
    assert_eq!(list_products(&app).await, 3);
    let batch = app
        .wait_for("a calls event with the listing", || {
            app.events(|event| match event {
                AppEvent::Calls(batch) => Some(batch.clone()),
                _ => None,
            })
            .into_iter()
            .find(|batch| batch.calls.iter().any(|c| c.target.contains("products")))
        })
        .await;
    let listing = batch
        .calls
        .iter()
        .find(|c| c.target.contains("products"))
        .unwrap();
    assert_eq!(listing.method, "GET");
    assert_eq!(listing.status, Some(200));
    assert!(listing.response_bytes.unwrap_or_default() > 0);

    let listed = calls::list(&app.console, 0).expect("the log");
    assert_eq!(listed.connection_id, batch.connection_id);
    assert!(
        listed.calls.iter().any(|c| c.target.contains("token")),
        "the sign-in is in the log: {:?}",
        listed.calls
    );
    let later = calls::list(&app.console, listing.seq).expect("since");
    assert!(later.calls.iter().all(|c| c.seq > listing.seq));

    let secret = service.client_secret().expose().to_string();
    let client = app
        .console
        .state()
        .lock()
        .active
        .as_ref()
        .expect("active")
        .client
        .clone();
    let held = client.tokens().held_secrets().await;
    assert!(!held.is_empty(), "a token is held");
    for call in &listed.calls {
        let curl = calls::curl(&app.console, call.seq).expect("curl text");
        assert!(curl.starts_with("curl"), "{curl}");
        assert!(!curl.contains(&secret), "no client secret: {curl}");
        for token in &held {
            assert!(!curl.contains(token.expose()), "no token: {curl}");
        }
    }
    let listing_curl = calls::curl(&app.console, listing.seq).unwrap();
    assert!(listing_curl.contains("PARTNER_TOKEN}"), "{listing_curl}");
    let sign_in = listed
        .calls
        .iter()
        .find(|c| c.target.contains("token"))
        .unwrap();
    let sign_in_curl = calls::curl(&app.console, sign_in.seq).unwrap();
    assert!(
        sign_in_curl.contains("PARTNER_CLIENT_SECRET}"),
        "{sign_in_curl}"
    );
    assert!(calls::curl(&app.console, 999_999).is_err());
    app.stop().await;
}

#[tokio::test]
async fn the_sandbox_s_own_endpoints_are_calls_in_the_panel_too() {
    let app = Headless::start().await;
    let product = app.demo_product().await;
    partner_console_core::services::embedded::new_transaction(app.console.state(), product)
        .await
        .expect("the lender started a transaction");
    let listed = calls::list(&app.console, 0).expect("the log");
    let lender = listed
        .calls
        .iter()
        .find(|c| c.target.contains("/sandbox/v1/transactions"))
        .unwrap_or_else(|| panic!("the sandbox call is logged: {:?}", listed.calls));
    assert_eq!(lender.method, "POST");
    assert!(lender.status.is_some_and(|s| (200..300).contains(&s)));
    app.stop().await;
}

#[tokio::test]
async fn check_connection_runs_each_step_as_the_app_opens_the_connection() {
    let app = Headless::start().await;
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let network = serde_json::json!({ "caCertFile": tls.ca_file.display().to_string() });
    connections::add(&app.console, form(with_network(&tls.service, network)))
        .await
        .expect("signed in, trusting the extra CA");
    let saved = saved_connection(&app, &tls.service.base_url());

    // Through the saved extra CA: every step passes, the chain is listed.
    let report = connection_check::check(&app.console, &saved.id)
        .await
        .expect("a report");
    assert!(report.all_passed, "{}", report.text);
    let tls_step = report.steps.iter().find(|s| s.name == "tls").expect("tls");
    assert_eq!(tls_step.outcome, "passed", "{}", report.text);
    assert!(
        tls_step
            .detail
            .contains("issuer CN=Partner Console test CA"),
        "{}",
        tls_step.detail
    );
    let told = app.events(|e| match e {
        AppEvent::ConnectionCheck(step) if step.connection_id == saved.id => {
            Some(step.step.name.clone())
        }
        _ => None,
    });
    let names: Vec<&str> = report.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(told, names, "each step told as it ended");
    assert!(!report.text.contains(tls.service.client_secret().expose()));

    // The embedded sandbox: plain HTTP on loopback, TLS skipped with why, the rest passes.
    let embedded = connection_check::check(&app.console, EMBEDDED)
        .await
        .expect("a report");
    assert!(embedded.all_passed, "{}", embedded.text);
    assert!(connection_check::check(&app.console, "no-such-connection")
        .await
        .is_err());
    app.stop().await;
}

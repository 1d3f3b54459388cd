//! The console's services against a second, independent implementation of the service
//! (`partner_testkit::OtherService`), not our sandbox: what it says reaches the user in its own
//! words, through the same calls the app's commands make.
use crate::harness::{form, other_service_connection, Headless};
use partner_api::read::ProductView;
use partner_console_core::services::{connections, listings, token};
use partner_console_core::ErrorKind;
use partner_testkit::other_service::{Dialect, ErrorShape, OtherService};

#[tokio::test]
async fn a_refused_sign_in_is_shown_in_the_service_s_oauth_words_and_saves_nothing() {
    let app = Headless::start().await;
    let service = OtherService::start(Dialect::minimal()).await;
    let before = app.console.status().connections.len();
    let wrong = "Wrong-secret-0123456789";
    let refused = connections::add(
        &app.console,
        form(other_service_connection(&service, wrong)),
    )
    .await
    .expect_err("a wrong secret");
    assert!(
        refused.message.contains("Client authentication failed"),
        "the service's own words: {refused:?}"
    );
    assert!(!format!("{refused:?}").contains(wrong), "never the secret");
    assert_eq!(app.console.status().connections.len(), before);
    app.stop().await;
}

#[tokio::test]
async fn the_console_signs_in_and_introspects_on_another_implementation() {
    let app = Headless::start().await;
    let service = OtherService::start(Dialect::extra()).await;
    app.connect_to(&service).await;
    let said = token::introspect(&app.console).await.expect("introspected");
    assert!(said.active);
    let view = token::current(&app.console).expect("the token");
    assert!(view.idle_expires_at.is_some(), "{view:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_sort_the_service_does_not_support_is_refused_in_its_problem_words() {
    let app = Headless::start().await;
    let service = OtherService::start(Dialect {
        errors: ErrorShape::Problem,
        ..Dialect::narrow_sorts()
    })
    .await;
    app.connect_to(&service).await;
    let client = app.console.client().expect("client");
    let refused = listings::page::<ProductView>(
        &client,
        &form(serde_json::json!({"start": 0, "limit": 10, "sort": "name"})),
    )
    .await
    .expect_err("not a sort key of this service");
    assert_eq!(refused.kind, ErrorKind::Server, "{refused:?}");
    assert_eq!(refused.status, Some(400));
    assert!(
        refused
            .message
            .contains("sorting by 'name' is not supported"),
        "the service's words: {refused:?}"
    );
    app.stop().await;
}

/// Every screen's read of products and transactions, on a service that sends only what the spec
/// pins, and on one that sends fields and values the console has never seen.
#[tokio::test]
async fn the_screens_read_what_any_faithful_service_sends_and_keep_its_document() {
    use partner_console_core::services::{products, transactions};
    let app = Headless::start().await;
    for dialect in [Dialect::minimal(), Dialect::extra()] {
        let service = OtherService::start(dialect).await;
        app.connect_to(&service).await;
        let page = form(serde_json::json!({"start": 0, "limit": 10, "sort": ""}));
        let listed = listings::products(&app.console, &page)
            .await
            .expect("products on this dialect");
        assert!(!listed.items.is_empty());
        let first = &listed.items[0];
        assert_eq!(
            first.document.get("id").and_then(|v| v.as_str()),
            Some(first.id.as_str())
        );
        let sent = service
            .products()
            .into_iter()
            .find(|p| p["id"] == first.id.as_str())
            .expect("the service's own product");
        let shown = products::get(&app.console, &first.id)
            .await
            .expect("product");
        assert_eq!(
            serde_json::Value::Object(shown.document.clone()),
            sent,
            "the service's document, every field as sent"
        );
        let listed = listings::transactions(&app.console, &page)
            .await
            .expect("transactions on this dialect");
        let id = listed.items[0].id.clone();
        let one = transactions::get(&app.console, &id)
            .await
            .expect("transaction");
        assert_eq!(one.id, id);
        transactions::events(&app.console, &id)
            .await
            .expect("its events");
    }
    app.stop().await;
}

/// A connection saved as sandbox to a service whose tokens introspect as `prod` is shown, and
/// asked about, as production; the label and what the service said are both kept.
#[tokio::test]
async fn the_environment_the_service_says_wins_over_a_sandbox_label() {
    use partner_local::Environment;
    let app = Headless::start().await;
    let service = OtherService::start(Dialect::extra()).await;
    app.connect_to(&service).await;
    let active = app
        .wait_for("the service's environment", || {
            app.console
                .status()
                .active
                .filter(|a| a.service_environment.is_some())
        })
        .await;
    assert_eq!(active.service_environment.as_deref(), Some("prod"));
    assert_eq!(active.labelled, Environment::Sandbox);
    assert_eq!(active.environment, Environment::Production);

    // A service that says nothing of it leaves the label as it is.
    let quiet = OtherService::start(Dialect::minimal()).await;
    app.connect_to(&quiet).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let active = app.console.status().active.expect("active");
    assert_eq!(active.service_environment, None);
    assert_eq!(active.environment, Environment::Sandbox);
    app.stop().await;
}

#[tokio::test]
async fn a_read_only_connection_refuses_writes_before_sending_and_the_audit_log_keeps_each() {
    use partner_console_core::services::{audit, products};
    let app = Headless::start().await;
    let service = OtherService::start(Dialect::minimal()).await;
    app.connect_to(&service).await;
    let id = app.console.status().active.expect("active").id;
    let product = || {
        form(serde_json::json!({
            "name": "audited-product", "listingName": "Audited product",
            "requestTypes": ["NEW_REQUEST"]
        }))
    };

    connections::set_read_only(&app.console, &id, true).expect("marked");
    let status = app.console.status();
    assert!(status.active.as_ref().is_some_and(|a| a.read_only));
    assert!(status.connections.iter().any(|c| c.id == id && c.read_only));
    let refused = products::create(&app.console, product())
        .await
        .expect_err("read-only");
    assert_eq!(refused.kind, ErrorKind::ReadOnly, "{refused:?}");
    assert!(refused.hint.contains("Read-only"), "{refused:?}");
    let listed = listings::page::<ProductView>(
        &app.console.client().expect("client"),
        &form(serde_json::json!({"start": 0, "limit": 50, "sort": ""})),
    )
    .await
    .expect("reads still work");
    assert!(
        listed
            .items
            .iter()
            .all(|p| p.name.as_deref() != Some("audited-product")),
        "nothing was sent"
    );
    assert!(
        connections::set_read_only(&app.console, "embedded-sandbox", true).is_err(),
        "the embedded sandbox is a playground"
    );

    connections::set_read_only(&app.console, &id, false).expect("writable again");
    products::create(&app.console, product())
        .await
        .expect("created once writable");
    let log = audit::list(app.console.state())
        .await
        .expect("the audit log");
    let ours: Vec<_> = log
        .entries
        .iter()
        .filter(|e| e.connection == "Other service")
        .collect();
    assert_eq!(ours.len(), 2, "{:?}", log.entries);
    assert_eq!(ours[0].outcome, "done", "newest first");
    assert_eq!(ours[0].call, "POST /partner/v2/products");
    assert_eq!(ours[1].outcome, "refused");
    assert_eq!(ours[1].action, "create a product");
    assert!(ours.iter().all(|e| e.via == "app"));
    // At rest (#46 item 5): the log's lines are sealed with the data key, and the embedded
    // sandbox's data file is encrypted with it.
    let state = app.console.state();
    let bytes = std::fs::read(&log.path).expect("the audit log's file");
    let text = String::from_utf8(bytes).expect("text lines");
    assert!(
        text.lines().all(|line| line.starts_with("sealed:")),
        "{text}"
    );
    for needle in ["Other service", "audited-product", "/partner/v2/products"] {
        assert!(!text.contains(needle), "{needle} in the audit log's file");
    }
    let sandbox_file = std::fs::read(partner_console_core::services::embedded::data_file(state))
        .expect("the embedded sandbox's data file");
    assert!(!sandbox_file.starts_with(b"SQLite format 3\0"), "encrypted");
    // The setting survives: it is in the settings file.
    assert!(
        !app.console
            .state()
            .lock()
            .settings
            .connection(&id)
            .expect("saved")
            .read_only
    );
    app.stop().await;
}

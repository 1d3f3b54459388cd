//! The rest of the services the commands call, without a window: the listener's switches, the
//! inspector's counts and attempts, evidence, the receiver check, editing and re-pointing
//! subscriptions, saving a tunnel URL, Go to, the support desk's counts, and resetting the
//! embedded sandbox.
use crate::harness::{form, Headless};
use partner_console_core::bridge::GoToTarget;
use partner_console_core::services::{
    captures, demo, embedded, evidence, go_to, listener, receiver_check, subscriptions, support,
    tunnel,
};

const NO_FILTER: &str = r#"{"verdict": null, "eventType": null, "resourceType": null,
    "subscriptionId": null, "since": null, "until": null, "text": null}"#;

fn no_filter() -> serde_json::Value {
    serde_json::from_str(NO_FILTER).expect("a filter")
}

/// The demo product subscribed to the listener, and a transaction the lender made on it, seen
/// by the listener (its capture id).
async fn a_notification(app: &Headless) -> (String, String, i64) {
    let product = app.demo_product().await;
    let made = embedded::new_transaction(&app.console, product.clone())
        .await
        .expect("made");
    let transaction = made.transaction_id.expect("its id");
    let capture = app.capture_of(&transaction).await.id;
    (product, transaction, capture)
}

#[tokio::test]
async fn the_listener_s_test_mode_forward_rules_and_retention_are_kept_in_its_view() {
    let app = Headless::start().await;
    listener::set_test_mode(
        &app.console,
        form(serde_json::json!({"enabled": true, "status": 503, "delayMs": 0})),
    )
    .expect("test mode");
    listener::set_forward_rules(
        &app.console,
        form(serde_json::json!([{"resourceType": null, "eventType": null, "url": "http://127.0.0.1:9/app"}])),
    )
    .expect("rules");
    assert_eq!(
        listener::view(&app.console).retention.max_bytes,
        Some(2 << 30),
        "the app keeps 2 GiB of captures by default"
    );
    let refused = listener::set_retention(
        &app.console,
        form(serde_json::json!({"maxCaptures": 5000, "maxBytes": 1000, "maxAgeDays": 7})),
    )
    .await
    .expect_err("less than one body");
    assert_eq!(refused.kind, partner_console_core::ErrorKind::InvalidInput);
    listener::set_retention(
        &app.console,
        form(serde_json::json!({"maxCaptures": 5000, "maxBytes": 3_u64 << 30, "maxAgeDays": 7})),
    )
    .await
    .expect("retention");
    let view = listener::view(&app.console);
    assert_eq!(view.retention.max_bytes, Some(3 << 30));
    let junk = view
        .junk
        .expect("the running listener says what junk it counted");
    assert_eq!(
        junk.flood.junk_rate,
        Some(partner_listener::flood::DEFAULT_JUNK_RATE)
    );
    assert_eq!(
        view.retention.junk_rate,
        Some(partner_listener::flood::DEFAULT_JUNK_RATE),
        "a form without the rate keeps the default"
    );
    // The junk rate reaches the running listener at once, and is kept in the settings.
    let refused = listener::set_retention(
        &app.console,
        form(serde_json::json!({"maxCaptures": 5000, "maxBytes": null, "maxAgeDays": 7, "junkRate": 0})),
    )
    .await
    .expect_err("a rate of nothing a second");
    assert_eq!(refused.kind, partner_console_core::ErrorKind::InvalidInput);
    for rate in [Some(3), None] {
        listener::set_retention(
            &app.console,
            form(serde_json::json!({"maxCaptures": 5000, "maxBytes": 3_u64 << 30, "maxAgeDays": 7, "junkRate": rate})),
        )
        .await
        .expect("junk rate");
        let view = listener::view(&app.console);
        assert_eq!(view.retention.junk_rate, rate);
        assert_eq!(view.junk.expect("running").flood.junk_rate, rate);
    }
    let view = listener::view(&app.console);
    assert!(
        view.data_key_home.is_some(),
        "the view says where the store's key lives"
    );
    assert!(view.test_mode.enabled);
    assert_eq!(view.test_mode.status, 503);
    assert_eq!(view.forward_rules.len(), 1);
    assert_eq!(view.retention.max_captures, Some(5000));
    let refused = listener::set_forward_rules(
        &app.console,
        form(serde_json::json!([{"resourceType": null, "eventType": null, "url": "not a url"}])),
    )
    .expect_err("a bad URL");
    assert_eq!(refused.kind, partner_console_core::ErrorKind::InvalidInput);
    assert_eq!(
        listener::view(&app.console).forward_rules.len(),
        1,
        "kept as it was"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_inspector_counts_a_notification_and_its_evidence_is_written() {
    let app = Headless::start().await;
    let (_, _, capture) = a_notification(&app).await;
    let facets = captures::facets(&app.console, form(no_filter()))
        .await
        .expect("facets");
    assert!(facets.total >= 1, "{facets:?}");
    assert!(!facets.subscriptions.is_empty());
    // The Webhooks screen's warm-up of the read connections changes no answer.
    captures::warm_up(&app.console).await.expect("warm-up");
    let again = captures::facets(&app.console, form(no_filter()))
        .await
        .expect("facets after the warm-up");
    assert_eq!(again.total, facets.total);
    let attempts = captures::attempts(&app.console, capture)
        .await
        .expect("attempts");
    assert_eq!(attempts.len(), 1);

    let bundle = evidence::bundle(
        &app.console,
        form(serde_json::json!({
            "captureId": capture, "scope": "notification", "shown": null,
            "maskFields": ["meta.instanceId"], "path": null
        })),
    )
    .await
    .expect("evidence");
    assert_eq!(bundle.captures, 1);
    let har = std::fs::read_to_string(&bundle.har_path).expect("the HAR");
    assert!(har.contains("\"log\""));
    let summary = std::fs::read_to_string(&bundle.summary_path).expect("the summary");
    assert!(!summary.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn the_receiver_check_runs_against_the_console_s_own_listener() {
    let app = Headless::start().await;
    app.demo_subscribed().await;
    let mine = receiver_check::listener_subscriptions(&app.console)
        .await
        .expect("the subscriptions on the listener");
    let first = mine.first().expect("the demo product's");
    // Under a forward rule to the partner's own app, which must not get the check's probes.
    let mut app_of_partner = partner_testkit::TestReceiver::always(200)
        .await
        .expect("a receiver");
    listener::set_forward_rules(
        &app.console,
        form(serde_json::json!([{"resourceType": null, "eventType": null, "url": app_of_partner.url()}])),
    )
    .expect("a forward rule");
    let before = app.inspector().await.total;
    let report = receiver_check::check(
        &app.console,
        form(serde_json::json!({
            "productId": first.product_id, "subscriptionId": first.subscription.subscription_id,
            "allowHttp": true
        })),
    )
    .await
    .expect("a report");
    assert!(!report.rules.is_empty());
    assert!(
        report
            .rules
            .iter()
            .any(|r| r.id == partner_conformance::RuleId::SignatureVerified
                && r.outcome == partner_conformance::Outcome::Pass),
        "the listener verifies as the spec asks: {report:?}"
    );
    // The forged probes are the check's: not kept, not in the inspector, not forwarded.
    assert_eq!(app.inspector().await.total, before, "no capture of a probe");
    assert!(
        app_of_partner
            .next(std::time::Duration::from_millis(500))
            .await
            .is_none(),
        "no probe reached the partner's app"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_subscription_is_edited_re_pointed_and_deleted() {
    let app = Headless::start().await;
    let (product, _, _) = a_notification(&app).await;
    let client = app.console.client().expect("client");
    let before = client.get_product(&product).await.expect("product");
    let subscription = before.webhooks[0].subscription_id.clone().expect("an id");
    let edited = subscriptions::update(
        &app.console,
        form(serde_json::json!({
            "productId": product, "subscriptionId": subscription,
            "url": null, "events": ["created"], "resource": null
        })),
    )
    .await
    .expect("edited");
    let events: Vec<&str> = edited.events.iter().map(|e| e.as_str()).collect();
    assert_eq!(events, vec!["created"]);

    // The listener's subscriptions, offered for a tunnel URL saved in front of it.
    let loopback = listener::view(&app.console)
        .callback_url
        .expect("the listener's URL");
    listener::set_tunnel_url(&app.console, Some("https://tunnel.invalid/webhooks".into()))
        .expect("a tunnel");
    let offer = subscriptions::repoint_offer(&app.console, Some(loopback))
        .await
        .expect("an offer")
        .expect("subscriptions to re-point");
    assert!(!offer.subscriptions.is_empty());
    assert_eq!(offer.to, "https://tunnel.invalid/webhooks");

    let after = subscriptions::delete(&app.console, &product, &subscription)
        .await
        .expect("deleted");
    assert!(after
        .webhooks
        .iter()
        .all(|w| w.subscription_id.as_deref() != Some(subscription.as_str())));
    app.stop().await;
}

#[tokio::test]
async fn a_tunnel_url_is_saved_checked_and_cleared() {
    let app = Headless::start().await;
    let saved = tunnel::save_url(&app.console, Some("https://tunnel.invalid/hooks".into()))
        .await
        .expect("saved");
    assert_eq!(
        saved.listener.tunnel_url.as_deref(),
        Some("https://tunnel.invalid/hooks")
    );
    let checked = tunnel::check_now(&app.console).await.expect("checked");
    assert!(!checked.ok, "nothing answers there: {checked:?}");
    let cleared = tunnel::save_url(&app.console, None).await.expect("cleared");
    assert_eq!(cleared.listener.tunnel_url, None);
    let refused = tunnel::check_now(&app.console)
        .await
        .expect_err("no tunnel");
    assert_eq!(refused.kind, partner_console_core::ErrorKind::InvalidInput);
    app.stop().await;
}

#[tokio::test]
async fn the_console_knows_its_own_callback_urls_as_urls_not_as_text() {
    let app = Headless::start().await;
    tunnel::save_url(&app.console, Some("https://tunnel.invalid/hooks".into()))
        .await
        .expect("saved");
    let running = listener::view(app.console.state());
    let port = running.port.expect("the listener's port");
    let ours = |url: &str| listener::own_route_of(app.console.state(), url).is_some();
    assert_eq!(
        listener::own_route_of(app.console.state(), "https://tunnel.invalid/hooks/x"),
        Some(partner_console_core::bridge::ListenerRoute::Tunnel)
    );
    assert!(ours(&format!("http://127.0.0.1:{port}/webhooks")));
    assert!(ours(&format!("http://localhost:{port}/webhooks?attempt=2")));
    assert!(ours("https://tunnel.invalid/hooks/webhooks"));
    // Text that merely begins like one of them is someone else's.
    assert!(!ours(&format!("http://127.0.0.1:{port}1/webhooks")));
    assert!(!ours("https://tunnel.invalid.example/hooks"));
    assert!(!ours("https://tunnel.invalid/hooksmith"));
    assert!(!ours(&format!("https://127.0.0.1:{port}/webhooks")));
    app.stop().await;
}

#[tokio::test]
async fn go_to_opens_a_transaction_and_says_what_it_cannot_find() {
    let app = Headless::start().await;
    let (product, transaction, _) = a_notification(&app).await;
    match go_to::go_to(&app.console, &transaction)
        .await
        .expect("found")
    {
        GoToTarget::Transaction { transaction_id, .. } => assert_eq!(transaction_id, transaction),
        other => panic!("{other:?}"),
    }
    match go_to::go_to(&app.console, &product).await.expect("found") {
        GoToTarget::Product { product_id } => assert_eq!(product_id, product),
        other => panic!("{other:?}"),
    }
    let missing = go_to::go_to(&app.console, "no-such-id")
        .await
        .expect("an answer");
    assert!(
        matches!(missing, GoToTarget::NotFound { .. }),
        "{missing:?}"
    );
    support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "s", "allowProduction": false})),
    )
    .await
    .expect("synced");
    let counts = support::counts(&app.console, form(serde_json::json!({"loan": []})))
        .await
        .expect("counts");
    assert!(counts.total >= 240, "{counts:?}");
    app.stop().await;
}

#[tokio::test]
async fn resetting_the_embedded_sandbox_starts_it_again_from_its_demo_data() {
    let app = Headless::start().await;
    let (product, transaction, _) = a_notification(&app).await;
    let _ = product;
    demo::reset(&app.console).await.expect("reset");
    let client = app.console.client().expect("client");
    let gone = client.get_transaction(&transaction).await;
    assert!(
        gone.is_err(),
        "the transaction made before the reset is gone"
    );
    app.demo_subscribed().await;
    app.stop().await;
}

#[tokio::test]
async fn faults_on_demand_in_the_embedded_sandbox_are_waited_out_and_tokens_renewed() {
    use partner_console_core::services::{calls, faults};
    let app = Headless::start().await;
    let added = faults::add(
        &app.console,
        form(serde_json::json!({
            "endpoint": "transactions", "status": 429, "retryAfterSeconds": 1,
            "latencyMs": null, "drop": false, "count": 1
        })),
    )
    .await
    .expect("added");
    assert_eq!(
        added
            .iter()
            .map(|f| f.description.as_str())
            .collect::<Vec<_>>(),
        ["transactions → 429 (Retry-After 1 s) · next call · applied 0"]
    );
    let client = app.console.client().expect("client");
    let before = client.calls().last_seq();
    partner_console_core::services::listings::page::<partner_api::read::TransactionView>(
        &client,
        &form(serde_json::json!({"start": 0, "limit": 5, "sort": ""})),
    )
    .await
    .expect("waited out");
    let listed = calls::list(&app.console, before).expect("the calls");
    assert!(
        listed
            .calls
            .iter()
            .any(|c| c.target.starts_with("/partner/v2/transactions") && c.waited_ms == 1000),
        "{:?}",
        listed.calls
    );
    assert!(faults::list(&app.console).await.expect("faults").is_empty());

    let refused = faults::add(
        &app.console,
        form(serde_json::json!({
            "endpoint": "products", "status": 200, "retryAfterSeconds": null,
            "latencyMs": null, "drop": false, "count": 1
        })),
    )
    .await
    .expect_err("a fault's status is an error's");
    assert!(
        refused
            .message
            .contains("Status must be between 400 and 599"),
        "{refused:?}"
    );

    let revoked = faults::revoke_tokens(&app.console).await.expect("revoked");
    assert!(
        revoked.message.contains("revoked every token"),
        "{revoked:?}"
    );
    partner_console_core::services::listings::page::<partner_api::read::ProductView>(
        &client,
        &form(serde_json::json!({"start": 0, "limit": 5, "sort": ""})),
    )
    .await
    .expect("a new token, then the page");
    assert!(faults::clear(&app.console)
        .await
        .expect("cleared")
        .is_empty());
    app.stop().await;
}

#[tokio::test]
async fn the_update_check_at_start_is_on_until_turned_off_and_stays_off_after_a_restart() {
    use partner_console_core::services::updates;
    let app = Headless::start().await;
    assert!(updates::settings(app.console.state()).check_at_start);
    let off = updates::set_check_at_start(app.console.state(), false).expect("saved");
    assert!(!off.check_at_start);
    let restarted = app.restart().await;
    assert!(!updates::settings(restarted.console.state()).check_at_start);
    assert!(
        updates::set_check_at_start(restarted.console.state(), true)
            .expect("saved")
            .check_at_start
    );
    restarted.stop().await;
}

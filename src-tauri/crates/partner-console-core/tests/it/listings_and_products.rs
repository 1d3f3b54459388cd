//! Listings (pages, search across pages, export through the save dialog), products and their
//! subscriptions and keys, and a transaction's response.
use crate::harness::{form, Headless};
use partner_api::read::{ProductView, TransactionView};
use partner_console_core::bridge::PageQuery;
use partner_console_core::services::{listings, products, transactions};
use partner_console_core::{AppEvent, ErrorKind};

fn page(sort: &str) -> PageQuery {
    form(serde_json::json!({"start": 0, "limit": 10, "sort": sort}))
}

#[tokio::test]
async fn listings_page_search_and_export_without_a_window() {
    let app = Headless::start().await;
    let client = app.console.client().expect("client");
    let products = listings::page::<ProductView>(&client, &page("listingName"))
        .await
        .expect("products");
    assert!(!products.items.is_empty());
    let transactions = listings::page::<TransactionView>(&client, &page("-created"))
        .await
        .expect("transactions");
    assert_eq!(transactions.items.len(), 10);
    assert!(transactions.total >= 240);

    let found = listings::search(
        &app.console,
        form(serde_json::json!({
            "searchId": "s1", "kind": "transactions", "sort": "created", "text": "completed"
        })),
    )
    .await
    .expect("search");
    assert!(!found.items.is_empty());
    let progress = app.events(|e| match e {
        AppEvent::SearchProgress(p) if p.search_id == "s1" => Some(p.scanned),
        _ => None,
    });
    assert!(
        !progress.is_empty(),
        "the search's progress reached the window"
    );

    let exported = listings::export(
        &app.console,
        form(serde_json::json!({
            "jobId": "j1", "kind": "products", "format": "csv", "sort": "listingName"
        })),
    )
    .await
    .expect("export");
    let path = exported.path.expect("written");
    assert!(path.starts_with(app.dialogs.to_str().unwrap()), "{path}");
    let csv = std::fs::read_to_string(&path).expect("the file");
    assert_eq!(
        csv.lines().count() as u64,
        exported.count + 1,
        "a header and a row each"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_product_is_created_subscribed_rotated_and_its_keys_retired() {
    let app = Headless::start().await;
    let created = products::create(
        &app.console,
        form(serde_json::json!({
            "name": "headless-product", "listingName": "Headless product",
            "requestTypes": ["NEW_REQUEST"], "interfaceUrl": " "
        })),
    )
    .await
    .expect("created");
    let listener = app.console.listener().expect("listener").url();
    let shown = products::add_subscription(
        &app.console,
        form(serde_json::json!({
            "productId": created.id, "url": listener, "events": ["created", "updated"],
            "resource": "urn:svc:partner:transaction", "signingKey": null
        })),
    )
    .await
    .expect("subscribed");
    assert!(partner_api::signing_key::check(&shown.key).is_ok());
    let held = products::keys_held(&app.console, shown.subscription_id.clone())
        .await
        .expect("keys");
    assert!(held.has_current && !held.has_previous);

    let rotated = products::rotate_key(
        &app.console,
        form(serde_json::json!({
            "productId": created.id, "subscriptionId": shown.subscription_id, "signingKey": null
        })),
    )
    .await
    .expect("rotated");
    assert_ne!(rotated.key, shown.key);
    assert!(rotated.previous_still_verifies);
    let retired = products::retire_previous_key(&app.console, shown.subscription_id.clone())
        .expect("retired");
    assert!(retired.has_current && !retired.has_previous);

    let weak = products::add_subscription(
        &app.console,
        form(serde_json::json!({
            "productId": created.id, "url": listener, "events": ["created"],
            "resource": "urn:svc:partner:transaction", "signingKey": "too-short"
        })),
    )
    .await
    .expect_err("a key that breaks the rule");
    assert!(!weak.message.contains("too-short"), "never echoes the key");
    assert!(!products::signing_key_problems("too-short").is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_transaction_is_answered() {
    let app = Headless::start().await;
    let client = app.console.client().expect("client");
    let open = listings::page::<TransactionView>(&client, &page("-created"))
        .await
        .expect("transactions")
        .items
        .into_iter()
        .find(|t| {
            t.status
                .as_ref()
                .is_some_and(|s| s.is(partner_api::TransactionStatus::Created))
        })
        .expect("an open transaction");
    let respond = |response: serde_json::Value, confirm: Option<&str>| {
        transactions::respond(
            &app.console,
            form(serde_json::json!({
                "transactionId": open.id,
                "response": response.to_string(),
                "confirm": confirm,
            })),
        )
    };
    let answered = respond(
        serde_json::json!({
            "status": "processing", "partnerStatus": "Looking",
            "respondingParty": {"name": "Acme Appraisals"}, "loan": {"appraisedValue": 410000}
        }),
        None,
    )
    .await
    .expect("answered");
    let response = answered.response.clone().expect("a response");
    assert_eq!(response.partner_status.as_deref(), Some("Looking"));
    let sent = &answered.document;
    assert_eq!(
        sent["response"]["loan"]["appraisedValue"], 410000,
        "{sent:?}"
    );
    assert_eq!(
        sent["response"]["respondingParty"]["name"],
        "Acme Appraisals"
    );

    // Checked before sending: a misspelt field is refused, not dropped.
    let refused = respond(
        serde_json::json!({"status": "processing", "partnerstatus": "x"}),
        None,
    )
    .await
    .expect_err("a field responses do not have");
    assert_eq!(refused.kind, ErrorKind::InvalidInput);
    assert!(refused.message.contains("partnerstatus"), "{refused:?}");

    // A final status goes only with the transaction named again.
    let completed = serde_json::json!({"status": "completed", "partnerStatus": "Delivered"});
    for confirm in [None, Some("another-transaction")] {
        let refused = respond(completed.clone(), confirm)
            .await
            .expect_err("not confirmed");
        assert!(refused.message.contains("locks transaction"), "{refused:?}");
    }
    let still = transactions::get(&app.console, &open.id)
        .await
        .expect("read");
    assert_eq!(
        still
            .response
            .as_ref()
            .and_then(|r| r.status.clone())
            .map(|s| s.to_string()),
        Some("processing".to_string()),
        "nothing final was sent"
    );
    let locked = respond(completed, Some(&open.id)).await.expect("confirmed");
    assert_eq!(locked.document["status"], "completed");
    app.stop().await;
}

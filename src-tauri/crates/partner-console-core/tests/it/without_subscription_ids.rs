//! The Product screen's services on a service whose product `webhooks` show no
//! `subscriptionId` (the test kit's `without_subscription_ids` dialect), over HTTP, with the
//! app's own listener: a subscription is named by its url and resource (`RESOURCE=URL`, as the
//! screen gets it from `element_keys`), its key kept for that element, and the screen told
//! which subscriptions the listener has bound and which wait for their first notification.
use crate::harness::{form, Headless};
use partner_console_core::bridge::ElementKeys;
use partner_console_core::services::{listener, products, subscriptions};
use partner_console_core::ErrorKind;
use partner_testkit::other_service::{Dialect, OtherService};

const TX: &str = "urn:svc:partner:transaction";
const SEEDED: &str = "https://hooks.other.example/tx";

async fn element(app: &Headless, product: &str, url: &str) -> ElementKeys {
    products::element_keys(&app.console, product.into(), url.into(), TX.into())
        .await
        .expect("what the keychain holds for the element")
}

#[tokio::test]
async fn the_product_screen_subscribes_rotates_edits_and_deletes_by_url_and_resource() {
    let app = Headless::start().await;
    let service = OtherService::start(Dialect::without_subscription_ids()).await;
    app.connect_to(&service).await;
    let product = service.products()[0]["id"]
        .as_str()
        .expect("a product")
        .to_string();
    let url = listener::view(&app.console)
        .callback_url
        .expect("the listener's URL");

    // The seeded subscription: shown without an id, its key not here, so nothing to bind.
    let shown = products::get(&app.console, &product)
        .await
        .expect("product");
    assert_eq!(shown.webhooks.len(), 1);
    assert!(shown.webhooks[0].subscription_id.is_none());
    let seeded = element(&app, &product, SEEDED).await;
    assert_eq!(seeded.subscription, format!("{TX}={SEEDED}"));
    assert!(!seeded.has_current && !seeded.has_previous);
    assert_eq!(seeded.bound_id, None);

    // Subscribe the listener: the key is shown once and kept for the element, which waits
    // for its first notification.
    let subscribed = products::add_subscription(
        &app.console,
        form(serde_json::json!({
            "productId": product, "url": url, "events": ["created"],
            "resource": TX, "signingKey": null
        })),
    )
    .await
    .expect("subscribed");
    let (service_id, service_key) = service
        .subscription_at(&product, &url, TX)
        .expect("the service's subscription");
    assert_eq!(subscribed.key, service_key);
    assert!(
        !format!("{subscribed:?}").contains(&service_key),
        "never the key in a Debug print"
    );
    let waiting = element(&app, &product, &url).await;
    assert!(waiting.has_current && !waiting.has_previous);
    assert_eq!(waiting.bound_id, None, "no notification yet");

    // The first notification binds the id it names; the screen reads it.
    let first = service.notify(&product, &url, TX).await.expect("sent");
    assert_eq!(first.status, 200, "verified with the element's key");
    let bound = element(&app, &product, &url).await;
    assert_eq!(bound.bound_id.as_deref(), Some(service_id.as_str()));

    // Rotate by the name the screen got: the service keeps the id, the listener verifies with
    // the new key and, until it is retired, the old one.
    let rotated = products::rotate_key(
        &app.console,
        form(serde_json::json!({
            "productId": product, "subscriptionId": bound.subscription, "signingKey": null
        })),
    )
    .await
    .expect("rotated");
    assert!(rotated.previous_still_verifies);
    let (rotated_id, rotated_key) = service.subscription_at(&product, &url, TX).expect("kept");
    assert_eq!(rotated_id, service_id);
    assert_eq!(rotated.key, rotated_key);
    assert_ne!(rotated_key, service_key);
    let after = element(&app, &product, &url).await;
    assert!(after.has_current && after.has_previous);
    assert_eq!(after.bound_id.as_deref(), Some(service_id.as_str()));
    assert_eq!(
        service
            .notify(&product, &url, TX)
            .await
            .expect("sent")
            .status,
        200
    );
    let old = service
        .send_notification(&url, &service_id, &service_key, &product, TX)
        .await
        .expect("sent");
    assert_eq!(old.status, 200, "the previous key verifies until retired");

    // Retire the previous key: only the new one verifies.
    let retired = app
        .console
        .blocking({
            let (product, url) = (product.clone(), url.clone());
            move |console| products::retire_previous_element_key(console, product, url, TX.into())
        })
        .await
        .expect("retired");
    assert!(retired.has_current && !retired.has_previous);
    let old = service
        .send_notification(&url, &service_id, &service_key, &product, TX)
        .await
        .expect("sent");
    assert_eq!(old.status, 401, "the retired key no longer verifies");

    // A key set by rotation on the seeded subscription (subscribed elsewhere): it is kept
    // here now and waits for a notification like a new one.
    products::rotate_key(
        &app.console,
        form(serde_json::json!({
            "productId": product, "subscriptionId": seeded.subscription, "signingKey": null
        })),
    )
    .await
    .expect("the seeded one rotated");
    let seeded = element(&app, &product, SEEDED).await;
    assert!(seeded.has_current && !seeded.has_previous);
    assert_eq!(seeded.bound_id, None);

    // Edit the events: the same subscription, its key and binding kept.
    subscriptions::update(
        &app.console,
        form(serde_json::json!({
            "productId": product, "subscriptionId": bound.subscription,
            "url": null, "events": ["created", "updated"], "resource": null
        })),
    )
    .await
    .expect("events changed");
    assert_eq!(
        service.subscription_at(&product, &url, TX),
        Some((service_id.clone(), rotated_key.clone()))
    );
    assert_eq!(
        element(&app, &product, &url).await.bound_id.as_deref(),
        Some(service_id.as_str())
    );

    // Edit the url: another subscription at this service, sent with the key kept here, not
    // bound until its own first notification.
    let moved_url = format!("{url}?moved=1");
    subscriptions::update(
        &app.console,
        form(serde_json::json!({
            "productId": product, "subscriptionId": bound.subscription,
            "url": moved_url, "events": null, "resource": null
        })),
    )
    .await
    .expect("moved");
    let (moved_id, moved_key) = service
        .subscription_at(&product, &moved_url, TX)
        .expect("the moved subscription");
    assert_ne!(moved_id, service_id);
    assert_eq!(moved_key, rotated_key);
    let gone = element(&app, &product, &url).await;
    assert!(!gone.has_current && gone.bound_id.is_none());
    let moved = element(&app, &product, &moved_url).await;
    assert!(moved.has_current && moved.bound_id.is_none());
    assert_eq!(
        service
            .notify(&product, &moved_url, TX)
            .await
            .expect("sent")
            .status,
        200
    );
    let moved = element(&app, &product, &moved_url).await;
    assert_eq!(moved.bound_id.as_deref(), Some(moved_id.as_str()));

    // Delete by url and resource: the other one stays, the element's entries go, and the
    // listener stops verifying its id.
    let after = subscriptions::delete(&app.console, &product, &moved.subscription)
        .await
        .expect("deleted");
    assert_eq!(after.webhooks.len(), 1);
    assert_eq!(after.webhooks[0].url.as_deref(), Some(SEEDED));
    let deleted = element(&app, &product, &moved_url).await;
    assert!(!deleted.has_current && deleted.bound_id.is_none());
    let late = service
        .send_notification(&moved_url, &moved_id, &moved_key, &product, TX)
        .await
        .expect("sent");
    assert_eq!(late.status, 401);
    app.stop().await;
}

#[tokio::test]
async fn a_subscription_that_cannot_be_named_by_url_and_resource_is_refused_in_words() {
    let app = Headless::start().await;
    let refused = products::element_keys(
        &app.console,
        "p-1".into(),
        "https://hooks.example/tx".into(),
        "urn:svc:partner:transaction:document".into(),
    )
    .await
    .expect_err("a resource the console does not know");
    assert_eq!(refused.kind, ErrorKind::InvalidInput);
    assert!(
        refused
            .message
            .contains("(urn:svc:partner:transaction:document) is not one the console knows"),
        "{refused:?}"
    );
    app.stop().await;
}

//! A service whose product `webhooks` elements carry no `subscriptionId` (the spec shows none;
//! the test kit's `without_subscription_ids` dialect), over real HTTP: subscribing, rotating,
//! editing and deleting by the element's `url` and `resource`, with the key kept for the element
//! in the secret store; and the listener binding the id the first notification names, through
//! the app's key source (`KeychainKeys`) over that store.

// A failed step is the test's failure: its helpers unwrap as the tests do.
#![allow(clippy::unwrap_used)]

use chrono::Duration;
use partner_api::{EventType, ResourceType};
use partner_client::elements::{bound_id, element_keys, unbound_elements};
use partner_client::{
    ConnectionConfig, MemoryStore, NewSubscription, PartnerClient, SecretStore, SubscriptionChange,
    SubscriptionRef,
};
use partner_listener::{KeySource, Listener, ListenerConfig, Retention, Store};
use partner_local::KeychainKeys;
use partner_testkit::other_service::{Dialect, OtherService};
use std::sync::Arc;

const TX: &str = "urn:svc:partner:transaction";
const WRONG_KEY: &str = "Wrong-Key!0123456789abcdefGHIJKLMNop";

fn client_of(service: &OtherService) -> PartnerClient {
    let config = ConnectionConfig::new(
        &service.base_url(),
        service.client_id(),
        service.client_secret().clone(),
    )
    .unwrap();
    PartnerClient::new(config).unwrap()
}

fn element_ref(url: &str) -> SubscriptionRef {
    SubscriptionRef::Element {
        url: url.to_string(),
        resource: TX.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_rotate_edit_delete_and_verify_a_subscription_named_only_in_notifications() {
    let service = OtherService::start(Dialect::without_subscription_ids()).await;
    let client = client_of(&service);
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());

    // The app's listener, its keys read from the same store the client writes.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("captures.sqlite3"), Retention::default()).unwrap();
    let keys = Arc::new(KeychainKeys::new(secrets.clone(), Duration::hours(24)));
    let config = ListenerConfig::default();
    let path = config.path.clone();
    let listener = Listener::new(config, store, keys.clone()).unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{path}", tcp.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = listener.clone();
    let task = tokio::spawn(async move {
        serving
            .serve(tcp, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });

    let product_id = service.products()[0]["id"].as_str().unwrap().to_string();
    let seeded = client.get_product(&product_id).await.unwrap();
    assert_eq!(seeded.webhooks.len(), 1);
    assert!(seeded.webhooks[0].subscription_id.is_none());

    // Subscribe: the key is kept for the element, listed as not bound yet.
    let subscribed = client
        .add_subscription(
            &secrets,
            &product_id,
            &NewSubscription {
                url: url.clone(),
                events: vec![EventType::Created],
                resource: ResourceType::Transaction,
            },
            None,
        )
        .await
        .unwrap();
    let element = subscribed.element.clone().expect("kept under its element");
    let product = client.get_product(&product_id).await.unwrap();
    assert_eq!(
        product.webhooks.len(),
        2,
        "the seeded one is kept by url and resource"
    );
    assert!(product.webhooks.iter().all(|w| w.subscription_id.is_none()));
    let (service_id, service_key) = service.subscription_at(&product_id, &url, TX).unwrap();
    let kept = element_keys(secrets.as_ref(), &element).unwrap().unwrap();
    assert!(kept.current.ct_eq(&service_key));
    assert_eq!(
        unbound_elements(secrets.as_ref()).unwrap(),
        vec![element.clone()]
    );

    // The first notification binds the id it names; later ones verify directly.
    let first = service.notify(&product_id, &url, TX).await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.subscription_id, service_id);
    assert_eq!(
        bound_id(secrets.as_ref(), &element).unwrap().as_deref(),
        Some(service_id.as_str())
    );
    assert!(unbound_elements(secrets.as_ref()).unwrap().is_empty());
    assert_eq!(
        service.notify(&product_id, &url, TX).await.unwrap().status,
        200
    );
    let wrong = service
        .send_notification(&url, &service_id, WRONG_KEY, &product_id, TX)
        .await
        .unwrap();
    assert_eq!(wrong.status, 401, "a wrong key stays invalid");
    // The next start needs no trial: a fresh key source finds the id's keys in the store.
    let next_start = KeychainKeys::new(secrets.clone(), Duration::hours(24));
    assert!(next_start.unbound().is_empty());
    assert!(next_start
        .keys(&service_id)
        .unwrap()
        .current
        .ct_eq(&service_key));

    // Rotate by url and resource: the service keeps the subscription's id.
    let rotation = client
        .rotate_signing_key(secrets.as_ref(), &product_id, element_ref(&url), None)
        .await
        .unwrap();
    assert_eq!(rotation.element.as_ref(), Some(&element));
    let (rotated_id, rotated_key) = service.subscription_at(&product_id, &url, TX).unwrap();
    assert_eq!(rotated_id, service_id);
    assert_ne!(rotated_key, service_key);
    let kept = element_keys(secrets.as_ref(), &element).unwrap().unwrap();
    assert!(kept.current.ct_eq(&rotated_key));
    assert!(kept.previous.unwrap().key.ct_eq(&service_key));
    keys.forget(&service_id); // as the app's rotate hands the listener the new keys
    assert_eq!(
        service.notify(&product_id, &url, TX).await.unwrap().status,
        200
    );
    let old = service
        .send_notification(&url, &service_id, &service_key, &product_id, TX)
        .await
        .unwrap();
    assert_eq!(
        old.status, 200,
        "the previous key verifies in its grace period"
    );

    // Edit the events: the same subscription, its key kept.
    let updated = client
        .update_subscription(
            &product_id,
            element_ref(&url),
            &SubscriptionChange {
                events: Some(vec![EventType::Created, EventType::Updated]),
                ..SubscriptionChange::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.events.len(), 2);
    assert_eq!(
        service.subscription_at(&product_id, &url, TX),
        Some((service_id.clone(), rotated_key.clone()))
    );

    // Edit the url: another subscription at this service, sent with the key kept.
    let moved_url = format!("{url}?moved=1");
    let moved = client
        .update_subscription_keeping_key(
            &secrets,
            &product_id,
            element_ref(&url),
            &SubscriptionChange {
                url: Some(moved_url.clone()),
                ..SubscriptionChange::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(moved.url.as_deref(), Some(moved_url.as_str()));
    assert!(service.subscription_at(&product_id, &url, TX).is_none());
    let (moved_id, moved_key) = service
        .subscription_at(&product_id, &moved_url, TX)
        .unwrap();
    assert_ne!(moved_id, service_id);
    assert_eq!(moved_key, rotated_key);
    assert!(element_keys(secrets.as_ref(), &element).unwrap().is_none());
    let moved_element = partner_client::SubscriptionElement {
        url: moved_url.clone(),
        ..element.clone()
    };
    assert_eq!(
        unbound_elements(secrets.as_ref()).unwrap(),
        vec![moved_element.clone()]
    );
    keys.forget_unbound();
    let sent = service.notify(&product_id, &moved_url, TX).await.unwrap();
    assert_eq!(sent.status, 200, "the moved subscription binds its new id");
    assert_eq!(
        bound_id(secrets.as_ref(), &moved_element)
            .unwrap()
            .as_deref(),
        Some(moved_id.as_str())
    );

    // Delete by url and resource: the seeded one stays, the element's entries go.
    let after = client
        .delete_subscription(&secrets, &product_id, element_ref(&moved_url))
        .await
        .unwrap();
    assert_eq!(after.webhooks.len(), 1);
    assert_eq!(
        after.webhooks[0].url.as_deref(),
        Some("https://hooks.other.example/tx")
    );
    assert!(element_keys(secrets.as_ref(), &moved_element)
        .unwrap()
        .is_none());
    assert!(bound_id(secrets.as_ref(), &moved_element)
        .unwrap()
        .is_none());
    let fresh = KeychainKeys::new(secrets.clone(), Duration::hours(24));
    assert!(fresh.keys(&moved_id).is_none());

    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_signed_with_a_key_of_no_subscription_binds_nothing() {
    let service = OtherService::start(Dialect::without_subscription_ids()).await;
    let client = client_of(&service);
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("captures.sqlite3"), Retention::default()).unwrap();
    let keys = Arc::new(KeychainKeys::new(secrets.clone(), Duration::hours(24)));
    let config = ListenerConfig::default();
    let path = config.path.clone();
    let listener = Listener::new(config, store, keys.clone()).unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{path}", tcp.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = listener.clone();
    let task = tokio::spawn(async move {
        serving
            .serve(tcp, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    let product_id = service.products()[0]["id"].as_str().unwrap().to_string();
    let subscribed = client
        .add_subscription(
            &secrets,
            &product_id,
            &NewSubscription {
                url: url.clone(),
                events: vec![EventType::Created],
                resource: ResourceType::Transaction,
            },
            None,
        )
        .await
        .unwrap();
    let element = subscribed.element.unwrap();
    let (service_id, _) = service.subscription_at(&product_id, &url, TX).unwrap();
    let forged = service
        .send_notification(&url, &service_id, WRONG_KEY, &product_id, TX)
        .await
        .unwrap();
    assert_eq!(forged.status, 401);
    assert!(bound_id(secrets.as_ref(), &element).unwrap().is_none());
    assert_eq!(unbound_elements(secrets.as_ref()).unwrap(), vec![element]);
    let real = service.notify(&product_id, &url, TX).await.unwrap();
    assert_eq!(real.status, 200);
    let _ = stop.send(());
    task.await.unwrap();
}

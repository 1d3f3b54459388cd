//! Key rotation against the sandbox: the new key is accepted, stored with the old one as
//! previous, used for the next notification, and every other subscription is left as it was;
//! a new subscription's key is kept before the service holds it and removed if it is refused.

use crate::support::Setup;
use crate::support::Strict;
use partner_api::signature::{verify, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::{
    signing_key, EventType, NewProduct, ResourceType, Secret, WebhookSubscriptionInput,
};
use partner_client::{
    signing_keys, ErrorKind, MemoryStore, NewSubscription, SecretSlot, SecretStore,
};
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_testkit::TestReceiver;
use std::sync::Arc;
use std::time::Duration;

pub fn subscription(url: String, key: &Secret, resource: ResourceType) -> WebhookSubscriptionInput {
    WebhookSubscriptionInput {
        subscription_id: None,
        url: Some(url),
        events: Some(vec![EventType::Created, EventType::Updated]),
        resource: Some(resource),
        signing_key: Some(key.clone()),
    }
}

pub fn new_product(name: &str, webhooks: Vec<WebhookSubscriptionInput>) -> NewProduct {
    NewProduct {
        name: name.into(),
        listing_name: format!("{name} listing"),
        request_types: vec!["NEW_REQUEST".into()],
        webhooks,
        ..NewProduct::default()
    }
}

/// The lender starts a transaction on a product (sandbox side, not the partner API).
pub async fn lender_creates_transaction(setup: &Setup, product_id: &str) -> String {
    let response = reqwest::Client::new()
        .post(setup.sandbox.url("/sandbox/v1/transactions"))
        .json(&serde_json::json!({ "productId": product_id, "requestType": "NEW_REQUEST" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201, "lender create");
    let body: serde_json::Value = response.json().await.unwrap();
    body["id"].as_str().unwrap().to_string()
}

pub fn verifies(key: &Secret, request: &partner_testkit::ReceivedRequest) -> bool {
    let signature = request.header(SIGNATURE_HEADER).unwrap_or_default();
    verify(key.expose().as_bytes(), &request.body, signature)
}

#[tokio::test]
async fn a_rotated_key_is_accepted_stored_and_used_while_other_subscriptions_stay() {
    let setup = Setup::empty().await;
    let store = MemoryStore::new();
    let mut receiver_a = TestReceiver::always(200).await.unwrap();
    let mut receiver_b = TestReceiver::always(200).await.unwrap();
    let key_a = signing_key::generate();
    let key_b = signing_key::generate();
    let product = setup
        .client
        .create_product_storing_keys(
            &store,
            &new_product(
                "rotating",
                vec![
                    subscription(receiver_a.url(), &key_a, ResourceType::Transaction),
                    subscription(receiver_b.url(), &key_b, ResourceType::Transaction),
                ],
            ),
        )
        .await
        .unwrap()
        .strict();
    let (sub_a, sub_b) = (
        product.webhooks[0].subscription_id.clone(),
        product.webhooks[1].subscription_id.clone(),
    );
    assert!(signing_keys(&store, &sub_a)
        .unwrap()
        .unwrap()
        .current
        .ct_eq(key_a.expose()));

    let rotation = setup
        .client
        .rotate_signing_key(&store, &product.id, &sub_a, None)
        .await
        .unwrap();
    assert!(rotation.generated);
    assert_eq!(
        rotation.product.strict().webhooks,
        product.webhooks,
        "both subscriptions are as they were (ids, urls, events, resources)"
    );
    let keys_a = signing_keys(&store, &sub_a).unwrap().unwrap();
    assert!(!keys_a.current.ct_eq(key_a.expose()), "a new key");
    assert!(signing_key::check(keys_a.current.expose()).is_ok());
    let previous = keys_a.previous.clone().expect("the old key is kept");
    assert!(previous.key.ct_eq(key_a.expose()));
    assert_eq!(previous.replaced_at, rotation.replaced_at);
    let keys_b = signing_keys(&store, &sub_b).unwrap().unwrap();
    assert!(keys_b.current.ct_eq(key_b.expose()) && keys_b.previous.is_none());
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(fetched.webhooks, product.webhooks);

    // The next notification of A is signed with the new key (not the old), B's with its own.
    lender_creates_transaction(&setup, &product.id).await;
    let got_a = receiver_a
        .next(Duration::from_secs(10))
        .await
        .expect("A notified");
    let got_b = receiver_b
        .next(Duration::from_secs(10))
        .await
        .expect("B notified");
    assert_eq!(got_a.header(SUBSCRIPTION_HEADER), Some(sub_a.as_str()));
    assert!(
        verifies(&keys_a.current, &got_a),
        "signed with the rotated key"
    );
    assert!(!verifies(&key_a, &got_a), "not with the old one");
    assert_eq!(got_b.header(SUBSCRIPTION_HEADER), Some(sub_b.as_str()));
    assert!(verifies(&key_b, &got_b), "B still signs with its own key");

    // A key of the caller's choice is checked, then used.
    let chosen = Secret::new("ChosenKey0123456789abcdefghijkl!");
    setup
        .client
        .rotate_signing_key(&store, &product.id, &sub_a, Some(chosen.clone()))
        .await
        .unwrap();
    let keys_a2 = signing_keys(&store, &sub_a).unwrap().unwrap();
    assert!(keys_a2.current.ct_eq(chosen.expose()));
    assert!(keys_a2.previous.unwrap().key.ct_eq(keys_a.current.expose()));
}

#[tokio::test]
async fn a_failed_rotation_changes_nothing() {
    let setup = Setup::empty().await;
    let store = MemoryStore::new();
    let receiver = TestReceiver::always(200).await.unwrap();
    let key = signing_key::generate();
    let product = setup
        .client
        .create_product_storing_keys(
            &store,
            &new_product(
                "steady",
                vec![subscription(
                    receiver.url(),
                    &key,
                    ResourceType::TransactionEvent,
                )],
            ),
        )
        .await
        .unwrap()
        .strict();
    let sub = product.webhooks[0].subscription_id.clone();

    let bad = setup
        .client
        .rotate_signing_key(
            &store,
            &product.id,
            &sub,
            Some(Secret::new("lowercase-only-and-long-enough-to-pass-length")),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Rule);
    assert!(
        !bad.to_string().contains("lowercase-only"),
        "the key is never quoted"
    );

    let unknown = setup
        .client
        .rotate_signing_key(&store, &product.id, "no-such-subscription", None)
        .await
        .unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
    let missing = setup
        .client
        .rotate_signing_key(&store, "no-such-product", &sub, None)
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);

    let keys = signing_keys(&store, &sub).unwrap().unwrap();
    assert!(keys.current.ct_eq(key.expose()) && keys.previous.is_none());
    assert!(store
        .get(&partner_client::SecretSlot::SigningKey {
            subscription_id: "no-such-subscription".into()
        })
        .unwrap()
        .is_none());
}

/// The keychain as a [`MemoryStore`] that also records each write and removal, in order.
#[derive(Debug, Default)]
pub struct RecordingStore {
    inner: MemoryStore,
    log: std::sync::Mutex<Vec<String>>,
}

impl RecordingStore {
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl SecretStore for RecordingStore {
    fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<Secret>> {
        self.inner.get(slot)
    }
    fn set(&self, slot: &SecretSlot, value: &Secret) -> partner_client::Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("set {}", slot.account()));
        self.inner.set(slot, value)
    }
    fn delete(&self, slot: &SecretSlot) -> partner_client::Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("delete {}", slot.account()));
        self.inner.delete(slot)
    }
}

fn pending_prefix(product_id: &str) -> String {
    format!("signing-key:pending:{product_id}:")
}

#[tokio::test]
async fn an_added_subscription_keeps_the_others_and_its_key_is_kept_first() {
    let setup = Setup::empty().await;
    let recording = Arc::new(RecordingStore::default());
    let store: Arc<dyn SecretStore> = recording.clone();
    let mut receiver_a = TestReceiver::always(200).await.unwrap();
    let mut receiver_b = TestReceiver::always(200).await.unwrap();
    let key_a = signing_key::generate();
    let product = setup
        .client
        .create_product_storing_keys(
            store.as_ref(),
            &new_product(
                "subscribing",
                vec![subscription(
                    receiver_a.url(),
                    &key_a,
                    ResourceType::Transaction,
                )],
            ),
        )
        .await
        .unwrap()
        .strict();
    let sub_a = product.webhooks[0].subscription_id.clone();
    let before = recording.log().len();

    let subscribed = setup
        .client
        .add_subscription(
            &store,
            &product.id,
            &NewSubscription {
                url: format!("  {}  ", receiver_b.url()),
                events: vec![EventType::Created],
                resource: ResourceType::Transaction,
            },
            None,
        )
        .await
        .unwrap();
    assert!(subscribed.generated);
    assert!(signing_key::check(subscribed.key.expose()).is_ok());
    let sub_b = subscribed.subscription_id.clone();
    assert_ne!(sub_b, sub_a);
    assert_eq!(subscribed.product.webhooks.len(), 2);
    let after = subscribed.product.strict();
    assert_eq!(after.webhooks[0], product.webhooks[0]);
    let added = &after.webhooks[1];
    assert_eq!(
        (added.subscription_id.as_str(), added.url.as_str()),
        (sub_b.as_str(), receiver_b.url().as_str()),
        "the URL is sent trimmed"
    );
    assert_eq!(added.events, vec![EventType::Created]);

    // Keychain first (a pending slot of the product), then the subscription's slot, then the
    // pending slot is gone.
    let log = recording.log()[before..].to_vec();
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log[0].starts_with(&format!("set {}", pending_prefix(&product.id))));
    assert_eq!(log[1], format!("set signing-key:{sub_b}:current"));
    assert_eq!(log[2], log[0].replacen("set", "delete", 1));
    let keys_b = signing_keys(store.as_ref(), &sub_b).unwrap().unwrap();
    assert!(keys_b.current.ct_eq(subscribed.key.expose()) && keys_b.previous.is_none());
    let keys_a = signing_keys(store.as_ref(), &sub_a).unwrap().unwrap();
    assert!(keys_a.current.ct_eq(key_a.expose()));

    // The service signs the new subscription's notifications with the kept key.
    lender_creates_transaction(&setup, &product.id).await;
    let got_b = receiver_b
        .next(Duration::from_secs(10))
        .await
        .expect("B notified");
    assert_eq!(got_b.header(SUBSCRIPTION_HEADER), Some(sub_b.as_str()));
    assert!(verifies(&subscribed.key, &got_b));
    let got_a = receiver_a
        .next(Duration::from_secs(10))
        .await
        .expect("A still notified");
    assert!(verifies(&key_a, &got_a), "A keeps its own key");
}

#[tokio::test]
async fn a_refused_subscription_leaves_no_key_behind() {
    // A sandbox that refuses http:// callbacks, which only the service can know: the client lets
    // http:// to loopback through for the service to decide.
    let setup = Setup::with_config(SandboxConfig {
        allow_http_callbacks: false,
        clients: vec![ClientCredentials::generate()],
        ..SandboxConfig::default()
    })
    .await;
    let recording = Arc::new(RecordingStore::default());
    let store: Arc<dyn SecretStore> = recording.clone();
    let product = setup
        .client
        .create_product_storing_keys(store.as_ref(), &new_product("refusing", vec![]))
        .await
        .unwrap()
        .strict();
    let hook = |url: &str| NewSubscription {
        url: url.into(),
        events: vec![EventType::Created],
        resource: ResourceType::TransactionEvent,
    };

    // The service refuses the URL: the key had been kept first, and is removed again.
    let refused = setup
        .client
        .add_subscription(&store, &product.id, &hook("http://127.0.0.1/hook"), None)
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest, "{refused}");
    let log = recording.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].starts_with(&format!("set {}", pending_prefix(&product.id))));
    assert_eq!(log[1], log[0].replacen("set", "delete", 1));

    // Refused before anything is kept or sent: a key that breaks the rule (never quoted), no
    // URL, an unknown product.
    let bad = setup
        .client
        .add_subscription(
            &store,
            &product.id,
            &hook("http://127.0.0.1/hook"),
            Some(Secret::new("lowercase-only-and-long-enough-to-pass-length")),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Rule);
    assert!(!bad.to_string().contains("lowercase-only"));
    let blank = setup
        .client
        .add_subscription(&store, &product.id, &hook("  "), None)
        .await
        .unwrap_err();
    assert_eq!(blank.kind(), ErrorKind::Rule);
    // A URL that breaks partner-api's callback rule whatever the service allows, and no events.
    let ftp = setup
        .client
        .add_subscription(&store, &product.id, &hook("ftp://127.0.0.1/hook"), None)
        .await
        .unwrap_err();
    assert_eq!(ftp.kind(), ErrorKind::Rule, "{ftp}");
    let no_events = setup
        .client
        .add_subscription(
            &store,
            &product.id,
            &NewSubscription {
                events: vec![],
                ..hook("https://example.test/hook")
            },
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(no_events.kind(), ErrorKind::Rule, "{no_events}");
    let missing = setup
        .client
        .add_subscription(&store, "no-such-product", &hook("http://127.0.0.1/h"), None)
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(recording.log().len(), 2, "nothing more was kept");
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert!(fetched.webhooks.is_empty());
}

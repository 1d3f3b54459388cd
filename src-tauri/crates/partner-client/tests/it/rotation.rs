//! Key rotation against the sandbox: the new key is accepted, stored with the old one as
//! previous, used for the next notification, and every other subscription is left as it was.

use crate::support::Setup;
use partner_api::signature::{verify, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::{
    signing_key, EventType, NewProduct, ResourceType, Secret, WebhookSubscriptionInput,
};
use partner_client::{signing_keys, ErrorKind, MemoryStore, SecretStore};
use partner_testkit::TestReceiver;
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

fn verifies(key: &Secret, request: &partner_testkit::ReceivedRequest) -> bool {
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
        .unwrap();
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
        rotation.product.webhooks, product.webhooks,
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
    let fetched = setup.client.get_product(&product.id).await.unwrap();
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
        .unwrap();
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

//! Editing, deleting and re-pointing subscriptions against the sandbox: an update keeps the key
//! (the service still signs with the stored one), a delete takes the keys out of the keychain
//! only once the service has let the subscription go, and a re-point moves exactly the
//! subscriptions under the old base and reports a product that failed without stopping.

use crate::rotation::RecordingStore;
use crate::rotation::{lender_creates_transaction, new_product, subscription, verifies};
use crate::support::Setup;
use crate::support::Strict;
use partner_api::signature::SUBSCRIPTION_HEADER;
use partner_api::{signing_key, EventType, Product, ResourceType, Secret};
use partner_client::{
    signing_keys, ClientError, ErrorKind, MemoryStore, PartnerClient, SecretSlot, SecretStore,
    SubscriptionChange,
};
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_testkit::TestReceiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Creates a product whose subscriptions go to `urls` (resource: transactions), keys in `store`.
async fn product_with(
    setup: &Setup,
    store: &dyn SecretStore,
    name: &str,
    urls: &[String],
) -> Product {
    let hooks = urls
        .iter()
        .map(|url| {
            subscription(
                url.clone(),
                &signing_key::generate(),
                ResourceType::Transaction,
            )
        })
        .collect();
    setup
        .client
        .create_product_storing_keys(store, &new_product(name, hooks))
        .await
        .unwrap()
        .strict()
}

fn current_key(store: &dyn SecretStore, subscription_id: &str) -> Secret {
    signing_keys(store, subscription_id)
        .unwrap()
        .expect("a stored key")
        .current
}

#[tokio::test]
async fn an_update_changes_what_it_names_and_the_service_still_signs_with_the_stored_key() {
    let setup = Setup::empty().await;
    let store = MemoryStore::new();
    let mut old_receiver = TestReceiver::always(200).await.unwrap();
    let mut new_receiver = TestReceiver::always(200).await.unwrap();
    let mut other_receiver = TestReceiver::always(200).await.unwrap();
    let product = product_with(
        &setup,
        &store,
        "updating",
        &[old_receiver.url(), other_receiver.url()],
    )
    .await;
    let (sub_a, sub_b) = (
        product.webhooks[0].subscription_id.clone(),
        product.webhooks[1].subscription_id.clone(),
    );
    let key_a = current_key(&store, &sub_a);

    let new_url = format!("http://{}/moved", new_receiver.addr());
    let updated = setup
        .client
        .update_subscription(
            &product.id,
            &sub_a,
            &SubscriptionChange {
                url: Some(format!("  {new_url}  ")),
                events: Some(vec![EventType::Created]),
                resource: None,
            },
        )
        .await
        .unwrap()
        .strict();
    assert_eq!(updated.subscription_id, sub_a);
    assert_eq!(updated.url, new_url, "sent trimmed");
    assert_eq!(updated.events, vec![EventType::Created]);
    assert_eq!(updated.resource, ResourceType::Transaction, "kept");
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(fetched.webhooks[0], updated);
    assert_eq!(fetched.webhooks[1], product.webhooks[1], "B as it was");
    let keys_a = signing_keys(&store, &sub_a).unwrap().unwrap();
    assert!(keys_a.current.ct_eq(key_a.expose()) && keys_a.previous.is_none());

    // The service sends A's notification to the new URL, signed with the key it had.
    lender_creates_transaction(&setup, &product.id).await;
    let got = new_receiver
        .next(Duration::from_secs(10))
        .await
        .expect("A notified at its new URL");
    assert_eq!(got.header(SUBSCRIPTION_HEADER), Some(sub_a.as_str()));
    assert!(got.path.starts_with("/moved"), "{}", got.path);
    assert!(verifies(&key_a, &got), "signed with the kept key");
    let got_b = other_receiver
        .next(Duration::from_secs(10))
        .await
        .expect("B notified");
    assert_eq!(got_b.header(SUBSCRIPTION_HEADER), Some(sub_b.as_str()));
    assert!(
        old_receiver
            .next(Duration::from_millis(300))
            .await
            .is_none(),
        "nothing goes to A's old URL"
    );

    // The resource alone.
    let moved = setup
        .client
        .update_subscription(
            &product.id,
            &sub_a,
            &SubscriptionChange {
                resource: Some(ResourceType::TransactionEvent),
                ..SubscriptionChange::default()
            },
        )
        .await
        .unwrap()
        .strict();
    assert_eq!(moved.resource, ResourceType::TransactionEvent);
    assert_eq!(
        (moved.url.as_str(), moved.events.as_slice()),
        (new_url.as_str(), [EventType::Created].as_slice())
    );
}

#[tokio::test]
async fn a_bad_update_is_refused_in_words_and_changes_nothing() {
    let setup = Setup::empty().await;
    let store = MemoryStore::new();
    let product = product_with(
        &setup,
        &store,
        "steady-update",
        &["https://example.test/a".to_string()],
    )
    .await;
    let sub = product.webhooks[0].subscription_id.clone();
    let key = current_key(&store, &sub);
    let change = |url: Option<&str>, events: Option<Vec<EventType>>| SubscriptionChange {
        url: url.map(str::to_string),
        events,
        resource: None,
    };

    for (bad, says) in [
        (change(None, None), "nothing to change"),
        (change(Some("  "), None), "needs a URL"),
        (change(Some("ftp://example.test/a"), None), "https://"),
        (change(Some("not a url"), None), "not a valid URL"),
        (change(None, Some(vec![])), "at least one"),
        (
            change(None, Some(vec![EventType::Created, EventType::Created])),
            "twice",
        ),
    ] {
        let error = setup
            .client
            .update_subscription(&product.id, &sub, &bad)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Rule, "{bad:?}: {error}");
        assert!(error.to_string().contains(says), "{bad:?}: {error}");
    }
    let unknown = setup
        .client
        .update_subscription(
            &product.id,
            "no-such-subscription",
            &change(Some("https://example.test/b"), None),
        )
        .await
        .unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
    assert!(
        unknown
            .to_string()
            .contains("has no subscription no-such-subscription"),
        "{unknown}"
    );
    let missing = setup
        .client
        .update_subscription(
            "no-such-product",
            &sub,
            &change(Some("https://example.test/b"), None),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);

    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(fetched.webhooks, product.webhooks);
    assert!(current_key(&store, &sub).ct_eq(key.expose()));
}

/// A keychain that, each time an entry is removed, asks the service whether the product still
/// has that subscription (the answer is recorded with the entry's name).
#[derive(Debug)]
struct Witness {
    inner: MemoryStore,
    client: PartnerClient,
    product_id: String,
    runtime: tokio::runtime::Handle,
    removals: Mutex<Vec<(String, bool)>>,
}

impl SecretStore for Witness {
    fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<Secret>> {
        self.inner.get(slot)
    }
    fn set(&self, slot: &SecretSlot, value: &Secret) -> partner_client::Result<()> {
        self.inner.set(slot, value)
    }
    fn delete(&self, slot: &SecretSlot) -> partner_client::Result<()> {
        // Keychain calls run on the blocking pool, where waiting for the runtime is allowed.
        let product = self
            .runtime
            .block_on(self.client.get_product(&self.product_id))
            .unwrap()
            .strict();
        let at_service = product
            .webhooks
            .iter()
            .any(|w| slot.account().contains(&format!(":{}:", w.subscription_id)));
        self.removals
            .lock()
            .unwrap()
            .push((slot.account(), at_service));
        self.inner.delete(slot)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_subscription_leaves_the_service_then_the_keychain() {
    let setup = Setup::empty().await;
    let mut receiver_a = TestReceiver::always(200).await.unwrap();
    let mut receiver_b = TestReceiver::always(200).await.unwrap();
    let staging = MemoryStore::new();
    let product = product_with(
        &setup,
        &staging,
        "deleting",
        &[receiver_a.url(), receiver_b.url()],
    )
    .await;
    let (sub_a, sub_b) = (
        product.webhooks[0].subscription_id.clone(),
        product.webhooks[1].subscription_id.clone(),
    );
    let witness = Arc::new(Witness {
        inner: MemoryStore::new(),
        client: setup.client.clone(),
        product_id: product.id.clone(),
        runtime: tokio::runtime::Handle::current(),
        removals: Mutex::new(Vec::new()),
    });
    for sub in [&sub_a, &sub_b] {
        witness
            .inner
            .set(
                &SecretSlot::SigningKey {
                    subscription_id: sub.clone(),
                },
                &current_key(&staging, sub),
            )
            .unwrap();
    }
    let store: Arc<dyn SecretStore> = witness.clone();
    // A rotation gives A a previous key too, which must go as well.
    setup
        .client
        .rotate_signing_key(store.as_ref(), &product.id, &sub_a, None)
        .await
        .unwrap();
    assert!(signing_keys(store.as_ref(), &sub_a)
        .unwrap()
        .unwrap()
        .previous
        .is_some());
    let key_b = current_key(store.as_ref(), &sub_b);

    let patched = setup
        .client
        .delete_subscription(&store, &product.id, &sub_a)
        .await
        .unwrap()
        .strict();
    assert_eq!(patched.webhooks, vec![product.webhooks[1].clone()]);
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(fetched.webhooks, vec![product.webhooks[1].clone()]);
    assert_eq!(
        witness.removals.lock().unwrap().clone(),
        vec![
            (format!("signing-key:{sub_a}:current"), false),
            (format!("signing-key:{sub_a}:previous"), false),
        ],
        "both of A's entries, each removed when the service no longer had A"
    );
    assert!(signing_keys(store.as_ref(), &sub_a).unwrap().is_none());
    assert!(witness
        .inner
        .get(&SecretSlot::PreviousSigningKey {
            subscription_id: sub_a.clone()
        })
        .unwrap()
        .is_none());
    assert!(current_key(store.as_ref(), &sub_b).ct_eq(key_b.expose()));

    // Only B is notified now, with its own key.
    lender_creates_transaction(&setup, &product.id).await;
    let got_b = receiver_b
        .next(Duration::from_secs(10))
        .await
        .expect("B notified");
    assert!(verifies(&key_b, &got_b));
    assert!(receiver_a.next(Duration::from_millis(300)).await.is_none());

    // The last one: the product is left with none.
    let empty = setup
        .client
        .delete_subscription(&store, &product.id, &sub_b)
        .await
        .unwrap()
        .strict();
    assert!(empty.webhooks.is_empty());
    assert!(signing_keys(store.as_ref(), &sub_b).unwrap().is_none());
}

#[tokio::test]
async fn deleting_an_unknown_subscription_is_a_clear_error_and_touches_nothing() {
    let setup = Setup::empty().await;
    let recording = Arc::new(RecordingStore::default());
    let store: Arc<dyn SecretStore> = recording.clone();
    let product = product_with(
        &setup,
        store.as_ref(),
        "not-deleting",
        &["https://example.test/a".to_string()],
    )
    .await;
    let sub = product.webhooks[0].subscription_id.clone();
    let writes = recording.log().len();

    let unknown = setup
        .client
        .delete_subscription(&store, &product.id, "no-such-subscription")
        .await
        .unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
    assert_eq!(
        unknown.to_string(),
        format!(
            "not found: product {} has no subscription no-such-subscription",
            product.id
        )
    );
    let missing = setup
        .client
        .delete_subscription(&store, "no-such-product", &sub)
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(
        recording.log().len(),
        writes,
        "the keychain was not touched"
    );
    assert!(signing_keys(store.as_ref(), &sub).unwrap().is_some());
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(fetched.webhooks, product.webhooks);
}

/// A keychain that cannot remove anything (locked, say).
#[derive(Debug, Default)]
struct LockedForRemoval {
    inner: MemoryStore,
}

impl SecretStore for LockedForRemoval {
    fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<Secret>> {
        self.inner.get(slot)
    }
    fn set(&self, slot: &SecretSlot, value: &Secret) -> partner_client::Result<()> {
        self.inner.set(slot, value)
    }
    fn delete(&self, _slot: &SecretSlot) -> partner_client::Result<()> {
        Err(ClientError::Keychain {
            message: "the collection is locked".into(),
        })
    }
}

#[tokio::test]
async fn a_delete_whose_keys_cannot_be_removed_says_the_subscription_is_gone() {
    let setup = Setup::empty().await;
    let locked = Arc::new(LockedForRemoval::default());
    let store: Arc<dyn SecretStore> = locked.clone();
    let product = product_with(
        &setup,
        store.as_ref(),
        "half-deleting",
        &["https://example.test/a".to_string()],
    )
    .await;
    let sub = product.webhooks[0].subscription_id.clone();
    let key = current_key(store.as_ref(), &sub);

    let error = setup
        .client
        .delete_subscription(&store, &product.id, &sub)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Keychain);
    match &error {
        ClientError::KeysLeftBehind {
            product_id,
            subscription_id,
            message,
        } => {
            assert_eq!((product_id, subscription_id), (&product.id, &sub));
            assert!(message.contains("the collection is locked"), "{message}");
        }
        other => panic!("expected KeysLeftBehind, got {other:?}"),
    }
    let words = error.to_string();
    assert!(
        words.contains(&format!("subscription {sub} of product {}", product.id))
            && words.contains("is deleted, but its signing keys could not be removed"),
        "{words}"
    );
    assert!(!words.contains(key.expose()) && !format!("{error:?}").contains(key.expose()));
    let fetched = setup
        .client
        .get_product(&product.id)
        .await
        .unwrap()
        .strict();
    assert!(fetched.webhooks.is_empty(), "the delete itself was done");
}

#[tokio::test]
async fn repointing_moves_exactly_the_subscriptions_under_the_old_base() {
    // A body limit that the PATCH of one product, and only that one, exceeds: the service
    // refuses it (413), and the other products are still re-pointed.
    let setup = Setup::with_config(SandboxConfig {
        allow_http_callbacks: true,
        clients: vec![ClientCredentials::generate()],
        body_limit: 4096,
        ..SandboxConfig::default()
    })
    .await;
    let store = MemoryStore::new();
    let urls = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let p1 = product_with(
        &setup,
        &store,
        "p1",
        &urls(&[
            "https://old.example/hooks/a?x=1",
            "https://other.example/hooks/b",
        ]),
    )
    .await;
    let p2 = product_with(
        &setup,
        &store,
        "p2",
        &urls(&[
            "https://old.example/hooks",
            "https://old.example/hooksmith/d",
            "https://old.example:8443/hooks/f",
        ]),
    )
    .await;
    let p3 = product_with(
        &setup,
        &store,
        "p3",
        &urls(&["https://elsewhere.example/x"]),
    )
    .await;
    let long_tail = "t".repeat(3000);
    let p4 = product_with(
        &setup,
        &store,
        "p4",
        &[format!("https://old.example/hooks/{long_tail}")],
    )
    .await;
    let to = format!("https://new.example/{}/", "n".repeat(1500));

    // The dry run lists them and changes nothing.
    let under = setup
        .client
        .subscriptions_under("https://old.example/hooks/")
        .await
        .unwrap();
    let mut listed: Vec<(String, String)> = under
        .iter()
        .map(|at| {
            (
                at.product_id.clone(),
                at.subscription.strict().subscription_id,
            )
        })
        .collect();
    listed.sort();
    let mut expected = vec![
        (p1.id.clone(), p1.webhooks[0].subscription_id.clone()),
        (p2.id.clone(), p2.webhooks[0].subscription_id.clone()),
        (p4.id.clone(), p4.webhooks[0].subscription_id.clone()),
    ];
    expected.sort();
    assert_eq!(listed, expected);
    assert!(under.iter().any(|at| at.product_name == "p2"));
    for product in [&p1, &p2, &p3, &p4] {
        let fetched = setup
            .client
            .get_product(&product.id)
            .await
            .unwrap()
            .strict();
        assert_eq!(
            fetched.webhooks, product.webhooks,
            "the dry run changed nothing"
        );
    }

    let outcome = setup
        .client
        .repoint_subscriptions("https://old.example/hooks", &to)
        .await
        .unwrap();
    let base = to.trim_end_matches('/');
    let mut changed: Vec<(String, String, String, String)> = outcome
        .changed
        .iter()
        .map(|c| {
            (
                c.product_id.clone(),
                c.subscription_id.clone(),
                c.old_url.clone(),
                c.new_url.clone(),
            )
        })
        .collect();
    changed.sort();
    let mut expected = vec![
        (
            p1.id.clone(),
            p1.webhooks[0].subscription_id.clone(),
            "https://old.example/hooks/a?x=1".to_string(),
            format!("{base}/a?x=1"),
        ),
        (
            p2.id.clone(),
            p2.webhooks[0].subscription_id.clone(),
            "https://old.example/hooks".to_string(),
            base.to_string(),
        ),
    ];
    expected.sort();
    assert_eq!(changed, expected);
    assert_eq!(outcome.failed.len(), 1, "{:?}", outcome.failed);
    assert_eq!(outcome.failed[0].product_id, p4.id);
    assert_eq!(
        outcome.failed[0].error.kind(),
        ErrorKind::InvalidRequest,
        "{}",
        outcome.failed[0].error
    );

    // What the service holds: the moved ones with their ids, events and resources; the rest,
    // and the refused product, as they were.
    let after = |product: &Product| {
        let setup = &setup;
        let id = product.id.clone();
        async move {
            setup
                .client
                .get_product(&id)
                .await
                .unwrap()
                .strict()
                .webhooks
        }
    };
    let p1_now = after(&p1).await;
    assert_eq!(p1_now[0].url, format!("{base}/a?x=1"));
    assert_eq!(
        (
            &p1_now[0].subscription_id,
            &p1_now[0].events,
            p1_now[0].resource
        ),
        (
            &p1.webhooks[0].subscription_id,
            &p1.webhooks[0].events,
            p1.webhooks[0].resource
        )
    );
    assert_eq!(p1_now[1], p1.webhooks[1]);
    let p2_now = after(&p2).await;
    assert_eq!(p2_now[0].url, base);
    assert_eq!(p2_now[1..], p2.webhooks[1..]);
    assert_eq!(after(&p3).await, p3.webhooks);
    assert_eq!(after(&p4).await, p4.webhooks);
    for product in [&p1, &p2, &p3, &p4] {
        for w in &product.webhooks {
            assert!(
                signing_keys(&store, &w.subscription_id).unwrap().is_some(),
                "keys are not touched by a re-point"
            );
        }
    }

    // A base that breaks the callback rule, and a bad one, are refused before anything is sent.
    for (from, to) in [
        ("https://old.example", "ftp://new.example/"),
        ("https://old.example/?q=1", "https://new.example/"),
        ("", "https://new.example/"),
    ] {
        let error = setup
            .client
            .repoint_subscriptions(from, to)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Rule, "{from} -> {to}: {error}");
    }
}

#[tokio::test]
async fn a_repointed_subscription_is_notified_at_its_new_address_with_its_key() {
    // The tunnel case: the listener's public address changes; the key must not.
    let setup = Setup::empty().await;
    let store = MemoryStore::new();
    let mut old_tunnel = TestReceiver::always(200).await.unwrap();
    let mut new_tunnel = TestReceiver::always(200).await.unwrap();
    let product = product_with(&setup, &store, "tunnelled", &[old_tunnel.url()]).await;
    let sub = product.webhooks[0].subscription_id.clone();
    let key = current_key(&store, &sub);

    let outcome = setup
        .client
        .repoint_subscriptions(
            &format!("http://{}", old_tunnel.addr()),
            &format!("http://{}/", new_tunnel.addr()),
        )
        .await
        .unwrap();
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
    assert_eq!(outcome.changed.len(), 1);
    assert_eq!(outcome.changed[0].new_url, new_tunnel.url());

    lender_creates_transaction(&setup, &product.id).await;
    let got = new_tunnel
        .next(Duration::from_secs(10))
        .await
        .expect("notified at the new address");
    assert_eq!(got.header(SUBSCRIPTION_HEADER), Some(sub.as_str()));
    assert!(got.path.starts_with("/hook"), "{}", got.path);
    assert!(verifies(&key, &got));
    assert!(old_tunnel.next(Duration::from_millis(300)).await.is_none());

    // Nothing left under the old address: a second run changes nothing.
    let again = setup
        .client
        .repoint_subscriptions(
            &format!("http://{}", old_tunnel.addr()),
            &format!("http://{}/", new_tunnel.addr()),
        )
        .await
        .unwrap();
    assert!(again.changed.is_empty() && again.failed.is_empty());
}

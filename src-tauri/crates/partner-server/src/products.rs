//! The products and their webhook subscriptions, through the team's service connection: what
//! `GET /api/v1/products`, `POST /api/v1/products/{id}/subscriptions` and `.../rotate` do.
//!
//! Subscribing and rotating are partner-client's own ([`PartnerClient::add_subscription`],
//! [`PartnerClient::rotate_signing_key`]): the checks of the URL and events, the webhooks merge
//! patch that keeps every other subscription, where a subscription's key belongs (its id, or its
//! element where the service shows none). Only where the key rests differs from a laptop's: the
//! key is generated here, kept sealed as pending ([`signing_keys::keep_pending`]) before the
//! service is sent it, and once the service answered, kept where the client says it belongs,
//! by the subscription's id ([`signing_keys::set`], as `partner server key set` does: a rotated
//! key's predecessor keeps verifying for the grace period) or by its element, unbound until the
//! first notification that verifies with it ([`signing_keys::set_element`]). The client's own
//! secret store for the call is an empty one in memory, dropped with the call: the key goes to
//! no laptop's keychain, no answer, no log line and no error.
//!
//! Changing and deleting a subscription are the client's too
//! ([`PartnerClient::update_subscription_keeping_key`], [`PartnerClient::delete_subscription`]):
//! their secret store is a [`CallStore`], in memory, holding the key the servers keep for an
//! element that moves to a new url or resource, and after the call its signing-key entries the
//! client set or removed are applied to the servers' tables (a moved element's key kept under
//! the new element, unbound again; a deleted subscription's keys forgotten).

use crate::error::{Error, Result};
use crate::service::Service;
use crate::signing_keys;
use partner_api::read::SubscriptionView;
use partner_api::read::{self, Document};
use partner_api::{signing_key, EventType, ResourceType, ServiceSorts, SortSpec};
use partner_client::{
    ClientError, MemoryStore, NewSubscription, Page, PageRequest, SecretSlot, SecretStore,
    SubscriptionChange, SubscriptionElement, SubscriptionRef,
};
use partner_seal::DataKey;
use serde::Serialize;
use sqlx::PgPool;
use std::sync::{Arc, Mutex};

/// A page of the service's products (`sort` as the service takes it, sent as given).
pub async fn list(
    service: &Service,
    start: u64,
    limit: u64,
    sort: &str,
) -> Result<Page<Document<read::ProductView>>> {
    let sort: SortSpec = ServiceSorts::Unknown
        .parse::<read::ProductView>(sort)
        .map_err(|error| Error::Invalid(error.to_string()))?;
    let request = PageRequest::new(start, limit)
        .map_err(|error| Error::Invalid(error.to_string()))?
        .sorted(sort);
    let client = service.client().await?;
    client.list_products(&request).await.map_err(client_error)
}

/// One product as the service holds it.
pub async fn get(service: &Service, product_id: &str) -> Result<Document<read::ProductView>> {
    let client = service.client().await?;
    client.get_product(product_id).await.map_err(client_error)
}

/// What a subscribe or a rotation did; never the key.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyedSubscription {
    pub product: String,
    /// The subscription's id, where the service named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
    /// The element the key is kept by, where the service named no id (bound to the id by the
    /// first notification that verifies with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<SubscriptionElement>,
    /// The id, or `url (resource)`, for a sentence.
    pub subscription: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceType>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventType>,
}

/// Subscribes `product_id` to notifications at `subscription.url` with a generated key, kept
/// by the servers only.
pub async fn subscribe(
    service: &Service,
    pool: &PgPool,
    product_id: &str,
    subscription: &NewSubscription,
    by: &str,
) -> Result<KeyedSubscription> {
    let client = service.client().await?;
    let key = signing_key::generate();
    let pending =
        signing_keys::keep_pending(pool, service.server_key(), product_id, &key, by).await?;
    let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let subscribed = match client
        .add_subscription(&store, product_id, subscription, Some(key.clone()))
        .await
    {
        Ok(subscribed) => subscribed,
        Err(error) => {
            // Patched, but the answer does not show the subscription: the key stays pending.
            if !matches!(error, ClientError::Server { status: 200, .. }) {
                signing_keys::forget_pending(pool, &pending).await?;
            }
            return Err(client_error(error));
        }
    };
    match &subscribed.element {
        Some(element) => {
            signing_keys::set_element(pool, service.server_key(), element, &key, true).await?
        }
        None => {
            signing_keys::set(
                pool,
                service.server_key(),
                &subscribed.subscription_id,
                &key,
            )
            .await?
        }
    }
    signing_keys::forget_pending(pool, &pending).await?;
    Ok(KeyedSubscription {
        product: subscribed.product.id.clone(),
        subscription_id: subscribed
            .element
            .is_none()
            .then(|| subscribed.subscription_id.clone()),
        element: subscribed.element.clone(),
        subscription: subscribed.subscription_id.clone(),
        url: subscribed
            .element
            .as_ref()
            .map(|element| element.url.clone())
            .or_else(|| Some(subscription.url.trim().to_string())),
        resource: Some(subscription.resource),
        events: subscription.events.clone(),
    })
}

/// Rotates the signing key of `subscription` (an id, or `RESOURCE=URL`) of `product_id`: a
/// generated key, kept by the servers only; the one it replaces keeps verifying for the grace
/// period.
pub async fn rotate(
    service: &Service,
    pool: &PgPool,
    product_id: &str,
    subscription: &str,
    by: &str,
) -> Result<KeyedSubscription> {
    let reference = SubscriptionRef::parse(subscription);
    let client = service.client().await?;
    let key = signing_key::generate();
    let pending =
        signing_keys::keep_pending(pool, service.server_key(), product_id, &key, by).await?;
    let store = MemoryStore::new();
    let rotation = match client
        .rotate_signing_key(&store, product_id, &reference, Some(key.clone()))
        .await
    {
        Ok(rotation) => rotation,
        Err(error) => {
            signing_keys::forget_pending(pool, &pending).await?;
            return Err(client_error(error));
        }
    };
    let id = match &rotation.element {
        Some(element) => {
            signing_keys::set_element(pool, service.server_key(), element, &key, false).await?;
            None
        }
        None => {
            let id = match &reference {
                SubscriptionRef::Id(id) => id.clone(),
                SubscriptionRef::Element { .. } => rotation.subscription_id.clone(),
            };
            signing_keys::set(pool, service.server_key(), &id, &key).await?;
            Some(id)
        }
    };
    signing_keys::forget_pending(pool, &pending).await?;
    Ok(KeyedSubscription {
        product: rotation.product.id.clone(),
        subscription_id: id,
        element: rotation.element.clone(),
        subscription: rotation.subscription_id.clone(),
        url: rotation.element.as_ref().map(|element| element.url.clone()),
        resource: rotation
            .element
            .as_ref()
            .and_then(|element| ResourceType::parse(&element.resource)),
        events: Vec::new(),
    })
}

/// Changes a subscription's url, events or resource (its key kept: an element that moves takes
/// the key the servers keep for it, under the new element, to be bound again).
pub async fn update(
    service: &Service,
    pool: &PgPool,
    product_id: &str,
    subscription: &str,
    change: &SubscriptionChange,
) -> Result<SubscriptionView> {
    let reference = SubscriptionRef::parse(subscription);
    let client = service.client().await?;
    let store = CallStore::default();
    if let SubscriptionRef::Element { url, resource } = &reference {
        let element = SubscriptionElement {
            product_id: product_id.trim().to_string(),
            url: url.clone(),
            resource: resource.clone(),
        };
        if let Some(key) = signing_keys::element_key(pool, service.server_key(), &element).await? {
            store
                .memory
                .set(&element_slot(&element), &key)
                .map_err(client_error)?;
        }
    }
    let store = Arc::new(store);
    let shared: Arc<dyn SecretStore> = store.clone();
    let updated = client
        .update_subscription_keeping_key(&shared, product_id, &reference, change)
        .await
        .map_err(client_error)?;
    store.apply(pool, service.server_key()).await?;
    Ok(updated)
}

/// Deletes a subscription; the keys the servers keep for it are forgotten once the service has
/// deleted it.
pub async fn delete(
    service: &Service,
    pool: &PgPool,
    product_id: &str,
    subscription: &str,
) -> Result<Document<read::ProductView>> {
    let reference = SubscriptionRef::parse(subscription);
    let client = service.client().await?;
    let store = Arc::new(CallStore::default());
    let shared: Arc<dyn SecretStore> = store.clone();
    let patched = client
        .delete_subscription(&shared, product_id, &reference)
        .await
        .map_err(client_error)?;
    store.apply(pool, service.server_key()).await?;
    Ok(patched)
}

fn element_slot(element: &SubscriptionElement) -> SecretSlot {
    SecretSlot::ElementSigningKey {
        product_id: element.product_id.clone(),
        url: element.url.clone(),
        resource: element.resource.clone(),
    }
}

/// The client's secret store for one change or delete: in memory, and which signing-key entries
/// the client set or removed, to apply to the servers' tables once the service has answered.
#[derive(Debug, Default)]
struct CallStore {
    memory: MemoryStore,
    touched: Mutex<Vec<SecretSlot>>,
}

impl CallStore {
    fn touch(&self, slot: &SecretSlot) {
        let mut touched = self.touched.lock().unwrap_or_else(|p| p.into_inner());
        if !touched.contains(slot) {
            touched.push(slot.clone());
        }
    }

    /// The current keys the client set (kept, an element's as a new one) or removed
    /// (forgotten). Previous keys, bindings and lists are the servers' own to keep.
    async fn apply(&self, pool: &PgPool, server_key: &DataKey) -> Result<()> {
        let touched = self
            .touched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for slot in touched {
            let now = self.memory.get(&slot).map_err(client_error)?;
            match (&slot, now) {
                (SecretSlot::SigningKey { subscription_id }, Some(key)) => {
                    signing_keys::set(pool, server_key, subscription_id, &key).await?
                }
                (SecretSlot::SigningKey { subscription_id }, None) => {
                    signing_keys::forget(pool, subscription_id).await?
                }
                (
                    SecretSlot::ElementSigningKey {
                        product_id,
                        url,
                        resource,
                    },
                    now,
                ) => {
                    let element = SubscriptionElement {
                        product_id: product_id.clone(),
                        url: url.clone(),
                        resource: resource.clone(),
                    };
                    match now {
                        Some(key) => {
                            signing_keys::set_element(pool, server_key, &element, &key, true)
                                .await?
                        }
                        None => signing_keys::forget_element(pool, &element).await?,
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl SecretStore for CallStore {
    fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<partner_api::Secret>> {
        self.memory.get(slot)
    }

    fn set(&self, slot: &SecretSlot, value: &partner_api::Secret) -> partner_client::Result<()> {
        self.touch(slot);
        self.memory.set(slot, value)
    }

    fn delete(&self, slot: &SecretSlot) -> partner_client::Result<()> {
        self.touch(slot);
        self.memory.delete(slot)
    }
}

/// The client's error as the workspace tells it: what the member gave that the client's rules
/// refuse is theirs to mend (400); the service's answers are the service's.
fn client_error(error: ClientError) -> Error {
    match error {
        ClientError::Rule(_) => Error::Invalid(error.to_string()),
        other => other.into(),
    }
}

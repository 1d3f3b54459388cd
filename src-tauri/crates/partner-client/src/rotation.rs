//! Signing keys of subscriptions: a new subscription with its key, and rotation of a key (a new
//! key on the server and in the keychain, the old one kept for a while).
//!
//! Order matters, because the service never returns a key: a key it holds that the console lost
//! could only be replaced by another rotation. So the keychain is written first (the new key as
//! current, the old one as previous with the time it was replaced), then the service is patched;
//! if the PATCH fails the keychain is put back as it was. A receiver reading the keychain in
//! between verifies with either key, which is exactly what the previous slot is for.
//!
//! The PATCH is a JSON merge patch, where an array replaces the whole array: every other
//! subscription of the product is listed by its `subscriptionId` alone, which keeps it as it is,
//! and the rotated one carries its new `signingkey`. That list is built by
//! [`crate::subscriptions`], the one home of the webhooks patch, which also says why a
//! subscription created by someone else between the read and the PATCH would be dropped.
//!
//! A service that shows no `subscriptionId` (the spec shows none) names its subscriptions only
//! in its notifications: there a subscription is addressed by its element's `url` and
//! `resource`, and its key kept under the element ([`crate::elements`]); a rotation keeps the
//! subscription (and its id, which a listener learns from a notification), so the binding
//! stays. A new element's key goes from the pending slot to the element's, and the element is
//! listed for a listener to bind.
//!
//! A new subscription gets the same care, with one twist: the service assigns its id, which is
//! the keychain's name for the key, so the id is unknown until the PATCH answers. The key is
//! therefore written first to a pending slot of the product (so the service never holds a key
//! the console has not kept), moved to the subscription's slot once the answer names it, and the
//! pending slot removed; a failed PATCH removes it. Should the answer not show the new
//! subscription, the key stays in the pending slot and the error says so. The keychain is a
//! blocking D-Bus round trip, so those steps run on the blocking pool, never on an async worker
//! (the desktop app subscribes its demo product while its first screen is loading).

use crate::client::PartnerClient;
use crate::elements::{self, SubscriptionElement};
use crate::error::{ClientError, Result, RuleError};
use crate::secrets::SecretSlot;
use crate::secrets::{store_signing_key, SecretStore};
use crate::subscriptions::{
    check_events, checked_callback_url, find_subscription, in_keychain, webhooks_patch, KeyHome,
    SubscriptionRef,
};
use crate::writes::WriteAction;
use chrono::{DateTime, Utc};
use partner_api::read::{self, Document};
use partner_api::{
    signing_key, EventType, NewProduct, ResourceType, Secret, WebhookSubscriptionInput,
};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a rotation did (the key itself stays in the keychain).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rotation {
    pub product: Document<read::ProductView>,
    /// The subscription's id, or for one the service shows without an id, `url (resource)`.
    pub subscription_id: String,
    /// The element the key rests under, for a subscription the service shows without an id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<SubscriptionElement>,
    pub replaced_at: DateTime<Utc>,
    /// Whether the key was generated (rather than given by the caller).
    pub generated: bool,
}

/// A subscription to add to a product: where its notifications go and which ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSubscription {
    pub url: String,
    pub events: Vec<EventType>,
    pub resource: ResourceType,
}

/// What adding a subscription did. The key is the one the service now signs with, kept in the
/// keychain too; it is returned once so a caller can show it and hand it to a listener.
#[derive(Debug, Clone)]
pub struct Subscribed {
    pub product: Document<read::ProductView>,
    /// The id the service assigned, or for a service that shows none, `url (resource)`.
    pub subscription_id: String,
    /// The element the key rests under, when the service shows no id.
    pub element: Option<SubscriptionElement>,
    pub key: Secret,
    /// Whether the key was generated (rather than given by the caller).
    pub generated: bool,
}

/// Puts a subscription's keys back as they were before a rotation whose PATCH failed (by id or
/// by element, whichever home the keys have).
type Restore = dyn Fn(&dyn SecretStore) -> Result<()> + Send + Sync;

/// Tells apart the pending slots of subscriptions added at the same moment.
static PENDING_ATTEMPTS: AtomicU64 = AtomicU64::new(0);

impl PartnerClient {
    /// Replaces the signing key of one subscription of a product. A given key is checked against
    /// the spec's rule first; without one, a compliant key is generated.
    pub async fn rotate_signing_key(
        &self,
        store: &dyn SecretStore,
        product_id: &str,
        subscription: impl Into<SubscriptionRef>,
        new_key: Option<Secret>,
    ) -> Result<Rotation> {
        let subscription = subscription.into();
        let target = format!("product {product_id}, subscription {subscription}");
        self.writable(WriteAction::RotateKey, &target)?;
        let (key, generated) = key_to_use(new_key)?;
        let product = self.get_product(product_id).await?;
        let (_, home) = find_subscription(&product, &subscription)?;
        let patch = webhooks_patch(
            &product.id,
            &product.webhooks,
            |_, current| {
                Some(if *current == home {
                    WebhookSubscriptionInput {
                        signing_key: Some(key.clone()),
                        ..current.keep()
                    }
                } else {
                    current.keep()
                })
            },
            None,
        )?;

        let replaced_at = self.clock().now();
        let before: Box<Restore> = match &home {
            KeyHome::Id(id) => {
                let before = store_signing_key(store, id, &key, replaced_at)?;
                Box::new(move |store| before.restore(store))
            }
            KeyHome::Element(element) => {
                let before = elements::store_element_key(store, element, &key, replaced_at)?;
                Box::new(move |store| before.restore(store))
            }
        };
        let patched = match self
            .patch_product_as(&product.id, &patch, WriteAction::RotateKey, target)
            .await
        {
            Ok(product) => product,
            Err(error) => {
                if let Err(restore) = before(store) {
                    tracing::warn!(error = %restore, "could not put the keychain back after a failed rotation");
                }
                return Err(error);
            }
        };
        tracing::info!(product = %patched.id, subscription = %home.describe(), generated, "signing key rotated");
        Ok(Rotation {
            product: patched,
            subscription_id: home.describe(),
            element: match home {
                KeyHome::Element(element) => Some(element),
                KeyHome::Id(_) => None,
            },
            replaced_at,
            generated,
        })
    }

    /// Adds a subscription to a product: every existing subscription is kept by its id and one
    /// new entry is added with its signing key, which is in the keychain before the service
    /// holds it (under the new subscription's id once the service has assigned it). A given key
    /// is checked against the spec's rule first; without one, a compliant key is generated.
    pub async fn add_subscription(
        &self,
        store: &Arc<dyn SecretStore>,
        product_id: &str,
        subscription: &NewSubscription,
        new_key: Option<Secret>,
    ) -> Result<Subscribed> {
        self.writable(WriteAction::Subscribe, &format!("product {product_id}"))?;
        let (key, generated) = key_to_use(new_key)?;
        let url = checked_callback_url(&subscription.url)?;
        check_events(&subscription.events)?;
        let product = self.get_product(product_id).await?;
        // At a service that shows no ids, an element with this url and resource would be
        // matched and changed rather than added beside.
        if product.webhooks.iter().any(|w| {
            w.subscription_id.is_none()
                && w.url.as_deref() == Some(url.as_str())
                && w.resource.as_ref().and_then(|r| r.known()) == Some(subscription.resource)
        }) {
            return Err(ClientError::input(format!(
                "the product already has a subscription to {url} ({}); change or rotate that one; nothing was sent",
                subscription.resource.as_str()
            )));
        }
        let patch = webhooks_patch(
            &product.id,
            &product.webhooks,
            |_, current| Some(current.keep()),
            Some(WebhookSubscriptionInput {
                subscription_id: None,
                url: Some(url.clone()),
                events: Some(subscription.events.clone()),
                resource: Some(subscription.resource),
                signing_key: Some(key.clone()),
            }),
        )?;

        let pending = SecretSlot::PendingSigningKey {
            product_id: product.id.clone(),
            attempt: format!(
                "{}-{}",
                self.clock().now().timestamp_millis(),
                PENDING_ATTEMPTS.fetch_add(1, Ordering::Relaxed)
            ),
        };
        {
            let (slot, key) = (pending.clone(), key.clone());
            in_keychain(store, move |store| store.set(&slot, &key)).await?;
        }
        let target = format!("product {}", product.id);
        let patched = match self
            .patch_product_as(&product.id, &patch, WriteAction::Subscribe, target)
            .await
        {
            Ok(patched) => patched,
            Err(error) => {
                let slot = pending.clone();
                if let Err(forget) = in_keychain(store, move |store| store.delete(&slot)).await {
                    tracing::warn!(error = %forget, "could not remove the pending key after a failed subscription");
                }
                return Err(error);
            }
        };
        let added: Vec<_> = patched
            .webhooks
            .iter()
            .filter(|w| {
                w.subscription_id.is_some()
                    && !product
                        .webhooks
                        .iter()
                        .any(|old| old.subscription_id == w.subscription_id)
            })
            .collect();
        // Someone else's subscription added at the same moment is told apart by what was sent.
        let ours = match added.as_slice() {
            [only] => Some(*only),
            _ => added
                .iter()
                .find(|w| {
                    w.url.as_deref() == Some(url.as_str())
                        && w.resource.as_ref().and_then(|r| r.known())
                            == Some(subscription.resource)
                })
                .copied(),
        };
        // A service that shows no ids: the new element is the one with what was sent, that was
        // not there before (checked above).
        let element = SubscriptionElement {
            product_id: patched.id.clone(),
            url: url.clone(),
            resource: subscription.resource.as_str().to_string(),
        };
        let home = match ours.and_then(|w| w.subscription_id.clone()) {
            Some(id) => KeyHome::Id(id),
            None if patched
                .webhooks
                .iter()
                .any(|w| w.subscription_id.is_none() && element.is(w)) =>
            {
                KeyHome::Element(element)
            }
            None => {
                return Err(ClientError::Server {
                    status: 200,
                    message: format!(
                        "the product {} was patched but its answer does not show the new subscription; its key is kept in the keychain as {}",
                        patched.id,
                        pending.account()
                    ),
                    raw_body: None,
                });
            }
        };
        let now = self.clock().now();
        {
            let (home, key) = (home.clone(), key.clone());
            in_keychain(store, move |store| {
                match &home {
                    KeyHome::Id(id) => {
                        store_signing_key(store, id, &key, now)?;
                    }
                    KeyHome::Element(element) => {
                        elements::keep_new_element(store, element, &key, now)?
                    }
                }
                // The key is where it belongs: a pending entry left over is only clutter.
                if let Err(error) = store.delete(&pending) {
                    tracing::warn!(%error, "could not remove the pending key of a new subscription");
                }
                Ok(())
            })
            .await?;
        }
        tracing::info!(product = %patched.id, subscription = %home.describe(), generated, "subscription added");
        Ok(Subscribed {
            product: patched,
            subscription_id: home.describe(),
            element: match home {
                KeyHome::Element(element) => Some(element),
                KeyHome::Id(_) => None,
            },
            key,
            generated,
        })
    }

    /// Creates a product and keeps the signing keys of its new subscriptions in the keychain,
    /// matched to the service's subscription ids by position (the service keeps the order).
    pub async fn create_product_storing_keys(
        &self,
        store: &dyn SecretStore,
        product: &NewProduct,
    ) -> Result<Document<read::ProductView>> {
        let created = self.create_product(product).await?;
        if created.webhooks.len() != product.webhooks.len() {
            return Err(ClientError::Server {
                status: 201,
                message: format!(
                    "the product was created with {} subscriptions where {} were sent; its keys were not stored",
                    created.webhooks.len(),
                    product.webhooks.len()
                ),
                raw_body: None,
            });
        }
        let now = self.clock().now();
        for (n, (sent, made)) in product.webhooks.iter().zip(&created.webhooks).enumerate() {
            if let Some(key) = &sent.signing_key {
                if made.subscription_id.is_none() {
                    if let Some(element) = SubscriptionElement::of(&created.id, made) {
                        elements::keep_new_element(store, &element, key, now)?;
                        continue;
                    }
                }
                let Some(id) = made.subscription_id.as_deref() else {
                    return Err(ClientError::Unreadable {
                        status: 201,
                        call: "POST /partner/v2/products".into(),
                        message: format!(
                            "the product {} was created, but its subscription {} has no subscriptionId; its key was not stored",
                            created.id,
                            n + 1
                        ),
                        raw_body: None,
                    });
                };
                store_signing_key(store, id, key, now)?;
            }
        }
        Ok(created)
    }
}

/// The signing key a rotation or a new subscription gets: the given one once it meets the spec's
/// rule, else a generated one; and whether it was generated.
fn key_to_use(new_key: Option<Secret>) -> Result<(Secret, bool)> {
    match new_key {
        Some(key) => {
            signing_key::check(key.expose()).map_err(RuleError::from)?;
            Ok((key, false))
        }
        None => Ok((signing_key::generate(), true)),
    }
}

//! Editing, deleting and re-pointing a product's webhook subscriptions, and the one builder of
//! the webhooks merge patch that every subscription change sends (here and in
//! [`crate::rotation`]).
//!
//! The service has a single way to change subscriptions: `PATCH /partner/v2/products/{id}`
//! with a JSON merge patch, in which the `webhooks` array replaces the product's whole list. An
//! entry with a `subscriptionId` alone keeps that subscription as it is; with more fields it
//! changes those (an omitted `signingkey` keeps the key); an entry without an id creates one; a
//! subscription left out is deleted. So every change reads the product, lists every
//! subscription it does not touch by its id alone, and patches. [`webhooks_patch`] is that list,
//! built in one place so that no change can forget a subscription it did not mean to delete.
//!
//! A service that shows no `subscriptionId` (the spec shows none) matches an element without
//! one by its `url` and `resource`: such an element is kept by those two fields, changed by them
//! with the fields to change, and named by them ([`SubscriptionRef::Element`]); its key rests
//! under the element ([`crate::elements`]). Changing its `url` or `resource` makes it another
//! subscription at such a service, so the edit sends the new element with the key the console
//! holds for the old one (moved in the secret store first) and leaves the old one out.
//!
//! Lost updates: the spec gives products no `ETag`, and the sandbox neither sends one nor
//! honours `If-Match`, so there is no precondition to send. A subscription someone else adds
//! between our GET and our PATCH is deleted by our PATCH; one they delete in that window makes
//! ours fail (an unknown `subscriptionId` is a 400), the harmless side. The window is one GET
//! and one PATCH, kept as short as that; closing it needs the service to offer a precondition.
//!
//! Writes are never retried (`Repeat::Once`): a timeout does not say whether the service acted,
//! so the caller sees the error and reads the product again.
//!
//! Deleting: a subscription's keychain entries are removed only after the PATCH succeeded. Were
//! they removed first and the PATCH failed, the service would go on signing with a key the
//! console no longer has, and the spec offers no way to read it back. If the removal fails after
//! the PATCH, the error is [`ClientError::KeysLeftBehind`], which says the subscription is gone,
//! so nobody repeats a delete that already happened.
//!
//! Re-pointing: a tunnel (ngrok, cloudflared) gets a new public address when it restarts, and
//! every subscription that pointed through it must follow. [`CallbackBase`] says which callback
//! URLs lie under a base (same scheme, host, port and credentials, and the base's path as whole
//! segments, so `/hooks` holds `/hooks/a` but not `/hooksmith`; a trailing slash on either side
//! means nothing) and rebases them, keeping the rest of the path, the query and the fragment.
//! [`PartnerClient::subscriptions_under`] is the dry run the app shows before asking;
//! [`PartnerClient::repoint_subscriptions`] then sends one PATCH per product, each product read
//! afresh just before, and reports every product's failure without stopping at the first.

use crate::client::PartnerClient;
use crate::elements::{self, SubscriptionElement};
use crate::error::{ClientError, Result};
use crate::pager::PagerOptions;
use crate::secrets::{forget_signing_keys, SecretStore};
use crate::writes::WriteAction;
use futures::StreamExt;
use partner_api::product::check_callback_url;
use partner_api::read::{self, Document, SubscriptionView};
use partner_api::{EventType, ResourceType, SortSpec, WebhookSubscriptionInput};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;
use url::Url;

/// What to change in an existing subscription; `None` keeps a field as it is. The signing key
/// is never touched here (see [`PartnerClient::rotate_signing_key`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubscriptionChange {
    pub url: Option<String>,
    pub events: Option<Vec<EventType>>,
    pub resource: Option<ResourceType>,
}

impl SubscriptionChange {
    fn is_empty(&self) -> bool {
        self.url.is_none() && self.events.is_none() && self.resource.is_none()
    }
}

/// Which subscription of a product a change is for: by the id the service shows, or, for a
/// service that shows none, by the element's `url` and `resource` (a resource URN).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriptionRef {
    Id(String),
    Element { url: String, resource: String },
}

impl SubscriptionRef {
    /// `RESOURCE=URL` (RESOURCE a URN, or `transaction` / `event`) names an element by its url
    /// and resource; anything else is an id.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        if let Some((resource, url)) = text.split_once('=') {
            let resource = match resource.trim() {
                "transaction" => Some(ResourceType::Transaction),
                "event" => Some(ResourceType::TransactionEvent),
                other => ResourceType::parse(other),
            };
            let url = url.trim();
            if let (Some(resource), true) = (resource, Url::parse(url).is_ok()) {
                return SubscriptionRef::Element {
                    url: url.to_string(),
                    resource: resource.as_str().to_string(),
                };
            }
        }
        SubscriptionRef::Id(text.to_string())
    }

    /// The text [`Self::parse`] reads back as this subscription: the id, or `RESOURCE=URL` (the
    /// resource as its URN). What a screen or a script hands back to name an element.
    pub fn argument(&self) -> String {
        match self {
            SubscriptionRef::Id(id) => id.clone(),
            SubscriptionRef::Element { url, resource } => format!("{resource}={url}"),
        }
    }
}

impl std::fmt::Display for SubscriptionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubscriptionRef::Id(id) => f.write_str(&printable(id)),
            SubscriptionRef::Element { url, resource } => {
                write!(f, "{} ({})", printable(url), printable(resource))
            }
        }
    }
}

impl From<&str> for SubscriptionRef {
    fn from(id: &str) -> Self {
        SubscriptionRef::Id(id.to_string())
    }
}

impl From<&String> for SubscriptionRef {
    fn from(id: &String) -> Self {
        SubscriptionRef::Id(id.clone())
    }
}

impl From<String> for SubscriptionRef {
    fn from(id: String) -> Self {
        SubscriptionRef::Id(id)
    }
}

impl From<&SubscriptionRef> for SubscriptionRef {
    fn from(found: &SubscriptionRef) -> Self {
        found.clone()
    }
}

/// Where a subscription of a product is addressed and its keys rest: its id where the service
/// shows one, else its element (product, `url`, `resource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHome {
    Id(String),
    Element(SubscriptionElement),
}

impl KeyHome {
    /// The home of `subscription` of product `product_id`, or `None` when it shows neither an
    /// id nor a `url` and a known `resource` (then it cannot be kept by a PATCH).
    pub fn of(product_id: &str, subscription: &SubscriptionView) -> Option<Self> {
        if let Some(id) = &subscription.subscription_id {
            return Some(KeyHome::Id(id.clone()));
        }
        subscription.resource.as_ref()?.known()?;
        SubscriptionElement::of(product_id, subscription).map(KeyHome::Element)
    }

    /// The subscription id, where the service shows one.
    pub fn id(&self) -> Option<&str> {
        match self {
            KeyHome::Id(id) => Some(id),
            KeyHome::Element(_) => None,
        }
    }

    /// The id, or the element's `url (resource)`, for messages and records.
    pub fn describe(&self) -> String {
        match self {
            KeyHome::Id(id) => printable(id),
            KeyHome::Element(element) => format!(
                "{} ({})",
                printable(&element.url),
                printable(&element.resource)
            ),
        }
    }

    /// The PATCH entry that names this subscription and changes nothing.
    pub(crate) fn keep(&self) -> WebhookSubscriptionInput {
        match self {
            KeyHome::Id(id) => keep(id),
            KeyHome::Element(element) => WebhookSubscriptionInput {
                url: Some(element.url.clone()),
                resource: ResourceType::parse(&element.resource),
                ..WebhookSubscriptionInput::default()
            },
        }
    }

    /// Whether `subscription` (of the same product) is this one.
    fn is(&self, subscription: &SubscriptionView) -> bool {
        match self {
            KeyHome::Id(id) => subscription.subscription_id.as_deref() == Some(id.as_str()),
            KeyHome::Element(element) => {
                subscription.subscription_id.is_none() && element.is(subscription)
            }
        }
    }
}

/// A subscription found under a base URL, with the product it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionAt {
    pub product_id: String,
    pub product_name: String,
    pub subscription: SubscriptionView,
}

/// One subscription moved to a new URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Repointed {
    pub product_id: String,
    pub subscription_id: String,
    pub old_url: String,
    /// The URL the service now holds (as its answer to the PATCH shows it).
    pub new_url: String,
}

/// A product whose subscriptions could not be re-pointed; its subscriptions are as they were
/// unless the error is a timeout or a network failure after sending, which cannot say.
#[derive(Debug)]
pub struct RepointFailure {
    pub product_id: String,
    pub error: ClientError,
}

/// What [`PartnerClient::repoint_subscriptions`] did: every change made, and every product that
/// failed (the others were still done).
#[derive(Debug, Default)]
pub struct Repointing {
    pub changed: Vec<Repointed>,
    pub failed: Vec<RepointFailure>,
}

/// A base URL that callback URLs are compared under, as URLs rather than as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackBase {
    url: Url,
    /// The base's path without its trailing slashes (empty for the root).
    path: String,
}

impl CallbackBase {
    /// An absolute URL with a host and no query or fragment (`https://abc.ngrok.app`,
    /// `https://host/hooks/`).
    pub fn parse(raw: &str) -> Result<Self> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(ClientError::input("the base URL is empty"));
        }
        // The URL is not quoted back: it could carry a password (`https://user:pass@host/`).
        let url = Url::parse(raw)
            .map_err(|e| ClientError::input(format!("the base URL is not a valid URL ({e})")))?;
        if url.host().is_none() {
            return Err(ClientError::input("the base URL has no host"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ClientError::input(
                "the base URL must not have a query or a fragment",
            ));
        }
        let path = url.path().trim_end_matches('/').to_string();
        Ok(Self { url, path })
    }

    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// What follows the base in `url` (path remainder, query, fragment), or `None` when `url`
    /// is not under this base.
    fn remainder(&self, url: &Url) -> Option<(String, Option<String>, Option<String>)> {
        let same_origin = url.scheme() == self.url.scheme()
            && url.host() == self.url.host()
            && url.port_or_known_default() == self.url.port_or_known_default()
            && url.username() == self.url.username()
            && url.password() == self.url.password();
        if !same_origin {
            return None;
        }
        let rest = url.path().strip_prefix(self.path.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some((
            rest.to_string(),
            url.query().map(str::to_string),
            url.fragment().map(str::to_string),
        ))
    }

    /// Whether the callback URL `url` lies under this base.
    pub fn holds(&self, url: &str) -> bool {
        Url::parse(url.trim())
            .ok()
            .is_some_and(|url| self.remainder(&url).is_some())
    }

    /// `url` moved from under this base to under `to`, or `None` when it is not under this base.
    pub fn rebase(&self, url: &str, to: &CallbackBase) -> Option<String> {
        let parsed = Url::parse(url.trim()).ok()?;
        let (rest, query, fragment) = self.remainder(&parsed)?;
        let mut moved = to.url.clone();
        moved.set_path(&format!("{}{rest}", to.path));
        moved.set_query(query.as_deref());
        moved.set_fragment(fragment.as_deref());
        Some(moved.into())
    }
}

impl PartnerClient {
    /// Changes the URL, events or resource of one subscription of a product and returns it as
    /// the service now holds it. The signing key is kept (no `signingkey` is sent). The change is
    /// checked first: a URL by `partner-api`'s callback rule (where only the service knows
    /// whether it admits `http://` to loopback, it is let through for the service to decide),
    /// events at least one and none twice.
    ///
    /// A subscription the service shows without an id whose `url` or `resource` changes becomes
    /// another subscription there, which needs its key: use
    /// [`Self::update_subscription_keeping_key`], which moves it in the secret store.
    pub async fn update_subscription(
        &self,
        product_id: &str,
        subscription: impl Into<SubscriptionRef>,
        change: &SubscriptionChange,
    ) -> Result<SubscriptionView> {
        self.edit_subscription(None, product_id, &subscription.into(), change)
            .await
    }

    /// As [`Self::update_subscription`], and for a subscription the service shows without an id,
    /// a new `url` or `resource` sends the new element with the key `store` holds for the old
    /// one (a generated key when it holds none), after moving that key in `store` to the new
    /// element; the old element's entries are removed once the PATCH succeeded.
    pub async fn update_subscription_keeping_key(
        &self,
        store: &Arc<dyn SecretStore>,
        product_id: &str,
        subscription: impl Into<SubscriptionRef>,
        change: &SubscriptionChange,
    ) -> Result<SubscriptionView> {
        self.edit_subscription(Some(store), product_id, &subscription.into(), change)
            .await
    }

    async fn edit_subscription(
        &self,
        store: Option<&Arc<dyn SecretStore>>,
        product_id: &str,
        subscription: &SubscriptionRef,
        change: &SubscriptionChange,
    ) -> Result<SubscriptionView> {
        if change.is_empty() {
            return Err(ClientError::input(
                "nothing to change: give a new url, events or resource",
            ));
        }
        let url = change
            .url
            .as_deref()
            .map(checked_callback_url)
            .transpose()?;
        if let Some(events) = &change.events {
            check_events(events)?;
        }
        let product = self.get_product(product_id).await?;
        let (found, home) = find_subscription(&product, subscription)?;
        let target = format!("product {}, subscription {}", product.id, home.describe());
        // An element named by url and resource that gets a new one of either is a new
        // subscription at a service that shows no id: it is sent whole, with its key.
        let moved = match &home {
            KeyHome::Element(old) => {
                let new = SubscriptionElement {
                    product_id: old.product_id.clone(),
                    url: url.clone().unwrap_or_else(|| old.url.clone()),
                    resource: change
                        .resource
                        .map_or_else(|| old.resource.clone(), |r| r.as_str().to_string()),
                };
                (new != *old).then_some((old.clone(), new))
            }
            KeyHome::Id(_) => None,
        };
        let Some((old, new)) = moved else {
            let patch = webhooks_patch(
                &product.id,
                &product.webhooks,
                |_, current| {
                    Some(if *current == home {
                        let named = home.keep();
                        WebhookSubscriptionInput {
                            url: url.clone().or(named.url),
                            events: change.events.clone(),
                            resource: change.resource.or(named.resource),
                            ..named
                        }
                    } else {
                        current.keep()
                    })
                },
                None,
            )?;
            let patched = self
                .patch_product_as(&product.id, &patch, WriteAction::ChangeSubscription, target)
                .await?;
            let updated = shown_after(&patched, &home)?;
            tracing::info!(product = %patched.id, subscription = %home.describe(), "subscription updated");
            return Ok(updated);
        };

        let Some(store) = store else {
            return Err(ClientError::input(format!(
                "subscription {} has no subscriptionId, so a new url or resource makes it another subscription at this service, which needs the signing key kept for it; nothing was sent",
                home.describe()
            )));
        };
        if product
            .webhooks
            .iter()
            .any(|w| w.subscription_id.is_none() && new.is(w))
        {
            return Err(ClientError::input(format!(
                "the product already has a subscription to {} ({}); nothing was sent",
                printable(&new.url),
                printable(&new.resource)
            )));
        }
        let events = match &change.events {
            Some(events) => events.clone(),
            None => found.events.iter().filter_map(|e| e.known()).collect(),
        };
        let now = self.clock().now();
        let key = {
            let (old, new) = (old.clone(), new.clone());
            in_keychain(store, move |store| {
                let key = elements::element_keys(store, &old)?
                    .map_or_else(partner_api::signing_key::generate, |keys| keys.current);
                elements::keep_new_element(store, &new, &key, now)?;
                Ok(key)
            })
            .await?
        };
        let new_home = KeyHome::Element(new.clone());
        let patch = webhooks_patch(
            &product.id,
            &product.webhooks,
            |_, current| (*current != home).then(|| current.keep()),
            Some(WebhookSubscriptionInput {
                url: Some(new.url.clone()),
                events: Some(events),
                resource: ResourceType::parse(&new.resource),
                signing_key: Some(key),
                ..WebhookSubscriptionInput::default()
            }),
        )?;
        let patched = match self
            .patch_product_as(&product.id, &patch, WriteAction::ChangeSubscription, target)
            .await
        {
            Ok(patched) => patched,
            Err(error) => {
                let new = new.clone();
                if let Err(undo) =
                    in_keychain(store, move |store| elements::forget_element(store, &new)).await
                {
                    tracing::warn!(error = %undo, "could not remove the moved key after a failed change");
                }
                return Err(error);
            }
        };
        let updated = shown_after(&patched, &new_home)?;
        in_keychain(store, move |store| elements::forget_element(store, &old))
            .await
            .map_err(|error| ClientError::KeysLeftBehind {
                product_id: patched.id.clone(),
                subscription_id: home.describe(),
                message: error.to_string(),
            })?;
        tracing::info!(product = %patched.id, subscription = %new_home.describe(), "subscription moved to a new url or resource, its key with it");
        Ok(updated)
    }

    /// Deletes one subscription of a product (the PATCH leaves it out), then removes its signing
    /// keys, current and previous, from `store` (for a subscription the service shows without
    /// an id, the element's keys and binding). Returns the product as the service now holds it.
    /// If the keys cannot be removed after the service deleted the subscription, the error is
    /// [`ClientError::KeysLeftBehind`]: the delete itself is done.
    pub async fn delete_subscription(
        &self,
        store: &Arc<dyn SecretStore>,
        product_id: &str,
        subscription: impl Into<SubscriptionRef>,
    ) -> Result<Document<read::ProductView>> {
        let subscription = subscription.into();
        let product = self.get_product(product_id).await?;
        let (_, home) = find_subscription(&product, &subscription)?;
        let patch = webhooks_patch(
            &product.id,
            &product.webhooks,
            |_, current| (*current != home).then(|| current.keep()),
            None,
        )?;
        let patched = self
            .patch_product_as(
                &product.id,
                &patch,
                WriteAction::Unsubscribe,
                format!("product {}, subscription {}", product.id, home.describe()),
            )
            .await?;
        if patched.webhooks.iter().any(|w| home.is(w)) {
            return Err(ClientError::Server {
                status: 200,
                message: format!(
                    "the product {} was patched but its answer still shows subscription {}; its signing keys are kept",
                    patched.id,
                    home.describe()
                ),
                raw_body: None,
            });
        }
        let forgotten = home.clone();
        in_keychain(store, move |store| match &forgotten {
            KeyHome::Id(id) => forget_signing_keys(store, id),
            KeyHome::Element(element) => elements::forget_element(store, element),
        })
        .await
        .map_err(|error| ClientError::KeysLeftBehind {
            product_id: patched.id.clone(),
            subscription_id: home.describe(),
            message: error.to_string(),
        })?;
        tracing::info!(product = %patched.id, subscription = %home.describe(), "subscription deleted, its keys removed");
        Ok(patched)
    }

    /// Every subscription, across all of this connection's products, whose URL lies under
    /// `base_url` (see [`CallbackBase`]). Changes nothing: the dry run of
    /// [`Self::repoint_subscriptions`].
    pub async fn subscriptions_under(&self, base_url: &str) -> Result<Vec<SubscriptionAt>> {
        let base = CallbackBase::parse(base_url)?;
        self.subscriptions_under_base(&base).await
    }

    /// Moves every subscription under `from_base_url` to the same path under `to_base_url`:
    /// one PATCH per product, each product read just before its PATCH. A product that fails is
    /// reported in [`Repointing::failed`] and the others go on. The walk over the products
    /// happens before any change, so an error there (returned as `Err`) changed nothing.
    pub async fn repoint_subscriptions(
        &self,
        from_base_url: &str,
        to_base_url: &str,
    ) -> Result<Repointing> {
        let from = CallbackBase::parse(from_base_url)?;
        let to = CallbackBase::parse(to_base_url)?;
        checked_callback_url(to.as_str())?;
        let found = self.subscriptions_under_base(&from).await?;
        let mut product_ids: Vec<String> = Vec::new();
        for at in found {
            if !product_ids.contains(&at.product_id) {
                product_ids.push(at.product_id);
            }
        }
        let mut outcome = Repointing::default();
        for product_id in product_ids {
            match self.repoint_product(&product_id, &from, &to).await {
                Ok(mut changed) => outcome.changed.append(&mut changed),
                Err(error) => {
                    tracing::warn!(product = %product_id, %error, "could not re-point the product's subscriptions");
                    outcome.failed.push(RepointFailure { product_id, error });
                }
            }
        }
        tracing::info!(
            changed = outcome.changed.len(),
            failed = outcome.failed.len(),
            "subscriptions re-pointed"
        );
        Ok(outcome)
    }

    /// Every subscription of this connection's products, walked with the pager (the listener
    /// loads their signing keys from it; [`Self::subscriptions_under`] filters it).
    pub async fn all_subscriptions(&self) -> Result<Vec<SubscriptionAt>> {
        let mut products =
            self.pager::<read::ProductView>(SortSpec::default(), PagerOptions::default())?;
        let mut found = Vec::new();
        while let Some(product) = products.next().await {
            let product = product?;
            for subscription in &product.webhooks {
                found.push(SubscriptionAt {
                    product_id: product.id.clone(),
                    product_name: product.name.clone().unwrap_or_default(),
                    subscription: subscription.clone(),
                });
            }
        }
        Ok(found)
    }

    async fn subscriptions_under_base(&self, base: &CallbackBase) -> Result<Vec<SubscriptionAt>> {
        let mut found = self.all_subscriptions().await?;
        found.retain(|at| {
            at.subscription
                .url
                .as_deref()
                .is_some_and(|url| base.holds(url))
        });
        Ok(found)
    }

    async fn repoint_product(
        &self,
        product_id: &str,
        from: &CallbackBase,
        to: &CallbackBase,
    ) -> Result<Vec<Repointed>> {
        let product = self.get_product(product_id).await?;
        let mut moves: Vec<(String, String, String)> = Vec::new();
        for w in &product.webhooks {
            let (Some(id), Some(old_url)) = (&w.subscription_id, &w.url) else {
                continue;
            };
            if let Some(new_url) = from.rebase(old_url, to).filter(|new| new != old_url) {
                checked_callback_url(&new_url)?;
                moves.push((id.clone(), old_url.clone(), new_url));
            }
        }
        if moves.is_empty() {
            // Changed or removed by someone else since the walk: nothing left to move here.
            return Ok(Vec::new());
        }
        let patch = webhooks_patch(
            &product.id,
            &product.webhooks,
            |_, current| {
                let moved = current
                    .id()
                    .and_then(|current| moves.iter().find(|(id, _, _)| id == current));
                Some(match moved {
                    Some((id, _, new_url)) => WebhookSubscriptionInput {
                        subscription_id: Some(id.clone()),
                        url: Some(new_url.clone()),
                        ..WebhookSubscriptionInput::default()
                    },
                    None => current.keep(),
                })
            },
            None,
        )?;
        let moved: Vec<&str> = moves.iter().map(|(id, _, _)| id.as_str()).collect();
        let patched = self
            .patch_product_as(
                &product.id,
                &patch,
                WriteAction::ChangeSubscription,
                format!("product {}, subscriptions {}", product.id, moved.join(", ")),
            )
            .await?;
        Ok(moves
            .into_iter()
            .map(|(subscription_id, old_url, sent_url)| {
                let new_url = patched
                    .webhooks
                    .iter()
                    .find(|w| w.subscription_id.as_deref() == Some(subscription_id.as_str()))
                    .and_then(|w| w.url.clone())
                    .unwrap_or(sent_url);
                Repointed {
                    product_id: patched.id.clone(),
                    subscription_id,
                    old_url,
                    new_url,
                }
            })
            .collect())
    }
}

#[derive(Serialize)]
struct WebhooksPatch<'a> {
    webhooks: &'a [WebhookSubscriptionInput],
}

/// The entry that keeps subscription `id` exactly as it is.
pub(crate) fn keep(id: &str) -> WebhookSubscriptionInput {
    WebhookSubscriptionInput {
        subscription_id: Some(id.to_owned()),
        ..WebhookSubscriptionInput::default()
    }
}

/// The merge patch `{"webhooks": [...]}` for product `product_id` whose subscriptions are now
/// `current`: `entry` says what each (with its [`KeyHome`]) becomes (`None` deletes it,
/// [`KeyHome::keep`] keeps it as it is) and `added`, if any, is appended as a new subscription.
///
/// A subscription shown with an id is kept by it; one shown without an id, by its `url` and
/// `resource`, as a service that shows no ids matches them. One that shows neither an id nor a
/// `url` and a known `resource` cannot be kept (an entry that does not match it creates another
/// one, and one left out is deleted), so no patch is made then.
pub(crate) fn webhooks_patch(
    product_id: &str,
    current: &[SubscriptionView],
    mut entry: impl FnMut(&SubscriptionView, &KeyHome) -> Option<WebhookSubscriptionInput>,
    added: Option<WebhookSubscriptionInput>,
) -> Result<serde_json::Value> {
    let mut webhooks: Vec<WebhookSubscriptionInput> = Vec::with_capacity(current.len() + 1);
    for (n, subscription) in current.iter().enumerate() {
        let Some(home) = KeyHome::of(product_id, subscription) else {
            return Err(ClientError::input(format!(
                "subscription {} of the product has no subscriptionId and no url and known resource to be named by, so a change to the product's subscriptions would delete it; nothing was sent",
                n + 1
            )));
        };
        webhooks.extend(entry(subscription, &home));
    }
    webhooks.extend(added);
    serde_json::to_value(WebhooksPatch {
        webhooks: &webhooks,
    })
    .map_err(|e| ClientError::input(format!("the patch cannot be encoded ({e})")))
}

/// The subscription `wanted` of `product` with its [`KeyHome`], or a not-found error naming
/// both. An element named by url and resource is found whether or not the service shows its id
/// (where it does, the id is its home).
pub(crate) fn find_subscription<'a>(
    product: &'a read::ProductView,
    wanted: &SubscriptionRef,
) -> Result<(&'a SubscriptionView, KeyHome)> {
    let found = product.webhooks.iter().find(|w| match wanted {
        SubscriptionRef::Id(id) => w.subscription_id.as_deref() == Some(id.as_str()),
        SubscriptionRef::Element { url, resource } => {
            w.url.as_deref() == Some(url.as_str())
                && w.resource.as_ref().is_some_and(|r| r.as_str() == resource)
        }
    });
    found
        .and_then(|w| KeyHome::of(&product.id, w).map(|home| (w, home)))
        .ok_or_else(|| ClientError::NotFound {
            message: format!("product {} has no subscription {wanted}", product.id),
        })
}

/// The subscription `home` as the answer to a PATCH shows it, or a server error saying the
/// answer does not show it.
fn shown_after(patched: &read::ProductView, home: &KeyHome) -> Result<SubscriptionView> {
    patched
        .webhooks
        .iter()
        .find(|w| home.is(w))
        .cloned()
        .ok_or_else(|| ClientError::Server {
            status: 200,
            message: format!(
                "the product {} was patched but its answer does not show subscription {}",
                patched.id,
                home.describe()
            ),
            raw_body: None,
        })
}

/// A callback URL as it will be sent: trimmed, and meeting `partner-api`'s callback rule.
/// `http://` to a loopback address passes, because only the service knows whether it admits
/// one (a sandbox started with `--allow-http-callbacks` does); the service has the last word.
pub(crate) fn checked_callback_url(raw: &str) -> Result<String> {
    let url = raw.trim();
    if url.is_empty() {
        return Err(ClientError::input("a subscription needs a URL"));
    }
    check_callback_url(url, true).map_err(ClientError::input)?;
    Ok(url.to_string())
}

/// A subscription's events: at least one, none twice (the service's rule, said before sending).
pub(crate) fn check_events(events: &[EventType]) -> Result<()> {
    if events.is_empty() {
        let names: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
        return Err(ClientError::input(format!(
            "events needs at least one of {}",
            names.join(", ")
        )));
    }
    let distinct: HashSet<_> = events.iter().collect();
    if distinct.len() != events.len() {
        return Err(ClientError::input("events names an event type twice"));
    }
    Ok(())
}

/// Runs keychain calls on the blocking pool: each is a blocking D-Bus round trip.
pub(crate) async fn in_keychain<T: Send + 'static>(
    store: &Arc<dyn SecretStore>,
    work: impl FnOnce(&dyn SecretStore) -> Result<T> + Send + 'static,
) -> Result<T> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || work(store.as_ref()))
        .await
        .map_err(|e| ClientError::Keychain {
            message: format!("the keychain call did not finish ({e})"),
        })?
}

/// An id or URL from the caller, cut short and without control characters, for a message.
fn printable(value: &str) -> String {
    value
        .chars()
        .take(64)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(raw: &str) -> CallbackBase {
        CallbackBase::parse(raw).unwrap()
    }

    #[test]
    fn an_element_s_argument_parses_back_to_the_same_element() {
        for url in [
            "https://h.example/hooks",
            "http://127.0.0.1:7070/webhooks?a=b=c",
        ] {
            for resource in [
                "urn:svc:partner:transaction",
                "urn:svc:partner:transaction:event",
            ] {
                let element = SubscriptionRef::Element {
                    url: url.to_string(),
                    resource: resource.to_string(),
                };
                assert_eq!(SubscriptionRef::parse(&element.argument()), element);
            }
        }
        let id = SubscriptionRef::Id("whs-1".into());
        assert_eq!(SubscriptionRef::parse(&id.argument()), id);
    }

    #[test]
    fn a_base_holds_whole_path_segments_whatever_the_trailing_slash() {
        for raw in ["https://old.example/hooks", "https://old.example/hooks/"] {
            let b = base(raw);
            assert!(b.holds("https://old.example/hooks"));
            assert!(b.holds("https://old.example/hooks/"));
            assert!(b.holds("https://old.example/hooks/a?x=1"));
            assert!(
                b.holds("https://OLD.example:443/hooks/a"),
                "host case, default port"
            );
            assert!(!b.holds("https://old.example/hooksmith"));
            assert!(!b.holds("https://old.example/other/hooks"));
            assert!(!b.holds("http://old.example/hooks"), "another scheme");
            assert!(!b.holds("https://old.example:8443/hooks"), "another port");
            assert!(!b.holds("https://old.example.evil/hooks"));
            assert!(!b.holds("not a url"));
        }
        let root = base("https://old.example");
        assert!(root.holds("https://old.example/"));
        assert!(root.holds("https://old.example/anything/at/all"));
        assert!(!root.holds("https://new.example/"));
    }

    #[test]
    fn rebasing_keeps_the_rest_of_the_path_the_query_and_the_fragment() {
        let from = base("https://old.example/");
        let to = base("https://new.example/tunnel/");
        assert_eq!(
            from.rebase("https://old.example/hooks/a?x=1#f", &to)
                .as_deref(),
            Some("https://new.example/tunnel/hooks/a?x=1#f")
        );
        assert_eq!(
            base("https://old.example/hooks")
                .rebase("https://old.example/hooks", &base("http://127.0.0.1:7070"))
                .as_deref(),
            Some("http://127.0.0.1:7070/")
        );
        assert_eq!(
            base("https://old.example/hooks/")
                .rebase(
                    "https://old.example/hooks/x",
                    &base("https://new.example/v2")
                )
                .as_deref(),
            Some("https://new.example/v2/x")
        );
        assert_eq!(from.rebase("https://elsewhere.example/a", &to), None);
    }

    #[test]
    fn a_base_with_a_query_or_no_host_is_refused_in_words() {
        for raw in [
            "",
            "  ",
            "no scheme",
            "https://h/x?q=1",
            "https://h/#f",
            "mailto:a@b",
        ] {
            let error = CallbackBase::parse(raw).unwrap_err();
            assert_eq!(error.kind(), crate::ErrorKind::Rule, "{raw}: {error}");
        }
    }

    #[test]
    fn the_patch_lists_kept_subscriptions_by_id_and_leaves_deleted_ones_out() {
        let sub = |id: &str| SubscriptionView {
            subscription_id: Some(id.into()),
            url: Some(format!("https://h/{id}")),
            events: vec![EventType::Created.into()],
            resource: Some(ResourceType::Transaction.into()),
        };
        let current = [sub("a"), sub("b"), sub("c")];
        let patch = webhooks_patch(
            "p",
            &current,
            |_, home| (home.id() != Some("b")).then(|| home.keep()),
            None,
        )
        .unwrap();
        assert_eq!(
            patch,
            serde_json::json!({"webhooks": [{"subscriptionId": "a"}, {"subscriptionId": "c"}]})
        );
        let none = webhooks_patch("p", &current, |_, _| None, None).unwrap();
        assert_eq!(
            none,
            serde_json::json!({"webhooks": []}),
            "an empty array deletes all"
        );
    }

    #[test]
    fn a_subscription_without_an_id_is_kept_by_url_and_resource() {
        let shown_without_id = SubscriptionView {
            subscription_id: None,
            url: Some("https://h/x".into()),
            events: vec![EventType::Created.into()],
            resource: Some(ResourceType::Transaction.into()),
        };
        let patch =
            webhooks_patch("p", &[shown_without_id], |_, home| Some(home.keep()), None).unwrap();
        assert_eq!(
            patch,
            serde_json::json!({"webhooks": [{"url": "https://h/x", "resource": "urn:svc:partner:transaction"}]})
        );
    }

    #[test]
    fn a_subscription_with_neither_id_nor_url_and_resource_stops_the_patch() {
        let unnamed = SubscriptionView {
            subscription_id: None,
            url: Some("https://h/x".into()),
            events: vec![],
            resource: Some(partner_api::read::Open::Other("urn:svc:other".into())),
        };
        let error = webhooks_patch("p", &[unnamed], |_, home| Some(home.keep()), None).unwrap_err();
        assert_eq!(error.kind(), crate::ErrorKind::Rule);
        assert!(error.to_string().contains("no subscriptionId"), "{error}");
    }

    #[test]
    fn a_subscription_is_named_by_id_or_by_resource_and_url() {
        assert_eq!(
            SubscriptionRef::parse("whs-1"),
            SubscriptionRef::Id("whs-1".into())
        );
        assert_eq!(
            SubscriptionRef::parse("event=https://h/x?a=b"),
            SubscriptionRef::Element {
                url: "https://h/x?a=b".into(),
                resource: "urn:svc:partner:transaction:event".into()
            }
        );
        assert_eq!(
            SubscriptionRef::parse("urn:svc:partner:transaction=https://h/x"),
            SubscriptionRef::Element {
                url: "https://h/x".into(),
                resource: "urn:svc:partner:transaction".into()
            }
        );
        assert_eq!(
            SubscriptionRef::parse("odd=id"),
            SubscriptionRef::Id("odd=id".into())
        );
    }

    #[test]
    fn events_need_one_and_none_twice() {
        assert!(check_events(&[EventType::Created]).is_ok());
        assert!(check_events(&[]).is_err());
        assert!(check_events(&[EventType::Updated, EventType::Updated]).is_err());
    }
}

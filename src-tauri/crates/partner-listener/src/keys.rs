//! Where the listener finds the signing key of a subscription.
//!
//! A trait rather than a map, because keys live in different places for different callers: the
//! CLI takes `--key SUB=KEY` into memory, the app reads the keychain entries the client stores.
//! The listener only asks "what are the keys of this subscription now". During a rotation a
//! subscription has a current key and the previous one with the time it was replaced; the
//! previous key keeps verifying for a grace period so notifications signed before the rotation
//! (and their retries) still pass, and the verdict says which one matched.
//!
//! Subscriptions the service names only in its notifications: the spec's subscription has no id
//! field, so a console that subscribed at a service showing none holds a key for an element
//! (product, `url`, `resource`) but not the id its notifications will carry in
//! `Svc-SubscriptionId`. Such a source lists those keys ([`KeySource::unbound`]); the verdict
//! tries the ones whose URL has the request's path when a notification names an id the source
//! does not know, and the first that verifies binds the id to its element
//! ([`KeySource::bind`]), after which the id's keys are found directly.

use chrono::{DateTime, Duration, Utc};
use partner_api::Secret;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// How long a replaced key keeps verifying, unless a source says otherwise.
pub const DEFAULT_PREVIOUS_KEY_GRACE: Duration = Duration::hours(24);

/// A key that was current until `replaced_at`.
#[derive(Debug, Clone)]
pub struct PreviousKey {
    pub key: Secret,
    pub replaced_at: DateTime<Utc>,
}

/// The keys a subscription's notifications may be signed with.
#[derive(Debug, Clone)]
pub struct SubscriptionKeys {
    pub current: Secret,
    pub previous: Option<PreviousKey>,
}

impl SubscriptionKeys {
    pub fn new(current: impl Into<Secret>) -> Self {
        Self {
            current: current.into(),
            previous: None,
        }
    }

    /// The previous key if it is still inside its grace period at `now`.
    pub fn previous_in_grace(&self, now: DateTime<Utc>, grace: Duration) -> Option<&Secret> {
        self.previous
            .as_ref()
            .filter(|p| now - p.replaced_at <= grace)
            .map(|p| &p.key)
    }
}

/// A subscription whose key is known but whose id is not yet: an element of a product's
/// `webhooks` shown without `subscriptionId`, named by `element` (the source's own label).
#[derive(Debug, Clone)]
pub struct UnboundSubscription {
    /// What the source binds the id to (opaque to the listener).
    pub element: String,
    /// The element's callback URL: only a notification that arrived on its path tries it.
    pub url: String,
    /// The element's resource; among keys that verify, the one whose resource is the body's
    /// `meta.resourceType` is bound.
    pub resource: String,
    pub keys: SubscriptionKeys,
}

impl UnboundSubscription {
    /// Whether a request on `path` (the request target's path) was sent to this element's URL:
    /// the paths are the same, trailing slashes aside. The host is not compared, since a tunnel
    /// may rewrite it.
    pub fn is_for_path(&self, path: &str) -> bool {
        url::Url::parse(&self.url).is_ok_and(|url| {
            url.path().trim_end_matches('/')
                == path.split('?').next().unwrap_or("").trim_end_matches('/')
        })
    }
}

/// Lookup of subscription keys. Implementations must be cheap to call: it happens per request.
pub trait KeySource: Send + Sync + std::fmt::Debug {
    /// The keys of one subscription, or `None` when the subscription is unknown.
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys>;
    /// Every known subscription with its keys (the signature debugger tries them all).
    fn all(&self) -> Vec<(String, SubscriptionKeys)>;
    /// How long a replaced key keeps verifying.
    fn previous_key_grace(&self) -> Duration {
        DEFAULT_PREVIOUS_KEY_GRACE
    }
    /// Whether the keys cannot be read just now (a locked keychain): then a subscription this
    /// source does not know may well have keys, and the listener asks the sender to try again
    /// later instead of refusing the notification for good.
    fn unavailable(&self) -> bool {
        false
    }
    /// The subscriptions whose keys are known but whose ids are not yet (see the module's
    /// notes). Asked only when a signed notification names an id the source does not know.
    fn unbound(&self) -> Vec<UnboundSubscription> {
        Vec::new()
    }
    /// Binds `subscription_id` to `subscription` (a notification naming the id verified with
    /// its key): from now on [`KeySource::keys`] answers for the id, also after a restart where
    /// the source keeps what it holds.
    fn bind(&self, subscription_id: &str, subscription: &UnboundSubscription) {
        let _ = (subscription_id, subscription);
    }
}

/// Keys held in memory: from `--key SUB=KEY`, from tests, or loaded by the app.
#[derive(Debug, Default)]
pub struct MemoryKeys {
    keys: RwLock<BTreeMap<String, SubscriptionKeys>>,
    grace: Option<Duration>,
    unbound: RwLock<Vec<UnboundSubscription>>,
}

impl MemoryKeys {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_grace(grace: Duration) -> Self {
        Self {
            keys: RwLock::default(),
            grace: Some(grace),
            unbound: RwLock::default(),
        }
    }

    /// Sets the current key of a subscription, forgetting any previous one.
    pub fn insert(&self, subscription_id: impl Into<String>, key: impl Into<Secret>) {
        self.write()
            .insert(subscription_id.into(), SubscriptionKeys::new(key));
    }

    /// Makes `new_key` current and the old current key the previous one, replaced now.
    pub fn rotate(&self, subscription_id: &str, new_key: impl Into<Secret>) {
        self.rotate_at(subscription_id, new_key, Utc::now());
    }

    pub fn rotate_at(
        &self,
        subscription_id: &str,
        new_key: impl Into<Secret>,
        replaced_at: DateTime<Utc>,
    ) {
        let mut keys = self.write();
        let previous = keys.remove(subscription_id).map(|old| PreviousKey {
            key: old.current,
            replaced_at,
        });
        keys.insert(
            subscription_id.to_string(),
            SubscriptionKeys {
                current: new_key.into(),
                previous,
            },
        );
    }

    pub fn remove(&self, subscription_id: &str) {
        self.write().remove(subscription_id);
    }

    /// Replaces every subscription's keys at once (a source that reloads them all, as the team
    /// server does from its database): a lookup sees the old set or the new, never half.
    pub fn replace_all(&self, keys: BTreeMap<String, SubscriptionKeys>) {
        *self.write() = keys;
    }

    /// Adds a subscription whose id is not known yet; the first notification that verifies with
    /// its key binds the id it names.
    pub fn insert_unbound(&self, subscription: UnboundSubscription) {
        self.unbound
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(subscription);
    }

    /// Parses `SUBSCRIPTION_ID=KEY` (the CLI's `--key`). The error never quotes the key.
    pub fn parse_assignment(text: &str) -> crate::Result<(String, Secret)> {
        match text.split_once('=') {
            Some((sub, key)) if !sub.trim().is_empty() && !key.is_empty() => {
                Ok((sub.trim().to_string(), Secret::new(key)))
            }
            _ => Err(crate::Error::InvalidInput(
                "a key is given as SUBSCRIPTION_ID=KEY, both parts non-empty".into(),
            )),
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, SubscriptionKeys>> {
        self.keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, SubscriptionKeys>> {
        self.keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl KeySource for MemoryKeys {
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys> {
        self.read().get(subscription_id).cloned()
    }

    fn all(&self) -> Vec<(String, SubscriptionKeys)> {
        self.read()
            .iter()
            .map(|(id, keys)| (id.clone(), keys.clone()))
            .collect()
    }

    fn previous_key_grace(&self) -> Duration {
        self.grace.unwrap_or(DEFAULT_PREVIOUS_KEY_GRACE)
    }

    fn unbound(&self) -> Vec<UnboundSubscription> {
        self.unbound
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn bind(&self, subscription_id: &str, subscription: &UnboundSubscription) {
        self.unbound
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|u| u.element != subscription.element);
        self.write()
            .insert(subscription_id.to_string(), subscription.keys.clone());
    }
}

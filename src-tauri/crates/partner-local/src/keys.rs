//! The signing keys the listener verifies with, from the OS keychain.
//!
//! The keychain entries are the ones `partner-client` writes when a subscription is made or a
//! key rotated (`signing-key:{subscription}:current` and `:previous` with its `replacedAt`), by
//! the app or by `partner products subscribe` / `rotate-key`: one set of entries, so a
//! subscription made with either verifies in both.
//!
//! Why a cache in front of the keychain: a keychain read is a D-Bus round trip, and the
//! listener asks for keys on every request. The app fills the cache in the background with the
//! keys of the active connection's subscriptions ([`KeychainKeys::load`]), off the start-up's
//! critical path; a subscription the cache does not know (made by the CLI a minute ago) is read
//! on its first notification, and an id the keychain does not hold is remembered as unknown for
//! a while, since ids come from whoever sends a request. A keychain that is locked or missing is
//! remembered too ([`KeychainHealth`]), so the UI can offer to try again and the signature
//! debugger can say why a subscription was unknown.
//!
//! Subscriptions the service names only in its notifications (a service that shows no
//! `subscriptionId`): their keys rest under their element (product, `url`, `resource`,
//! `partner_client::elements`), and the elements no notification has bound yet are listed in the
//! keychain. [`KeySource::unbound`] reads that list (cached for a few seconds: it is asked for each
//! signed request naming an unknown id, junk included); [`KeySource::bind`] keeps a binding in the
//! keychain, so the next start finds the id's keys with no trial, and the CLI's listener
//! (`--keychain`) and the app's share it.

use chrono::Duration;
use partner_client::SecretStore;
use partner_client::{elements, SubscriptionElement};
use partner_listener::{KeySource, PreviousKey, SubscriptionKeys, UnboundSubscription};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// How long "the keychain holds no key for this id" is believed before asking again.
const MISS_TTL: std::time::Duration = std::time::Duration::from_secs(30);
/// At most this many unknown ids are remembered.
const MISS_ENTRIES: usize = 1024;
/// How long the list of subscriptions not bound yet is believed before reading it again.
const UNBOUND_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether the keychain answered the last time it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeychainHealth {
    Available,
    /// Locked, missing or failing: the keychain's own words (never a secret).
    Unavailable(String),
}

/// A [`KeySource`] over the keychain, with a cache of what it read.
#[derive(Debug)]
pub struct KeychainKeys {
    store: Arc<dyn SecretStore>,
    grace: Duration,
    known: RwLock<BTreeMap<String, SubscriptionKeys>>,
    misses: Mutex<HashMap<String, Instant>>,
    health: RwLock<KeychainHealth>,
    /// The subscriptions not bound yet, with their keys, and when they were read.
    unbound: Mutex<Option<(Instant, Vec<UnboundSubscription>)>>,
}

impl KeychainKeys {
    /// Keys from `store`; a replaced key keeps verifying for `grace` after its rotation.
    pub fn new(store: Arc<dyn SecretStore>, grace: Duration) -> Self {
        Self {
            store,
            grace,
            known: RwLock::default(),
            misses: Mutex::default(),
            health: RwLock::new(KeychainHealth::Available),
            unbound: Mutex::default(),
        }
    }

    /// Reads the keys of `subscription_ids` from the keychain into the cache (blocking: run it
    /// off the async workers). Returns how many subscriptions have keys. On a keychain failure
    /// the cache keeps what it had and the health says why.
    pub fn load<I, S>(&self, subscription_ids: I) -> partner_client::Result<usize>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut found = 0;
        for id in subscription_ids {
            let id = id.as_ref();
            match self.read(id)? {
                Some(keys) => {
                    self.write_known().insert(id.to_string(), keys);
                    found += 1;
                }
                None => {
                    self.write_known().remove(id);
                }
            }
        }
        self.set_health(KeychainHealth::Available);
        Ok(found)
    }

    /// Reads one subscription's keys, noting the keychain's health.
    fn read(&self, subscription_id: &str) -> partner_client::Result<Option<SubscriptionKeys>> {
        match elements::verifying_keys(self.store.as_ref(), subscription_id) {
            Ok(keys) => Ok(keys.map(|k| SubscriptionKeys {
                current: k.current,
                previous: k.previous.map(|p| PreviousKey {
                    key: p.key,
                    replaced_at: p.replaced_at,
                }),
            })),
            Err(error) => {
                self.set_health(KeychainHealth::Unavailable(error.to_string()));
                Err(error)
            }
        }
    }

    /// Whether the keychain answered when last asked.
    pub fn health(&self) -> KeychainHealth {
        self.health
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Notes that the keychain did not answer (a probe at start, say).
    pub fn mark_unavailable(&self, why: impl Into<String>) {
        self.set_health(KeychainHealth::Unavailable(why.into()));
    }

    /// Notes that the keychain answered (a probe after an unlock, say).
    pub fn mark_available(&self) {
        self.set_health(KeychainHealth::Available);
    }

    fn set_health(&self, health: KeychainHealth) {
        *self.health.write().unwrap_or_else(|p| p.into_inner()) = health;
    }

    /// Forgets the unknown ids remembered, so the next request for each asks the keychain
    /// again (after an unlock).
    pub fn forget_misses(&self) {
        self.lock_misses().clear();
        self.forget_unbound();
    }

    /// Reads the list of subscriptions not bound yet again at the next request that needs it
    /// (one was just added in this process).
    pub fn forget_unbound(&self) {
        *self.unbound.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The subscriptions not bound yet with their keys, from the keychain.
    fn read_unbound(&self) -> partner_client::Result<Vec<UnboundSubscription>> {
        let store = self.store.as_ref();
        let mut found = Vec::new();
        for element in elements::unbound_elements(store)? {
            if let Some(keys) = elements::element_keys(store, &element)? {
                found.push(UnboundSubscription {
                    element: serde_json::to_string(&element).unwrap_or_default(),
                    url: element.url.clone(),
                    resource: element.resource.clone(),
                    keys: SubscriptionKeys {
                        current: keys.current,
                        previous: keys.previous.map(|p| PreviousKey {
                            key: p.key,
                            replaced_at: p.replaced_at,
                        }),
                    },
                });
            }
        }
        Ok(found)
    }

    /// Sets a subscription's keys as just written to the keychain (a new subscription or a
    /// rotation in this process), without reading them back.
    pub fn remember(&self, subscription_id: &str, keys: SubscriptionKeys) {
        self.lock_misses().remove(subscription_id);
        self.write_known().insert(subscription_id.to_string(), keys);
    }

    /// Stops verifying a subscription (deleted, or its previous key retired: call
    /// [`KeychainKeys::remember`] with what is left).
    pub fn forget(&self, subscription_id: &str) {
        self.write_known().remove(subscription_id);
    }

    /// The subscriptions with keys in the cache.
    pub fn known_ids(&self) -> Vec<String> {
        self.known
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    fn write_known(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, SubscriptionKeys>> {
        self.known.write().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_misses(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.misses.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl KeySource for KeychainKeys {
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys> {
        if let Some(keys) = self
            .known
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(subscription_id)
        {
            return Some(keys.clone());
        }
        {
            let misses = self.lock_misses();
            if misses
                .get(subscription_id)
                .is_some_and(|at| at.elapsed() < MISS_TTL)
            {
                return None;
            }
        }
        match self.read(subscription_id) {
            Ok(Some(keys)) => {
                self.set_health(KeychainHealth::Available);
                self.remember(subscription_id, keys.clone());
                Some(keys)
            }
            Ok(None) => {
                self.set_health(KeychainHealth::Available);
                let mut misses = self.lock_misses();
                if misses.len() >= MISS_ENTRIES {
                    misses.clear();
                }
                misses.insert(subscription_id.to_string(), Instant::now());
                None
            }
            Err(error) => {
                tracing::warn!(%error, "reading a signing key from the keychain failed");
                None
            }
        }
    }

    fn all(&self) -> Vec<(String, SubscriptionKeys)> {
        self.known
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(id, keys)| (id.clone(), keys.clone()))
            .collect()
    }

    fn previous_key_grace(&self) -> Duration {
        self.grace
    }

    fn unavailable(&self) -> bool {
        matches!(self.health(), KeychainHealth::Unavailable(_))
    }

    fn unbound(&self) -> Vec<UnboundSubscription> {
        let mut cached = self.unbound.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, list)) = cached.as_ref() {
            if at.elapsed() < UNBOUND_TTL {
                return list.clone();
            }
        }
        match self.read_unbound() {
            Ok(list) => {
                *cached = Some((Instant::now(), list.clone()));
                list
            }
            Err(error) => {
                tracing::warn!(%error, "reading the subscriptions not bound yet from the keychain failed");
                self.set_health(KeychainHealth::Unavailable(error.to_string()));
                Vec::new()
            }
        }
    }

    fn bind(&self, subscription_id: &str, subscription: &UnboundSubscription) {
        // Verified already: the id's keys are the element's from now on, in this process at
        // once, and in the keychain for the next start and the other program.
        self.remember(subscription_id, subscription.keys.clone());
        if let Some((_, list)) = self
            .unbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            list.retain(|u| u.element != subscription.element);
        }
        let Ok(element) = serde_json::from_str::<SubscriptionElement>(&subscription.element) else {
            return;
        };
        match elements::bind(self.store.as_ref(), subscription_id, &element) {
            Ok(()) => tracing::info!(
                subscription = subscription_id,
                element = %element.describe(),
                "a subscription's id bound to its element by a notification that verified with its key"
            ),
            Err(error) => {
                tracing::warn!(%error, "keeping a subscription's binding in the keychain failed; it holds for this run")
            }
        }
    }
}

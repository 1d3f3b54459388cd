//! The signing keys `partner listen` and `export --redact` verify with: `--key` values first,
//! then the keychain's. Its own module so the listener and the evidence bundle share it
//! without needing each other.

use partner_listener::keys::{KeySource, MemoryKeys, SubscriptionKeys};
use partner_local::KeychainKeys;

/// `--key` values first, then the keychain entries `partner products subscribe`, `rotate-key`
/// and the desktop app write (`partner_local::KeychainKeys`, the app's own key source).
#[derive(Debug)]
pub(super) struct ListenKeys {
    pub(super) given: MemoryKeys,
    pub(super) keychain: Option<KeychainKeys>,
}

impl KeySource for ListenKeys {
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys> {
        self.given
            .keys(subscription_id)
            .or_else(|| self.keychain.as_ref()?.keys(subscription_id))
    }

    fn unavailable(&self) -> bool {
        self.keychain.as_ref().is_some_and(KeySource::unavailable)
    }

    fn unbound(&self) -> Vec<partner_listener::UnboundSubscription> {
        self.keychain.iter().flat_map(KeySource::unbound).collect()
    }

    fn bind(&self, subscription_id: &str, subscription: &partner_listener::UnboundSubscription) {
        if let Some(keychain) = &self.keychain {
            keychain.bind(subscription_id, subscription);
        }
    }

    fn all(&self) -> Vec<(String, SubscriptionKeys)> {
        let mut all = self.given.all();
        for (id, keys) in self.keychain.iter().flat_map(KeySource::all) {
            if !all.iter().any(|(known, _)| *known == id) {
                all.push((id, keys));
            }
        }
        all
    }
}

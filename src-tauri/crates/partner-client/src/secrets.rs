//! Where secrets rest: the OS's own secret store behind the [`SecretStore`] trait: the login
//! keychain on macOS, the Credential Manager on Windows, the Secret Service (gnome-keyring,
//! KWallet) on Linux and the BSDs. Which one is chosen when the crate is built (keyring's
//! features per target in `Cargo.toml`).
//!
//! Why [`KeyringStore`] checks the store it was built with, and why [`probe_secret_store`] writes: keyring 3
//! falls back to an in-memory mock on an OS whose store is not compiled in, and the mock keeps a
//! value only in the entry it was set through. A store that makes an entry per call, as this one
//! does, then loses each secret at once, without an error (every secret of the console was lost
//! so on macOS). So a store that does not keep what it is given until it is deleted is refused
//! on every call, with the reason, and the start-up probe writes a marker, reads it back through
//! a fresh entry and deletes it, so a store that answers "done" and keeps nothing (a locked or
//! missing service, a stand-in) is named to the user with what to do before any secret is given
//! to it.
//!
//! Entries, all under the service name `partner-console`:
//! - `client-secret:{base_url}|{client_id}`: a connection's client secret;
//! - `signing-key:{subscription_id}:current`: the key the service signs with now;
//! - `index-key:{index_id}`: the key of a connection's encrypted local index;
//! - `data-key`: the key of the console's local data at rest (captures, audit log, sandbox);
//! - `workspace-token:{url}`: a member's token for the team workspace at `url`;
//! - `signing-key:{subscription_id}:previous`: the key it signed with before the last rotation,
//!   stored as `{replacedAt RFC 3339}|{key}` in one entry so the two can never disagree (neither
//!   a signing key nor a timestamp can contain `|`).
//!
//! Signing keys are named by subscription id alone because that is all a receiver knows when a
//! notification arrives (`Svc-SubscriptionId`); subscription ids are assigned by the service and
//! unique. [`signing_keys`] is the function the listener calls to verify during a rotation.
//! The keychain calls are blocking round trips (D-Bus on Linux) of a few milliseconds; callers on an async
//! runtime may wrap them in `spawn_blocking` where that matters.

use crate::error::{ClientError, Result};
use chrono::{DateTime, Utc};
use partner_api::Secret;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Mutex;

/// The keychain's service name for every entry of the console.
pub const KEYCHAIN_SERVICE: &str = "partner-console";

/// Names one secret in a store.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SecretSlot {
    ClientSecret {
        base_url: String,
        client_id: String,
    },
    SigningKey {
        subscription_id: String,
    },
    PreviousSigningKey {
        subscription_id: String,
    },
    /// The key of a subscription being created, kept while the service has not yet said the
    /// subscription's id (see [`crate::PartnerClient::add_subscription`]).
    PendingSigningKey {
        product_id: String,
        attempt: String,
    },
    /// The key a connection's local index (`partner-index`) is encrypted with: 32 random bytes
    /// as hex, one per index.
    IndexKey {
        index_id: String,
    },
    /// The password of a connection's own proxy (see [`crate::network::ProxyOptions`]).
    ProxyPassword {
        base_url: String,
        client_id: String,
    },
    /// The private key (PEM) of a connection's client certificate, for mutual TLS.
    ClientCertificateKey {
        base_url: String,
        client_id: String,
    },
    /// The key the service signs a subscription's notifications with, for a service whose
    /// product `webhooks` elements carry no `subscriptionId` (the spec shows none): the element
    /// is named by its product, `url` and `resource` (see [`crate::elements`]).
    ElementSigningKey {
        product_id: String,
        url: String,
        resource: String,
    },
    /// The element's key before its last rotation, as [`SecretSlot::PreviousSigningKey`].
    PreviousElementSigningKey {
        product_id: String,
        url: String,
        resource: String,
    },
    /// The subscription id a listener learnt for an element from a notification that verified
    /// with its key (`Svc-SubscriptionId`); not a secret, kept beside the key it names.
    ElementBinding {
        product_id: String,
        url: String,
        resource: String,
    },
    /// The element a subscription id was bound to (the other direction of
    /// [`SecretSlot::ElementBinding`]), read when a notification names the id.
    SubscriptionBinding {
        subscription_id: String,
    },
    /// The elements whose keys the console holds and whose subscription id no notification
    /// has told yet: the ones a listener tries (not a secret). Kept in parts, each a whole
    /// list short enough for every OS's store (`crate::elements` says why).
    UnboundElements {
        part: usize,
    },
    /// The key the console's local data is encrypted with at rest (the capture store, its
    /// journal, the audit log, the embedded sandbox's data): 32 random bytes as hex, one per
    /// user (`partner_local::data_key` says where else it may live).
    DataKey,
    /// A member's personal token for a team workspace (`partner workspace login`), by the
    /// workspace's URL (without a trailing `/`), so logins to two workspaces never share one.
    WorkspaceToken {
        workspace: String,
    },
    /// The marker [`probe_secret_store`] writes, reads back and deletes (never a secret).
    Probe {
        marker: String,
    },
}

impl SecretSlot {
    pub fn client_secret(base_url: &url::Url, client_id: &str) -> Self {
        SecretSlot::ClientSecret {
            base_url: base_url.as_str().trim_end_matches('/').to_string(),
            client_id: client_id.to_string(),
        }
    }

    /// The slot of a member's token for the team workspace at `workspace`.
    pub fn workspace_token(workspace: &url::Url) -> Self {
        SecretSlot::WorkspaceToken {
            workspace: workspace.as_str().trim_end_matches('/').to_string(),
        }
    }

    /// The slot of a connection's proxy password.
    pub fn proxy_password(base_url: &url::Url, client_id: &str) -> Self {
        SecretSlot::ProxyPassword {
            base_url: base_url.as_str().trim_end_matches('/').to_string(),
            client_id: client_id.to_string(),
        }
    }

    /// The slot of a connection's client-certificate private key.
    pub fn client_certificate_key(base_url: &url::Url, client_id: &str) -> Self {
        SecretSlot::ClientCertificateKey {
            base_url: base_url.as_str().trim_end_matches('/').to_string(),
            client_id: client_id.to_string(),
        }
    }

    /// The keychain account name of this slot.
    pub fn account(&self) -> String {
        match self {
            SecretSlot::ClientSecret {
                base_url,
                client_id,
            } => format!("client-secret:{base_url}|{client_id}"),
            SecretSlot::SigningKey { subscription_id } => {
                format!("signing-key:{subscription_id}:current")
            }
            SecretSlot::PreviousSigningKey { subscription_id } => {
                format!("signing-key:{subscription_id}:previous")
            }
            SecretSlot::PendingSigningKey {
                product_id,
                attempt,
            } => format!("signing-key:pending:{product_id}:{attempt}"),
            SecretSlot::IndexKey { index_id } => format!("index-key:{index_id}"),
            SecretSlot::ProxyPassword {
                base_url,
                client_id,
            } => format!("proxy-password:{base_url}|{client_id}"),
            SecretSlot::ClientCertificateKey {
                base_url,
                client_id,
            } => format!("client-certificate-key:{base_url}|{client_id}"),
            SecretSlot::ElementSigningKey {
                product_id,
                url,
                resource,
            } => format!("signing-key:element:{product_id}|{resource}|{url}:current"),
            SecretSlot::PreviousElementSigningKey {
                product_id,
                url,
                resource,
            } => format!("signing-key:element:{product_id}|{resource}|{url}:previous"),
            SecretSlot::ElementBinding {
                product_id,
                url,
                resource,
            } => format!("subscription-binding:element:{product_id}|{resource}|{url}"),
            SecretSlot::SubscriptionBinding { subscription_id } => {
                format!("subscription-binding:id:{subscription_id}")
            }
            SecretSlot::UnboundElements { part: 0 } => "subscription-binding:unbound".to_string(),
            SecretSlot::UnboundElements { part } => format!("subscription-binding:unbound:{part}"),
            SecretSlot::DataKey => "data-key".to_string(),
            SecretSlot::WorkspaceToken { workspace } => format!("workspace-token:{workspace}"),
            SecretSlot::Probe { marker } => format!("probe:{marker}"),
        }
    }
}

/// A place that keeps secrets: the OS keychain, or memory in tests.
pub trait SecretStore: Send + Sync + Debug {
    fn get(&self, slot: &SecretSlot) -> Result<Option<Secret>>;
    fn set(&self, slot: &SecretSlot, value: &Secret) -> Result<()>;
    /// Removing an absent entry is not an error.
    fn delete(&self, slot: &SecretSlot) -> Result<()>;
}

/// The OS's own secret store through the `keyring` crate.
///
/// Each call builds its entry from the store's credential builder (the OS's, chosen when the
/// crate is built). A builder whose credentials do not outlive their entry or the process
/// (keyring's mock, on an OS whose store is not compiled in) is refused on every call with the
/// reason, never used: with an entry per call it would drop each secret silently.
#[derive(Clone)]
pub struct KeyringStore {
    service: String,
    builder: std::sync::Arc<keyring::credential::CredentialBuilder>,
    /// Why this store keeps nothing, when its builder is such a one.
    refused: Option<String>,
}

impl Debug for KeyringStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyringStore")
            .field("service", &self.service)
            .field("store", &STORE_NAME)
            .field("refused", &self.refused)
            .finish()
    }
}

impl Default for KeyringStore {
    fn default() -> Self {
        Self::new(KEYCHAIN_SERVICE)
    }
}

impl KeyringStore {
    /// The OS's store under another service name (tests use one of their own).
    pub fn new(service: impl Into<String>) -> Self {
        static OS_BUILDER: std::sync::OnceLock<
            std::sync::Arc<keyring::credential::CredentialBuilder>,
        > = std::sync::OnceLock::new();
        let builder = OS_BUILDER
            .get_or_init(|| std::sync::Arc::from(keyring::default::default_credential_builder()))
            .clone();
        Self::with_builder(service, builder)
    }

    /// A store over `builder` (keyring's mock in tests), refused when its credentials do not
    /// persist until deleted.
    pub fn with_builder(
        service: impl Into<String>,
        builder: std::sync::Arc<keyring::credential::CredentialBuilder>,
    ) -> Self {
        use keyring::credential::CredentialPersistence;
        let refused = match builder.persistence() {
            CredentialPersistence::UntilDelete => None,
            _ => Some(format!(
                "this build of the console has no secret store for this system that keeps what it is given (keyring's stand-in keeps a secret only for the moment it is set), so secrets are not taken rather than lost: {}",
                WHAT_TO_DO
            )),
        };
        Self {
            service: service.into(),
            builder,
            refused,
        }
    }

    fn entry(&self, slot: &SecretSlot) -> Result<keyring::Entry> {
        if let Some(why) = &self.refused {
            return Err(ClientError::keychain(why));
        }
        let credential = self
            .builder
            .build(None, &self.service, &slot.account())
            .map_err(keyring_error)?;
        Ok(keyring::Entry::new_with_credential(credential))
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, slot: &SecretSlot) -> Result<Option<Secret>> {
        match self.entry(slot)?.get_password() {
            Ok(value) => Ok(Some(Secret::new(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(keyring_error(error)),
        }
    }

    fn set(&self, slot: &SecretSlot, value: &Secret) -> Result<()> {
        self.entry(slot)?
            .set_password(value.expose())
            .map_err(keyring_error)
    }

    fn delete(&self, slot: &SecretSlot) -> Result<()> {
        match self.entry(slot)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(keyring_error(error)),
        }
    }
}

/// The store this build uses, in the words a user knows it by.
#[cfg(target_os = "macos")]
pub const STORE_NAME: &str = "the macOS keychain";
#[cfg(target_os = "windows")]
pub const STORE_NAME: &str = "the Windows Credential Manager";
#[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
pub const STORE_NAME: &str = "the Secret Service (gnome-keyring or KWallet)";
#[cfg(not(any(
    target_os = "macos",
    target_os = "windows",
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd"
)))]
pub const STORE_NAME: &str = "no secret store (none is built in for this system)";

/// What the user can do when the store does not answer or does not keep what it is given.
#[cfg(target_os = "macos")]
const WHAT_TO_DO: &str = "unlock the login keychain (Keychain Access), allow the console when macOS asks, then try again";
#[cfg(target_os = "windows")]
const WHAT_TO_DO: &str = "sign in to Windows with your own account (the Credential Manager keeps secrets per user; a roaming or restricted profile may refuse them), then try again";
#[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
const WHAT_TO_DO: &str = "start a Secret Service (gnome-keyring or KWallet) in your desktop session and unlock its login keyring, then try again";
#[cfg(not(any(
    target_os = "macos",
    target_os = "windows",
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd"
)))]
const WHAT_TO_DO: &str =
    "this system is not supported for keeping secrets: use macOS, Windows or Linux";

/// Checks that `store` keeps what it is given: writes a marker, reads it back (through a fresh
/// entry, as every later call is) and deletes it. A store that refuses, answers with nothing or
/// with something else, or cannot delete, is an error naming the store and what to do. The
/// marker is no secret; it is deleted even when the read-back fails.
pub fn probe_secret_store(store: &dyn SecretStore) -> Result<()> {
    let marker = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let slot = SecretSlot::Probe {
        marker: marker.clone(),
    };
    let value = Secret::new(format!("partner-console probe {marker}"));
    // The store's own words once: a keychain error already names the store and, when it is
    // locked or missing, says what to do.
    let failed = |what: &str, error: Option<ClientError>| {
        let mut text = match error {
            None => format!("{STORE_NAME} {what}: a secret given to it now would be lost"),
            Some(ClientError::Keychain { message }) if message.contains(STORE_NAME) => {
                format!("a test entry {what}: {message}")
            }
            Some(other) => {
                let said = match other {
                    ClientError::Keychain { message } => message,
                    other => other.to_string(),
                };
                format!("{STORE_NAME}: a test entry {what} ({said})")
            }
        };
        if !text.contains(WHAT_TO_DO) {
            text.push_str(&format!("; {WHAT_TO_DO}"));
        }
        ClientError::keychain(text)
    };
    if let Err(error) = store.set(&slot, &value) {
        return Err(failed("could not be written", Some(error)));
    }
    let read = store.get(&slot);
    let deleted = store.delete(&slot);
    match read {
        Err(error) => return Err(failed("could not be read back", Some(error))),
        Ok(None) => {
            return Err(failed(
                "does not keep what it is given (a test entry written to it read back as nothing)",
                None,
            ))
        }
        Ok(Some(back)) if !back.ct_eq(value.expose()) => {
            return Err(failed(
                "gave back something else than a test entry written to it",
                None,
            ))
        }
        Ok(Some(_)) => {}
    }
    deleted.map_err(|error| failed("could not be deleted", Some(error)))
}

/// Words for a keychain failure. `BadEncoding` carries the stored bytes in its `Debug`, so every
/// variant is described by our own text or the crate's `Display`, which quotes no value.
fn keyring_error(error: keyring::Error) -> ClientError {
    let message = match &error {
        keyring::Error::BadEncoding(_) => "a stored secret is not valid UTF-8".to_string(),
        keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) => {
            format!("{STORE_NAME} is not available ({error}): {WHAT_TO_DO}")
        }
        _ => error.to_string(),
    };
    ClientError::keychain(message)
}

/// Secrets in memory, for tests and for a session that must not touch the keychain.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, Secret>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Secret>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, slot: &SecretSlot) -> Result<Option<Secret>> {
        Ok(self.entries().get(&slot.account()).cloned())
    }

    fn set(&self, slot: &SecretSlot, value: &Secret) -> Result<()> {
        self.entries().insert(slot.account(), value.clone());
        Ok(())
    }

    fn delete(&self, slot: &SecretSlot) -> Result<()> {
        self.entries().remove(&slot.account());
        Ok(())
    }
}

/// The keys a receiver may verify a subscription's notifications with.
#[derive(Debug, Clone)]
pub struct SigningKeys {
    pub current: Secret,
    pub previous: Option<PreviousKey>,
}

/// A key replaced by a rotation, and when it was replaced.
#[derive(Debug, Clone)]
pub struct PreviousKey {
    pub key: Secret,
    pub replaced_at: DateTime<Utc>,
}

/// The stored keys of a subscription, or `None` when the console set none.
pub fn signing_keys(store: &dyn SecretStore, subscription_id: &str) -> Result<Option<SigningKeys>> {
    let current = store.get(&SecretSlot::SigningKey {
        subscription_id: subscription_id.to_string(),
    })?;
    let Some(current) = current else {
        return Ok(None);
    };
    let previous = store
        .get(&SecretSlot::PreviousSigningKey {
            subscription_id: subscription_id.to_string(),
        })?
        .and_then(|stored| decode_previous(&stored));
    Ok(Some(SigningKeys { current, previous }))
}

/// Stores `key` as the subscription's current key; the key it replaces (if any) becomes the
/// previous one, replaced at `now`. Returns what was there before, to roll back with.
pub fn store_signing_key(
    store: &dyn SecretStore,
    subscription_id: &str,
    key: &Secret,
    now: DateTime<Utc>,
) -> Result<StoredKeys> {
    let before = StoredKeys::read(store, subscription_id)?;
    if let Some(old) = &before.current {
        store.set(&previous_slot(subscription_id), &encode_previous(old, now))?;
    }
    store.set(&current_slot(subscription_id), key)?;
    Ok(before)
}

/// A subscription's two raw entries, as read before a change.
#[derive(Debug, Clone)]
pub struct StoredKeys {
    subscription_id: String,
    current: Option<Secret>,
    previous: Option<Secret>,
}

impl StoredKeys {
    fn read(store: &dyn SecretStore, subscription_id: &str) -> Result<Self> {
        Ok(Self {
            subscription_id: subscription_id.to_string(),
            current: store.get(&current_slot(subscription_id))?,
            previous: store.get(&previous_slot(subscription_id))?,
        })
    }

    /// Puts both entries back as they were.
    pub fn restore(&self, store: &dyn SecretStore) -> Result<()> {
        for (slot, value) in [
            (current_slot(&self.subscription_id), &self.current),
            (previous_slot(&self.subscription_id), &self.previous),
        ] {
            match value {
                Some(value) => store.set(&slot, value)?,
                None => store.delete(&slot)?,
            }
        }
        Ok(())
    }
}

/// Forgets a subscription's keys (when the subscription is deleted).
pub fn forget_signing_keys(store: &dyn SecretStore, subscription_id: &str) -> Result<()> {
    store.delete(&current_slot(subscription_id))?;
    store.delete(&previous_slot(subscription_id))
}

fn current_slot(subscription_id: &str) -> SecretSlot {
    SecretSlot::SigningKey {
        subscription_id: subscription_id.to_string(),
    }
}

fn previous_slot(subscription_id: &str) -> SecretSlot {
    SecretSlot::PreviousSigningKey {
        subscription_id: subscription_id.to_string(),
    }
}

pub(crate) fn encode_previous(key: &Secret, replaced_at: DateTime<Utc>) -> Secret {
    Secret::new(format!("{}|{}", replaced_at.to_rfc3339(), key.expose()))
}

pub(crate) fn decode_previous(stored: &Secret) -> Option<PreviousKey> {
    let (when, key) = stored.expose().split_once('|')?;
    let replaced_at = DateTime::parse_from_rfc3339(when).ok()?.with_timezone(&Utc);
    Some(PreviousKey {
        key: Secret::new(key),
        replaced_at,
    })
}

/// A connection's client secret, from the store.
pub fn client_secret(
    store: &dyn SecretStore,
    base_url: &url::Url,
    client_id: &str,
) -> Result<Option<Secret>> {
    store.get(&SecretSlot::client_secret(base_url, client_id))
}

pub fn save_client_secret(
    store: &dyn SecretStore,
    base_url: &url::Url,
    client_id: &str,
    secret: &Secret,
) -> Result<()> {
    store.set(&SecretSlot::client_secret(base_url, client_id), secret)
}

pub fn forget_client_secret(
    store: &dyn SecretStore,
    base_url: &url::Url,
    client_id: &str,
) -> Result<()> {
    store.delete(&SecretSlot::client_secret(base_url, client_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previous_key_round_trips_with_its_time() {
        let store = MemoryStore::new();
        let t0 = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert!(signing_keys(&store, "s1").unwrap().is_none());
        store_signing_key(
            &store,
            "s1",
            &Secret::new("Key1!aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            t0,
        )
        .unwrap();
        let keys = signing_keys(&store, "s1").unwrap().unwrap();
        assert!(keys.current.ct_eq("Key1!aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
        assert!(keys.previous.is_none());

        let before = store_signing_key(
            &store,
            "s1",
            &Secret::new("Key2!bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
            t0,
        )
        .unwrap();
        let keys = signing_keys(&store, "s1").unwrap().unwrap();
        assert!(keys.current.ct_eq("Key2!bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"));
        let previous = keys.previous.unwrap();
        assert!(previous.key.ct_eq("Key1!aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
        assert_eq!(previous.replaced_at, t0);

        before.restore(&store).unwrap();
        let keys = signing_keys(&store, "s1").unwrap().unwrap();
        assert!(keys.current.ct_eq("Key1!aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
        assert!(keys.previous.is_none());
        forget_signing_keys(&store, "s1").unwrap();
        assert!(signing_keys(&store, "s1").unwrap().is_none());
    }

    /// keyring's mock, as keyring 3 falls back to it on an OS whose store is not built in.
    fn mock_builder() -> std::sync::Arc<keyring::credential::CredentialBuilder> {
        std::sync::Arc::from(keyring::mock::default_credential_builder())
    }

    #[test]
    fn a_store_that_keeps_nothing_is_refused_and_takes_no_secret() {
        let store = KeyringStore::with_builder("partner-console-test", mock_builder());
        let refused = probe_secret_store(&store).unwrap_err().to_string();
        assert!(refused.contains(STORE_NAME), "{refused}");
        assert!(refused.contains("then try again"), "{refused}");
        // Every call says so: a secret is never taken and dropped.
        let slot = SecretSlot::IndexKey {
            index_id: "i1".into(),
        };
        let set = store.set(&slot, &Secret::new("not-kept")).unwrap_err();
        assert!(set.to_string().contains("keeps what it is given"), "{set}");
        assert!(!format!("{set} {set:?} {store:?}").contains("not-kept"));
        assert!(store.get(&slot).is_err());
    }

    #[test]
    fn the_probe_reads_back_through_a_fresh_entry() {
        // The mock used as the store was before: an entry per call, so a value set is gone at
        // the next call. The probe's read-back says so, whatever the builder claims.
        let store = KeyringStore {
            service: "partner-console-test".into(),
            builder: mock_builder(),
            refused: None,
        };
        let slot = SecretSlot::IndexKey {
            index_id: "i1".into(),
        };
        store.set(&slot, &Secret::new("dropped")).unwrap();
        assert!(store.get(&slot).unwrap().is_none(), "the mock drops it");
        let refused = probe_secret_store(&store).unwrap_err().to_string();
        assert!(
            refused.contains("does not keep what it is given"),
            "{refused}"
        );
    }

    /// A store that answers and keeps something else.
    #[derive(Debug)]
    struct Garbling;
    impl SecretStore for Garbling {
        fn get(&self, _: &SecretSlot) -> Result<Option<Secret>> {
            Ok(Some(Secret::new("something else")))
        }
        fn set(&self, _: &SecretSlot, _: &Secret) -> Result<()> {
            Ok(())
        }
        fn delete(&self, _: &SecretSlot) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_probe_accepts_a_store_that_keeps_and_leaves_nothing_behind() {
        let store = MemoryStore::new();
        probe_secret_store(&store).unwrap();
        assert!(store.entries().is_empty(), "the marker is deleted");
        let refused = probe_secret_store(&Garbling).unwrap_err().to_string();
        assert!(refused.contains("something else"), "{refused}");
    }

    #[test]
    fn accounts_are_distinct() {
        let url = url::Url::parse("http://127.0.0.1:7001/").unwrap();
        assert_eq!(
            SecretSlot::client_secret(&url, "c1").account(),
            "client-secret:http://127.0.0.1:7001|c1"
        );
        assert_ne!(
            SecretSlot::SigningKey {
                subscription_id: "s".into()
            }
            .account(),
            SecretSlot::PreviousSigningKey {
                subscription_id: "s".into()
            }
            .account()
        );
    }
}

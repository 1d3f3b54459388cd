//! The app's key source over the keychain entries `partner-client` writes: what the CLI's
//! `products subscribe` / `rotate-key` store is what the app's listener verifies with.
//! The last test uses the real Secret Service (`PARTNER_KEYCHAIN_TESTS=1` under
//! `dbus-run-session` with an unlocked gnome-keyring, as `scripts/test.sh` runs it).

use chrono::{Duration, Utc};
use partner_api::{signature, Secret};
use partner_client::{
    store_signing_key, ClientError, KeyringStore, MemoryStore, SecretSlot, SecretStore,
};
use partner_listener::verdict::{judge, Verdict};
use partner_listener::KeySource;
use partner_local::{KeychainHealth, KeychainKeys};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A keychain that can be locked: every call fails while locked, as a locked Secret Service
/// collection does.
#[derive(Debug, Default)]
struct LockableKeychain {
    inner: MemoryStore,
    locked: AtomicBool,
}

impl LockableKeychain {
    fn check(&self) -> partner_client::Result<()> {
        if self.locked.load(Ordering::SeqCst) {
            return Err(ClientError::Keychain {
                message: "the collection is locked".into(),
            });
        }
        Ok(())
    }
}

impl SecretStore for LockableKeychain {
    fn get(&self, slot: &SecretSlot) -> partner_client::Result<Option<Secret>> {
        self.check()?;
        self.inner.get(slot)
    }
    fn set(&self, slot: &SecretSlot, value: &Secret) -> partner_client::Result<()> {
        self.check()?;
        self.inner.set(slot, value)
    }
    fn delete(&self, slot: &SecretSlot) -> partner_client::Result<()> {
        self.check()?;
        self.inner.delete(slot)
    }
}

const BODY: &[u8] = br#"{"eventId":"7c5bd7a4-0b4d-4f7e-9c41-4a3f0c1f2d11","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{"instanceId":"acme","resourceId":"t1","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/partner/v2/transactions/t1"}}"#;

fn verdict_of(keys: &dyn KeySource, subscription: &str, signed_with: &Secret) -> Verdict {
    let sig = signature::sign(signed_with.expose().as_bytes(), BODY);
    judge(Some(&sig), Some(subscription), BODY, keys, Utc::now()).verdict
}

#[test]
fn keys_written_as_the_cli_writes_them_verify_current_and_previous_in_grace() {
    let keychain: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let first = partner_api::signing_key::generate();
    let second = partner_api::signing_key::generate();
    // What `partner products subscribe` and then `rotate-key` leave in the keychain.
    store_signing_key(keychain.as_ref(), "sub-cli", &first, Utc::now()).expect("subscribe");
    store_signing_key(keychain.as_ref(), "sub-cli", &second, Utc::now()).expect("rotate");

    let keys = KeychainKeys::new(keychain.clone(), Duration::hours(24));
    assert_eq!(keys.load(["sub-cli", "sub-none"]).expect("load"), 1);
    assert_eq!(verdict_of(&keys, "sub-cli", &second), Verdict::Valid);
    assert_eq!(
        verdict_of(&keys, "sub-cli", &first),
        Verdict::Valid,
        "previous, in grace"
    );
    let stranger = partner_api::signing_key::generate();
    assert_eq!(
        verdict_of(&keys, "sub-cli", &stranger),
        Verdict::InvalidSignature
    );

    let short = KeychainKeys::new(keychain, Duration::zero());
    short.load(["sub-cli"]).expect("load");
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(
        verdict_of(&short, "sub-cli", &first),
        Verdict::InvalidSignature,
        "past the grace period the previous key no longer verifies"
    );
}

#[test]
fn a_subscription_made_after_the_load_is_read_on_its_first_notification() {
    let keychain: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let keys = KeychainKeys::new(keychain.clone(), Duration::hours(24));
    keys.load(Vec::<String>::new()).expect("empty load");
    let key = partner_api::signing_key::generate();
    store_signing_key(keychain.as_ref(), "sub-later", &key, Utc::now()).expect("store");
    assert_eq!(verdict_of(&keys, "sub-later", &key), Verdict::Valid);
    assert_eq!(keys.known_ids(), vec!["sub-later".to_string()]);
}

#[test]
fn a_locked_keychain_is_reported_and_an_unlock_recovers() {
    let keychain = Arc::new(LockableKeychain::default());
    let key = partner_api::signing_key::generate();
    store_signing_key(keychain.as_ref(), "sub-1", &key, Utc::now()).expect("store");
    keychain.locked.store(true, Ordering::SeqCst);

    let keys = KeychainKeys::new(keychain.clone(), Duration::hours(24));
    let error = keys.load(["sub-1"]).expect_err("locked");
    assert!(error.to_string().contains("locked"), "{error}");
    match keys.health() {
        KeychainHealth::Unavailable(why) => assert!(why.contains("locked"), "{why}"),
        KeychainHealth::Available => panic!("the health says the keychain is unavailable"),
    }
    assert_eq!(
        verdict_of(&keys, "sub-1", &key),
        Verdict::UnknownSubscription
    );

    keychain.locked.store(false, Ordering::SeqCst);
    assert_eq!(keys.load(["sub-1"]).expect("unlocked"), 1);
    assert_eq!(keys.health(), KeychainHealth::Available);
    assert_eq!(verdict_of(&keys, "sub-1", &key), Verdict::Valid);
}

#[test]
fn unknown_ids_are_remembered_until_forgotten() {
    let keychain: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let keys = KeychainKeys::new(keychain.clone(), Duration::hours(24));
    assert!(keys.keys("sub-x").is_none());
    let key = partner_api::signing_key::generate();
    store_signing_key(keychain.as_ref(), "sub-x", &key, Utc::now()).expect("store");
    assert!(
        keys.keys("sub-x").is_none(),
        "a miss is believed for a while"
    );
    keys.forget_misses();
    assert!(keys.keys("sub-x").is_some());
    let debug = format!("{keys:?}");
    assert!(!debug.contains(key.expose()), "no key in a Debug print");
}

#[test]
fn real_keychain_entries_written_through_one_handle_verify_through_another() {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() != Ok("1") {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED real_keychain_entries_written_through_one_handle_verify_through_another: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring to run it");
        return;
    }
    let service = format!(
        "partner-console-test-local-{}-{}",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or_default()
    );
    let writer = KeyringStore::new(service.clone());
    let key = partner_api::signing_key::generate();
    store_signing_key(&writer, "sub-real", &key, Utc::now()).expect("store");
    let reader: Arc<dyn SecretStore> = Arc::new(KeyringStore::new(service));
    let keys = KeychainKeys::new(reader, Duration::hours(24));
    assert_eq!(keys.load(["sub-real"]).expect("load"), 1);
    assert_eq!(verdict_of(&keys, "sub-real", &key), Verdict::Valid);
    partner_client::forget_signing_keys(&writer, "sub-real").expect("clean up");
}

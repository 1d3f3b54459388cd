//! The OS keychain (Secret Service through gnome-keyring), used for real. Run with
//! `PARTNER_KEYCHAIN_TESTS=1` inside `dbus-run-session` with an unlocked keyring; without the
//! variable these tests say they were skipped.

use crate::rotation::{new_product, subscription};
use crate::support::Setup;
use crate::support::Strict;
use partner_api::{signing_key, ResourceType, Secret};
use partner_client::{
    client_secret, forget_client_secret, probe_secret_store, save_client_secret, signing_keys,
    ConnectionConfig, KeyringStore, PartnerClient, SecretSlot, SecretStore,
};
use partner_testkit::TestReceiver;
use std::path::{Path, PathBuf};

fn enabled(test: &str) -> bool {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() == Ok("1") {
        true
    } else {
        // Straight to stderr, past the test harness's capture, so a skip is never silent.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring to run it");
        false
    }
}

/// A service name of this test run alone, so runs never see each other's entries.
fn test_store(test: &str) -> KeyringStore {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    KeyringStore::new(format!(
        "partner-console-test-{test}-{}-{nanos}",
        std::process::id()
    ))
}

#[test]
fn keychain_round_trip() {
    if !enabled("keychain_round_trip") {
        return;
    }
    let store = test_store("round-trip");
    let slot = SecretSlot::SigningKey {
        subscription_id: "sub-1".into(),
    };
    assert!(store.get(&slot).unwrap().is_none());
    store.set(&slot, &Secret::new("first")).unwrap();
    assert!(store.get(&slot).unwrap().unwrap().ct_eq("first"));
    store.set(&slot, &Secret::new("second")).unwrap();
    assert!(store.get(&slot).unwrap().unwrap().ct_eq("second"));
    store.delete(&slot).unwrap();
    assert!(store.get(&slot).unwrap().is_none());
    store.delete(&slot).unwrap();

    let url = url::Url::parse("http://127.0.0.1:7001").unwrap();
    save_client_secret(&store, &url, "client-1", &Secret::new("client-secret-1")).unwrap();
    assert!(client_secret(&store, &url, "client-1")
        .unwrap()
        .unwrap()
        .ct_eq("client-secret-1"));
    assert!(client_secret(&store, &url, "client-2").unwrap().is_none());
    forget_client_secret(&store, &url, "client-1").unwrap();
    assert!(client_secret(&store, &url, "client-1").unwrap().is_none());
}

/// The start-up probe takes the real Secret Service: the marker it writes is read back through
/// a fresh entry and then gone.
#[test]
fn keychain_probe_accepts_the_real_secret_service() {
    if !enabled("keychain_probe_accepts_the_real_secret_service") {
        return;
    }
    let store = test_store("probe");
    probe_secret_store(&store).unwrap();
    probe_secret_store(&KeyringStore::default()).unwrap();
}

#[tokio::test]
async fn rotation_keeps_keys_in_the_keychain_and_nowhere_else() {
    if !enabled("rotation_keeps_keys_in_the_keychain_and_nowhere_else") {
        return;
    }
    let setup = Setup::empty().await;
    let store = test_store("rotation");
    // The connection's secret comes from the keychain, as the console and the CLI get it.
    let base_url = url::Url::parse(setup.sandbox.base_url()).unwrap();
    save_client_secret(
        &store,
        &base_url,
        setup.client_id(),
        setup.sandbox.client_secret(),
    )
    .unwrap();
    let secret = client_secret(&store, &base_url, setup.client_id())
        .unwrap()
        .unwrap();
    let client = PartnerClient::new(
        ConnectionConfig::new(setup.sandbox.base_url(), setup.client_id(), secret).unwrap(),
    )
    .unwrap();

    let receiver = TestReceiver::always(200).await.unwrap();
    let key = signing_key::generate();
    let product = client
        .create_product_storing_keys(
            &store,
            &new_product(
                "keychained",
                vec![subscription(
                    receiver.url(),
                    &key,
                    ResourceType::Transaction,
                )],
            ),
        )
        .await
        .unwrap()
        .strict();
    let sub = product.webhooks[0].subscription_id.clone();
    client
        .rotate_signing_key(&store, &product.id, &sub, None)
        .await
        .unwrap();
    let keys = signing_keys(&store, &sub).unwrap().unwrap();
    assert!(keys.previous.as_ref().unwrap().key.ct_eq(key.expose()));
    let token = client.tokens().bearer().await.unwrap();

    // Nothing in the keyring's files (or anywhere under the data/config/cache homes) holds a
    // secret in the clear: the Secret Service encrypts what it stores.
    let secrets = [
        setup.sandbox.client_secret().clone(),
        key,
        keys.current.clone(),
        token,
    ];
    for dir in homes() {
        for file in files_under(&dir) {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            for secret in &secrets {
                let needle = secret.expose().as_bytes();
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle),
                    "a secret in the clear in {}",
                    file.display()
                );
            }
        }
    }
    partner_client::forget_signing_keys(&store, &sub).unwrap();
    forget_client_secret(&store, &base_url, setup.client_id()).unwrap();
}

fn homes() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs: Vec<PathBuf> = ["XDG_DATA_HOME", "XDG_RUNTIME_DIR"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if let Some(home) = home {
        dirs.push(home.join(".local/share/keyrings"));
    }
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t)
                    if t.is_file()
                        && entry
                            .metadata()
                            .map(|m| m.len() < 16 * 1024 * 1024)
                            .unwrap_or(false) =>
                {
                    found.push(path)
                }
                _ => {}
            }
        }
    }
    found
}

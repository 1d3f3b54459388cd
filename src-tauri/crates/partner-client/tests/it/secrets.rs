//! Secrets stay secret: in no log line (client and sandbox, TRACE level), in no `Debug` output,
//! in no error message, and in no file the library writes (it has no code that writes one).

use crate::rotation::{new_product, subscription};
use crate::support::Strict;
use crate::support::{self, Setup};
use partner_api::{signing_key, ResourceType, Secret};
use partner_client::{signing_keys, ConnectionConfig, MemoryStore, PageRequest};
use partner_testkit::TestReceiver;

#[tokio::test]
async fn no_secret_in_any_log_line_or_debug_output() {
    let setup = Setup::demo(30).await;
    let store = MemoryStore::new();
    let receiver = TestReceiver::always(200).await.unwrap();
    let key = signing_key::generate();
    let mut secrets: Vec<Secret> = vec![setup.sandbox.client_secret().clone(), key.clone()];

    setup
        .client
        .list_transactions(&PageRequest::default())
        .await
        .unwrap()
        .strict();
    secrets.push(setup.client.tokens().bearer().await.unwrap());
    let product = setup
        .client
        .create_product_storing_keys(
            &store,
            &new_product(
                "secretive",
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
    let sub = &product.webhooks[0].subscription_id;
    let rotation = setup
        .client
        .rotate_signing_key(&store, &product.id, sub, None)
        .await
        .unwrap();
    let keys = signing_keys(&store, sub).unwrap().unwrap();
    secrets.push(keys.current.clone());
    // A refused token, a refused key and refused credentials all produce errors and log lines.
    support::revoke_at_service(&setup.sandbox, &secrets[2]).await;
    setup
        .client
        .list_products(&PageRequest::default())
        .await
        .unwrap()
        .strict();
    secrets.push(setup.client.tokens().bearer().await.unwrap());
    let bad_key = Secret::new("alllowercaseandnothingelsebutlongenough");
    let rule_error = setup
        .client
        .rotate_signing_key(&store, &product.id, sub, Some(bad_key.clone()))
        .await
        .unwrap_err();
    secrets.push(bad_key);
    let wrong = Secret::new("wrong-secret-for-the-log-test");
    let intruder = partner_client::PartnerClient::new(
        ConnectionConfig::new(setup.sandbox.base_url(), setup.client_id(), wrong.clone()).unwrap(),
    )
    .unwrap();
    let auth_error = intruder.tokens().introspect().await.unwrap_err();
    secrets.push(wrong);
    setup.client.tokens().introspect().await.unwrap();
    setup.client.sign_out().await.unwrap();

    let debug_outputs = [
        format!("{:?}", setup.client),
        format!("{:?}", setup.client.tokens()),
        format!("{:?}", intruder),
        format!(
            "{:?}",
            ConnectionConfig::new(setup.sandbox.base_url(), "x", secrets[0].clone()).unwrap()
        ),
        format!("{rotation:?}"),
        format!("{keys:?}"),
        format!("{store:?}"),
        format!("{rule_error:?} {rule_error}"),
        format!("{auth_error:?} {auth_error}"),
        serde_json::to_string(&rotation).unwrap(),
    ];
    let logs = support::logs();
    assert!(logs.contains("token issued"), "the capture works");
    for secret in &secrets {
        let value = secret.expose();
        assert!(!value.is_empty());
        assert!(!logs.contains(value), "a secret reached the log");
        for output in &debug_outputs {
            assert!(
                !output.contains(value),
                "a secret reached a Debug/Display/JSON output"
            );
        }
    }
}

#[test]
fn the_library_writes_no_files() {
    // Secrets rest in the keychain or in memory: the crate has no code that writes a file.
    // (It reads the files a user names: a connection's CA and client certificate, network.rs.)
    // Every file under src/, folders of modules (call_log/) included.
    let mut folders = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut files = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.iter().any(|path| path.ends_with("call_log/curl.rs")));
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for needle in [
            "fs::copy",
            "fs::rename",
            "create_dir",
            "File::create",
            "OpenOptions",
            "tokio::fs",
            "fs::write",
        ] {
            assert!(!text.contains(needle), "{} uses {needle}", path.display());
        }
    }
}

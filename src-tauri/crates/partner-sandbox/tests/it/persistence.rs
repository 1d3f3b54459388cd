//! The persistent mode (`SandboxConfig::data_file`): a real sandbox over HTTP on a real file in
//! a temp dir, stopped and started again. Every resource kind survives a restart; a pending
//! delivery is resumed; a file the sandbox cannot use is refused at start and left byte for
//! byte as it was; `--demo` does not seed a file that holds data; clients keep their partner
//! while their secret comes from the config; the file never holds a client secret or a token,
//! and is encrypted with the data key (no signing key in its bytes; a plain file of an earlier
//! version is encrypted without loss; another key is refused).

use crate::support::{hook, product, Api, KEY_A, KEY_B};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use partner_api::Secret;
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{
    reset_data_file, ClientCredentials, DataKey, DemoData, Error, Sandbox, SandboxConfig,
};
use partner_testkit::{Reply, TestReceiver, TestSandbox};
use serde_json::{json, Value};
use sha2::Sha256;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::net::TcpListener;

const WAIT: Duration = Duration::from_secs(10);

/// The data key of these tests' files (one per run, made at random).
fn data_key() -> DataKey {
    static KEY: OnceLock<DataKey> = OnceLock::new();
    KEY.get_or_init(DataKey::generate).clone()
}

/// A connection to a data file, keyed as the sandbox keys it (for changing a file by hand).
fn keyed(file: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(file).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA key = {};",
        data_key().sqlcipher_key().as_str()
    ))
    .unwrap();
    conn
}

fn config(file: &Path, client: &str, secret: &str) -> SandboxConfig {
    SandboxConfig {
        clients: vec![ClientCredentials::new(client, Secret::new(secret))],
        allow_http_callbacks: true,
        data_file: Some(file.to_path_buf()),
        data_key: Some(data_key()),
        delivery: DeliveryConfig {
            // Sandbox-clock time: a retry fires only when a test advances the clock.
            retry_delay: Duration::from_secs(3600),
            attempt_timeout: Duration::from_secs(5),
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    }
}

async fn start(config: SandboxConfig) -> Api {
    Api::wrap(TestSandbox::start_with(config).await)
}

/// Starting must fail: the error, as text.
async fn refused(config: SandboxConfig) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    match Sandbox::start(config, listener).await {
        Ok(_) => panic!("the sandbox started on a file it should refuse"),
        Err(error) => {
            assert!(
                matches!(error, Error::DataFile { .. } | Error::DataFileKey { .. }),
                "{error:?}"
            );
            error.to_string()
        }
    }
}

fn signature_of(key: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(body);
    STANDARD.encode(mac.finalize().into_bytes())
}

async fn deliveries(api: &Api) -> Vec<Value> {
    let response = api.get("/sandbox/v1/deliveries", "unused").await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Waits until every delivery record has left `pending` (or `want` of them are delivered).
async fn delivered(api: &Api, want: usize) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let records = deliveries(api).await;
        let done = records.iter().filter(|r| r["state"] == "delivered").count();
        if done >= want {
            return records;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {done} of {want} delivered: {records:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Everything a partner and the lender side can read, for comparing two runs.
async fn snapshot(api: &Api, token: &str) -> Value {
    let products = api.get_json("/partner/v2/products?limit=50", token).await;
    let transactions = api
        .get_json("/partner/v2/transactions?limit=50&sort=created", token)
        .await;
    let mut events = Vec::new();
    for transaction in transactions.as_array().unwrap() {
        let id = transaction["id"].as_str().unwrap();
        events.push(
            api.get_json(&format!("/partner/v2/transactions/{id}/events"), token)
                .await,
        );
    }
    json!({"products": products, "transactions": transactions, "events": events})
}

fn file_bytes_hold(path: &Path, needle: &str) -> bool {
    let mut haystack = std::fs::read(path).unwrap();
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    if let Ok(more) = std::fs::read(wal) {
        haystack.extend(more);
    }
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[tokio::test]
async fn a_restart_keeps_every_kind_of_data() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested/sandbox.sqlite3");
    let mut receiver = TestReceiver::always(200).await.unwrap();

    let api = start(config(&file, "acme", "first-secret-1")).await;
    let token = api.token_for("acme", "first-secret-1").await;
    let created = api
        .create_product(
            &token,
            &json!({"name": "acme-avm", "listingName": "Acme AVM", "requestTypes": ["NEW_REQUEST"],
                     "webhooks": [hook(&receiver.url(), "urn:svc:partner:transaction", &["created", "updated"], KEY_A)]}),
        )
        .await;
    let product_id = created["id"].as_str().unwrap().to_string();
    // A second product, changed once (the change is what must come back).
    let second = api.create_product(&token, &product("acme-title")).await;
    let second_id = second["id"].as_str().unwrap();
    let patched = api
        .merge_patch(
            &format!("/partner/v2/products/{second_id}"),
            &token,
            &json!({"listingName": "Acme Title, renamed",
                    "webhooks": [hook(&receiver.url(), "urn:svc:partner:transaction:event", &["created"], KEY_B)]}),
        )
        .await;
    assert_eq!(patched.status(), 200);

    let transaction = api.lender_create(&product_id).await;
    let id = transaction["id"].as_str().unwrap().to_string();
    let update = api
        .patch_raw(
            &format!("/sandbox/v1/transactions/{id}"),
            None,
            "application/json",
            json!({"options": {"rush": true}}).to_string(),
        )
        .await;
    assert_eq!(update.status(), 200);
    let event = api
        .post_json(
            &format!("/sandbox/v1/transactions/{id}/events"),
            None,
            &json!({"type": "urn:lender:note", "text": "called the borrower"}),
        )
        .await;
    assert_eq!(event.status(), 201);
    let response = api
        .patch_raw(
            &format!("/partner/v2/transactions/{id}/response"),
            Some(&token),
            "application/json",
            json!({"status": "processing", "partnerStatus": "Ordered"}).to_string(),
        )
        .await;
    assert_eq!(response.status(), 200);
    api.advance(900).await;
    // created + updated (transaction), updated (response): 3 to the first subscription; and
    // the event subscription of the second product hears nothing (no transactions on it).
    let before_records = delivered(&api, 3).await;
    receiver.take(3, WAIT).await;
    // The advance idled the token out (15 minutes).
    let token = api.token_for("acme", "first-secret-1").await;
    let before = snapshot(&api, &token).await;
    let offset_before = api.sandbox.clock().offset();
    assert!(offset_before >= Duration::from_secs(900));
    api.sandbox.stop().await;

    let api = start(config(&file, "acme", "first-secret-1")).await;
    // Tokens are not kept: the old one is refused, a new one works.
    let stale = api.get("/partner/v2/products", &token).await;
    assert_eq!(stale.status(), 401);
    let token = api.token_for("acme", "first-secret-1").await;
    assert_eq!(snapshot(&api, &token).await, before);
    assert!(api.sandbox.clock().offset() >= offset_before);
    assert!(api.sandbox.clock().offset() < offset_before + Duration::from_secs(60));
    let after_records = deliveries(&api).await;
    assert_eq!(after_records, before_records);

    // The signing key came back too: a new notification is signed with it.
    let again = api.lender_create(&product_id).await;
    let got = receiver
        .next(WAIT)
        .await
        .expect("a notification after the restart");
    let signature = got.header("svc-signature").unwrap_or_default().to_string();
    assert_eq!(signature, signature_of(KEY_A, &got.body));
    let body: Value = serde_json::from_slice(&got.body).unwrap();
    assert_eq!(body["meta"]["resourceId"], again["id"]);
    // Record ids go on from where they were.
    let records = delivered(&api, 4).await;
    let last = records.last().unwrap()["id"].as_str().unwrap().to_string();
    let previous_last = before_records.last().unwrap()["id"].as_str().unwrap();
    let number = |id: &str| id.trim_start_matches("dlv_").parse::<u64>().unwrap();
    assert!(number(&last) > number(previous_last));
    api.sandbox.stop().await;

    // The file holds the signing keys (the service signs with them) encrypted, and never the
    // client secret.
    assert!(
        !file_bytes_hold(&file, KEY_A),
        "the service's copy of the key, in the clear"
    );
    assert!(!file_bytes_hold(&file, "acme-avm"), "products in the clear");
    assert!(!file_bytes_hold(&file, "first-secret-1"));
    assert!(!file_bytes_hold(&file, &token));
}

#[tokio::test]
async fn a_delivery_pending_at_the_stop_is_resumed_after_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    // The first attempt fails; the retry (an hour later, sandbox time) succeeds.
    let mut receiver = TestReceiver::start([Reply::Status(500), Reply::Status(200)])
        .await
        .unwrap();
    let api = start(config(&file, "acme", "secret-1")).await;
    let token = api.token_for("acme", "secret-1").await;
    let created = api
        .create_product(
            &token,
            &json!({"name": "acme-avm", "listingName": "Acme AVM", "requestTypes": ["NEW_REQUEST"],
                     "webhooks": [hook(&receiver.url(), "urn:svc:partner:transaction", &["created"], KEY_A)]}),
        )
        .await;
    api.lender_create(created["id"].as_str().unwrap()).await;
    let first = receiver.next(WAIT).await.expect("the first attempt");
    // Wait until the failed attempt is recorded with its retry due.
    let deadline = tokio::time::Instant::now() + WAIT;
    let pending = loop {
        let records = deliveries(&api).await;
        if records[0]["nextAttemptAt"].is_string() {
            break records;
        }
        assert!(tokio::time::Instant::now() < deadline, "{records:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(pending[0]["state"], "pending");
    api.sandbox.stop().await;

    let api = start(config(&file, "acme", "secret-1")).await;
    let records = deliveries(&api).await;
    assert_eq!(records[0]["state"], "pending", "{records:#?}");
    assert!(
        receiver.next(Duration::from_millis(300)).await.is_none(),
        "the retry waits its due time"
    );
    api.advance(3600).await;
    let second = receiver
        .next(WAIT)
        .await
        .expect("the retry after the restart");
    assert_eq!(
        second.body, first.body,
        "the same bytes as the first attempt"
    );
    assert_eq!(
        second.header("svc-signature"),
        first.header("svc-signature")
    );
    assert_eq!(
        second.header("svc-signature").unwrap_or_default(),
        signature_of(KEY_A, &second.body)
    );
    let records = delivered(&api, 1).await;
    let attempts = records[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{records:#?}");
    assert_eq!(attempts[0]["status"], 500);
    assert_eq!(attempts[1]["number"], 2);
    assert_eq!(attempts[1]["status"], 200);
    api.sandbox.stop().await;
}

#[tokio::test]
async fn clients_keep_their_partner_take_the_new_secret_and_demo_is_not_seeded_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let demo = |secret: &str| SandboxConfig {
        demo: Some(DemoData { transactions: 60 }),
        ..config(&file, "app-client", secret)
    };

    let api = start(demo("secret-one")).await;
    let token = api.token_for("app-client", "secret-one").await;
    api.create_product(&token, &product("my-own-product")).await;
    let before = snapshot(&api, &token).await;
    assert_eq!(before["products"].as_array().unwrap().len(), 4);
    api.sandbox.stop().await;

    let api = start(demo("secret-two")).await;
    let old = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .basic_auth("app-client", Some("secret-one"))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 401, "the old secret is refused");
    let token = api.token_for("app-client", "secret-two").await;
    let after = snapshot(&api, &token).await;
    assert_eq!(
        after, before,
        "the same products and transactions, nothing seeded twice"
    );
    let all = api.get("/partner/v2/transactions", &token).await;
    assert_eq!(crate::support::total(&all), 60);
    api.sandbox.stop().await;
    assert!(!file_bytes_hold(&file, "secret-one"));
    assert!(!file_bytes_hold(&file, "secret-two"));
}

#[tokio::test]
async fn without_a_client_the_files_first_client_comes_back_with_a_new_secret() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let unnamed = || SandboxConfig {
        clients: Vec::new(),
        ..config(&file, "unused", "unused")
    };
    let api = start(unnamed()).await;
    let first_id = api.sandbox.client_id().to_string();
    let first_secret = api.sandbox.client_secret().expose().to_string();
    let token = api.token().await;
    let made = api.create_product(&token, &product("kept")).await;
    api.sandbox.stop().await;

    let api = start(unnamed()).await;
    assert_eq!(api.sandbox.client_id(), first_id);
    assert_ne!(api.sandbox.client_secret().expose(), first_secret);
    let token = api.token().await;
    let products = api.get_json("/partner/v2/products", &token).await;
    assert_eq!(products[0]["id"], made["id"]);
    api.sandbox.stop().await;
}

#[tokio::test]
async fn a_corrupt_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&file, &garbage).unwrap();
    let message = refused(config(&file, "acme", "secret-1")).await;
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(
        message.contains("does not open with the data key"),
        "{message}"
    );
    assert!(message.contains("not a sandbox data file"), "{message}");
    assert_eq!(std::fs::read(&file).unwrap(), garbage);

    // A SQLite file of something else.
    let other = dir.path().join("other.sqlite3");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hi');")
            .unwrap();
    }
    let bytes = std::fs::read(&other).unwrap();
    let message = refused(config(&other, "acme", "secret-1")).await;
    assert!(message.contains("not a sandbox data file"), "{message}");
    assert_eq!(std::fs::read(&other).unwrap(), bytes);
}

/// A file of a run with a product and a transaction, stopped cleanly.
async fn file_with_data(file: &Path) -> String {
    let api = start(config(file, "acme", "secret-1")).await;
    let token = api.token_for("acme", "secret-1").await;
    let made = api.create_product(&token, &product("acme-avm")).await;
    let transaction = api.lender_create(made["id"].as_str().unwrap()).await;
    api.sandbox.stop().await;
    transaction["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_file_with_a_bad_row_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let id = file_with_data(&file).await;
    {
        let conn = keyed(&file);
        let changed = conn
            .execute(
                "UPDATE transactions SET transaction_json = '{\"id\": 12' WHERE id = ?1",
                [&id],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    let bytes = std::fs::read(&file).unwrap();
    let message = refused(config(&file, "acme", "secret-1")).await;
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(
        message.contains("bad row in table `transactions`"),
        "{message}"
    );
    assert!(message.contains(&id), "{message}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[tokio::test]
async fn a_file_of_a_newer_version_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    file_with_data(&file).await;
    {
        let conn = keyed(&file);
        conn.pragma_update(
            None,
            "user_version",
            partner_sandbox::DATA_FILE_SCHEMA_VERSION + 1,
        )
        .unwrap();
    }
    let bytes = std::fs::read(&file).unwrap();
    let message = refused(config(&file, "acme", "secret-1")).await;
    assert!(message.contains("newer sandbox"), "{message}");
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[tokio::test]
async fn a_second_sandbox_on_the_same_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let api = start(config(&file, "acme", "secret-1")).await;
    let message = refused(config(&file, "acme", "secret-1")).await;
    assert!(message.contains("in use"), "{message}");
    // The first one still works.
    let token = api.token_for("acme", "secret-1").await;
    api.create_product(&token, &product("still-writable")).await;
    // And reset refuses a file in use.
    let reset = reset_data_file(&file);
    assert!(reset.is_err(), "{reset:?}");
    api.sandbox.stop().await;
}

#[tokio::test]
async fn reset_moves_the_data_aside_and_the_demo_is_seeded_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let demo = || SandboxConfig {
        demo: Some(DemoData { transactions: 30 }),
        ..config(&file, "acme", "secret-1")
    };
    let api = start(demo()).await;
    let token = api.token().await;
    api.create_product(&token, &product("mine")).await;
    let seeded = api
        .get_json("/partner/v2/transactions?limit=50", &token)
        .await;
    api.sandbox.stop().await;

    let aside = reset_data_file(&file).unwrap().expect("there was a file");
    assert!(!file.exists());
    assert!(aside.exists());
    assert!(
        aside.display().to_string().contains(".reset-"),
        "{}",
        aside.display()
    );

    let api = start(demo()).await;
    let token = api.token().await;
    let products = api.get_json("/partner/v2/products", &token).await;
    assert_eq!(
        products.as_array().unwrap().len(),
        3,
        "the demo only: {products:#}"
    );
    // Deterministic demo data: the same transactions as the first seeding.
    assert_eq!(
        api.get_json("/partner/v2/transactions?limit=50", &token)
            .await,
        seeded
    );
    api.sandbox.stop().await;

    // The discarded data is still there, aside, and a sandbox can open it.
    let api = start(config(&aside, "acme", "secret-1")).await;
    let token = api.token().await;
    let products = api.get_json("/partner/v2/products", &token).await;
    assert!(products
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "mine"));
    api.sandbox.stop().await;

    assert_eq!(reset_data_file(&dir.path().join("missing")).unwrap(), None);
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_file_and_its_journal_are_readable_by_their_owner_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let api = start(config(&file, "owner-only", "owner-only-secret")).await;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "it holds the service's signing keys");
    let wal = PathBuf::from(format!("{}-wal", file.display()));
    if wal.exists() {
        assert_eq!(mode(&wal), 0o600, "the journal holds the same");
    }
    drop(api);
}

/// The file as a sandbox of an earlier version wrote it: the same schema and rows, unencrypted
/// (copied out of an encrypted file with `sqlcipher_export` into a plain one).
fn decrypted(file: &Path) -> PathBuf {
    let plain = file.with_extension("plain");
    let conn = keyed(file);
    conn.execute(
        "ATTACH DATABASE ?1 AS plain KEY ''",
        [plain.to_str().unwrap()],
    )
    .unwrap();
    conn.query_row("SELECT sqlcipher_export('plain')", [], |_| Ok(()))
        .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    conn.pragma_update(
        Some(rusqlite::DatabaseName::Attached("plain")),
        "user_version",
        version,
    )
    .unwrap();
    conn.execute_batch("DETACH DATABASE plain").unwrap();
    plain
}

#[tokio::test]
async fn a_plain_file_of_an_earlier_version_is_encrypted_and_still_signs_with_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let api = start(config(&file, "acme", "secret-1")).await;
    let token = api.token_for("acme", "secret-1").await;
    let created = api
        .create_product(
            &token,
            &json!({"name": "acme-avm", "listingName": "Acme AVM", "requestTypes": ["NEW_REQUEST"],
                     "webhooks": [hook(&receiver.url(), "urn:svc:partner:transaction", &["created"], KEY_A)]}),
        )
        .await;
    let product_id = created["id"].as_str().unwrap().to_string();
    let first = api.lender_create(&product_id).await;
    receiver.next(WAIT).await.expect("a notification");
    let before = snapshot(&api, &token).await;
    api.sandbox.stop().await;

    // Today's plain file in its place.
    let plain = decrypted(&file);
    std::fs::rename(&plain, &file).unwrap();
    assert!(std::fs::read(&file)
        .unwrap()
        .starts_with(b"SQLite format 3\0"));
    assert!(file_bytes_hold(&file, KEY_A), "a plain file, as before");

    let api = start(config(&file, "acme", "secret-1")).await;
    let token = api.token_for("acme", "secret-1").await;
    assert_eq!(snapshot(&api, &token).await, before);
    let again = api.lender_create(&product_id).await;
    assert_ne!(again["id"], first["id"]);
    let got = receiver.next(WAIT).await.expect("a notification after");
    assert_eq!(
        got.header("svc-signature").unwrap_or_default(),
        signature_of(KEY_A, &got.body),
        "signed with the same key"
    );
    api.sandbox.stop().await;
    assert!(!file_bytes_hold(&file, KEY_A));
    assert!(!file_bytes_hold(&file, "acme-avm"));
    assert!(!std::fs::read(&file)
        .unwrap()
        .starts_with(b"SQLite format 3\0"));
    assert!(!PathBuf::from(format!("{}.encrypting", file.display())).exists());
}

#[tokio::test]
async fn a_file_under_another_data_key_is_refused_naming_the_key_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    file_with_data(&file).await;
    let bytes = std::fs::read(&file).unwrap();
    let other = DataKey::generate();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let error = match Sandbox::start(
        SandboxConfig {
            data_key: Some(other.clone()),
            ..config(&file, "acme", "secret-1")
        },
        listener,
    )
    .await
    {
        Ok(_) => panic!("the sandbox started under another key"),
        Err(error) => error,
    };
    assert!(matches!(error, Error::DataFileKey { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&other.fingerprint()), "{message}");
    assert!(message.contains("left as it is"), "{message}");
    assert!(!message.contains(&other.to_hex()[..16]), "{message}");
    assert!(!message.contains(&data_key().to_hex()[..16]), "{message}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // A data file without a key is a configuration error, not a plain file.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let without = Sandbox::start(
        SandboxConfig {
            data_key: None,
            ..config(&file, "acme", "secret-1")
        },
        listener,
    )
    .await;
    assert!(matches!(without, Err(Error::Config(_))));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

//! The capture store at rest (#46 item 5), through the `partner` command: `partner listen` with
//! its data key from `PARTNER_DATA_KEY_FILE` and from `PARTNER_DATA_KEY` says once on stderr
//! where the key is (never the key), captures signed notifications, is killed with `kill -9`
//! right after its answers, and `partner listen export` with the same key finds every
//! acknowledged capture; no file of the store (tables, WAL, journal) holds a body's or a
//! header's text; without the key the export is refused naming the key it needs, and the store
//! is left as it was.

use crate::listen::{KEY, SUB};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const BODY_MARK: &str = "BORROWER-AT-REST";
const HEADER_MARK: &str = "HEADER-AT-REST";

/// A key the test makes (64 hexadecimal digits), never one of a user's.
fn test_key(seed: u8) -> String {
    (0..32u8)
        .map(|i| format!("{:02x}", i.wrapping_mul(37).wrapping_add(seed)))
        .collect()
}

fn partner(env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .env_remove("PARTNER_DATA_KEY")
        .env_remove("PARTNER_DATA_KEY_FILE");
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// Listens on `db` with `env`, sends `count` signed notifications one by one, and kills the
/// listener with `kill -9` at once; returns the acknowledged eventIds and the listener's stderr.
async fn listen_then_kill(
    db: &Path,
    env: &[(&str, &str)],
    count: usize,
) -> (BTreeSet<String>, String) {
    let mut child = partner(env)
        .args(["listen", "--addr", "127.0.0.1:0", "--db"])
        .arg(db)
        .args(["--key", &format!("{SUB}={KEY}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let url = first
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut acknowledged = BTreeSet::new();
    for i in 0..count {
        let event_id = format!("rest-{i}");
        let body = format!(
            r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"tx-{i}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/partner/v2/transactions/tx-{i}"}},"note":"{BODY_MARK}-{i}"}}"#
        )
        .into_bytes();
        let response = client
            .post(&url)
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
            .header("X-Borrower", format!("{HEADER_MARK}-{i}"))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        acknowledged.insert(event_id);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (acknowledged, stderr)
}

fn export(db: &Path, env: &[(&str, &str)]) -> std::process::Output {
    partner(env)
        .args(["listen", "export", "--db"])
        .arg(db)
        .output()
        .unwrap()
}

fn assert_no_capture_text(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        for mark in [BODY_MARK, HEADER_MARK, "rest-1", "urn:svc:partner"] {
            assert!(
                !bytes.windows(mark.len()).any(|w| w == mark.as_bytes()),
                "{} holds {mark}",
                entry.path().display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_listener_s_captures_are_encrypted_and_exported_with_the_key_from_a_file_or_the_variable(
) {
    let dir = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let key_file = keys.path().join("listener.key");
    let key_file_text = key_file.to_str().unwrap().to_string();
    let key_text = test_key(7);
    let cases = [
        (
            "file",
            vec![("PARTNER_DATA_KEY_FILE", key_file_text.as_str())],
            "the key file",
        ),
        (
            "variable",
            vec![("PARTNER_DATA_KEY", key_text.as_str())],
            "the PARTNER_DATA_KEY variable",
        ),
    ];
    for (name, env, home) in cases {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let db = folder.join("captures.sqlite3");
        let (acknowledged, stderr) = listen_then_kill(&db, &env, 12).await;
        // Said once, where the key is; never the key.
        let said: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains("encrypted at rest with the data key"))
            .collect();
        assert_eq!(said.len(), 1, "{stderr}");
        assert!(said[0].contains(home), "{}", said[0]);
        if name == "file" {
            assert!(said[0].contains(&key_file_text), "{}", said[0]);
            let made = std::fs::read_to_string(&key_file).unwrap();
            assert!(!stderr.contains(made.trim()), "the key was printed");
        } else {
            assert!(!stderr.contains(&key_text), "the key was printed");
        }
        assert!(
            !folder.join("data.key").exists(),
            "{name}: no key file made beside the store"
        );
        assert_no_capture_text(&folder);

        // Exported after the crash with the same key: every acknowledged capture.
        let output = export(&db, &env);
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let exported: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| {
                let row: Value = serde_json::from_str(line).unwrap();
                Some(row["eventId"].as_str()?.to_string())
            })
            .collect();
        assert_eq!(exported, acknowledged, "{name}");
        assert_no_capture_text(&folder);
        // The listener's runs, read with the key (other tools cannot read the store): one, not
        // stopped cleanly (kill -9).
        let output = partner(&env)
            .args(["listen", "runs", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: runs");
        let runs: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(runs.len(), 1, "{name}: {runs:?}");
        assert!(runs[0]["startedAt"].is_string() && runs[0]["stoppedAt"].is_null());

        // Another key: refused, naming the key it needs, the store as it was.
        let before = std::fs::read(&db).unwrap();
        let other = test_key(99);
        let output = export(&db, &[("PARTNER_DATA_KEY", other.as_str())]);
        assert!(
            !output.status.success(),
            "{name}: exported with another key"
        );
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(
            message.contains("does not open with the data key") && message.contains(home),
            "{name}: {message}"
        );
        assert!(!message.contains(&other) && !message.contains(&key_text));
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{name}: the store changed"
        );
        // No key at all (and no secret store in these tests): refused, and no key file made
        // that would stand in for the one the store needs.
        let output = export(&db, &[]);
        assert!(!output.status.success(), "{name}: exported without a key");
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(
            message.contains("PARTNER_DATA_KEY_FILE"),
            "{name}: {message}"
        );
        assert!(
            !folder.join("data.key").exists(),
            "{name}: a key file was made"
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{name}: the store changed"
        );
    }
}

/// The data key `partner` used for the store `db` when no variable gave one, found as the CLI
/// finds it: the key file in the store's folder, else the OS's secret store when it answers
/// (the test command runs under a session bus with a keyring), else a new key file.
pub(crate) fn folder_key(db: &Path) -> partner_listener::StoreKey {
    let folder = db.parent().unwrap();
    let keychain = partner_client::KeyringStore::default();
    let secrets: Option<&dyn partner_client::SecretStore> =
        if partner_local::data_key::needs_secret_store(&Default::default(), folder)
            && partner_client::probe_secret_store(&keychain).is_ok()
        {
            Some(&keychain)
        } else {
            None
        };
    partner_local::data_key::resolve(&Default::default(), folder, secrets)
        .unwrap()
        .store_key()
}

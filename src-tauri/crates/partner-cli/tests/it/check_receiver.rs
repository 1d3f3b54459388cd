//! `partner check-receiver` as a real process against receivers on 127.0.0.1: a good one over
//! HTTPS with a private CA (`--ca-cert`, exit 0), one that does not verify signatures (exit 1,
//! `--json`), and one that is not there (exit 2). The key goes in on stdin and comes out nowhere.

use partner_api::Secret;
use partner_testkit::{refused_url, Misbehaviour, TestCa, Transport, WebhookReceiver};
use std::process::{Output, Stdio};
use tokio::io::AsyncWriteExt;

const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@#$^&*Q";

async fn check(args: &[&str]) -> Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .arg("check-receiver")
        .args(args)
        .args(["--subscription-id", "sub-cli", "--key-stdin"])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{KEY}\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "the key was printed"
    );
    output
}

async fn https_receiver(misbehaviour: Misbehaviour) -> (WebhookReceiver, tempfile::TempDir) {
    let ca = TestCa::new();
    let receiver =
        WebhookReceiver::start(Secret::new(KEY), misbehaviour, Transport::Https(ca.issue()))
            .await
            .unwrap();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("ca.pem"), ca.pem()).unwrap();
    (receiver, folder)
}

#[tokio::test]
async fn a_receiver_that_follows_the_rules_exits_0_with_a_line_per_rule() {
    let (receiver, folder) = https_receiver(Misbehaviour::None).await;
    let ca = folder.path().join("ca.pem");
    let output = check(&[
        receiver.url(),
        "--ca-cert",
        ca.to_str().unwrap(),
        "--timeout",
        "5s",
    ])
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let marks: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with(['✓', '✗', '!', '-']))
        .collect();
    assert_eq!(marks.len(), 6, "{stdout}");
    assert!(marks.iter().all(|line| line.starts_with('✓')), "{stdout}");
    assert!(stdout.contains("✓ tls-1.2-or-above"), "{stdout}");
    assert!(stdout.contains("accepts TLS 1.3 and TLS 1.2"), "{stdout}");
    assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
    assert_eq!(receiver.requests().len(), 9);
}

#[tokio::test]
async fn a_receiver_that_does_not_verify_exits_1_and_json_names_the_rule() {
    let (receiver, folder) = https_receiver(Misbehaviour::AcceptsBadSignature).await;
    let ca = folder.path().join("ca.pem");
    let output = check(&[
        receiver.url(),
        "--ca-cert",
        ca.to_str().unwrap(),
        "--timeout",
        "5s",
        "--json",
    ])
    .await;
    assert_eq!(output.status.code(), Some(1));
    let rules: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rules.len(), 6);
    let failed: Vec<&str> = rules
        .iter()
        .filter(|rule| rule["outcome"] == "fail")
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["signature-verified"]);
    let signature = rules
        .iter()
        .find(|r| r["id"] == "signature-verified")
        .unwrap();
    assert_eq!(signature["evidence"].as_array().unwrap().len(), 7);
    assert!(signature["evidence"][0]["durationMs"].is_u64());
    assert!(String::from_utf8_lossy(&output.stderr).contains("signature-verified"));
}

#[tokio::test]
async fn an_unreachable_receiver_exits_2() {
    let url = refused_url().await.unwrap();
    let output = check(&[&url, "--allow-http", "--timeout", "2s"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("could not be reached"), "{stderr}");
}

#[tokio::test]
async fn a_missing_ca_file_or_a_bad_url_exits_2() {
    let output = check(&[
        "https://127.0.0.1:9/hook",
        "--ca-cert",
        "/nonexistent/ca.pem",
    ])
    .await;
    assert_eq!(output.status.code(), Some(2));
    let output = check(&["ftp://127.0.0.1/hook"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("https://"));
}

/// The console's own listener is a receiver too: it must pass (plain HTTP on loopback, so the
/// certificate rule warns and the TLS rule is skipped).
#[tokio::test]
async fn the_consoles_own_listener_passes() {
    use std::io::BufRead;
    let folder = tempfile::tempdir().unwrap();
    let mut listener = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", "--addr", "127.0.0.1:0", "--db"])
        .arg(folder.path().join("captures.sqlite3"))
        .args(["--key", &format!("sub-cli={KEY}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(listener.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    let output = check(&[&url, "--allow-http", "--timeout", "5s", "--json"]).await;
    listener.kill().unwrap();
    listener.wait().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let outcomes: Vec<(String, String)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let rule: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                rule["id"].as_str().unwrap().to_owned(),
                rule["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("https-trusted-certificate", "warn"),
        ("tls-1.2-or-above", "skipped"),
        ("acknowledged-in-time", "pass"),
        ("signature-verified", "pass"),
        ("redelivery-acknowledged", "pass"),
        ("no-sensitive-data", "pass"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(id, outcome)| ((*id).to_owned(), (*outcome).to_owned()))
        .collect();
    assert_eq!(outcomes, expected);
}

/// `--keychain` for a subscription the keychain has no key for: the check cannot run (and
/// says so), whether or not a keychain is there at all.
#[tokio::test]
async fn keychain_without_the_subscriptions_key_exits_2() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "check-receiver",
            "https://127.0.0.1:9/hook",
            "--subscription-id",
            "sub-no-key-in-any-keychain",
            "--keychain",
        ])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("keychain"), "{stderr}");
}

/// `--keychain` with the key the console stored for the subscription (real Secret Service).
#[tokio::test]
async fn keychain_key_is_used_for_the_check() {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() != Ok("1") {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED keychain_key_is_used_for_the_check: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring");
        return;
    }
    let subscription = format!("sub-check-{}", std::process::id());
    let store = partner_client::KeyringStore::default();
    partner_client::store_signing_key(&store, &subscription, &Secret::new(KEY), chrono::Utc::now())
        .unwrap();
    let (receiver, folder) = https_receiver(Misbehaviour::None).await;
    let ca = folder.path().join("ca.pem");
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "check-receiver",
            receiver.url(),
            "--subscription-id",
            &subscription,
        ])
        .args([
            "--keychain",
            "--ca-cert",
            ca.to_str().unwrap(),
            "--timeout",
            "5s",
        ])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    partner_client::forget_signing_keys(&store, &subscription).unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stdout.contains(KEY));
    assert_eq!(receiver.requests().len(), 9);
}

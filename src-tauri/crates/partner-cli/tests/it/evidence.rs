//! `partner listen export --redact` as a real process: the evidence bundle of captures a real
//! `partner listen` made (by hand, and from the real sandbox with its delivery record), checked
//! to be HAR 1.2 with a summary, to mask what it must, and to hold no key, client secret or
//! token in any form.

use crate::listen::{listen, terminate, KEY, SUB};
use base64::engine::general_purpose::URL_SAFE;
use base64::Engine;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::SandboxConfig;
use partner_testkit::har::har_1_2_problems;
use partner_testkit::leaks::assert_no_secret;
use partner_testkit::TestSandbox;
use serde_json::{json, Value};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const TOKEN: &str = "bearer-token-of-the-caller-0123456789";
const COOKIE: &str = "cookie-session-0123456789abcdef";
const CLIENT_SECRET: &str = "client-secret-in-the-environment-0123";
const WRONG_KEY: &str = "Wrongkey123456789abcdefghijklmn$";

fn export(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", "export", "--db"])
        .arg(db)
        .args(args)
        .env_remove("PARTNER_CLIENT_SECRET")
        .env_remove("PARTNER_SANDBOX_ADMIN_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Reads `NAME.har` and `NAME.md`, checks the HAR and that no secret is in either (nor in what
/// the command printed).
fn read_bundle(base: &Path, output: &Output, secrets: &[(&str, &str)]) -> (Value, String) {
    assert!(
        output.status.success(),
        "export --redact failed: {}",
        text(&output.stderr)
    );
    let har = std::fs::read_to_string(base.with_extension("har")).unwrap();
    let summary = std::fs::read_to_string(base.with_extension("md")).unwrap();
    let printed = format!("{}{}", text(&output.stdout), text(&output.stderr));
    for (what, content) in [
        ("HAR file", &har),
        ("summary", &summary),
        ("output", &printed),
    ] {
        for (label, secret) in secrets {
            assert_no_secret(what, content, label, secret);
        }
    }
    let document: Value = serde_json::from_str(&har).unwrap();
    let problems = har_1_2_problems(&document);
    assert!(problems.is_empty(), "not HAR 1.2: {problems:?}");
    (document, summary)
}

#[tokio::test]
async fn export_redact_writes_a_bundle_with_no_secret_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let listening = listen(&db, &[]);
    let client = reqwest::Client::new();
    let body = format!(
        r#"{{"eventId":"ev-cli","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"tx-1","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/partner/v2/transactions/tx-1"}},"borrower":{{"ssn":"123-45-6789"}},"trace":"{}"}}"#,
        URL_SAFE.encode(CLIENT_SECRET)
    )
    .into_bytes();
    for key in [WRONG_KEY, KEY] {
        client
            .post(&listening.url)
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(SIGNATURE_HEADER, sign(key.as_bytes(), &body))
            .header("Content-Type", "application/json")
            .header("Authorization", format!("Bearer {TOKEN}"))
            .header("Cookie", format!("sid={COOKIE}"))
            .body(body.clone())
            .send()
            .await
            .unwrap();
    }
    terminate(listening);

    let base = dir.path().join("ticket");
    let output = export(
        &db,
        &[
            "--redact",
            "--notification",
            "ev-cli",
            "--mask-field",
            "borrower.ssn",
            "--key",
            &format!("{SUB}={KEY}"),
            "--out",
            base.to_str().unwrap(),
        ],
        &[("PARTNER_CLIENT_SECRET", CLIENT_SECRET)],
    );
    let (har, summary) = read_bundle(
        &base,
        &output,
        &[
            ("the signing key", KEY),
            ("the token", TOKEN),
            ("the cookie", COOKIE),
            ("the client secret", CLIENT_SECRET),
            ("the masked field", "123-45-6789"),
        ],
    );
    assert!(text(&output.stderr).contains("wrote the evidence of 2 captures"));
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    for entry in entries {
        let headers = entry["request"]["headers"].as_array().unwrap();
        for name in ["authorization", "cookie"] {
            let header = headers.iter().find(|h| h["name"] == name).unwrap();
            assert_eq!(header["value"], "[masked]");
        }
        let posted: Value =
            serde_json::from_str(entry["request"]["postData"]["text"].as_str().unwrap()).unwrap();
        assert_eq!(posted["borrower"]["ssn"], "[masked]");
        assert_eq!(posted["trace"], "[secret]");
    }
    assert!(summary.contains("Verdict: **invalid-signature**"));
    assert!(summary.contains("Verdict: **valid** (matched the current key)"));
    assert!(summary.contains("No known key gives this signature"));
    assert!(summary.contains("The signature matches the current key"));
    assert_eq!(summary.lines().filter(|l| l.starts_with("| #")).count(), 2);

    // By capture id, without keys: no diagnosis.
    let by_id = dir.path().join("by-id");
    let output = export(
        &db,
        &["--redact", "--id", "2", "--out", by_id.to_str().unwrap()],
        &[],
    );
    let (har, summary) = read_bundle(&by_id, &output, &[("the token", TOKEN)]);
    assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 1);
    assert!(summary.contains("Signature debugger: not run"));

    // Mistakes are refused with words, and writing nothing.
    for (args, words) in [
        (vec!["--redact", "--out", "x"], "--redact needs a selection"),
        (vec!["--redact", "--id", "1"], "give --out NAME"),
        (vec!["--id", "1", "--out", "x"], "--redact"),
        (
            vec![
                "--redact",
                "--id",
                "1",
                "--mask-field",
                "a..b",
                "--out",
                "x",
            ],
            "is not a field path",
        ),
        (
            vec!["--redact", "--notification", "nope", "--out", "x"],
            "no capture of a notification with eventId \"nope\"",
        ),
        (
            vec!["--redact", "--id", "1", "--out", "/nonexistent-folder/x"],
            "could not write /nonexistent-folder/x.har",
        ),
    ] {
        let output = export(&db, &args, &[]);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            text(&output.stderr).contains(words),
            "{args:?}: {}",
            text(&output.stderr)
        );
    }
    assert!(!dir.path().join("x.har").exists());
}

// Multi-threaded: the test reads the listener's stdout with blocking reads while the sandbox,
// on this runtime, keeps delivering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_redact_adds_the_sandboxs_delivery_record() {
    let sandbox = TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(5),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    // The listener does not know the subscription's key yet (a common first-day mistake): every
    // attempt is refused, and the bundle's diagnosis, given the key, says it would match.
    let mut listening = listen(&db, &["--json"]);
    let http = reqwest::Client::new();
    let token: Value = http
        .post(sandbox.url("/oauth2/v1/token"))
        .basic_auth(sandbox.client_id(), Some(sandbox.client_secret().expose()))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap().to_string();
    let product: Value = http
        .post(sandbox.url("/partner/v2/products"))
        .bearer_auth(&token)
        .json(&json!({
            "name": "evidence",
            "listingName": "Evidence",
            "requestTypes": ["NEW_REQUEST"],
            "webhooks": [{"url": listening.url, "resource": "urn:svc:partner:transaction",
                "events": ["created"], "signingkey": KEY}],
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let subscription = product["webhooks"][0]["subscriptionId"]
        .as_str()
        .unwrap()
        .to_string();
    let created = http
        .post(sandbox.url("/sandbox/v1/transactions"))
        .json(&json!({"productId": product["id"], "requestType": "NEW_REQUEST"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let mut event_id = None;
    for _ in 0..3 {
        let mut line = String::new();
        listening.stdout.read_line(&mut line).unwrap();
        let capture: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(capture["verdict"], "unknown-subscription");
        event_id = capture["eventId"].as_str().map(str::to_string);
    }
    let event_id = event_id.unwrap();
    // The third attempt's answer reaches the sandbox's record just after the capture.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let records: Value = http
            .get(sandbox.url(&format!("/sandbox/v1/deliveries?eventId={event_id}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if records[0]["state"] == "discarded" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{records}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    terminate(listening);

    let base = dir.path().join("sandbox-ticket");
    let output = export(
        &db,
        &[
            "--redact",
            "--notification",
            &event_id,
            "--key",
            &format!("{subscription}={KEY}"),
            "--deliveries-from",
            sandbox.base_url(),
            "--out",
            base.to_str().unwrap(),
        ],
        &[("PARTNER_CLIENT_SECRET", sandbox.client_secret().expose())],
    );
    let (har, summary) = read_bundle(
        &base,
        &output,
        &[
            ("the signing key", KEY),
            ("the client secret", sandbox.client_secret().expose()),
            ("the access token", &token),
        ],
    );
    assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 3);
    assert!(
        summary.contains("The signature matches the current key"),
        "{summary}"
    );
    assert!(summary.contains("## The service's delivery record"));
    assert!(summary.contains("State **discarded**"));
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| ["| 1 |", "| 2 |", "| 3 |"].iter().any(|p| l.starts_with(p)))
        .collect();
    assert_eq!(rows.len(), 3, "{summary}");
    for row in rows {
        assert!(
            row.contains("| 401 |")
                && row.contains(" ms |")
                && row.ends_with("(unknown-subscription) |"),
            "{row}"
        );
    }
    sandbox.stop().await;
}

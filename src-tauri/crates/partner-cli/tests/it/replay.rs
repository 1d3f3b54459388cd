//! `partner listen replay` as a process: captures of a real `partner listen` store sent again
//! to a receiver, signed again with the key it verifies with, in order, each answer checked and
//! written as JUnit; the same captures exported as HAR and sent as a contract run from the
//! file; mistakes refused with words (exit 2).

use super::listen::{listen, terminate, KEY, SUB};
use partner_api::signature::{sign, verify, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_testkit::{Reply, TestReceiver};
use serde_json::Value;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The key the receiver under test verifies with (another than the service's).
const TEST_KEY: &str = "Zyxwvutsrqponmlkjihgfedcba9876#$";

fn notification(event_id: &str) -> Vec<u8> {
    format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{{"instanceId":"acme","resourceId":"tx-{event_id}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/partner/v2/transactions/tx-{event_id}"}}}}"#
    )
    .into_bytes()
}

fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", "replay"])
        .args(args)
        .env("PARTNER_TEST_RECEIVER_KEY", TEST_KEY)
        .output()
        .unwrap()
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captures_sent_again_signed_for_the_receiver_checked_and_reported_as_junit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("captures.sqlite3");
    let db_arg = db.to_str().unwrap();
    let listening = listen(&db, &[]);
    let http = reqwest::Client::new();
    for event in ["ev-1", "ev-2", "ev-3"] {
        let body = notification(event);
        let answer = http
            .post(&listening.url)
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }
    terminate(listening);

    // The receiver under test takes two and refuses the third.
    let mut receiver =
        TestReceiver::start([Reply::Status(200), Reply::Status(204), Reply::Status(500)])
            .await
            .unwrap();
    let junit = dir.path().join("report.xml");
    let output = replay(&[
        "--db",
        db_arg,
        "--to",
        &receiver.url(),
        "--sign-with-env",
        "PARTNER_TEST_RECEIVER_KEY",
        "--concurrency",
        "1",
        "--expect",
        "2xx",
        "--junit",
        junit.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("2 of 3 captures sent to"), "{stderr}");
    assert!(
        !stderr.contains(TEST_KEY) && !String::from_utf8_lossy(&output.stdout).contains(TEST_KEY)
    );
    let sent = lines(&output);
    let events: Vec<&str> = sent
        .iter()
        .map(|s| s["eventId"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["ev-1", "ev-2", "ev-3"], "oldest first");
    assert!(sent.iter().all(|s| s["resigned"] == true));
    assert_eq!(sent[2]["failure"], "answered 500, expected 2xx");
    let received = receiver.take(3, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 3);
    for request in &received {
        assert_eq!(request.header("svc-replay"), Some("1"));
        let signature = request.header("svc-signature").unwrap();
        assert!(
            verify(TEST_KEY.as_bytes(), &request.body, signature),
            "signed with the receiver's key"
        );
    }
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(report.contains("tests=\"3\" failures=\"1\""), "{report}");
    assert!(report.contains("urn:svc:partner:transaction ev-3"));
    assert!(report.contains("answered 500, expected 2xx"));

    // The same captures as a HAR fixture: every one sent as it was signed, paced by --rate.
    let har = dir.path().join("fixtures.har");
    let exported = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "listen", "export", "--format", "har", "--db", db_arg, "--out",
        ])
        .arg(&har)
        .output()
        .unwrap();
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let mut second = TestReceiver::always(200).await.unwrap();
    let started = Instant::now();
    let output = replay(&[
        "--from",
        har.to_str().unwrap(),
        "--to",
        &second.url(),
        "--rate",
        "10",
        "--max-time",
        "5s",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "three sends at 10 per second start over 0.2 s"
    );
    assert!(stderr.contains("3 of 3 captures sent to"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("CAPTURE"));
    for request in second.take(3, Duration::from_secs(10)).await {
        let signature = request.header("svc-signature").unwrap();
        assert!(
            verify(KEY.as_bytes(), &request.body, signature),
            "the original signature"
        );
    }

    // Mistakes: said, exit 2, nothing sent.
    for (args, words) in [
        (
            vec![
                "--from",
                har.to_str().unwrap(),
                "--to",
                &second.url(),
                "--verdict",
                "valid",
            ],
            "the filters select from the store",
        ),
        (
            vec!["--db", db_arg, "--to", &second.url(), "--expect", "7xx"],
            "is not an expected status",
        ),
        (
            vec!["--db", db_arg, "--to", "ftp://example.test/hooks"],
            "http:// or https://",
        ),
        (
            vec!["--db", db_arg, "--to", &second.url(), "--rate", "0"],
            "above 0",
        ),
        (
            vec![
                "--db",
                db_arg,
                "--to",
                &second.url(),
                "--sign-with-env",
                "PARTNER_NO_SUCH_VARIABLE",
            ],
            "not set",
        ),
    ] {
        let refused = replay(&args);
        let stderr = String::from_utf8_lossy(&refused.stderr).into_owned();
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
    assert!(second.drain().is_empty());
}

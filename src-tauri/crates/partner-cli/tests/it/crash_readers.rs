//! Every reader sees every capture a killed listener acknowledged: `partner listen` on a store
//! of its own, `kill -9` right after its answers (three notifications one by one, twenty-five
//! one by one, eight senders in a burst), then with no listener running `partner listen export`
//! (JSON Lines and HAR) and `partner listen captures` find every acknowledged notification, and a
//! listener opens the store again afterwards. (Before, the tables alone were read: an export after
//! a crash left out whatever the journal held, 3,494 of 3,622 in the issue's burst, and exited 0.)

use crate::listen::{listen, KEY, SUB};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn body(event_id: &str) -> Vec<u8> {
    format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"updated","meta":{{"instanceId":"acme","resourceId":"tx-{event_id}","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/partner/v2/transactions/tx-{event_id}"}}}}"#
    )
    .into_bytes()
}

/// Sends one signed notification; its eventId when the listener answered 2xx.
async fn send_signed(client: &reqwest::Client, url: &str, event_id: String) -> Option<String> {
    let body = body(&event_id);
    let response = client
        .post(url)
        .header(SUBSCRIPTION_HEADER, SUB)
        .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .ok()?;
    response.status().is_success().then_some(event_id)
}

/// `partner listen SUBCOMMAND --db DB ARGS`, which must succeed; its standard output.
fn reader(subcommand: &str, db: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", subcommand, "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "partner listen {subcommand} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every reader, run on `db` with no listener: each finds every eventId of `acknowledged`.
fn every_reader_finds(db: &Path, acknowledged: &BTreeSet<String>, point: &str) {
    let event_ids = |lines: &str| -> BTreeSet<String> {
        lines
            .lines()
            .filter_map(|line| {
                let row: Value = serde_json::from_str(line).unwrap();
                Some(row["eventId"].as_str()?.to_string())
            })
            .collect()
    };
    let exported = event_ids(&reader("export", db, &[]));
    let lost: Vec<_> = acknowledged.difference(&exported).collect();
    assert!(
        lost.is_empty(),
        "{point}: export left out {} of {} acknowledged, e.g. {:?}",
        lost.len(),
        acknowledged.len(),
        lost.first()
    );
    let har: Value = serde_json::from_str(&reader("export", db, &["--format", "har"])).unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    assert!(
        entries.len() >= acknowledged.len(),
        "{point}: the HAR has {} entries for {} acknowledged",
        entries.len(),
        acknowledged.len()
    );
    // A page at a time (at most 1,000 a page).
    let mut listed = BTreeSet::new();
    for offset in (0..acknowledged.len() + 10).step_by(1_000) {
        let offset = offset.to_string();
        listed.extend(event_ids(&reader(
            "captures",
            db,
            &["--json", "--limit", "1000", "--offset", &offset],
        )));
    }
    assert!(
        acknowledged.is_subset(&listed),
        "{point}: captures lists {} of {} acknowledged",
        listed.intersection(acknowledged).count(),
        acknowledged.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reader_sees_what_a_killed_listener_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();

    // One by one, then kill -9 at once: a few, then more.
    for count in [3, 25] {
        let db = dir.path().join(format!("one-by-one-{count}.db"));
        let mut listening = listen(&db, &[]);
        let mut acknowledged = BTreeSet::new();
        for i in 0..count {
            let sent = send_signed(&client, &listening.url, format!("seq-{count}-{i}")).await;
            acknowledged.insert(sent.unwrap());
        }
        listening.child.kill().unwrap();
        listening.child.wait().unwrap();
        every_reader_finds(&db, &acknowledged, &format!("{count} one by one"));
    }

    // Eight senders for a second and a half, then kill -9 in the middle of the burst.
    let db = dir.path().join("burst.db");
    let mut listening = listen(&db, &[]);
    let started = Instant::now();
    let senders: Vec<_> = (0..8)
        .map(|sender| {
            let (client, url) = (client.clone(), listening.url.clone());
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for i in 0..2_000 {
                    if started.elapsed() > Duration::from_secs(5) {
                        break;
                    }
                    match send_signed(&client, &url, format!("b-{sender}-{i}")).await {
                        Some(event_id) => acknowledged.push(event_id),
                        None => break,
                    }
                }
                acknowledged
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    listening.child.kill().unwrap();
    listening.child.wait().unwrap();
    let mut acknowledged = BTreeSet::new();
    for sender in senders {
        acknowledged.extend(sender.await.unwrap());
    }
    eprintln!("{} acknowledged before kill -9", acknowledged.len());
    assert!(
        acknowledged.len() > 50,
        "too little load: {}",
        acknowledged.len()
    );
    every_reader_finds(&db, &acknowledged, "a burst");

    // The readers let the store go: a listener opens it again and finds them all.
    let restarted = listen(&db, &[]);
    assert!(send_signed(&client, &restarted.url, "after".into())
        .await
        .is_some());
    crate::listen::terminate(restarted);
}

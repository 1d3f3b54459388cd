//! `partner listen missed` as a process: the real `partner listen` receiving from a real
//! sandbox (fast retries), stopped by SIGTERM while the lender changes transactions and the
//! sandbox gives up, started again on the same port and store; `missed` then lists exactly the
//! notifications the sandbox discarded, as JSON lines and as a table; `recover` sends them
//! again, signed with the subscriptions' keys, and `missed` finds nothing after.

use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_testkit::TestSandbox;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "Kp9!rT2#vX8@mQ4$zL6^wN1^bH3&jF5*";

fn listen(db: &Path, port: u16, subscriptions: &[String]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(["listen", "--addr", &format!("127.0.0.1:{port}"), "--db"])
        .arg(db);
    for id in subscriptions {
        command.args(["--key", &format!("{id}={KEY}")]);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("listening on "), "{first:?}");
    child
}

fn terminate(mut child: Child) {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "partner listen did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn lender(
    http: &reqwest::Client,
    sandbox: &TestSandbox,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> Value {
    let response = http
        .request(method, sandbox.url(path))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{path}");
    response.json().await.unwrap()
}

async fn settled(http: &reqwest::Client, sandbox: &TestSandbox) -> Vec<Value> {
    for _ in 0..300 {
        let records = lender(
            http,
            sandbox,
            reqwest::Method::GET,
            "/sandbox/v1/deliveries",
            Value::Null,
        )
        .await;
        let records = records.as_array().unwrap().clone();
        if records.iter().all(|r| r["state"] != "pending") {
            return records;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("deliveries still pending");
}

fn identity(value: &Value) -> (String, String, String) {
    let text = |name: &str| value[name].as_str().unwrap().to_string();
    (
        text("subscriptionId"),
        text("resourceType"),
        text("eventId"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missed_lists_what_the_sandbox_discarded_while_partner_listen_was_stopped() {
    let sandbox = TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        clients: vec![ClientCredentials::generate()],
        delivery: DeliveryConfig {
            // Attempts to a stopped listener fail at once; the timeout only sets the sandbox's
            // give-up window, which `listen missed` reads from it: 3 × 4 s + 2 × 50 ms.
            retry_delay: Duration::from_millis(50),
            attempt_timeout: Duration::from_secs(4),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let http = reqwest::Client::new();
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("captures.sqlite3");
    // A port for the listener, known before the subscriptions point at it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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
    let url = format!("http://127.0.0.1:{port}/webhooks");
    let product: Value = http
        .post(sandbox.url("/partner/v2/products"))
        .bearer_auth(&token)
        .json(&json!({
            "name": "cli-missed",
            "listingName": "CLI missed",
            "requestTypes": ["NEW_REQUEST"],
            "webhooks": [
                {"url": url, "resource": "urn:svc:partner:transaction", "events": ["created", "updated"], "signingkey": KEY},
                {"url": url, "resource": "urn:svc:partner:transaction:event", "events": ["created"], "signingkey": KEY},
            ],
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let product_id = product["id"].as_str().unwrap().to_string();
    let subscriptions: Vec<String> = product["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["subscriptionId"].as_str().unwrap().to_string())
        .collect();
    let create = json!({"productId": product_id, "requestType": "NEW_REQUEST"});

    let listener = listen(&db, port, &subscriptions);
    let t1 = lender(
        &http,
        &sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        create.clone(),
    )
    .await;
    let delivered = settled(&http, &sandbox).await;
    assert!(delivered.iter().all(|r| r["state"] == "delivered") && delivered.len() == 2);
    terminate(listener);

    let t2 = lender(
        &http,
        &sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        create.clone(),
    )
    .await;
    let t2 = t2["id"].as_str().unwrap();
    lender(
        &http,
        &sandbox,
        reqwest::Method::PATCH,
        &format!("/sandbox/v1/transactions/{t2}"),
        json!({"loan": {"loanAmount": 1}}),
    )
    .await;
    lender(
        &http,
        &sandbox,
        reqwest::Method::POST,
        &format!("/sandbox/v1/transactions/{t2}/events"),
        json!({"type": "urn:acme:note", "text": "hello"}),
    )
    .await;
    let all = settled(&http, &sandbox).await;
    let last_change = std::time::Instant::now();
    let discarded: BTreeSet<_> = all
        .iter()
        .filter(|r| r["state"] == "discarded")
        .map(identity)
        .collect();
    assert_eq!(discarded.len(), 2 + 2 + 1);

    let listener = listen(&db, port, &subscriptions);
    // `partner listen <subcommand>` on this store and sandbox.
    let listen_command = |subcommand: &str, args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
        command
            .args(["listen", subcommand, "--db"])
            .arg(&db)
            .args(args)
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("PARTNER_BASE_URL", sandbox.base_url())
            .env("PARTNER_CLIENT_ID", sandbox.client_id())
            .env("PARTNER_CLIENT_SECRET", sandbox.client_secret().expose());
        command
    };
    let run = |args: &[&str]| listen_command("missed", args).output().unwrap();
    let output = run(&["--json", "--until", "now"]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let rows: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let found: BTreeSet<_> = rows.iter().map(identity).collect();
    assert_eq!(found, discarded, "exactly the discarded ones");
    assert_eq!(rows.len(), discarded.len());
    assert!(rows
        .iter()
        .all(|r| r["transactionId"] == t2 && r["productId"] == product_id));
    assert!(rows
        .iter()
        .all(|r| r["resourceRef"].as_str().unwrap().starts_with(&format!(
            "{}/partner/v2/transactions/{t2}",
            sandbox.public_url()
        ))));
    assert!(!found.iter().any(|(_, _, event)| t1["id"] == *event));
    assert!(stderr.contains("when the listener went down"), "{stderr}");
    assert!(!stderr.contains(sandbox.client_secret().expose()));

    // A table; one subscription.
    let table = run(&["--until", "now", "--subscription", &subscriptions[0]]);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(text.starts_with("SENTAT"), "{text}");
    assert_eq!(text.lines().count(), 1 + 2, "{text}");
    // By default up to the sandbox's own give-up window ago (12.1 s here, not the spec's
    // 130 s): nothing yet, then every discarded one once the window has passed.
    let fresh = run(&["--json"]);
    assert!(fresh.status.success());
    assert!(fresh.stdout.is_empty());
    assert!(String::from_utf8_lossy(&fresh.stderr).contains("may still arrive"));
    let window = Duration::from_millis(12_100);
    tokio::time::sleep(window.saturating_sub(last_change.elapsed()) + Duration::from_millis(500))
        .await;
    let due = run(&["--json"]);
    assert!(due.status.success());
    let due: BTreeSet<_> = String::from_utf8_lossy(&due.stdout)
        .lines()
        .map(|line| identity(&serde_json::from_str::<Value>(line).unwrap()))
        .collect();
    assert_eq!(
        due, discarded,
        "listed once the sandbox's window has passed"
    );

    // Mistakes: a bad time is a usage error, an unknown subscription too, no store is local.
    let bad = run(&["--since", "yesterday-ish"]);
    assert_eq!(bad.status.code(), Some(2));
    let unknown = run(&["--until", "now", "--subscription", "nope"]);
    assert_eq!(
        unknown.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    let missing = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", "missed", "--db"])
        .arg(home.path().join("none.sqlite3"))
        .env("PARTNER_BASE_URL", sandbox.base_url())
        .env("PARTNER_CLIENT_ID", sandbox.client_id())
        .env("PARTNER_CLIENT_SECRET", sandbox.client_secret().expose())
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(4));

    // Recover: first to a receiver that is not there (each row says so, exit 1), then to the
    // listener, which verifies each one and stores it as a replay; nothing is missed after.
    let recover = |args: &[&str]| {
        let mut command = listen_command("recover", &["--until", "now", "--json"]);
        command.args(args);
        for id in &subscriptions {
            command.args(["--key", &format!("{id}={KEY}")]);
        }
        command.output().unwrap()
    };
    let dry = recover(&["--to", &url, "--dry-run"]);
    let dry_err = String::from_utf8_lossy(&dry.stderr).into_owned();
    assert!(dry.status.success(), "{dry_err}");
    assert!(dry_err.contains("would send 5 notifications"), "{dry_err}");
    assert_eq!(String::from_utf8_lossy(&dry.stdout).lines().count(), 5);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}/hooks", closed.local_addr().unwrap());
    drop(closed);
    let refused = recover(&["--to", &nowhere]);
    assert_eq!(refused.status.code(), Some(1));
    let outcomes: Vec<Value> = String::from_utf8_lossy(&refused.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(outcomes.len(), 5);
    assert!(outcomes
        .iter()
        .all(|o| o["acknowledged"] == false && o["error"].is_string()));
    let sent = recover(&["--to", &url]);
    let sent_err = String::from_utf8_lossy(&sent.stderr).into_owned();
    assert!(sent.status.success(), "{sent_err}");
    assert!(
        sent_err.contains("5 of 5 recovered notifications acknowledged"),
        "{sent_err}"
    );
    let outcomes: Vec<Value> = String::from_utf8_lossy(&sent.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let recovered: BTreeSet<_> = outcomes.iter().map(identity).collect();
    assert_eq!(recovered, discarded);
    assert!(outcomes.iter().all(|o| o["status"] == 200));
    assert!(!sent_err.contains(KEY) && !String::from_utf8_lossy(&sent.stdout).contains(KEY));
    // Stored as valid replays (their signatures verify with the subscriptions' keys).
    let captures = crate::captures_once(&db, &[], |rows| {
        rows.iter().filter(|c| c["replay"] == true).count() >= 5
    });
    let replays: Vec<&Value> = captures.iter().filter(|c| c["replay"] == true).collect();
    assert_eq!(replays.len(), 5, "{captures:?}");
    assert!(
        replays.iter().all(|c| c["verdict"] == "valid"),
        "{replays:?}"
    );
    let after = run(&["--json", "--until", "now"]);
    assert!(after.status.success());
    assert!(
        after.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&after.stdout)
    );
    let nothing = recover(&["--to", &url]);
    assert!(nothing.status.success());
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("nothing to recover"));
    terminate(listener);
}

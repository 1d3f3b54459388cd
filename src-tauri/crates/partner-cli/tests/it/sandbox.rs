//! `partner sandbox` started as a real process on 127.0.0.1:0: the first line, the demo
//! credentials working against it, demo data, and a clean stop on SIGTERM; with `--data`, the
//! data kept across SIGTERM and across kill -9 after an acknowledged write, encrypted with the
//! data key, and a corrupt file refused and left as it was.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The data key the `--data` files of these tests are encrypted with, handed over as
/// `PARTNER_DATA_KEY` (so no test touches the machine's secret store or data folder).
fn data_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        partner_local::data_key::DataKey::generate()
            .to_hex()
            .as_str()
            .to_owned()
    })
}

struct Running {
    child: Child,
    lines: Vec<String>,
}

fn start(args: &[&str], stdout_lines: usize) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .arg("sandbox")
        .args(args)
        .env("RUST_LOG", "debug")
        .env("PARTNER_DATA_KEY", data_key())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..stdout_lines {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        lines.push(line.trim_end().to_string());
    }
    Running { child, lines }
}

fn terminate(mut running: Running) -> (bool, String) {
    let status = Command::new("kill")
        .args(["-TERM", &running.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = running.child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut running.child.stderr.take().unwrap(), &mut stderr)
                .unwrap();
            return (status.success(), stderr);
        }
        assert!(
            Instant::now() < deadline,
            "the sandbox did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn value_after<'a>(line: &'a str, prefix: &str) -> &'a str {
    line.strip_prefix(prefix)
        .unwrap_or_else(|| panic!("expected `{prefix}…`, got `{line}`"))
}

#[tokio::test]
async fn demo_sandbox_prints_its_address_and_a_working_client() {
    let running = start(&["--addr", "127.0.0.1:0", "--demo"], 3);
    let base = value_after(&running.lines[0], "listening on ").to_string();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    assert!(!base.ends_with(":0"), "the real port is printed: {base}");
    let id = value_after(&running.lines[1], "client id: ").to_string();
    let secret = value_after(&running.lines[2], "client secret: ").to_string();

    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let response = http
        .post(format!("{base}/oauth2/v1/token"))
        .basic_auth(&id, Some(&secret))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let token: Value = response.json().await.unwrap();
    let token = token["access_token"].as_str().unwrap().to_string();
    let list = http
        .get(format!(
            "{base}/partner/v2/transactions?sort=status,-created&start=100&limit=50"
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    let total: u64 = list.headers()["x-total-count"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(total >= 500, "{total}");
    assert_eq!(list.json::<Vec<Value>>().await.unwrap().len(), 50);
    let products: Vec<Value> = http
        .get(format!("{base}/partner/v2/products"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(products.len() >= 2);
    assert!(products
        .iter()
        .any(|p| !p["webhooks"].as_array().unwrap().is_empty()));

    let (ok, stderr) = terminate(running);
    assert!(ok, "exit status after SIGTERM: {stderr}");
    assert!(stderr.contains("sandbox stopped"), "{stderr}");
    assert!(!stderr.contains(&secret), "the secret is never logged");
    assert!(!stderr.contains(&token), "the token is never logged");
}

#[tokio::test]
async fn named_clients_are_not_printed() {
    let running = start(
        &[
            "--addr",
            "127.0.0.1:0",
            "--client",
            "acme:acme-secret-1",
            "--client",
            "other:other-secret-2",
        ],
        1,
    );
    let base = value_after(&running.lines[0], "listening on ").to_string();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    for (id, secret) in [("acme", "acme-secret-1"), ("other", "other-secret-2")] {
        let response = http
            .post(format!("{base}/oauth2/v1/token"))
            .basic_auth(id, Some(secret))
            .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
    }
    let child = running.child;
    // Nothing more on stdout: kill, then read the rest.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let rest = String::from_utf8_lossy(&output.stdout);
    assert!(rest.trim().is_empty(), "{rest}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("acme-secret-1") && !stderr.contains("other-secret-2"));
}

#[test]
fn bad_arguments_fail_in_words() {
    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "sandbox",
            "--addr",
            "127.0.0.1:0",
            "--client",
            "no-colon-secret",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ID:SECRET"), "{stderr}");
    assert!(!stderr.contains("no-colon-secret\n") || stderr.contains("--client"));

    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["sandbox", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("admin token"), "{stderr}");

    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["sandbox", "--retry-delay", "soon"])
        .output()
        .unwrap();
    assert!(!output.status.success());
}

/// A token for `id`:`secret` from the sandbox at `base`.
async fn token(http: &reqwest::Client, base: &str, id: &str, secret: &str) -> String {
    let response = http
        .post(format!("{base}/oauth2/v1/token"))
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_string()
}

async fn get_json(http: &reqwest::Client, url: &str, token: &str) -> Value {
    let response = http.get(url).bearer_auth(token).send().await.unwrap();
    assert_eq!(response.status(), 200, "GET {url}");
    response.json().await.unwrap()
}

/// How far the sandbox clock runs ahead, read by moving it one more second.
async fn clock_offset(http: &reqwest::Client, base: &str) -> u64 {
    let response = http
        .post(format!("{base}/sandbox/v1/clock/advance"))
        .json(&serde_json::json!({"seconds": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let state: Value = response.json().await.unwrap();
    state["offsetSeconds"].as_u64().unwrap()
}

#[tokio::test]
async fn data_file_keeps_everything_across_sigterm_and_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let file_arg = file.to_str().unwrap();
    let args = [
        "--addr",
        "127.0.0.1:0",
        "--client",
        "acme:secret-1",
        "--data",
        file_arg,
    ];
    let http = reqwest::Client::builder().no_proxy().build().unwrap();

    // First run: a product, a transaction on it, the clock moved; stopped with SIGTERM.
    let running = start(&args, 1);
    let base = value_after(&running.lines[0], "listening on ").to_string();
    let bearer = token(&http, &base, "acme", "secret-1").await;
    let created = http
        .post(format!("{base}/partner/v2/products"))
        .bearer_auth(&bearer)
        .json(
            &serde_json::json!({"name": "acme-avm", "listingName": "Acme AVM",
                                  "requestTypes": ["NEW_REQUEST"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let product: Value = created.json().await.unwrap();
    let product_id = product["id"].as_str().unwrap().to_string();
    let started = http
        .post(format!("{base}/sandbox/v1/transactions"))
        .json(&serde_json::json!({"productId": product_id, "requestType": "NEW_REQUEST"}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201);
    let transaction: Value = started.json().await.unwrap();
    let transaction_id = transaction["id"].as_str().unwrap().to_string();
    let offset = clock_offset(&http, &base).await;
    assert_eq!(offset, 1);
    let advanced = http
        .post(format!("{base}/sandbox/v1/clock/advance"))
        .json(&serde_json::json!({"seconds": 600}))
        .send()
        .await
        .unwrap();
    assert_eq!(advanced.status(), 200);
    let bearer = token(&http, &base, "acme", "secret-1").await;
    let product_before = get_json(
        &http,
        &format!("{base}/partner/v2/products/{product_id}"),
        &bearer,
    )
    .await;
    let transaction_before = get_json(
        &http,
        &format!("{base}/partner/v2/transactions/{transaction_id}"),
        &bearer,
    )
    .await;
    let (ok, stderr) = terminate(running);
    assert!(ok, "exit status after SIGTERM: {stderr}");

    // Second run: everything is there, the clock offset too; then a write, acknowledged, and
    // kill -9 right after the 2xx.
    let mut running = start(&args, 1);
    let base = value_after(&running.lines[0], "listening on ").to_string();
    let bearer = token(&http, &base, "acme", "secret-1").await;
    assert_eq!(
        get_json(
            &http,
            &format!("{base}/partner/v2/products/{product_id}"),
            &bearer
        )
        .await,
        product_before
    );
    assert_eq!(
        get_json(
            &http,
            &format!("{base}/partner/v2/transactions/{transaction_id}"),
            &bearer
        )
        .await,
        transaction_before
    );
    assert!(clock_offset(&http, &base).await >= 602);
    let updated = http
        .patch(format!("{base}/sandbox/v1/transactions/{transaction_id}"))
        .json(&serde_json::json!({"options": {"rush": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status(), 200);
    let product_write = http
        .post(format!("{base}/partner/v2/products"))
        .bearer_auth(&bearer)
        .json(
            &serde_json::json!({"name": "acme-title", "listingName": "Acme Title",
                                  "requestTypes": ["NEW_REQUEST"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(product_write.status(), 201);
    let second_product: Value = product_write.json().await.unwrap();
    running.child.kill().unwrap(); // SIGKILL
    running.child.wait().unwrap();
    // The acknowledged writes sit in the WAL, not yet in the main file: the next start must
    // recover them from there.
    let wal = std::fs::metadata(format!("{file_arg}-wal")).map(|m| m.len());
    assert!(matches!(wal, Ok(n) if n > 0), "{wal:?}");

    // Third run: the writes acknowledged before the kill are there.
    let running = start(&args, 1);
    let base = value_after(&running.lines[0], "listening on ").to_string();
    let bearer = token(&http, &base, "acme", "secret-1").await;
    let transaction_after = get_json(
        &http,
        &format!("{base}/partner/v2/transactions/{transaction_id}"),
        &bearer,
    )
    .await;
    assert_eq!(transaction_after["request"]["options"]["rush"], true);
    let events = get_json(
        &http,
        &format!("{base}/partner/v2/transactions/{transaction_id}/events"),
        &bearer,
    )
    .await;
    assert_eq!(events.as_array().unwrap().len(), 2, "{events:#}");
    assert_eq!(
        get_json(
            &http,
            &format!(
                "{base}/partner/v2/products/{}",
                second_product["id"].as_str().unwrap()
            ),
            &bearer
        )
        .await,
        second_product
    );
    assert!(clock_offset(&http, &base).await >= 603);
    let (ok, stderr) = terminate(running);
    assert!(ok, "exit status after SIGTERM: {stderr}");
    assert!(!stderr.contains("secret-1"), "the secret is never logged");
    let bytes = std::fs::read(&file).unwrap();
    assert!(
        !bytes.windows(8).any(|w| w == b"acme-avm"),
        "the data file is encrypted"
    );
    assert!(
        !bytes.windows(8).any(|w| w == b"secret-1"),
        "the data file holds a digest, never the secret"
    );
}

#[test]
fn a_corrupt_data_file_is_refused_in_words_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.sqlite3");
    let garbage = b"this is not a database, it is a grocery list: eggs, milk, bread\n".repeat(100);
    std::fs::write(&file, &garbage).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["sandbox", "--addr", "127.0.0.1:0", "--data"])
        .arg(&file)
        .env("PARTNER_DATA_KEY", data_key())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_eq!(output.status.code(), Some(4), "a local failure");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("does not open with the data key")
            && stderr.contains("not a sandbox data file"),
        "{stderr}"
    );
    let fingerprint = partner_local::data_key::DataKey::from_hex(data_key())
        .unwrap()
        .fingerprint();
    assert!(
        stderr.contains(&format!(
            "the data key {fingerprint} is in the PARTNER_DATA_KEY variable"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(&data_key()[..16]), "never the key");
    assert!(
        output.stdout.is_empty(),
        "nothing listens: {:?}",
        output.stdout
    );
    assert_eq!(std::fs::read(&file).unwrap(), garbage);
}

//! `partner sandbox` started as a real process on 127.0.0.1:0: the first line, the demo
//! credentials working against it, demo data, and a clean stop on SIGTERM.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Running {
    child: Child,
    lines: Vec<String>,
}

fn start(args: &[&str], stdout_lines: usize) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .arg("sandbox")
        .args(args)
        .env("RUST_LOG", "debug")
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

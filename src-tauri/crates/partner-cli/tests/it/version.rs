//! `partner version --check`: asks the update manifest once, on demand (a server of the
//! test's own stands in for the release page through PARTNER_UPDATE_URL), and never otherwise.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// A one-route HTTP server on 127.0.0.1 answering every request with `status` and `body`; the
/// request lines it saw are kept.
struct Manifests {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

fn serve(status: &'static str, body: String) -> Manifests {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/releases/latest.json",
        listener.local_addr().unwrap()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request).to_string();
            kept.lock()
                .unwrap()
                .push(head.lines().next().unwrap_or_default().to_string());
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Manifests { url, seen }
}

fn partner(args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(args)
        .env("PARTNER_DATA_DIR", home.path())
        .env_remove("PARTNER_NO_UPDATE_CHECK")
        .env_remove("PARTNER_UPDATE_URL");
    for name in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn manifest(version: &str) -> String {
    serde_json::json!({
        "version": version,
        "notes": "Signed updates.\nA faster inspector.",
        "pub_date": "2026-12-01T10:00:00Z",
        "platforms": {
            "linux-x86_64-deb": { "url": "https://example.invalid/p.deb", "signature": "c2ln" }
        }
    })
    .to_string()
}

const CURRENT: &str = env!("CARGO_PKG_VERSION");

#[test]
fn version_alone_asks_nobody_and_check_says_a_newer_one_exists() {
    let server = serve("200 OK", manifest("99.1.0"));
    let env = [("PARTNER_UPDATE_URL", server.url.as_str())];

    let plain = partner(&["version"], &env);
    assert!(plain.status.success(), "{plain:?}");
    assert!(
        String::from_utf8_lossy(&plain.stdout).starts_with(&format!("partner {CURRENT} (build "))
    );
    assert!(
        server.seen.lock().unwrap().is_empty(),
        "no request without --check"
    );

    let checked = partner(&["version", "--check"], &env);
    let out = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");
    assert!(
        out.contains(&format!(
            "A newer version is available: 99.1.0 (you have {CURRENT}, published 2026-12-01)"
        )),
        "{out}"
    );
    assert!(out.contains("  A faster inspector."), "{out}");
    assert_eq!(
        server.seen.lock().unwrap().as_slice(),
        ["GET /releases/latest.json HTTP/1.1"],
        "one request, for the manifest"
    );

    let json = partner(&["version", "--check", "--output", "json"], &env);
    assert!(json.status.success(), "{json:?}");
    let found: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(found["newer"], true);
    assert_eq!(found["latest"], "99.1.0");
    assert_eq!(found["current"], CURRENT);
    assert_eq!(found["manifest"], server.url.as_str());
}

#[test]
fn check_says_when_this_is_the_newest() {
    let server = serve("200 OK", manifest(CURRENT));
    let checked = partner(
        &["version", "--check"],
        &[("PARTNER_UPDATE_URL", server.url.as_str())],
    );
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");
    assert_eq!(
        String::from_utf8_lossy(&checked.stdout).trim(),
        format!("partner {CURRENT} is the newest version (the release page offers {CURRENT}).")
    );
}

#[test]
fn a_check_that_fails_says_why_with_the_cli_exit_statuses() {
    // Not found, or not a manifest: 1, as any refused request.
    let missing = serve("404 Not Found", "{}".into());
    let said = partner(
        &["version", "--check"],
        &[("PARTNER_UPDATE_URL", missing.url.as_str())],
    );
    assert_eq!(said.status.code(), Some(1), "{said:?}");
    assert!(
        String::from_utf8_lossy(&said.stderr).contains("404"),
        "{said:?}"
    );
    let html = serve("200 OK", "<html>maintenance</html>".into());
    let said = partner(
        &["version", "--check"],
        &[("PARTNER_UPDATE_URL", html.url.as_str())],
    );
    assert_eq!(said.status.code(), Some(1), "{said:?}");
    assert!(String::from_utf8_lossy(&said.stderr).contains("not an update manifest"));

    // Nobody there: 3, unreachable.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/latest.json", closed.local_addr().unwrap());
    drop(closed);
    let said = partner(
        &["version", "--check"],
        &[("PARTNER_UPDATE_URL", url.as_str())],
    );
    assert_eq!(said.status.code(), Some(3), "{said:?}");
    assert!(String::from_utf8_lossy(&said.stderr).contains("Could not reach the update server"));

    // A managed machine, or plain http elsewhere than this machine: 2, nothing asked.
    let server = serve("200 OK", manifest("99.1.0"));
    let said = partner(
        &["version", "--check"],
        &[
            ("PARTNER_UPDATE_URL", server.url.as_str()),
            ("PARTNER_NO_UPDATE_CHECK", "1"),
        ],
    );
    assert_eq!(said.status.code(), Some(2), "{said:?}");
    assert!(String::from_utf8_lossy(&said.stderr).contains("PARTNER_NO_UPDATE_CHECK"));
    let said = partner(
        &["version", "--check"],
        &[("PARTNER_UPDATE_URL", "http://updates.example/latest.json")],
    );
    assert_eq!(said.status.code(), Some(2), "{said:?}");
    assert!(String::from_utf8_lossy(&said.stderr).contains("https"));
    assert!(server.seen.lock().unwrap().is_empty());
}

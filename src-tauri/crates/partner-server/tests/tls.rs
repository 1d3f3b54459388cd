//! The team server over HTTPS (`ServerConfig::tls`), on a real, throwaway PostgreSQL
//! (partner-testkit) with certificates made at test time: the API and the webhook endpoint
//! answer over TLS to a client trusting the certificate; a plain-HTTP request, a client that
//! does not trust the certificate and a connection that never handshakes each leave the server
//! serving; the failed-login limit still sees the caller's address; a key that is not the
//! certificate's is refused by name.

// Helpers of tests panic on failure like the tests themselves.
#![allow(clippy::unwrap_used)]

mod common;

use common::Team;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_server::tls;
use partner_server::{signing_keys, RunningServer};
use partner_testkit::webhook_receiver::{ServerCert, TestCa};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// `cert` and `key` written as PEM files in `folder`; their paths.
fn pem_files(folder: &Path, cert: &str, key: &str) -> (PathBuf, PathBuf) {
    let cert_file = folder.join("cert.pem");
    let key_file = folder.join("key.pem");
    std::fs::write(&cert_file, cert).unwrap();
    std::fs::write(&key_file, key).unwrap();
    (cert_file, key_file)
}

/// A client that trusts `root` (PEM) only, besides the built-in roots.
fn client_trusting(root: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(root.as_bytes()).unwrap())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn me(client: &reqwest::Client, server: &RunningServer, token: &str) -> (u16, Value) {
    let response = client
        .get(format!("https://{}/api/v1/me", server.local_addr))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn notification(event_id: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "eventId": event_id,
        "eventType": "TransactionCreated",
        "resourceType": "transaction",
        "resourceId": "t-1",
        "meta": {"resourceType": "transaction"}
    }))
    .unwrap()
}

#[tokio::test]
async fn the_api_and_the_webhook_endpoint_answer_over_https() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let cert = ServerCert::self_signed();
    let folder = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = pem_files(folder.path(), &cert.cert_pem, &cert.key_pem);
    let server = team
        .server_with(Some(tls::load(&cert_file, &key_file).unwrap()))
        .await;
    let url = server.webhook_url("/webhooks");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let client = client_trusting(&cert.cert_pem);

    let (status, body) = me(&client, &server, &team.admin).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["role"], "admin", "{body}");

    let event = notification("e-tls-1");
    let response = client
        .post(&url)
        .header(SIGNATURE_HEADER, sign(b"whsec-one", &event))
        .header(SUBSCRIPTION_HEADER, "sub-1")
        .header("content-type", "application/json")
        .body(event)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM captures")
        .fetch_one(&team.pool)
        .await
        .unwrap();
    assert_eq!(stored, 1);

    // h2 by ALPN, when the client offers it.
    let response = client
        .get(format!("https://{}/health", server.local_addr))
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.text().await.unwrap(), "ok\n");

    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_chain_from_a_private_ca_is_served_and_trusted_through_its_root() {
    let team = Team::new().await;
    let ca = TestCa::new();
    let issued = ca.issue();
    let folder = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = pem_files(
        folder.path(),
        &format!("{}{}", issued.cert_pem, ca.pem()),
        &issued.key_pem,
    );
    let server = team
        .server_with(Some(tls::load(&cert_file, &key_file).unwrap()))
        .await;
    let client = client_trusting(&ca.pem());
    let (status, body) = me(&client, &server, &team.admin).await;
    assert_eq!(status, 200, "{body}");

    // The failed-login limit still knows the caller's address (ConnectInfo through TLS).
    let mut statuses = Vec::new();
    for _ in 0..=partner_server::failed_logins::ALLOWED {
        statuses.push(me(&client, &server, "pcw_wrong").await.0);
    }
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    assert!(
        statuses[..statuses.len() - 1].iter().all(|s| *s == 401),
        "{statuses:?}"
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn plain_http_untrusting_clients_and_silent_connections_leave_the_server_serving() {
    let team = Team::new().await;
    let cert = ServerCert::self_signed();
    let folder = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = pem_files(folder.path(), &cert.cert_pem, &cert.key_pem);
    let server = team
        .server_with(Some(tls::load(&cert_file, &key_file).unwrap()))
        .await;
    let client = client_trusting(&cert.cert_pem);

    // A connection that never says a word: the handshake's timeout closes it, and meanwhile
    // everyone else is served.
    let mut silent = tokio::net::TcpStream::connect(server.local_addr)
        .await
        .unwrap();
    let opened = Instant::now();

    // Plain HTTP to the HTTPS port: a 400 in plain HTTP saying so.
    let answer = reqwest::Client::new()
        .get(format!("http://{}/api/v1/me", server.local_addr))
        .bearer_auth(&team.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    let text = answer.text().await.unwrap();
    assert!(text.contains("use an https:// URL"), "{text}");
    let (status, _) = me(&client, &server, &team.admin).await;
    assert_eq!(status, 200);

    // A raw request, and garbage that is neither TLS nor HTTP.
    for sent in [
        &b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n"[..],
        b"\x00\x01\x02",
    ] {
        let mut raw = tokio::net::TcpStream::connect(server.local_addr)
            .await
            .unwrap();
        raw.write_all(sent).await.unwrap();
        let mut answer = String::new();
        tokio::time::timeout(Duration::from_secs(5), raw.read_to_string(&mut answer))
            .await
            .unwrap()
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    }

    // A TLS client that does not trust the certificate: its handshake fails, nothing else.
    let refused = reqwest::Client::new()
        .get(format!("https://{}/api/v1/me", server.local_addr))
        .send()
        .await;
    assert!(refused.is_err(), "{refused:?}");
    // A ClientHello cut short, then gone.
    let mut cut = tokio::net::TcpStream::connect(server.local_addr)
        .await
        .unwrap();
    cut.write_all(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        .await
        .unwrap();
    drop(cut);

    let (status, body) = me(&client, &server, &team.admin).await;
    assert_eq!(status, 200, "{body}");

    // The silent connection is closed by the handshake's timeout (10 s), not kept forever.
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(20), silent.read(&mut byte))
        .await
        .expect("the silent connection was still open after 20 s");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let waited = opened.elapsed();
    assert!(
        waited >= tls::HANDSHAKE_TIMEOUT - Duration::from_secs(1),
        "closed after {waited:?}"
    );

    let (status, _) = me(&client, &server, &team.admin).await;
    assert_eq!(status, 200);
    server.stop().await.unwrap();
}

#[test]
fn a_key_that_is_not_the_certificates_is_refused_naming_both_files_and_showing_neither() {
    let cert = ServerCert::self_signed();
    let other = ServerCert::self_signed();
    let folder = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = pem_files(folder.path(), &cert.cert_pem, &other.key_pem);
    let error = tls::load(&cert_file, &key_file).unwrap_err();
    assert!(
        matches!(error, partner_server::Error::Invalid(_)),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains(&key_file.display().to_string()), "{text}");
    assert!(text.contains(&cert_file.display().to_string()), "{text}");
    assert!(text.contains("is not the key of the certificate"), "{text}");
    for line in other
        .key_pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
    {
        assert!(!text.contains(line), "{text}");
    }

    // The files swapped: the certificate file holds no certificate, said before the key.
    let error = tls::load(&key_file, &cert_file).unwrap_err().to_string();
    assert!(error.contains("holds no certificate"), "{error}");
    assert!(error.contains(&key_file.display().to_string()), "{error}");
    for line in other
        .key_pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
    {
        assert!(!error.contains(line), "{error}");
    }
}

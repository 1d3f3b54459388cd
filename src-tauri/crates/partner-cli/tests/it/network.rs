//! `partner` from a company network, run as a process: the system trust store through
//! `SSL_CERT_FILE`, a proxy from `HTTPS_PROXY` and from `--proxy` (with a wrong password, the
//! error names the proxy), `--ca-cert`, and a client certificate (mutual TLS).

use partner_testkit::{Dialect, PrivateCaService, ProxyAuth, TestProxy};
use std::path::{Path, PathBuf};

use crate::{partner, text};
use std::process::Output;

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn products_listed(output: &Output) -> usize {
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    listed.as_array().unwrap().len()
}

#[tokio::test]
async fn the_trust_store_is_the_system_s_so_ssl_cert_file_is_honoured() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let service = &tls.service;
    let files = tempfile::tempdir().unwrap();
    let ca_file = tls.ca_file.clone();
    let list = ["products", "list", "--output", "json"];

    let trusted = partner(
        service,
        &list,
        &[("SSL_CERT_FILE", ca_file.to_str().unwrap())],
    )
    .await;
    assert_eq!(products_listed(&trusted), 3);

    // No CA for it anywhere: refused, saying it is the certificate.
    let empty = write(files.path(), "empty.pem", "");
    let refused = partner(
        service,
        &list,
        &[("SSL_CERT_FILE", empty.to_str().unwrap())],
    )
    .await;
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(message.contains("certificate authority"), "{message}");

    let by_option = partner(
        service,
        &[
            "products",
            "list",
            "--output",
            "json",
            "--ca-cert",
            ca_file.to_str().unwrap(),
        ],
        &[("SSL_CERT_FILE", empty.to_str().unwrap())],
    )
    .await;
    assert_eq!(products_listed(&by_option), 3);
}

#[tokio::test]
async fn https_proxy_from_the_environment_carries_the_calls() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let service = &tls.service;
    let proxy = TestProxy::start(None).await.unwrap();
    let ca_file = tls.ca_file.clone();
    let output = partner(
        service,
        &["products", "list", "--output", "json"],
        &[
            ("SSL_CERT_FILE", ca_file.to_str().unwrap()),
            ("HTTPS_PROXY", &proxy.url()),
        ],
    )
    .await;
    assert_eq!(products_listed(&output), 3);
    assert!(proxy.relayed() >= 1, "the calls went through the proxy");
}

#[tokio::test]
async fn a_proxy_with_a_password_given_by_option_overrides_the_environment() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let service = &tls.service;
    let proxy = TestProxy::start(Some(ProxyAuth {
        user: "bob".into(),
        password: "proxy-secret-77".into(),
    }))
    .await
    .unwrap();
    let ca_file = tls.ca_file.clone();
    let args = [
        "products",
        "list",
        "--output",
        "json",
        "--proxy",
        &proxy.url(),
        "--proxy-user",
        "bob",
    ];
    let ca_path = ca_file.to_str().unwrap();
    let env_with = |password| {
        [
            ("SSL_CERT_FILE", ca_path),
            // Not a proxy: the option must win over it.
            ("HTTPS_PROXY", "http://127.0.0.1:9"),
            ("PARTNER_PROXY_PASSWORD", password),
        ]
    };

    let env = env_with("proxy-secret-77");
    let output = partner(service, &args, &env).await;
    assert_eq!(products_listed(&output), 3);
    assert!(proxy.relayed() >= 1);

    let env = env_with("not-the-password");
    let refused = partner(service, &args, &env).await;
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(message.contains("proxy"), "{message}");
    assert!(!message.contains("not-the-password"), "{message}");
    assert!(proxy.refused() >= 1);
}

#[tokio::test]
async fn a_client_certificate_is_shown_when_given_and_its_absence_is_refused() {
    let tls = PrivateCaService::start(Dialect::minimal(), true).await;
    let service = &tls.service;
    let (cert_file, key_file) = tls.client_certificate("partner cli test");
    let ca_file = tls.ca_file.clone();
    let ca_arg = ca_file.to_str().unwrap();

    let accepted = partner(
        service,
        &[
            "products",
            "list",
            "--output",
            "json",
            "--ca-cert",
            ca_arg,
            "--client-cert",
            cert_file.to_str().unwrap(),
            "--client-key",
            key_file.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert_eq!(products_listed(&accepted), 3);

    let refused = partner(service, &["products", "list", "--ca-cert", ca_arg], &[]).await;
    assert!(!refused.status.success());
    assert!(!text(&refused.stderr).contains("PRIVATE KEY"));
}

#[tokio::test]
async fn a_saved_connection_s_proxy_and_ca_are_used_by_name() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let service = &tls.service;
    let proxy = TestProxy::start(None).await.unwrap();
    let files = tempfile::tempdir().unwrap();
    let ca_file = tls.ca_file.clone();
    let data = files.path().join("app-data");
    let mut settings = partner_local::Settings::default();
    settings.connections.push(partner_local::SavedConnection {
        id: "c-net".into(),
        label: "Behind the proxy".into(),
        base_url: service.base_url(),
        client_id: service.client_id().to_string(),
        environment: partner_local::Environment::Sandbox,
        sorts_tried: Default::default(),
        read_only: false,
        network: partner_local::ConnectionNetwork {
            proxy_url: Some(proxy.url()),
            proxy_user: None,
            ca_cert_file: Some(ca_file.clone()),
            client_cert_file: None,
        },
    });
    partner_local::SettingsFile::new(data.join("settings.json"))
        .save(&settings)
        .unwrap();
    let output = partner(
        service,
        &[
            "--connection",
            "behind the proxy",
            "products",
            "list",
            "--output",
            "json",
        ],
        &[("PARTNER_DATA_DIR", data.to_str().unwrap())],
    )
    .await;
    assert_eq!(products_listed(&output), 3);
    assert!(proxy.relayed() >= 1, "the saved proxy carried the calls");
}

#[tokio::test]
async fn doctor_names_the_certificate_s_issuer_and_passes_once_the_ca_is_given() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let service = &tls.service;
    let refused = partner(service, &["doctor"], &[]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let report = text(&refused.stdout);
    assert!(report.contains("✗ tls"), "{report}");
    assert!(report.contains("does not trust"), "{report}");
    assert!(report.contains("--ca-cert"), "what to do: {report}");
    assert!(report.contains("– token"), "later steps skipped: {report}");
    assert!(
        text(&refused.stderr).contains("tls failed"),
        "{}",
        text(&refused.stderr)
    );
    assert!(!report.contains(service.client_secret().expose()));

    let ca = tls.ca_file.to_str().unwrap();
    let passed = partner(
        service,
        &["doctor", "--ca-cert", ca, "--output", "json"],
        &[],
    )
    .await;
    assert!(passed.status.success(), "{}", text(&passed.stdout));
    let json: serde_json::Value = serde_json::from_slice(&passed.stdout).unwrap();
    let steps: Vec<(&str, &str)> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    for name in [
        "address",
        "tcp",
        "tls",
        "http",
        "token",
        "products",
        "transactions",
    ] {
        assert!(steps.contains(&(name, "passed")), "{name}: {steps:?}");
    }
}

//! `partner` from a company network, run as a process: the system trust store through
//! `SSL_CERT_FILE`, a proxy from `HTTPS_PROXY` and from `--proxy` (with a wrong password, the
//! error names the proxy), `--ca-cert`, and a client certificate (mutual TLS).

use partner_testkit::{Dialect, OtherService, ProxyAuth, ServiceTls, TestCa, TestProxy};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs `partner ARGS` against `service` with `env` added, a home of its own, and no proxy or
/// trust settings from the environment that runs the tests.
async fn partner(service: &OtherService, args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = tempfile::Builder::new()
        .prefix("partner-cli-net-")
        .tempdir()
        .unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("PARTNER_BASE_URL", service.base_url())
        .env("PARTNER_CLIENT_ID", service.client_id())
        .env("PARTNER_CLIENT_SECRET", service.client_secret().expose())
        .env_remove("PARTNER_TOKEN")
        .env_remove("PARTNER_CONNECTION");
    for name in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().await.unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

async fn tls_service(ca: &TestCa, client_ca: Option<String>) -> OtherService {
    OtherService::start_tls(
        Dialect::minimal(),
        ServiceTls {
            certificate: ca.issue(),
            client_ca_pem: client_ca,
        },
    )
    .await
}

fn products_listed(output: &Output) -> usize {
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    listed.as_array().unwrap().len()
}

#[tokio::test]
async fn the_trust_store_is_the_system_s_so_ssl_cert_file_is_honoured() {
    let ca = TestCa::new();
    let service = tls_service(&ca, None).await;
    let files = tempfile::tempdir().unwrap();
    let ca_file = write(files.path(), "ca.pem", &ca.pem());
    let list = ["products", "list", "--output", "json"];

    let trusted = partner(
        &service,
        &list,
        &[("SSL_CERT_FILE", ca_file.to_str().unwrap())],
    )
    .await;
    assert_eq!(products_listed(&trusted), 3);

    // No CA for it anywhere: refused, saying it is the certificate.
    let empty = write(files.path(), "empty.pem", "");
    let refused = partner(
        &service,
        &list,
        &[("SSL_CERT_FILE", empty.to_str().unwrap())],
    )
    .await;
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(message.contains("certificate authority"), "{message}");

    let by_option = partner(
        &service,
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
    let ca = TestCa::new();
    let service = tls_service(&ca, None).await;
    let proxy = TestProxy::start(None).await.unwrap();
    let files = tempfile::tempdir().unwrap();
    let ca_file = write(files.path(), "ca.pem", &ca.pem());
    let output = partner(
        &service,
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
    let ca = TestCa::new();
    let service = tls_service(&ca, None).await;
    let proxy = TestProxy::start(Some(ProxyAuth {
        user: "bob".into(),
        password: "proxy-secret-77".into(),
    }))
    .await
    .unwrap();
    let files = tempfile::tempdir().unwrap();
    let ca_file = write(files.path(), "ca.pem", &ca.pem());
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
    let output = partner(&service, &args, &env).await;
    assert_eq!(products_listed(&output), 3);
    assert!(proxy.relayed() >= 1);

    let env = env_with("not-the-password");
    let refused = partner(&service, &args, &env).await;
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(message.contains("proxy"), "{message}");
    assert!(!message.contains("not-the-password"), "{message}");
    assert!(proxy.refused() >= 1);
}

#[tokio::test]
async fn a_client_certificate_is_shown_when_given_and_its_absence_is_refused() {
    let ca = TestCa::new();
    let service = tls_service(&ca, Some(ca.pem())).await;
    let client = ca.issue_client("partner cli test");
    let files = tempfile::tempdir().unwrap();
    let ca_file = write(files.path(), "ca.pem", &ca.pem());
    let cert_file = write(files.path(), "client.pem", &client.cert_pem);
    let key_file = write(files.path(), "client-key.pem", &client.key_pem);
    let ca_arg = ca_file.to_str().unwrap();

    let accepted = partner(
        &service,
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

    let refused = partner(&service, &["products", "list", "--ca-cert", ca_arg], &[]).await;
    assert!(!refused.status.success());
    assert!(!text(&refused.stderr).contains("PRIVATE KEY"));
}

#[tokio::test]
async fn a_saved_connection_s_proxy_and_ca_are_used_by_name() {
    let ca = TestCa::new();
    let service = tls_service(&ca, None).await;
    let proxy = TestProxy::start(None).await.unwrap();
    let files = tempfile::tempdir().unwrap();
    let ca_file = write(files.path(), "ca.pem", &ca.pem());
    let data = files.path().join("app-data");
    let mut settings = partner_local::Settings::default();
    settings.connections.push(partner_local::SavedConnection {
        id: "c-net".into(),
        label: "Behind the proxy".into(),
        base_url: service.base_url(),
        client_id: service.client_id().to_string(),
        environment: partner_local::Environment::Sandbox,
        sorts_tried: Default::default(),
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
        &service,
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

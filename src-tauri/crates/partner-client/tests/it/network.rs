//! The client from a company network, over real HTTP(S) on 127.0.0.1: through a real forward
//! proxy (with and without Basic proxy credentials), against the other service over TLS with a
//! private CA given per connection, and with a client certificate (mutual TLS).

use partner_api::Secret;
use partner_client::{
    ClientCertificate, ConnectionConfig, ErrorKind, NetworkOptions, PageRequest, PartnerClient,
    ProxyOptions,
};
use partner_testkit::{Dialect, OtherService, PrivateCaService, ProxyAuth, TestProxy};
use std::path::PathBuf;

fn config_of(service: &OtherService, network: NetworkOptions) -> ConnectionConfig {
    let mut config = ConnectionConfig::new(
        &service.base_url(),
        service.client_id(),
        service.client_secret().clone(),
    )
    .unwrap();
    config.network = network;
    config
}

async fn list_one_page(config: ConnectionConfig) -> partner_client::Result<usize> {
    let client = PartnerClient::new(config)?;
    let page = client
        .list_products(&PageRequest::new(0, 10).unwrap())
        .await?;
    Ok(page.items.len())
}

fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[tokio::test]
async fn a_connection_s_proxy_carries_every_call() {
    let service = OtherService::start(Dialect::minimal()).await;
    let proxy = TestProxy::start(None).await.unwrap();
    let network = NetworkOptions {
        proxy: Some(ProxyOptions::new(&proxy.url(), None, None).unwrap()),
        ..NetworkOptions::default()
    };
    assert_eq!(
        list_one_page(config_of(&service, network)).await.unwrap(),
        3
    );
    assert!(
        proxy.relayed() >= 2,
        "the token and the list went through the proxy"
    );
}

#[tokio::test]
async fn a_proxy_with_a_password_lets_the_right_one_through_and_names_itself_on_a_wrong_one() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let (service, ca_file) = (&tls.service, tls.ca_file.clone());
    let proxy = TestProxy::start(Some(ProxyAuth {
        user: "alice".into(),
        password: "proxy-pass-42".into(),
    }))
    .await
    .unwrap();
    let with_password = |password: &str| NetworkOptions {
        proxy: Some(
            ProxyOptions::new(
                &proxy.url(),
                Some("alice".into()),
                Some(Secret::new(password)),
            )
            .unwrap(),
        ),
        extra_ca_file: Some(ca_file.clone()),
        client_certificate: None,
    };

    assert_eq!(
        list_one_page(config_of(service, with_password("proxy-pass-42")))
            .await
            .unwrap(),
        3
    );
    assert!(proxy.relayed() >= 1, "CONNECT tunnels were opened");

    let error = list_one_page(config_of(service, with_password("wrong")))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Network, "{message}");
    assert!(message.contains("proxy"), "{message}");
    assert!(
        !message.contains("wrong"),
        "no password in the message: {message}"
    );
    assert!(proxy.refused() >= 1);
}

#[tokio::test]
async fn a_private_ca_given_per_connection_is_trusted_and_nothing_else_is() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let (service, ca_file) = (&tls.service, tls.ca_file.clone());
    assert!(service.base_url().starts_with("https://"));

    let trusted = NetworkOptions {
        extra_ca_file: Some(ca_file),
        ..NetworkOptions::default()
    };
    assert_eq!(list_one_page(config_of(service, trusted)).await.unwrap(), 3);

    let error = list_one_page(config_of(service, NetworkOptions::default()))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Network);
    assert!(
        error.to_string().to_lowercase().contains("certificate"),
        "{error}"
    );
}

#[tokio::test]
async fn a_service_that_requires_a_client_certificate_accepts_ours_and_refuses_none() {
    let tls = PrivateCaService::start(Dialect::minimal(), true).await;
    let (service, ca_file) = (&tls.service, tls.ca_file.clone());
    let (cert_file, key_file) = tls.client_certificate("partner-console test client");
    let key_pem = std::fs::read_to_string(&key_file).unwrap();

    let with_certificate = NetworkOptions {
        extra_ca_file: Some(ca_file.clone()),
        client_certificate: Some(ClientCertificate::from_files(&cert_file, &key_file).unwrap()),
        proxy: None,
    };
    assert!(!format!("{with_certificate:?}").contains(&key_pem));
    assert_eq!(
        list_one_page(config_of(service, with_certificate))
            .await
            .unwrap(),
        3
    );

    let without = NetworkOptions {
        extra_ca_file: Some(ca_file),
        ..NetworkOptions::default()
    };
    let error = list_one_page(config_of(service, without))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Network, "{error}");
}

#[test]
fn files_that_are_not_what_they_should_be_are_refused_before_any_call() {
    let files = tempfile::tempdir().unwrap();
    let not_pem = write(&files, "ca.pem", "hello");
    let mut config = ConnectionConfig::new("https://127.0.0.1:1", "c", Secret::new("s")).unwrap();
    config.network.extra_ca_file = Some(not_pem.clone());
    let error = PartnerClient::new(config).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Rule);
    assert!(
        error.to_string().contains("holds no PEM certificate"),
        "{error}"
    );

    let error = ClientCertificate::from_files(&not_pem, &not_pem).unwrap_err();
    assert!(error.to_string().contains("no PEM private key"), "{error}");
}

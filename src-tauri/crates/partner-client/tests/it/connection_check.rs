//! The connection check against real servers on 127.0.0.1: the sandbox over plain HTTP, the
//! other service over TLS from a private CA (untrusted, then trusted), through a real forward
//! proxy (with and without a password, and a wrong one), a closed port and a host that does not
//! resolve.

use partner_api::Secret;
use partner_client::{
    check_connection, ConnectionConfig, ConnectionReport, NetworkOptions, ProxyOptions, StepOutcome,
};
use partner_testkit::{Dialect, OtherService, PrivateCaService, ProxyAuth, TestProxy, TestSandbox};
use std::sync::Mutex;

fn outcome(report: &ConnectionReport, name: &str) -> StepOutcome {
    report
        .steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name} in\n{report}"))
        .outcome
}

fn detail<'a>(report: &'a ConnectionReport, name: &str) -> &'a str {
    &report.steps.iter().find(|s| s.name == name).unwrap().detail
}

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

const NAMES: [&str; 8] = [
    "address",
    "proxy",
    "tcp",
    "tls",
    "http",
    "token",
    "products",
    "transactions",
];

#[tokio::test]
async fn the_sandbox_over_plain_http_passes_every_step_with_tls_skipped() {
    let sandbox = TestSandbox::start().await;
    let config = ConnectionConfig::new(
        sandbox.base_url(),
        sandbox.client_id(),
        sandbox.client_secret().clone(),
    )
    .unwrap();
    let seen = Mutex::new(Vec::new());
    let report =
        check_connection(&config, |step| seen.lock().unwrap().push(step.name.clone())).await;
    assert_eq!(*seen.lock().unwrap(), NAMES, "progress in order");
    assert!(report.all_passed(), "{report}");
    assert_eq!(outcome(&report, "tls"), StepOutcome::Skipped);
    assert!(detail(&report, "tls").contains("plain http://"));
    assert!(detail(&report, "proxy").contains("none, direct"));
    assert!(detail(&report, "http").contains("401"), "{report}");
    let text = report.to_text();
    assert!(!text.contains(sandbox.client_secret().expose()), "{text}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["steps"][0]["outcome"], "passed");
    assert!(json["steps"][0]["elapsedMs"].is_u64());
}

#[tokio::test]
async fn a_private_ca_is_named_when_untrusted_and_its_chain_listed_when_trusted() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let untrusted =
        check_connection(&config_of(&tls.service, NetworkOptions::default()), |_| {}).await;
    assert_eq!(
        outcome(&untrusted, "tls"),
        StepOutcome::Failed,
        "{untrusted}"
    );
    let tls_detail = detail(&untrusted, "tls");
    assert!(
        tls_detail
            .contains("issued by CN=Partner Console test CA, which this machine does not trust"),
        "{untrusted}"
    );
    let advice = untrusted
        .steps
        .iter()
        .find(|s| s.name == "tls")
        .unwrap()
        .advice
        .clone()
        .unwrap();
    assert!(advice.contains("--ca-cert"), "{advice}");
    for later in ["http", "token", "products", "transactions"] {
        assert_eq!(
            outcome(&untrusted, later),
            StepOutcome::Skipped,
            "{untrusted}"
        );
    }
    assert!(!untrusted.all_passed());

    let trusted_network = NetworkOptions {
        extra_ca_file: Some(tls.ca_file.clone()),
        ..NetworkOptions::default()
    };
    let trusted = check_connection(&config_of(&tls.service, trusted_network), |_| {}).await;
    assert!(trusted.all_passed(), "{trusted}");
    let chain = detail(&trusted, "tls");
    assert!(chain.contains("TLS 1."), "{trusted}");
    assert!(chain.contains("certificate 1:"), "{trusted}");
    assert!(
        chain.contains("issuer CN=Partner Console test CA"),
        "{trusted}"
    );
}

#[tokio::test]
async fn a_proxy_tunnel_is_checked_with_and_without_a_password() {
    let tls = PrivateCaService::start(Dialect::minimal(), false).await;
    let open = TestProxy::start(None).await.unwrap();
    let guarded = TestProxy::start(Some(ProxyAuth {
        user: "alice".into(),
        password: "proxy-pass-42".into(),
    }))
    .await
    .unwrap();
    let through = |url: String, user: Option<&str>, password: Option<&str>| NetworkOptions {
        proxy: Some(
            ProxyOptions::new(&url, user.map(Into::into), password.map(Secret::new)).unwrap(),
        ),
        extra_ca_file: Some(tls.ca_file.clone()),
        client_certificate: None,
    };

    let report = check_connection(
        &config_of(&tls.service, through(open.url(), None, None)),
        |_| {},
    )
    .await;
    assert!(report.all_passed(), "{report}");
    assert!(
        detail(&report, "proxy").contains("opened a tunnel"),
        "{report}"
    );

    let report = check_connection(
        &config_of(
            &tls.service,
            through(guarded.url(), Some("alice"), Some("proxy-pass-42")),
        ),
        |_| {},
    )
    .await;
    assert!(report.all_passed(), "{report}");

    let wrong = check_connection(
        &config_of(
            &tls.service,
            through(guarded.url(), Some("alice"), Some("wrong-pass-7")),
        ),
        |_| {},
    )
    .await;
    assert_eq!(outcome(&wrong, "proxy"), StepOutcome::Failed, "{wrong}");
    assert!(
        detail(&wrong, "proxy").contains("the proxy wants credentials"),
        "{wrong}"
    );
    assert!(!wrong.to_text().contains("wrong-pass-7"));
    assert_eq!(outcome(&wrong, "tls"), StepOutcome::Skipped);

    let none = check_connection(
        &config_of(&tls.service, through(guarded.url(), None, None)),
        |_| {},
    )
    .await;
    assert!(detail(&none, "proxy").contains("407"), "{none}");
}

#[tokio::test]
async fn a_closed_port_fails_tcp_and_skips_the_rest() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let config =
        ConnectionConfig::new(&format!("http://127.0.0.1:{port}"), "c", Secret::new("s")).unwrap();
    let report = check_connection(&config, |_| {}).await;
    assert_eq!(outcome(&report, "address"), StepOutcome::Passed);
    assert_eq!(outcome(&report, "tcp"), StepOutcome::Failed, "{report}");
    for later in ["tls", "http", "token", "products", "transactions"] {
        assert_eq!(outcome(&report, later), StepOutcome::Skipped, "{report}");
    }
}

#[tokio::test]
async fn an_unresolvable_host_fails_the_address_and_skips_the_rest() {
    let config =
        ConnectionConfig::new("https://no-such-host.invalid", "c", Secret::new("s")).unwrap();
    let report = check_connection(&config, |_| {}).await;
    assert_eq!(outcome(&report, "address"), StepOutcome::Failed, "{report}");
    assert_eq!(report.steps.len(), NAMES.len());
    assert!(report.steps[1..]
        .iter()
        .all(|s| s.outcome == StepOutcome::Skipped));
}

//! What a sandbox is started with: the public URL in notifications, refused configurations,
//! and demo data that is the same on every run.

use crate::support::{hook, product, Api, KEY_A};
use partner_sandbox::{ClientCredentials, DemoData, Error, Sandbox, SandboxConfig};
use partner_testkit::TestReceiver;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::net::TcpListener;

#[tokio::test]
async fn notifications_point_at_the_public_url() {
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let api = Api::with(SandboxConfig {
        allow_http_callbacks: true,
        public_url: Some("https://sandbox.partner.example/".into()),
        ..SandboxConfig::default()
    })
    .await;
    let token = api.token().await;
    let mut body = product("public");
    body["webhooks"] = json!([hook(
        &receiver.url(),
        "urn:svc:partner:transaction",
        &["created"],
        KEY_A
    )]);
    let created = api.create_product(&token, &body).await;
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let got = receiver.next(Duration::from_secs(10)).await.unwrap();
    let notification: Value = serde_json::from_slice(&got.body).unwrap();
    assert_eq!(
        notification["meta"]["resourceRef"],
        format!(
            "https://sandbox.partner.example/partner/v2/transactions/{}",
            transaction["id"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn bad_configurations_are_refused_in_words() {
    let cases = [
        SandboxConfig {
            clients: vec![
                ClientCredentials::new("same", "one"),
                ClientCredentials::new("same", "two"),
            ],
            ..SandboxConfig::default()
        },
        SandboxConfig {
            clients: vec![ClientCredentials::new("bad id", "x")],
            ..SandboxConfig::default()
        },
        SandboxConfig {
            public_url: Some("ftp://x".into()),
            ..SandboxConfig::default()
        },
        SandboxConfig {
            public_url: Some("not a url".into()),
            ..SandboxConfig::default()
        },
    ];
    for config in cases {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let error = Sandbox::start(config, listener).await.unwrap_err();
        assert!(matches!(error, Error::Config(_)), "{error}");
        assert!(!error.to_string().contains("one") || error.to_string().contains("same"));
    }
}

#[tokio::test]
async fn demo_data_is_the_same_on_every_run() {
    let config = || SandboxConfig {
        clients: vec![ClientCredentials::new("demo", "demo-secret")],
        demo: Some(DemoData { transactions: 120 }),
        ..SandboxConfig::default()
    };
    let mut pages = Vec::new();
    for _ in 0..2 {
        let api = Api::with(config()).await;
        let token = api.token_for("demo", "demo-secret").await;
        let products = api.get_json("/partner/v2/products", &token).await;
        let transactions = api
            .get_json(
                "/partner/v2/transactions?sort=-updated&limit=50&start=30",
                &token,
            )
            .await;
        let first = transactions[0]["id"].as_str().unwrap().to_string();
        let events = api
            .get_json(&format!("/partner/v2/transactions/{first}/events"), &token)
            .await;
        pages.push((products, transactions, events));
        api.sandbox.stop().await;
    }
    assert_eq!(pages[0], pages[1]);
}

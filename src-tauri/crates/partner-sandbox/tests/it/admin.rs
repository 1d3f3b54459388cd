//! The admin token of `/sandbox/v1/`: required to start on a non-loopback address, and then
//! required by every control. (Bound to 0.0.0.0 but reached only over 127.0.0.1.)

use crate::support::{expect_error, Api};
use partner_api::Secret;
use partner_sandbox::{Error, Sandbox, SandboxConfig};
use partner_testkit::TestSandbox;
use serde_json::json;
use tokio::net::TcpListener;

const ADMIN: &str = "admin-token-for-tests";

#[tokio::test]
async fn a_non_loopback_sandbox_needs_an_admin_token_to_start() {
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    let error = Sandbox::start(SandboxConfig::default(), listener)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::AdminTokenRequired(_)), "{error}");
    assert!(error.to_string().contains("admin token"));
}

#[tokio::test]
async fn controls_answer_only_with_the_admin_token() {
    let listener = TcpListener::bind("0.0.0.0:0").await.unwrap();
    let config = SandboxConfig {
        admin_token: Some(Secret::new(ADMIN)),
        ..SandboxConfig::default()
    };
    let api = Api::wrap(TestSandbox::start_on(config, listener).await);
    assert!(api.sandbox.base_url().starts_with("http://127.0.0.1:"));
    let advance = |token: Option<&'static str>| {
        let mut request = api
            .http
            .post(api.url("/sandbox/v1/clock/advance"))
            .json(&json!({"seconds": 5}));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let error = expect_error(advance(None).await.unwrap(), 403).await;
    assert!(!error.summary.contains(ADMIN));
    expect_error(advance(Some("wrong")).await.unwrap(), 403).await;
    assert_eq!(advance(Some(ADMIN)).await.unwrap().status(), 200);
    let deliveries = api
        .http
        .get(api.url("/sandbox/v1/deliveries"))
        .send()
        .await
        .unwrap();
    expect_error(deliveries, 403).await;
    let rules = |token: Option<&'static str>| {
        let mut request = api.http.get(api.url("/sandbox/v1/delivery"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    expect_error(rules(None).await.unwrap(), 403).await;
    let rules: serde_json::Value = rules(Some(ADMIN)).await.unwrap().json().await.unwrap();
    assert_eq!(
        rules,
        json!({"retryDelayMs": 20000, "attemptTimeoutMs": 30000, "maxAttempts": 3, "giveUpAfterMs": 130000}),
        "the spec's rules unless set"
    );
    for (method, path) in [
        (reqwest::Method::POST, "/sandbox/v1/faults"),
        (reqwest::Method::GET, "/sandbox/v1/faults"),
        (reqwest::Method::DELETE, "/sandbox/v1/faults"),
        (reqwest::Method::POST, "/sandbox/v1/tokens/revoke"),
    ] {
        let response = api
            .http
            .request(method, api.url(path))
            .json(&json!({"endpoint": "any", "status": 500, "count": 1}))
            .send()
            .await
            .unwrap();
        expect_error(response, 403).await;
    }
    let lender = api
        .http
        .post(api.url("/sandbox/v1/transactions"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    expect_error(lender, 403).await;
    // The partner API does not use the admin token.
    let token = api.token().await;
    assert_eq!(api.get("/partner/v2/products", &token).await.status(), 200);
}

#[tokio::test]
async fn on_loopback_the_controls_are_open() {
    let api = Api::start().await;
    let response = api
        .http
        .get(api.url("/sandbox/v1/deliveries"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

//! Token issuance, introspection, revocation, and expiry through the sandbox clock.

use crate::support::{expect_error, Api};
use partner_sandbox::{partner_id_of, ClientCredentials, SandboxConfig};
use reqwest::header::{CACHE_CONTROL, WWW_AUTHENTICATE};
use serde_json::Value;

const GRANT: [(&str, &str); 2] = [("grant_type", "client_credentials"), ("scope", "pc pcapi")];

fn two_clients() -> SandboxConfig {
    SandboxConfig {
        clients: vec![
            ClientCredentials::new("alpha", "alpha-secret"),
            ClientCredentials::new("beta", "beta-secret"),
        ],
        ..SandboxConfig::default()
    }
}

async fn introspect(api: &Api, id: &str, secret: &str, token: &str) -> reqwest::Response {
    api.http
        .post(api.url("/oauth2/v1/token/introspection"))
        .basic_auth(id, Some(secret))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
}

async fn revoke(api: &Api, id: &str, secret: &str, token: &str) -> reqwest::Response {
    api.http
        .post(api.url("/oauth2/v1/token/revocation"))
        .basic_auth(id, Some(secret))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn issuance_with_basic_or_form_credentials() {
    let api = Api::with(two_clients()).await;
    let response = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .basic_auth("alpha", Some("alpha-secret"))
        .form(&GRANT)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 900);
    assert!(body["access_token"].as_str().unwrap().len() >= 32);

    let response = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", "pc pcapi"),
            ("client_id", "beta"),
            ("client_secret", "beta-secret"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let token = response.json::<Value>().await.unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let products = api.get("/partner/v2/products", &token).await;
    assert_eq!(products.status(), 200);
}

#[tokio::test]
async fn bad_client_credentials_are_401_with_a_basic_challenge() {
    let api = Api::with(two_clients()).await;
    let cases: Vec<(&str, Option<String>)> = vec![
        ("wrong secret", Some(format!("Basic {}", b64("alpha:nope")))),
        (
            "unknown client",
            Some(format!("Basic {}", b64("gamma:alpha-secret"))),
        ),
        ("not base64", Some("Basic !!!not-base64!!!".into())),
        ("no colon", Some(format!("Basic {}", b64("alpha")))),
        ("bearer scheme", Some("Bearer something".into())),
        ("no scheme", Some("alpha-secret".into())),
        ("no credentials", None),
    ];
    for (case, header) in cases {
        let mut request = api.http.post(api.url("/oauth2/v1/token")).form(&GRANT);
        if let Some(header) = header {
            request = request.header("authorization", header);
        }
        let response = request.send().await.unwrap();
        assert!(
            response.headers()[WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .starts_with("Basic"),
            "{case}"
        );
        let error = expect_error(response, 401).await;
        assert!(!error.summary.contains("alpha-secret"), "{case}");
    }
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[tokio::test]
async fn grant_type_scope_and_form_rules() {
    let api = Api::with(two_clients()).await;
    let send = |form: Vec<(&'static str, &'static str)>| {
        api.http
            .post(api.url("/oauth2/v1/token"))
            .basic_auth("alpha", Some("alpha-secret"))
            .form(&form)
            .send()
    };
    let error = expect_error(
        send(vec![("grant_type", "password"), ("scope", "pc pcapi")])
            .await
            .unwrap(),
        400,
    )
    .await;
    assert!(error.details.contains("password"));
    expect_error(
        send(vec![("grant_type", "client_credentials"), ("scope", "pc")])
            .await
            .unwrap(),
        400,
    )
    .await;
    expect_error(send(vec![("scope", "pc pcapi")]).await.unwrap(), 400).await;
    expect_error(
        send(vec![("grant_type", "client_credentials")])
            .await
            .unwrap(),
        400,
    )
    .await;
    let repeated = send(vec![
        ("grant_type", "client_credentials"),
        ("grant_type", "client_credentials"),
        ("scope", "pc pcapi"),
    ])
    .await
    .unwrap();
    expect_error(repeated, 400).await;
    // Scopes are a set.
    assert_eq!(
        send(vec![
            ("grant_type", "client_credentials"),
            ("scope", "pcapi pc")
        ])
        .await
        .unwrap()
        .status(),
        201
    );
    // Not a form.
    let json = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .basic_auth("alpha", Some("alpha-secret"))
        .json(&serde_json::json!({"grant_type": "client_credentials", "scope": "pc pcapi"}))
        .send()
        .await
        .unwrap();
    expect_error(json, 415).await;
    // Without credentials the answer is a 401 whatever the body: the client comes first.
    for path in [
        "/oauth2/v1/token",
        "/oauth2/v1/token/introspection",
        "/oauth2/v1/token/revocation",
    ] {
        let bare = api.http.post(api.url(path)).send().await.unwrap();
        expect_error(bare, 401).await;
        let json = api
            .http
            .post(api.url(path))
            .json(&serde_json::json!({"token": "x"}))
            .send()
            .await
            .unwrap();
        expect_error(json, 401).await;
    }
}

#[tokio::test]
async fn introspection_reports_every_field_without_using_the_token() {
    let api = Api::with(two_clients()).await;
    let token = api.token_for("alpha", "alpha-secret").await;
    let issued = api.sandbox.clock().now().timestamp();
    let response = introspect(&api, "alpha", "alpha-secret", &token).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["active"], true);
    assert_eq!(body["scope"], "pc pcapi");
    assert_eq!(body["client_id"], "alpha");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["environment"], "sandbox");
    assert_eq!(body["identity_type"], "Partner");
    assert_eq!(body["encompass_client_id"], partner_id_of("alpha"));
    let exp = body["exp"].as_i64().unwrap();
    assert!(
        (exp - (issued + 900)).abs() <= 2,
        "exp {exp} issued {issued}"
    );

    // Introspection is not a use: the idle deadline stays.
    api.advance(600).await;
    let body: Value = introspect(&api, "alpha", "alpha-secret", &token)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["exp"].as_i64().unwrap(), exp);

    // Another client cannot introspect it; a bad token or a missing one is refused.
    expect_error(introspect(&api, "beta", "beta-secret", &token).await, 401).await;
    expect_error(
        introspect(&api, "alpha", "alpha-secret", "sbx_nonsense").await,
        401,
    )
    .await;
    expect_error(introspect(&api, "alpha", "wrong", &token).await, 401).await;
    let no_token = api
        .http
        .post(api.url("/oauth2/v1/token/introspection"))
        .basic_auth("alpha", Some("alpha-secret"))
        .form(&[("other", "x")])
        .send()
        .await
        .unwrap();
    expect_error(no_token, 400).await;
}

#[tokio::test]
async fn revocation_is_204_and_the_token_is_refused_everywhere() {
    let api = Api::with(two_clients()).await;
    let token = api.token_for("alpha", "alpha-secret").await;
    // Only its own client may revoke it.
    expect_error(revoke(&api, "beta", "beta-secret", &token).await, 401).await;
    let response = revoke(&api, "alpha", "alpha-secret", &token).await;
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());
    expect_error(api.get("/partner/v2/products", &token).await, 401).await;
    expect_error(api.get("/partner/v2/transactions", &token).await, 401).await;
    expect_error(introspect(&api, "alpha", "alpha-secret", &token).await, 401).await;
    expect_error(revoke(&api, "alpha", "alpha-secret", &token).await, 401).await;
    // Other tokens live on.
    let other = api.token_for("alpha", "alpha-secret").await;
    assert_eq!(api.get("/partner/v2/products", &other).await.status(), 200);
}

#[tokio::test]
async fn idle_expiry_restarts_with_each_call() {
    let api = Api::start().await;
    let token = api.token().await;
    for _ in 0..3 {
        api.advance(14 * 60).await;
        assert_eq!(api.get("/partner/v2/products", &token).await.status(), 200);
    }
    api.advance(15 * 60).await;
    let error = expect_error(api.get("/partner/v2/products", &token).await, 401).await;
    assert!(error.summary.contains("expired"), "{}", error.summary);
    // Once refused, refused for good.
    expect_error(api.get("/partner/v2/transactions", &token).await, 401).await;
}

#[tokio::test]
async fn maximum_lifetime_caps_a_busy_token() {
    let api = Api::start().await;
    let token = api.token().await;
    let secret = api.sandbox.client_secret().expose().to_string();
    let id = api.sandbox.client_id().to_string();
    for _ in 0..11 {
        api.advance(10 * 60).await;
        assert_eq!(api.get("/partner/v2/products", &token).await.status(), 200);
    }
    // 110 minutes in: the idle window would reach 125, the cap says 120.
    let body: Value = introspect(&api, &id, &secret, &token)
        .await
        .json()
        .await
        .unwrap();
    let now = api.sandbox.clock().now().timestamp();
    let left = body["exp"].as_i64().unwrap() - now;
    assert!((595..=600).contains(&left), "{left}");
    api.advance(10 * 60).await;
    expect_error(api.get("/partner/v2/products", &token).await, 401).await;
}

#[tokio::test]
async fn api_calls_need_a_bearer_token() {
    let api = Api::start().await;
    for path in [
        "/partner/v2/products",
        "/partner/v2/transactions",
        "/partner/v2/products/x",
    ] {
        let none = api.http.get(api.url(path)).send().await.unwrap();
        assert_eq!(none.headers()[WWW_AUTHENTICATE], "Bearer");
        expect_error(none, 401).await;
        let basic = api
            .http
            .get(api.url(path))
            .basic_auth("a", Some("b"))
            .send()
            .await
            .unwrap();
        expect_error(basic, 401).await;
        expect_error(api.get(path, "not-a-token").await, 401).await;
    }
}

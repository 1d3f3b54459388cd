//! Helpers of the HTTP tests: a started sandbox, a client, and checks of the error body.

use partner_api::{ApiError, ErrorCode};
use partner_sandbox::SandboxConfig;
use partner_testkit::TestSandbox;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, Response};
use serde_json::{json, Value};

/// Signing keys that meet the rule.
pub const KEY_A: &str = "Kp9!rT2vX8mQ4zL6wN1bH3jF5abcdefg";
pub const KEY_B: &str = "Zz8@yY7xX6wW5vV4uU3tT2sS1rR0qQpp";
pub const KEY_C: &str = "Cc3#dD4eE5fF6gG7hH8iI9jJ0kK1lL2m";

pub struct Api {
    pub sandbox: TestSandbox,
    pub http: reqwest::Client,
}

impl Api {
    pub async fn start() -> Self {
        Self::wrap(TestSandbox::start().await)
    }

    pub async fn demo() -> Self {
        Self::wrap(TestSandbox::start_demo().await)
    }

    pub async fn with(config: SandboxConfig) -> Self {
        Self::wrap(TestSandbox::start_with(config).await)
    }

    pub fn wrap(sandbox: TestSandbox) -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self { sandbox, http }
    }

    pub fn url(&self, path: &str) -> String {
        self.sandbox.url(path)
    }

    /// A token of the demo client.
    pub async fn token(&self) -> String {
        let secret = self.sandbox.client_secret().expose().to_string();
        self.token_for(self.sandbox.client_id(), &secret).await
    }

    pub async fn token_for(&self, id: &str, secret: &str) -> String {
        let response = self
            .http
            .post(self.url("/oauth2/v1/token"))
            .basic_auth(id, Some(secret))
            .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let body: Value = response.json().await.unwrap();
        body["access_token"].as_str().unwrap().to_string()
    }

    pub fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, self.url(path));
        match token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> Response {
        self.request(Method::GET, path, Some(token))
            .send()
            .await
            .unwrap()
    }

    pub async fn get_json(&self, path: &str, token: &str) -> Value {
        let response = self.get(path, token).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.unwrap()
    }

    pub async fn post_json(&self, path: &str, token: Option<&str>, body: &Value) -> Response {
        self.request(Method::POST, path, token)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    pub async fn patch_raw(
        &self,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: impl Into<reqwest::Body>,
    ) -> Response {
        self.request(Method::PATCH, path, token)
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .await
            .unwrap()
    }

    pub async fn merge_patch(&self, path: &str, token: &str, body: &Value) -> Response {
        self.patch_raw(
            path,
            Some(token),
            "application/merge-patch+json",
            body.to_string(),
        )
        .await
    }

    pub async fn create_product(&self, token: &str, body: &Value) -> Value {
        let response = self
            .post_json("/partner/v2/products", Some(token), body)
            .await;
        assert_eq!(response.status(), 201);
        response.json().await.unwrap()
    }

    /// The lender starts a transaction on a product.
    pub async fn lender_create(&self, product_id: &str) -> Value {
        let response = self
            .post_json(
                "/sandbox/v1/transactions",
                None,
                &json!({"productId": product_id, "requestType": "NEW_REQUEST", "loan": {"loanAmount": 250000}}),
            )
            .await;
        assert_eq!(response.status(), 201);
        response.json().await.unwrap()
    }

    pub async fn advance(&self, seconds: u64) {
        let response = self
            .post_json(
                "/sandbox/v1/clock/advance",
                None,
                &json!({ "seconds": seconds }),
            )
            .await;
        assert_eq!(response.status(), 200);
    }
}

/// A minimal valid product.
pub fn product(name: &str) -> Value {
    json!({"name": name, "listingName": format!("{name} listing"), "requestTypes": ["NEW_REQUEST"]})
}

/// A subscription entry pointing at `url`.
pub fn hook(url: &str, resource: &str, events: &[&str], key: &str) -> Value {
    json!({"url": url, "resource": resource, "events": events, "signingkey": key})
}

/// Asserts the status and the error body of the field notes, and returns the body.
pub async fn expect_error(response: Response, status: u16) -> ApiError {
    let got = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = response.text().await.unwrap();
    assert_eq!(got, status, "body: {text}");
    assert!(
        content_type.starts_with("application/json"),
        "content type {content_type}: {text}"
    );
    let error: ApiError = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(error.error_code, ErrorCode::from_status(status), "{text}");
    assert!(!error.summary.is_empty());
    error
}

/// `X-Total-Count` of a list response.
pub fn total(response: &Response) -> u64 {
    response.headers()["x-total-count"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

//! No secret in any response body or header (besides the token issuance that hands the token
//! out) and none in any log line: a whole session is run with every log line captured at
//! TRACE, and searched for client secrets, tokens and signing keys.

use crate::support::{hook, product, Api, KEY_A, KEY_B};
use partner_sandbox::{ClientCredentials, SandboxConfig};
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

const CLIENT_SECRET: &str = "client-secret-never-printed-42";
const WEAK_KEY: &str = "weakish-key-Aa1!";

// current_thread: the server's tasks run on this thread, under the captured subscriber.
#[tokio::test(flavor = "current_thread")]
async fn no_secret_reaches_a_response_or_a_log_line() {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let api = Api::with(SandboxConfig {
        clients: vec![ClientCredentials::new("client-one", CLIENT_SECRET)],
        allow_http_callbacks: true,
        ..SandboxConfig::default()
    })
    .await;
    let mut bodies: Vec<String> = Vec::new();
    let token = api.token_for("client-one", CLIENT_SECRET).await;
    let wrong = api
        .http
        .post(api.url("/oauth2/v1/token"))
        .basic_auth("client-one", Some(format!("{CLIENT_SECRET}x")))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap();
    bodies.push(format!(
        "{:?} {}",
        wrong.headers().clone(),
        wrong.text().await.unwrap()
    ));
    let introspection = api
        .http
        .post(api.url("/oauth2/v1/token/introspection"))
        .basic_auth("client-one", Some(CLIENT_SECRET))
        .form(&[("token", &token)])
        .send()
        .await
        .unwrap();
    bodies.push(introspection.text().await.unwrap());

    let mut body = product("secretive");
    body["webhooks"] = json!([hook(
        "http://127.0.0.1:9/x",
        "urn:svc:partner:transaction",
        &["created"],
        KEY_A
    )]);
    let created = api
        .post_json("/partner/v2/products", Some(&token), &body)
        .await;
    let created: serde_json::Value = serde_json::from_str(&{
        let text = created.text().await.unwrap();
        bodies.push(text.clone());
        text
    })
    .unwrap();
    let path = format!("/partner/v2/products/{}", created["id"].as_str().unwrap());
    let subscription = created["webhooks"][0]["subscriptionId"].clone();
    for patch in [
        json!({"webhooks": [{"subscriptionId": subscription, "signingkey": KEY_B}]}),
        json!({"webhooks": [{"subscriptionId": subscription, "signingkey": WEAK_KEY}]}),
        json!({"webhooks": [{"subscriptionId": subscription, "signingkey": WEAK_KEY, "resource": WEAK_KEY}]}),
        json!({"listingName": KEY_A, "webhooks": [{"subscriptionId": subscription, "signingkey": 5}]}),
    ] {
        let response = api.merge_patch(&path, &token, &patch).await;
        bodies.push(format!(
            "{:?} {}",
            response.headers().clone(),
            response.text().await.unwrap()
        ));
    }
    bodies.push(api.get(&path, &token).await.text().await.unwrap());
    bodies.push(
        api.get("/partner/v2/products", &token)
            .await
            .text()
            .await
            .unwrap(),
    );
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    bodies.push(transaction.to_string());
    bodies.push(
        api.http
            .get(api.url("/sandbox/v1/deliveries"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let revoke = api
        .http
        .post(api.url("/oauth2/v1/token/revocation"))
        .basic_auth("client-one", Some(CLIENT_SECRET))
        .form(&[("token", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(revoke.status(), 204);
    bodies.push(
        api.get("/partner/v2/products", &token)
            .await
            .text()
            .await
            .unwrap(),
    );
    // Let the delivery attempt to the closed port run (and log) before looking.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    api.sandbox.stop().await;

    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("access token issued"),
        "logs were captured:\n{logs}"
    );
    assert!(logs.contains("product changed"));
    for secret in [CLIENT_SECRET, token.as_str(), KEY_A, KEY_B, WEAK_KEY] {
        assert!(!logs.contains(secret), "a secret reached the logs:\n{logs}");
        for body in &bodies {
            if secret == KEY_A && body.contains("listingName") {
                // KEY_A was also sent as a listing name, which is not a secret there.
                continue;
            }
            assert!(
                !body.contains(secret),
                "a secret reached a response: {body}"
            );
        }
    }
}

//! The call log over real HTTP: against the other implementation of the service (request ids,
//! rate limits) and the sandbox, whose copied curl commands are run with the real `curl`.

use futures::StreamExt;
use partner_api::read;
use partner_api::{EventType, ResourceType, Secret, SortSpec};
use partner_client::{
    CallLog, CallOutcome, CallRecord, ConnectionConfig, MemoryStore, NewSubscription, PagerOptions,
    PartnerClient, SecretStore,
};
use partner_testkit::leaks::assert_no_secret;
use partner_testkit::{Dialect, OtherService, RetryAfter, Seed, TestSandbox};
use std::sync::Arc;
use std::time::Duration;

fn client_of(base_url: &str, client_id: &str, secret: &Secret) -> PartnerClient {
    let config = ConnectionConfig::new(base_url, client_id, secret.clone()).unwrap();
    PartnerClient::new(config).unwrap()
}

fn calls(log: &CallLog) -> Vec<Arc<CallRecord>> {
    log.snapshot().calls
}

/// Every way a call is kept or shown: its fields (Debug), its line, its curl command.
fn every_text_of(log: &CallLog) -> String {
    calls(log)
        .iter()
        .map(|call| format!("{call:?}\n{call}\n{}\n", call.curl()))
        .collect()
}

#[tokio::test]
async fn a_walk_is_logged_call_by_call_with_its_waits_and_request_ids() {
    let service = OtherService::start_with(
        Dialect::rate_limited(3, 429, RetryAfter::Seconds(1)),
        Seed {
            products: 1,
            transactions: 12,
        },
    )
    .await;
    let client = client_of(
        &service.base_url(),
        service.client_id(),
        service.client_secret(),
    );
    let mut live = client.calls().subscribe();
    let walked: Vec<_> = client
        .pager::<read::TransactionView>(
            SortSpec::default(),
            PagerOptions {
                page_size: 5,
                concurrency: 1,
            },
        )
        .unwrap()
        .map(|item| item.unwrap())
        .collect()
        .await;
    assert_eq!(walked.len(), 12);

    let log = calls(client.calls());
    let token = &log[0];
    assert_eq!(
        (token.method.as_str(), token.path.as_str()),
        ("POST", "/oauth2/v1/token")
    );
    assert!(
        matches!(token.outcome, CallOutcome::Answered { status } if (200..300).contains(&status)),
        "{token:?}"
    );
    let pages: Vec<_> = log.iter().skip(1).collect();
    assert_eq!(
        pages.len(),
        3,
        "three pages of five, one call each: {log:#?}"
    );
    for (n, page) in pages.iter().enumerate() {
        assert_eq!(page.method, "GET");
        assert_eq!(page.path, "/partner/v2/transactions");
        let query = page.query.as_deref().unwrap();
        assert!(
            query.contains(&format!("start={}", n * 5)) && query.contains("limit=5"),
            "{query}"
        );
        assert_eq!(page.outcome, CallOutcome::Answered { status: 200 });
        assert!(page.response_bytes.unwrap() > 2);
        let id = page.request_id.as_ref().expect("the service's request id");
        assert_eq!(id.header, "x-request-id");
        assert!(id.value.starts_with("other-"), "{id:?}");
    }
    // Every third call of the API is refused with `Retry-After: 1`: the third call (the third
    // page) waited once and was sent twice.
    let waited: Vec<_> = pages.iter().filter(|p| !p.waits.is_empty()).collect();
    assert_eq!(waited.len(), 1, "{pages:#?}");
    assert_eq!(waited[0].waits, [Duration::from_secs(1)]);
    assert_eq!(waited[0].attempts, 2);
    assert!(waited[0].duration >= Duration::from_secs(1));
    let line = waited[0].to_string();
    assert!(line.contains("waited 1 s (1 wait)"), "{line}");
    assert!(line.contains("request id x-request-id=other-"), "{line}");

    // The same calls arrived live, in order.
    let mut seen = Vec::new();
    while let Ok(call) = live.try_recv() {
        seen.push(call.seq);
    }
    assert_eq!(seen, log.iter().map(|c| c.seq).collect::<Vec<_>>());
    assert_no_secret(
        "the call log",
        &every_text_of(client.calls()),
        "the client secret",
        service.client_secret().expose(),
    );
}

#[tokio::test]
async fn no_secret_is_ever_in_a_logged_call_or_its_curl() {
    let service = OtherService::start(Dialect::extra()).await;
    let client = client_of(
        &service.base_url(),
        service.client_id(),
        service.client_secret(),
    );
    let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let product_id = service.products()[0]["id"].as_str().unwrap().to_owned();
    let subscribed = client
        .add_subscription(
            &store,
            &product_id,
            &NewSubscription {
                url: "https://hooks.example/calls".into(),
                events: vec![EventType::Created],
                resource: ResourceType::TransactionEvent,
            },
            None,
        )
        .await
        .unwrap();
    let first_key = subscribed.key.expose().to_owned();
    client
        .rotate_signing_key(
            store.as_ref(),
            &product_id,
            &subscribed.subscription_id,
            None,
        )
        .await
        .unwrap();
    let rotated_key = service
        .signing_key(&subscribed.subscription_id)
        .expect("the rotated key");
    assert_ne!(rotated_key, first_key);
    client.tokens().introspect().await.unwrap();
    let token = client.tokens().bearer().await.unwrap();
    client.tokens().revoke().await.unwrap();

    let log = client.calls();
    let text = every_text_of(log);
    for (label, secret) in [
        ("the client secret", service.client_secret().expose()),
        ("the token", token.expose()),
        ("the first signing key", first_key.as_str()),
        ("the rotated signing key", rotated_key.as_str()),
    ] {
        assert_no_secret("the call log", &text, label, secret);
    }
    // The writes are there, their keys as a variable; the token endpoints take the client
    // from variables; the service's request id is read from its other header name.
    let patches: Vec<_> = calls(log)
        .into_iter()
        .filter(|c| c.method == "PATCH")
        .collect();
    assert_eq!(patches.len(), 2, "{text}");
    for patch in &patches {
        let curl = patch.curl();
        assert!(curl.contains("${SIGNING_KEY"), "{curl}");
        assert!(
            curl.contains("Authorization: Bearer ${PARTNER_TOKEN}"),
            "{curl}"
        );
        assert_eq!(patch.request_id.as_ref().unwrap().header, "request-id");
    }
    let token_calls: Vec<_> = calls(log)
        .into_iter()
        .filter(|c| c.path.starts_with("/oauth2/"))
        .collect();
    assert!(token_calls.len() >= 3, "issue, introspect, revoke: {text}");
    for call in &token_calls {
        let curl = call.curl();
        assert!(
            curl.contains("-u \"${PARTNER_CLIENT_ID}:${PARTNER_CLIENT_SECRET}\""),
            "{curl}"
        );
    }
    let introspection = token_calls
        .iter()
        .find(|c| c.path.ends_with("/introspection"))
        .unwrap();
    assert!(
        introspection
            .curl()
            .contains("--data-urlencode \"token=${PARTNER_TOKEN}\""),
        "{}",
        introspection.curl()
    );
}

/// Runs a copied curl command with the secrets in the environment, as a person would paste it.
async fn run_curl(command: &str, env: &[(&str, &str)]) -> serde_json::Value {
    let output = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{command}: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{command}: {e}: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[tokio::test]
async fn a_copied_curl_command_repeats_the_call_against_the_sandbox() {
    let sandbox = TestSandbox::start().await;
    let client = client_of(
        sandbox.base_url(),
        sandbox.client_id(),
        sandbox.client_secret(),
    );
    let products = client
        .list_products(&partner_client::PageRequest::default())
        .await
        .unwrap();
    let missing = client.get_product("no-such-product").await.unwrap_err();
    assert_eq!(missing.kind(), partner_client::ErrorKind::NotFound);

    let log = calls(client.calls());
    assert_eq!(log.len(), 3, "{log:#?}");
    assert_eq!(log[2].outcome, CallOutcome::Answered { status: 404 });
    assert_eq!(log[2].path, "/partner/v2/products/no-such-product");

    // The token call, pasted with the client in the environment, issues a token...
    let issued = run_curl(
        &log[0].curl(),
        &[
            ("PARTNER_CLIENT_ID", sandbox.client_id()),
            ("PARTNER_CLIENT_SECRET", sandbox.client_secret().expose()),
        ],
    )
    .await;
    let token = issued["access_token"].as_str().unwrap().to_owned();
    // ...with which the listing call, pasted, answers what the client read.
    let listed = run_curl(&log[1].curl(), &[("PARTNER_TOKEN", &token)]).await;
    let ids: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        products
            .items
            .iter()
            .map(|p| p.id.clone())
            .collect::<Vec<_>>()
    );
    assert_no_secret(
        "the call log",
        &every_text_of(client.calls()),
        "the client secret",
        sandbox.client_secret().expose(),
    );
}

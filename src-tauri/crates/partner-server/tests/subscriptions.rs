//! Subscribing and rotating keys through a team workspace, over real HTTP: a real sandbox as
//! the service (sending real signed webhooks to the workspace's `/webhooks`), and the other
//! service in its dialect that shows no subscription ids. The key is generated and kept by the
//! servers (sealed), never in an answer or the audit log; the sandbox's notifications verify
//! with it, and after a rotation with the new one; a viewer is refused, audited; a key kept by
//! product, url and resource is bound to the id named by the first notification that verifies
//! with it, for every server.

#![allow(clippy::unwrap_used)]

mod common;

use common::{call_as, Team};
use partner_api::NewProduct;
use partner_client::{ConnectionConfig, PartnerClient};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_server::signing_keys;
use partner_server::{Role, RunningServer};
use partner_testkit::{Dialect, OtherService, TestSandbox};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TRANSACTION: &str = "urn:svc:partner:transaction";

fn page_query() -> Value {
    json!({"filter": {}, "grouping": "everyAttempt", "offset": 0, "limit": 100, "count": "upToCap"})
}

/// The captures of `server`, oldest first, as (verdict, subscription id).
async fn captures(server: &RunningServer, token: &str) -> Vec<(String, String)> {
    let (status, page) = call_as(
        server,
        token,
        Method::POST,
        "/api/v1/captures/page",
        Some(page_query()),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|c| {
            (
                c["verdict"].as_str().unwrap_or_default().to_string(),
                c["subscriptionId"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Waits until `server` holds `count` captures judged valid for `subscription`.
async fn valid_captures(server: &RunningServer, token: &str, subscription: &str, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen = captures(server, token).await;
        let valid = seen
            .iter()
            .filter(|(verdict, id)| verdict == "valid" && id == subscription)
            .count();
        if valid >= count {
            return;
        }
        assert!(Instant::now() < deadline, "{seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn audit(server: &RunningServer, token: &str) -> Vec<Value> {
    let (status, audit) = call_as(server, token, Method::GET, "/api/v1/audit", None).await;
    assert_eq!(status, 200, "{audit}");
    audit.as_array().unwrap().iter().rev().cloned().collect()
}

async fn pending(team: &Team) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM pending_signing_keys")
        .fetch_one(&team.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_subscription_made_and_rotated_through_the_workspace_verifies_the_sandboxs_webhooks() {
    let sandbox = TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        clients: vec![ClientCredentials::generate()],
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(5),
            max_attempts: 5,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let team = Team::new().await;
    let (a, b) = (team.server().await, team.server().await);
    let viewer = team.member("vera", Role::Viewer).await;
    let developer = team.member("dev", Role::Developer).await;
    let (status, body) = call_as(
        &a,
        &team.admin,
        Method::PUT,
        "/api/v1/service",
        Some(json!({
            "baseUrl": sandbox.base_url(),
            "clientId": sandbox.client_id(),
            "clientSecret": sandbox.client_secret().expose(),
        })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let laptop = PartnerClient::new(
        ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id(),
            sandbox.client_secret().clone(),
        )
        .unwrap(),
    )
    .unwrap();
    let product = laptop
        .create_product(&NewProduct {
            name: "workspace-hooks".into(),
            listing_name: "Workspace hooks".into(),
            request_types: vec!["NEW_REQUEST".into()],
            ..NewProduct::default()
        })
        .await
        .unwrap();

    // A viewer reads the products through the workspace.
    let (status, listed) =
        call_as(&b, &viewer, Method::GET, "/api/v1/products?limit=50", None).await;
    assert_eq!(status, 200, "{listed}");
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == product.id.as_str()),
        "{listed}"
    );

    // A viewer may not subscribe: refused, named, audited, nothing sent.
    let subscribe = json!({"url": a.webhook_url("/webhooks"), "resource": TRANSACTION});
    let path = format!("/api/v1/products/{}/subscriptions", product.id);
    let (status, refused) =
        call_as(&a, &viewer, Method::POST, &path, Some(subscribe.clone())).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["needs"], "developer");
    assert!(laptop
        .get_product(&product.id)
        .await
        .unwrap()
        .webhooks
        .is_empty());

    // A developer subscribes: the service holds a key the servers keep, the answer does not.
    let (status, subscribed) = call_as(&a, &developer, Method::POST, &path, Some(subscribe)).await;
    assert_eq!(status, 201, "{subscribed}");
    let id = subscribed["subscriptionId"].as_str().unwrap().to_string();
    let kept = signing_keys::load_all(&team.pool, &team.key).await.unwrap();
    let first = kept[&id].current.expose().to_string();
    assert!(!subscribed.to_string().contains(&first), "{subscribed}");
    assert_eq!(pending(&team).await, 0);

    let trigger = || async {
        let created = reqwest::Client::new()
            .post(sandbox.url("/sandbox/v1/transactions"))
            .json(&json!({"productId": product.id, "requestType": "NEW_REQUEST"}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    };
    trigger().await;
    // Judged valid on the server it reached, and seen from the other.
    valid_captures(&b, &viewer, &id, 1).await;

    // Rotated: the new key is current, the old one previous; the next webhook verifies.
    let (status, refused) = call_as(
        &a,
        &viewer,
        Method::POST,
        &format!("{path}/rotate"),
        Some(json!({"subscription": id})),
    )
    .await;
    assert_eq!(
        (status, refused["needs"].as_str()),
        (403, Some("developer"))
    );
    let (status, rotated) = call_as(
        &b,
        &developer,
        Method::POST,
        &format!("{path}/rotate"),
        Some(json!({"subscription": id})),
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    assert_eq!(rotated["subscriptionId"], id.as_str());
    let kept = signing_keys::load_all(&team.pool, &team.key).await.unwrap();
    let second = kept[&id].current.expose().to_string();
    assert_ne!(second, first);
    assert!(kept[&id].previous.as_ref().unwrap().key.ct_eq(&first));
    assert!(!rotated.to_string().contains(&second), "{rotated}");
    trigger().await;
    valid_captures(&a, &developer, &id, 2).await;

    // The audit log: each write under its member's name, each refusal, no key.
    let entries = audit(&a, &team.admin).await;
    let lines: Vec<String> = entries
        .iter()
        .filter(|e| e["action"] == "subscribe" || e["action"] == "rotate")
        .map(|e| {
            format!(
                "{} {} {}",
                e["member"].as_str().unwrap(),
                e["action"].as_str().unwrap(),
                e["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "vera subscribe refused",
            "dev subscribe done",
            "vera rotate refused",
            "dev rotate done"
        ]
    );
    let all = serde_json::to_string(&entries).unwrap();
    assert!(!all.contains(&first) && !all.contains(&second));
    assert_eq!(pending(&team).await, 0);

    // A subscription the service refuses (not a URL) is the member's to mend; no key is left.
    let (status, bad) = call_as(
        &a,
        &developer,
        Method::POST,
        &path,
        Some(json!({"url": "not a url", "resource": TRANSACTION})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(pending(&team).await, 0);

    // Changed (its key kept), then deleted (its keys forgotten); a viewer may do neither.
    let (status, refused) = call_as(
        &a,
        &viewer,
        Method::POST,
        &format!("{path}/delete"),
        Some(json!({"subscription": id})),
    )
    .await;
    assert_eq!(
        (status, refused["needs"].as_str()),
        (403, Some("developer"))
    );
    let (status, updated) = call_as(
        &a,
        &developer,
        Method::POST,
        &format!("{path}/update"),
        Some(json!({"subscription": id, "events": ["created"]})),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["events"], json!(["created"]));
    let kept = signing_keys::load_all(&team.pool, &team.key).await.unwrap();
    assert!(kept[&id].current.ct_eq(&second));
    let (status, product_now) = call_as(
        &b,
        &viewer,
        Method::GET,
        &format!("/api/v1/products/{}", product.id),
        None,
    )
    .await;
    assert_eq!(status, 200, "{product_now}");
    assert_eq!(product_now["webhooks"][0]["subscriptionId"], id.as_str());
    let (status, deleted) = call_as(
        &a,
        &developer,
        Method::POST,
        &format!("{path}/delete"),
        Some(json!({"subscription": id})),
    )
    .await;
    assert_eq!(status, 200, "{deleted}");
    assert!(deleted["webhooks"].as_array().unwrap().is_empty());
    let kept = signing_keys::load_all(&team.pool, &team.key).await.unwrap();
    assert!(!kept.contains_key(&id));
    a.stop().await.unwrap();
    b.stop().await.unwrap();
}

#[tokio::test]
async fn a_key_kept_by_product_and_url_is_bound_by_the_first_notification_that_verifies() {
    let service = OtherService::start(Dialect::without_subscription_ids()).await;
    let team = Team::new().await;
    let (a, b) = (team.server().await, team.server().await);
    let developer = team.member("dev", Role::Developer).await;
    let (status, body) = call_as(
        &a,
        &team.admin,
        Method::PUT,
        "/api/v1/service",
        Some(json!({
            "baseUrl": service.base_url(),
            "clientId": service.client_id(),
            "clientSecret": service.client_secret().expose(),
        })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let product = service.products()[0]["id"].as_str().unwrap().to_string();
    let url = a.webhook_url("/webhooks");

    let path = format!("/api/v1/products/{product}/subscriptions");
    let (status, subscribed) = call_as(
        &b,
        &developer,
        Method::POST,
        &path,
        Some(json!({"url": url, "resource": TRANSACTION, "events": ["created"]})),
    )
    .await;
    assert_eq!(status, 201, "{subscribed}");
    assert!(subscribed.get("subscriptionId").is_none(), "{subscribed}");
    assert_eq!(subscribed["element"]["url"], url.as_str());
    let (id, key) = service
        .subscription_at(&product, &url, TRANSACTION)
        .unwrap();
    assert!(!subscribed.to_string().contains(&key));

    // Server A heard of the key (NOTIFY) and tries it on the first notification, which binds.
    let deadline = Instant::now() + Duration::from_secs(10);
    let sent = loop {
        let sent = service.notify(&product, &url, TRANSACTION).await.unwrap();
        if sent.status == 200 || Instant::now() > deadline {
            break sent;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        (sent.status, sent.subscription_id.as_str()),
        (200, id.as_str())
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let bound: Option<String> =
            sqlx::query_scalar("SELECT bound_id FROM element_signing_keys WHERE product_id = $1")
                .bind(&product)
                .fetch_one(&team.pool)
                .await
                .unwrap();
        if bound.as_deref() == Some(id.as_str()) {
            break;
        }
        assert!(Instant::now() < deadline, "not bound: {bound:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The binding is every server's: a server started now knows the id without a trial.
    let c = team.server().await;
    let signed = service
        .send_notification(
            &c.webhook_url("/webhooks"),
            &id,
            &key,
            &product,
            TRANSACTION,
        )
        .await
        .unwrap();
    assert_eq!(signed.status, 200);

    // Rotated by RESOURCE=URL: the binding stays, the next notification verifies.
    let (status, rotated) = call_as(
        &a,
        &developer,
        Method::POST,
        &format!("{path}/rotate"),
        Some(json!({"subscription": format!("{TRANSACTION}={url}")})),
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let (_, new_key) = service
        .subscription_at(&product, &url, TRANSACTION)
        .unwrap();
    assert_ne!(new_key, key);
    assert!(!rotated.to_string().contains(&new_key));
    let again = service.notify(&product, &url, TRANSACTION).await.unwrap();
    assert_eq!(again.status, 200);
    valid_captures(&b, &developer, &id, 3).await;

    // Moved to server B's URL: another subscription at such a service, with the same key, kept
    // under the new element and bound again by its first notification; then deleted.
    let moved_url = b.webhook_url("/webhooks");
    let (status, moved) = call_as(
        &a,
        &developer,
        Method::POST,
        &format!("{path}/update"),
        Some(json!({"subscription": format!("{TRANSACTION}={url}"), "url": moved_url})),
    )
    .await;
    assert_eq!(status, 200, "{moved}");
    let elements: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT url, bound_id FROM element_signing_keys WHERE product_id = $1")
            .bind(&product)
            .fetch_all(&team.pool)
            .await
            .unwrap();
    assert_eq!(elements, [(moved_url.clone(), None)]);
    let (moved_id, moved_key) = service
        .subscription_at(&product, &moved_url, TRANSACTION)
        .unwrap();
    assert_eq!(moved_key, new_key, "the key moved with it");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let sent = service
            .notify(&product, &moved_url, TRANSACTION)
            .await
            .unwrap();
        if sent.status == 200 {
            assert_eq!(sent.subscription_id, moved_id);
            break;
        }
        assert!(Instant::now() < deadline, "{sent:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, deleted) = call_as(
        &b,
        &developer,
        Method::POST,
        &format!("{path}/delete"),
        Some(json!({"subscription": format!("{TRANSACTION}={moved_url}")})),
    )
    .await;
    assert_eq!(status, 200, "{deleted}");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM element_signing_keys")
        .fetch_one(&team.pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    for server in [a, b, c] {
        server.stop().await.unwrap();
    }
}

//! The missed-notification check and its recovery through a team workspace, over real HTTP: a
//! real sandbox (quick retries) delivering to one server's `/webhooks`; that server stopped
//! while the lender changes a transaction and the sandbox gives up; then, on another server of
//! the workspace, `POST /api/v1/missed` lists exactly what the sandbox discarded, a viewer's
//! recovery is refused and audited, a developer's sends them to the workspace's own intake,
//! where they are captured valid and marked `Svc-Replay: recovery`, and the check finds none.

#![allow(clippy::unwrap_used)]

mod common;

use chrono::Utc;
use common::{call_as, Team};
use partner_api::NewProduct;
use partner_client::{ConnectionConfig, PartnerClient};
use partner_listener::{CapturePage, Verdict};
use partner_local::missed::{MissedReport, SinceSource};
use partner_local::recover::RecoveryReport;
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_server::Role;
use partner_testkit::TestSandbox;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

const TRANSACTION: &str = "urn:svc:partner:transaction";

/// (subscription, resource type, eventId): what a notification is matched by.
type Identity = (String, String, String);

/// A sandbox whose retries are quick to watch: attempts of 2 s, 50 ms apart (a give-up
/// window of 6.1 s).
async fn quick_sandbox() -> TestSandbox {
    TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        clients: vec![ClientCredentials::generate()],
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(50),
            attempt_timeout: Duration::from_secs(2),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await
}

/// The lender's side of the sandbox.
async fn lender(sandbox: &TestSandbox, method: Method, path: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .request(method, sandbox.url(path))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

/// Waits until the sandbox has no delivery pending; returns them all.
async fn settled(sandbox: &TestSandbox) -> Vec<Value> {
    for _ in 0..300 {
        let records = lender(sandbox, Method::GET, "/sandbox/v1/deliveries", Value::Null).await;
        let records = records.as_array().unwrap().clone();
        if records.iter().all(|r| r["state"] != "pending") {
            return records;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("deliveries still pending");
}

fn identity_of_record(record: &Value) -> Identity {
    (
        record["subscriptionId"].as_str().unwrap().to_string(),
        record["resourceType"].as_str().unwrap().to_string(),
        record["eventId"].as_str().unwrap().to_string(),
    )
}

async fn missed(server: &partner_server::RunningServer, token: &str, body: Value) -> MissedReport {
    let (status, report) = call_as(server, token, Method::POST, "/api/v1/missed", Some(body)).await;
    assert_eq!(status, 200, "{report}");
    serde_json::from_value(report).unwrap()
}

fn found(report: &MissedReport) -> BTreeSet<Identity> {
    report
        .missed
        .iter()
        .map(|m| {
            (
                m.subscription_id.clone(),
                m.resource_type.as_str().to_string(),
                m.event_id.clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missed_through_the_workspace_lists_what_the_sandbox_gave_up_on_and_recover_brings_it_in() {
    let sandbox = quick_sandbox().await;
    let team = Team::new().await;
    // The subscription's receiver (stopped later), and the server the members ask.
    let receiver = team.server().await;
    let api = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let developer = team.member("dev", Role::Developer).await;
    let (status, body) = call_as(
        &api,
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
            name: "workspace-missed".into(),
            listing_name: "Workspace missed".into(),
            request_types: vec!["NEW_REQUEST".into()],
            ..NewProduct::default()
        })
        .await
        .unwrap();
    // Subscribed through the workspace: the servers hold the key, and sign recoveries with it.
    let (status, subscribed) = call_as(
        &api,
        &developer,
        Method::POST,
        &format!("/api/v1/products/{}/subscriptions", product.id),
        Some(json!({"url": receiver.webhook_url("/webhooks"), "resource": TRANSACTION})),
    )
    .await;
    assert_eq!(status, 201, "{subscribed}");
    let subscription = subscribed["subscriptionId"].as_str().unwrap().to_string();

    let creates = || async {
        let created = lender(
            &sandbox,
            Method::POST,
            "/sandbox/v1/transactions",
            json!({"productId": product.id, "requestType": "NEW_REQUEST"}),
        )
        .await;
        created["id"].as_str().unwrap().to_string()
    };
    let updates = |id: String| {
        let sandbox = &sandbox;
        async move {
            lender(
                sandbox,
                Method::PATCH,
                &format!("/sandbox/v1/transactions/{id}"),
                json!({"loan": {"loanAmount": 300000}}),
            )
            .await;
        }
    };

    // While the receiver is up: delivered, so captured (acknowledged only once committed).
    let t1 = creates().await;
    updates(t1).await;
    let before = settled(&sandbox).await;
    assert!(!before.is_empty());
    assert!(
        before.iter().all(|r| r["state"] == "delivered"),
        "{before:?}"
    );
    receiver.stop().await.unwrap();

    // The receiver is down: the lender changes a transaction, the sandbox gives up.
    let t2 = creates().await;
    updates(t2).await;
    let all = settled(&sandbox).await;
    let discarded: BTreeSet<Identity> = all
        .iter()
        .filter(|r| r["state"] == "discarded")
        .map(identity_of_record)
        .collect();
    assert!(!discarded.is_empty(), "{all:?}");
    assert!(discarded.iter().all(|(id, _, _)| *id == subscription));
    let delivered: BTreeSet<Identity> = all
        .iter()
        .filter(|r| r["state"] == "delivered")
        .map(identity_of_record)
        .collect();
    assert_eq!(delivered.len() + discarded.len(), all.len(), "{all:?}");

    // A viewer's check on the other server: exactly what the sandbox gave up on, each once,
    // from the subscription's first capture (a workspace keeps no record of going down).
    let report = missed(&api, &viewer, json!({"until": Utc::now()})).await;
    assert!(!report.cancelled);
    assert_eq!(found(&report), discarded, "{report:?}");
    assert_eq!(report.missed.len(), discarded.len(), "each once");
    let check = report
        .subscriptions
        .iter()
        .find(|c| c.subscription_id == subscription)
        .unwrap();
    assert_eq!(check.since_source, Some(SinceSource::FirstCapture));
    assert_eq!(check.missed, discarded.len() as u64);

    // Without `until`: the sandbox's own give-up window (6.1 s here), not the spec's 130 s.
    let asked = Utc::now();
    let windowed = missed(&api, &viewer, json!({})).await;
    assert!(
        windowed.until > asked - chrono::Duration::seconds(60)
            && windowed.until < Utc::now() - chrono::Duration::seconds(5),
        "{} asked at {asked}",
        windowed.until
    );

    // A viewer may not recover: refused, named, nothing sent.
    let (status, refused) = call_as(
        &api,
        &viewer,
        Method::POST,
        "/api/v1/missed/recover",
        Some(json!({"until": Utc::now()})),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["needs"], "developer");
    assert_eq!(
        refused["message"],
        "a viewer may not recover missed notifications: it takes the developer role"
    );

    // A developer's recovery: to the workspace's own intake, each acknowledged.
    let (status, recovered) = call_as(
        &api,
        &developer,
        Method::POST,
        "/api/v1/missed/recover",
        Some(json!({"until": Utc::now()})),
    )
    .await;
    assert_eq!(status, 200, "{recovered}");
    let recovered: RecoveryReport = serde_json::from_value(recovered).unwrap();
    assert!(!recovered.cancelled);
    assert_eq!(recovered.outcomes.len(), discarded.len());
    assert!(
        recovered
            .outcomes
            .iter()
            .all(|o| o.acknowledged && o.status == Some(200) && o.error.is_none()),
        "{recovered:?}"
    );

    // Captured by the workspace: valid (signed with the subscription's key), marked recovery.
    let (status, page) = call_as(
        &api,
        &viewer,
        Method::POST,
        "/api/v1/captures/page",
        Some(json!({
            "filter": {}, "grouping": "everyAttempt", "offset": 0, "limit": 100,
            "count": "upToCap"
        })),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let page: CapturePage = serde_json::from_value(page).unwrap();
    let recoveries: Vec<_> = page
        .items
        .iter()
        .map(|row| &row.capture)
        .filter(|c| c.header("Svc-Replay") == Some("recovery"))
        .collect();
    assert_eq!(recoveries.len(), discarded.len());
    for capture in &recoveries {
        assert_eq!(capture.verdict, Verdict::Valid, "{capture:?}");
        assert!(capture.replay);
    }
    let captured: BTreeSet<Identity> = recoveries
        .iter()
        .map(|c| {
            (
                c.subscription_id.clone().unwrap_or_default(),
                c.fields.resource_type.clone().unwrap_or_default(),
                c.fields.event_id.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(captured, discarded);

    // Checked again: nothing missed.
    let after = missed(&api, &developer, json!({"until": Utc::now()})).await;
    assert!(after.missed.is_empty(), "{after:?}");

    // The audit log: the refusal and the recovery, each under its member's name.
    let (status, audit) = call_as(&api, &team.admin, Method::GET, "/api/v1/audit", None).await;
    assert_eq!(status, 200, "{audit}");
    let lines: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|e| e["action"] == "recover")
        .map(|e| {
            format!(
                "{} {} {}",
                e["member"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
                e["detail"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "vera refused ".to_string(),
            format!(
                "dev done {n} of {n} acknowledged, to /webhooks",
                n = discarded.len()
            ),
        ]
    );
}

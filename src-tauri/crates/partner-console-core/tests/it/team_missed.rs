//! The missed-notification check and its recovery in a console joined to a real team
//! workspace: a real sandbox (quick retries) whose subscription, made through the workspace,
//! points at a closed port, so it gives up on every notification; the console's check is the
//! workspace's and lists exactly those; a viewer's "Send again" is refused with the sentence
//! before anything is sent; a developer's chosen row is recovered by the servers into the
//! workspace's own intake (valid, marked `Svc-Replay: recovery`), found missed no more, and a
//! second send of it is told it arrived since.
use crate::harness::form;
use crate::team::Team;
use chrono::Utc;
use partner_api::{NewProduct, Secret};
use partner_client::{ConnectionConfig, PartnerClient};
use partner_console_core::services::missed;
use partner_console_core::ErrorKind;
use partner_listener::{CapturePage, Verdict};
use partner_local::missed::MissedReport;
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::{ClientCredentials, SandboxConfig};
use partner_server::service::{self, NewConnection};
use partner_server::Role;
use partner_testkit::TestSandbox;
use partner_workspace::WorkspaceClient;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

type Identity = (String, String, String);

fn identity(subscription: &str, resource: &str, event: &str) -> Identity {
    (subscription.into(), resource.into(), event.into())
}

fn found(report: &MissedReport) -> BTreeSet<Identity> {
    report
        .missed
        .iter()
        .map(|m| identity(&m.subscription_id, m.resource_type.as_str(), &m.event_id))
        .collect()
}

async fn lender(sandbox: &TestSandbox, method: reqwest::Method, path: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .request(method, sandbox.url(path))
        .json(&body)
        .send()
        .await
        .expect("the sandbox answers");
    assert!(response.status().is_success(), "{path}");
    response.json().await.expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joined_console_checks_and_recovers_missed_notifications_through_the_workspace() {
    let sandbox = TestSandbox::start_with(SandboxConfig {
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
    .await;
    let team = Team::start().await;
    service::set(
        &team.pool,
        &team.key,
        &NewConnection {
            base_url: sandbox.base_url().to_string(),
            client_id: sandbox.client_id().to_string(),
            client_secret: sandbox.client_secret().clone(),
        },
        "test",
    )
    .await
    .expect("the service connection");
    let product = PartnerClient::new(
        ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id(),
            sandbox.client_secret().clone(),
        )
        .expect("config"),
    )
    .expect("client")
    .create_product(&NewProduct {
        name: "team-missed".into(),
        listing_name: "Team missed".into(),
        request_types: vec!["NEW_REQUEST".into()],
        ..NewProduct::default()
    })
    .await
    .expect("a product");
    let (developer, viewer) = (
        team.member("dev", Role::Developer).await,
        team.member("vera", Role::Viewer).await,
    );
    // A port nothing listens on: every delivery fails, and the sandbox gives up.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address");
    let developer_client = WorkspaceClient::new(
        partner_workspace::client::parse_url(&team.url()).expect("url"),
        Secret::new(developer.clone()),
    )
    .expect("client");
    let subscribed: Value = developer_client
        .post(
            &format!("/api/v1/products/{}/subscriptions", product.id),
            &json!({"url": format!("http://{closed}/webhooks"), "resource": "urn:svc:partner:transaction"}),
        )
        .await
        .expect("subscribed through the workspace");
    let subscription = subscribed["subscriptionId"]
        .as_str()
        .expect("an id")
        .to_string();

    let since = Utc::now() - chrono::Duration::seconds(1);
    let created = lender(
        &sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        json!({"productId": product.id, "requestType": "NEW_REQUEST"}),
    )
    .await;
    lender(
        &sandbox,
        reqwest::Method::PATCH,
        &format!(
            "/sandbox/v1/transactions/{}",
            created["id"].as_str().expect("id")
        ),
        json!({"loan": {"loanAmount": 300000}}),
    )
    .await;
    let mut records = Vec::new();
    for _ in 0..300 {
        let listed = lender(
            &sandbox,
            reqwest::Method::GET,
            "/sandbox/v1/deliveries",
            Value::Null,
        )
        .await;
        records = listed.as_array().expect("records").clone();
        if !records.is_empty() && records.iter().all(|r| r["state"] != "pending") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let discarded: BTreeSet<Identity> = records
        .iter()
        .filter(|r| r["state"] == "discarded")
        .map(|r| {
            identity(
                r["subscriptionId"].as_str().expect("id"),
                r["resourceType"].as_str().expect("type"),
                r["eventId"].as_str().expect("event"),
            )
        })
        .collect();
    assert!(discarded.len() >= 2, "{records:?}");
    assert!(discarded.iter().all(|(id, _, _)| *id == subscription));

    // The developer's console: the check is the workspace's (this machine's store knows none).
    let dev = team.joined(&developer).await;
    let check = json!({
        "subscriptionId": null, "since": since, "includeRecent": true, "allSubscriptions": true
    });
    let report = missed::find(&dev.console, form(check.clone()))
        .await
        .expect("the workspace's check");
    assert_eq!(found(&report), discarded, "{report:?}");

    // A viewer's "Send again" is refused before anything is sent, with the screen's sentence.
    let vera = team.joined(&viewer).await;
    let chosen = report.missed[0].clone();
    let refused = missed::resend(
        vera.console.state(),
        form(json!({"notifications": [chosen], "target": null})),
    )
    .await
    .expect_err("a viewer may not recover");
    assert_eq!(refused.kind, ErrorKind::Refused, "{refused:?}");
    assert!(
        refused
            .message
            .contains("A viewer may not recover missed notifications"),
        "{refused:?}"
    );

    // The developer sends the chosen row again: into the workspace's own intake.
    let sent = missed::resend(
        dev.console.state(),
        form(json!({"notifications": [chosen], "target": null})),
    )
    .await
    .expect("recovered");
    assert_eq!(sent.outcomes.len(), 1, "{sent:?}");
    assert!(
        sent.outcomes[0].acknowledged && sent.outcomes[0].status == Some(200),
        "{sent:?}"
    );
    assert_eq!(sent.outcomes[0].event_id, chosen.event_id);
    let page: CapturePage = team
        .admin
        .post(
            "/api/v1/captures/page",
            &json!({"filter": {}, "grouping": "everyAttempt", "offset": 0, "limit": 50,
                    "count": "upToCap"}),
        )
        .await
        .expect("a page");
    let recovered: Vec<_> = page
        .items
        .iter()
        .map(|row| &row.capture)
        .filter(|c| c.header("Svc-Replay") == Some("recovery"))
        .collect();
    assert_eq!(recovered.len(), 1, "{page:?}");
    assert_eq!(recovered[0].verdict, Verdict::Valid);
    assert_eq!(
        recovered[0].fields.event_id.as_deref(),
        Some(chosen.event_id.as_str())
    );

    // Checked again: that one arrived, the others are still missed.
    let again = missed::find(&dev.console, form(check.clone()))
        .await
        .expect("the check again");
    assert_eq!(again.missed.len(), discarded.len() - 1, "{again:?}");
    assert!(!again.missed.iter().any(|m| m.event_id == chosen.event_id));

    // Sent again: the servers no longer find it missed, and the outcome says so.
    let twice = missed::resend(
        dev.console.state(),
        form(json!({"notifications": [chosen], "target": null})),
    )
    .await
    .expect("an answer");
    assert_eq!(twice.outcomes.len(), 1, "{twice:?}");
    assert!(!twice.outcomes[0].acknowledged);
    assert!(
        twice.outcomes[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no longer finds it missed")),
        "{twice:?}"
    );

    // The service slow to answer (10 s a listing call): Cancel stops the wait at once, says
    // nothing was found yet, and the next check runs to its end.
    lender(
        &sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/faults",
        json!({"endpoint": "transactions", "latencyMs": 10_000, "count": 1}),
    )
    .await;
    let slow = tokio::spawn({
        let console = dev.console.clone();
        let check = check.clone();
        async move { missed::find(&console, form(check)).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = std::time::Instant::now();
    missed::cancel(dev.console.state());
    let cancelled = tokio::time::timeout(Duration::from_secs(2), slow)
        .await
        .expect("cancel ends the wait at once")
        .expect("the check's task")
        .expect_err("a cancelled check");
    assert_eq!(cancelled.kind, ErrorKind::Cancelled, "{cancelled:?}");
    assert!(
        cancelled.message.contains("nothing was found yet"),
        "{cancelled:?}"
    );
    assert!(asked.elapsed() < Duration::from_secs(2));
    lender(
        &sandbox,
        reqwest::Method::DELETE,
        "/sandbox/v1/faults",
        Value::Null,
    )
    .await;
    let after = missed::find(&dev.console, form(check))
        .await
        .expect("the check after a cancel");
    assert_eq!(after.missed.len(), discarded.len() - 1, "{after:?}");
}

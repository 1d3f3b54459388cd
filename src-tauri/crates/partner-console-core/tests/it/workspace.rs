//! The app's core joined to a real team workspace: a throwaway PostgreSQL, a real
//! `partner-server` in-process over HTTP, and a real sandbox as the service the team's servers
//! sync from. Joining (a refused token leaves nothing behind), the status with the member and
//! their role, the support desk answered from the team's index, a viewer's respond and sync
//! refused with the sentence, a support member's answer sent through the workspace under their
//! name, the login restored at the next start, and leaving back to this machine's own store;
//! "Go to" and a transaction's events answered by the workspace while joined.
use crate::harness::{form, Headless};
use crate::team::Team;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_client::{ConnectionConfig, PartnerClient};
use partner_console_core::bridge::{
    GoToTarget, OpenResource, SupportIndexView, SupportPage, WorkspaceView,
};
use partner_console_core::services::{captures, go_to, support, transactions, workspace};
use partner_console_core::ErrorKind;
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_server::{signing_keys, Role};
use partner_testkit::TestSandbox;
use partner_workspace::WorkspaceClient;
use serde_json::json;

/// A team whose servers sync from a real sandbox, the service connection set by its admin.
struct ServiceTeam {
    team: Team,
    /// The service the servers sync from, kept running for the test.
    service: TestSandbox,
}

impl std::ops::Deref for ServiceTeam {
    type Target = Team;
    fn deref(&self) -> &Team {
        &self.team
    }
}

impl ServiceTeam {
    async fn start(transactions: usize) -> Self {
        let service = TestSandbox::start_with(SandboxConfig {
            clients: vec![ClientCredentials::generate()],
            demo: Some(DemoData { transactions }),
            ..SandboxConfig::default()
        })
        .await;
        let team = Team::start().await;
        // The admin sets the service connection the servers call with.
        let answer = reqwest::Client::new()
            .put(format!("{}/api/v1/service", team.url()))
            .bearer_auth(team.admin.token().expose())
            .json(&json!({
                "baseUrl": service.base_url(),
                "clientId": service.client_id(),
                "clientSecret": service.client_secret().expose(),
            }))
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.status().as_u16(), 200, "the service connection");
        Self { team, service }
    }
}

async fn join(
    app: &Headless,
    url: &str,
    token: &str,
) -> partner_console_core::Result<WorkspaceView> {
    workspace::join(&app.console, form(json!({ "url": url, "token": token }))).await
}

async fn find(app: &Headless) -> partner_console_core::Result<SupportPage> {
    support::find(
        &app.console,
        form(json!({ "filter": {}, "offset": 0, "limit": 50 })),
    )
    .await
}

#[tokio::test]
async fn the_app_joins_a_workspace_answers_from_it_under_its_role_and_leaves_it() {
    let team = ServiceTeam::start(30).await;
    let viewer = team.member("vera", Role::Viewer).await;
    let supporter = team.member("sam", Role::Support).await;
    let app = Headless::start().await;
    let login_file = app
        .console
        .data_dir
        .join(partner_workspace::login::LOGIN_FILE);

    // Not joined: the status says so and nothing is asked.
    let view = workspace::status(&app.console).await;
    assert!(!view.joined && view.url.is_none(), "{view:?}");

    // A token the workspace does not know is refused, and nothing is kept.
    let refused = join(&app, &team.url(), "pcw_not-a-member")
        .await
        .expect_err("an unknown token");
    assert_eq!(refused.status, Some(401), "{refused:?}");
    assert!(!refused.message.contains("pcw_not-a-member"), "{refused:?}");
    assert!(!login_file.exists());
    let bad_url = join(&app, "team.example", &viewer)
        .await
        .expect_err("not a URL");
    assert_eq!(bad_url.kind, ErrorKind::InvalidInput);

    // The viewer joins: the status names them and their role, and what the role may not do.
    let view = join(&app, &team.url(), &viewer).await.expect("joined");
    assert!(view.joined && view.reachable, "{view:?}");
    assert_eq!(view.url.as_deref(), Some(team.url().as_str()));
    assert_eq!(view.member.as_deref(), Some("vera"));
    assert_eq!(view.role.as_deref(), Some("viewer"));
    let respond = view
        .permissions
        .iter()
        .find(|p| p.action == "respond")
        .expect("respond is listed");
    assert!(!respond.allowed);
    assert_eq!(
        respond.why_not.as_deref(),
        Some("A viewer may not answer transactions: support and up may. Ask an admin of the workspace.")
    );
    let saved = std::fs::read_to_string(&login_file).expect("the login is saved");
    assert!(saved.contains(&team.url()), "{saved}");
    assert!(
        !saved.contains(&viewer),
        "the token is not in the file: {saved}"
    );
    let status = workspace::status(&app.console).await;
    assert_eq!(status.member.as_deref(), Some("vera"), "{status:?}");
    assert!(!format!("{status:?}").contains(&viewer));

    // A viewer may not sync: refused with the sentence before anything is sent.
    let refused = support::sync(
        &app.console,
        form(json!({ "jobId": "sync-1", "allowProduction": false })),
    )
    .await
    .expect_err("a viewer's sync");
    assert_eq!(refused.kind, ErrorKind::Refused);
    assert_eq!(
        refused.message,
        "A viewer may not sync the support index: support and up may. Ask an admin of the workspace."
    );

    // The team's servers sync once; the app's desk answers from the team's index (this
    // machine has no copy of its own: locally, the desk would say so).
    let report: serde_json::Value = team
        .admin
        .post("/api/v1/transactions/sync", &json!({}))
        .await
        .expect("synced");
    assert_eq!(report["state"]["transactions"], 30, "{report}");
    let index: SupportIndexView = support::view(&app.console).await.expect("the team's index");
    assert_eq!(index.workspace.as_deref(), Some(team.url().as_str()));
    assert_eq!(index.transactions, 30);
    let page = find(&app).await.expect("found");
    assert_eq!(page.total, 30);
    assert_eq!(page.items.len(), 30);
    let counts = support::counts(&app.console, form(json!({})))
        .await
        .expect("counted");
    assert_eq!(counts.total, 30);
    assert_eq!(
        counts.by_status.iter().map(|c| c.count).sum::<u64>(),
        30,
        "{counts:?}"
    );
    let open = page
        .items
        .iter()
        .find(|t| {
            t.status
                .as_ref()
                .is_some_and(|s| s.is(partner_api::TransactionStatus::Created))
        })
        .expect("an open transaction")
        .id
        .clone();
    let read = transactions::get(&app.console, &open)
        .await
        .expect("read from the workspace");
    assert_eq!(read.id, open);

    // A viewer's answer is refused with the sentence; nothing reaches the service.
    let answer = || {
        form(json!({
            "transactionId": open,
            "response": json!({"status": "processing", "partnerStatus": "Looking"}).to_string(),
            "confirm": null,
        }))
    };
    let refused = transactions::respond(&app.console, answer())
        .await
        .expect_err("a viewer's answer");
    assert_eq!(refused.kind, ErrorKind::Refused);
    assert_eq!(
        refused.message,
        "A viewer may not answer transactions: support and up may. Ask an admin of the workspace."
    );

    // A support member joins in the viewer's place and answers through the workspace, which
    // records it under their name.
    let view = join(&app, &team.url(), &supporter).await.expect("joined");
    assert_eq!(
        (view.member.as_deref(), view.role.as_deref()),
        (Some("sam"), Some("support"))
    );
    let answered = transactions::respond(&app.console, answer())
        .await
        .expect("answered through the workspace");
    assert_eq!(answered.id, open);
    let audit = team
        .admin
        .audit(Some(20), None)
        .await
        .expect("the audit log");
    assert!(
        audit
            .iter()
            .any(|e| e.member == "sam" && e.action == "respond" && e.outcome == "done"),
        "{audit:?}"
    );

    // The next start restores the saved login and checks it with the workspace.
    let app = app.restart().await;
    let view = workspace::status(&app.console).await;
    assert!(view.joined, "{view:?}");
    assert_eq!(view.member.as_deref(), Some("sam"));
    assert_eq!(find(&app).await.expect("found").total, 30);

    // Leaving: the login is gone and the desk is this machine's own again (no copy yet).
    let view = workspace::leave(&app.console).await.expect("left");
    assert!(!view.joined && view.member.is_none(), "{view:?}");
    assert!(!login_file.exists());
    let local = find(&app).await.expect_err("no local copy");
    assert!(local.message.contains("has no local copy yet"), "{local:?}");
    let index = support::view(&app.console).await.expect("the local view");
    assert!(index.workspace.is_none() && !index.exists, "{index:?}");

    team.team.stop().await;
}

#[tokio::test]
async fn a_saved_workspace_that_does_not_answer_at_start_leaves_a_notice_and_the_local_desk() {
    let app = Headless::start().await;
    // A saved login to a workspace where nothing listens, as `partner workspace login` left it.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", gone.local_addr().expect("address"));
    drop(gone);
    let client = WorkspaceClient::new(
        partner_workspace::client::parse_url(&url).expect("url"),
        Secret::new("pcw_saved-token"),
    )
    .expect("client");
    partner_workspace::Logins::new(
        partner_workspace::LoginFile::new(
            app.console
                .data_dir
                .join(partner_workspace::login::LOGIN_FILE),
        ),
        app.console.secrets.as_ref(),
    )
    .save(
        &client,
        &partner_workspace::Member {
            name: "vera".into(),
            role: Role::Viewer,
        },
    )
    .expect("saved");

    let app = app.restart().await;
    let status = app.console.status();
    let notice = status
        .notices
        .iter()
        .find(|n| n.contains("team workspace"))
        .expect("a notice");
    assert!(notice.contains(&url), "{notice}");
    assert!(!notice.contains("pcw_saved-token"), "{notice}");
    let view = workspace::view(&app.console);
    assert!(!view.joined && !view.reachable, "{view:?}");
    assert_eq!(view.url.as_deref(), Some(url.as_str()));
    assert!(view.last_error.is_some(), "{view:?}");
    let local = find(&app).await.expect_err("the local desk");
    assert!(local.message.contains("has no local copy yet"), "{local:?}");
}

/// The subscription the team's notifications come signed for in the Go to test, and its key.
const SUBSCRIPTION: &str = "sub-go-to";
const KEY: &str = "whsec-go-to-key";

#[tokio::test]
async fn go_to_and_a_transactions_events_are_the_workspaces_while_joined() {
    let team = ServiceTeam::start(5).await;
    // The servers take a key set in the database when its NOTIFY reaches them: set first.
    signing_keys::set(&team.pool, &team.key, SUBSCRIPTION, &Secret::new(KEY))
        .await
        .expect("a signing key");
    let synced: serde_json::Value = team
        .admin
        .post("/api/v1/transactions/sync", &json!({}))
        .await
        .expect("synced");
    assert_eq!(synced["state"]["transactions"], 5, "{synced}");
    let service = PartnerClient::new(
        ConnectionConfig::new(
            team.service.base_url(),
            team.service.client_id(),
            team.service.client_secret().clone(),
        )
        .expect("a connection"),
    )
    .expect("a client");
    let app = team.joined(&team.member("vera", Role::Viewer).await).await;

    // A transaction of the team's service (the app's own connection, its embedded sandbox,
    // has no such id): its events are the service's, read through the workspace.
    let page = find(&app).await.expect("found");
    let transaction = page.items[0].view.clone();
    let events = transactions::events(&app.console, &transaction.id)
        .await
        .expect("the events through the workspace");
    let expected = service.list_events(&transaction.id).await.expect("events");
    assert!(!expected.is_empty());
    assert_eq!(
        events.iter().map(|e| e.view.id.clone()).collect::<Vec<_>>(),
        expected.iter().map(|e| e.id.clone()).collect::<Vec<_>>()
    );
    let no_such = transactions::events(&app.console, "no-such-transaction")
        .await
        .expect_err("no such transaction");
    assert_eq!(no_such.status, Some(404), "{no_such:?}");

    // Go to: a transaction id, a product id and a resourceRef URL of the team's service.
    match go_to::go_to(&app.console, &transaction.id)
        .await
        .expect("an answer")
    {
        GoToTarget::Transaction {
            transaction_id,
            event_id: None,
        } => assert_eq!(transaction_id, transaction.id),
        other => panic!("{other:?}"),
    }
    let product = transaction.product_id().expect("a product").to_string();
    match go_to::go_to(&app.console, &product)
        .await
        .expect("an answer")
    {
        GoToTarget::Product { product_id } => assert_eq!(product_id, product),
        other => panic!("{other:?}"),
    }
    let base = team.service.base_url().trim_end_matches('/').to_string();
    let event = expected[0].id.clone();
    let reference = format!(
        "{base}/partner/v2/transactions/{}/events/{event}",
        transaction.id
    );
    match go_to::go_to(&app.console, &reference)
        .await
        .expect("an answer")
    {
        GoToTarget::Transaction {
            transaction_id,
            event_id,
        } => {
            assert_eq!(transaction_id, transaction.id);
            assert_eq!(event_id.as_deref(), Some(event.as_str()));
        }
        other => panic!("{other:?}"),
    }
    // A link to the app's own connection is another service than the workspace's.
    let own = app.console.client().expect("the app's connection");
    let elsewhere = format!(
        "{}partner/v2/transactions/{}",
        own.base_url(),
        transaction.id
    );
    match go_to::go_to(&app.console, &elsewhere)
        .await
        .expect("an answer")
    {
        GoToTarget::NotFound { message } => {
            assert!(message.contains(&base), "{message}")
        }
        other => panic!("{other:?}"),
    }

    // An event id: the notification the team captured for it names its transaction.
    let body = serde_json::to_vec(&json!({
        "eventId": event,
        "eventTime": "2026-12-06T10:00:00Z",
        "eventType": "TransactionCreated",
        "meta": {
            "instanceId": "team",
            "resourceId": transaction.id,
            "resourceType": "transaction",
            "resourceRef": format!("{base}/partner/v2/transactions/{}", transaction.id),
        }
    }))
    .expect("a body");
    // Sent until the servers hold the key (its NOTIFY is asynchronous): 200 within 10 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let status = reqwest::Client::new()
            .post(team.server.webhook_url("/webhooks"))
            .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
            .header(SUBSCRIPTION_HEADER, SUBSCRIPTION)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("delivered")
            .status()
            .as_u16();
        if status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the signed notification was answered {status}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    match go_to::go_to(&app.console, &event).await.expect("an answer") {
        GoToTarget::Transaction {
            transaction_id,
            event_id,
        } => {
            assert_eq!(transaction_id, transaction.id);
            assert_eq!(event_id.as_deref(), Some(event.as_str()));
        }
        other => panic!("{other:?}"),
    }

    // The inspector's "Open" on that capture: a transaction of the workspace's service.
    let valid = team
        .admin
        .captures_page(
            &partner_listener::CaptureQuery {
                filter: partner_listener::CaptureFilter {
                    verdicts: vec![partner_listener::Verdict::Valid],
                    ..partner_listener::CaptureFilter::default()
                },
                limit: 1,
                ..partner_listener::CaptureQuery::default()
            },
            None,
        )
        .await
        .expect("the team's captures");
    let captured = captures::detail_shown(&app.console, valid.items[0].capture.id)
        .await
        .expect("the capture's detail");
    match captured.open {
        OpenResource::Transaction { transaction_id } => assert_eq!(transaction_id, transaction.id),
        other => panic!("{other:?}"),
    }

    // Nothing by that name: said of the workspace, not of the app's own connection.
    match go_to::go_to(&app.console, "no-such-id")
        .await
        .expect("an answer")
    {
        GoToTarget::NotFound { message } => {
            assert!(message.contains("in the team workspace"), "{message}");
            assert!(message.contains(&team.url()), "{message}");
        }
        other => panic!("{other:?}"),
    }

    team.team.stop().await;
}

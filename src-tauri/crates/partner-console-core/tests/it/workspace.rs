//! The app's core joined to a real team workspace: a throwaway PostgreSQL, a real
//! `partner-server` in-process over HTTP, and a real sandbox as the service the team's servers
//! sync from. Joining (a refused token leaves nothing behind), the status with the member and
//! their role, the support desk answered from the team's index, a viewer's respond and sync
//! refused with the sentence, a support member's answer sent through the workspace under their
//! name, the login restored at the next start, and leaving back to this machine's own store.
use crate::harness::{form, Headless};
use crate::team::Team;
use partner_api::Secret;
use partner_console_core::bridge::{SupportIndexView, SupportPage, WorkspaceView};
use partner_console_core::services::{support, transactions, workspace};
use partner_console_core::ErrorKind;
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_server::Role;
use partner_testkit::TestSandbox;
use partner_workspace::WorkspaceClient;
use serde_json::json;

/// A team whose servers sync from a real sandbox, the service connection set by its admin.
struct ServiceTeam {
    team: Team,
    /// The service the servers sync from, kept running for the test.
    _service: TestSandbox,
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
        Self {
            team,
            _service: service,
        }
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

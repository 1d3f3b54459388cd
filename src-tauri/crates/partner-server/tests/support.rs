//! The support desk on a team workspace, over real HTTP: a real sandbox as the service, a
//! throwaway PostgreSQL, two servers. The service connection set by an admin (its secret never
//! answered), one sync found by three consoles on either server, the same answers as a laptop's
//! own index synced from the same service, syncs from two servers at once, an answer sent
//! through the workspace under the member's name, and each role's refusals.

#![allow(clippy::unwrap_used)]

mod common;

use common::{call_as, Team};
use partner_client::{ConnectionConfig, MemoryStore, PartnerClient};
use partner_index::{Filter, Index};
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_server::Role;
use partner_testkit::TestSandbox;
use reqwest::Method;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

async fn sandbox(transactions: usize) -> TestSandbox {
    TestSandbox::start_with(SandboxConfig {
        clients: vec![ClientCredentials::generate()],
        demo: Some(DemoData { transactions }),
        ..SandboxConfig::default()
    })
    .await
}

fn connection(sandbox: &TestSandbox) -> Value {
    json!({
        "baseUrl": sandbox.base_url(),
        "clientId": sandbox.client_id(),
        "clientSecret": sandbox.client_secret().expose(),
    })
}

fn ids(found: &Value) -> Vec<String> {
    found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn one_sync_is_found_by_three_consoles_with_a_laptops_answers() {
    let service = sandbox(300).await;
    let team = Team::new().await;
    let (a, b) = (team.server().await, team.server().await);
    let viewer = team.member("vera", Role::Viewer).await;
    let support = team.member("sam", Role::Support).await;
    let developer = team.member("dev", Role::Developer).await;

    // Before a connection is set there is nothing to sync.
    let (status, body) = call_as(
        &a,
        &support,
        Method::POST,
        "/api/v1/transactions/sync",
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "no-service");

    // Only an admin sets the connection; a wrong secret is refused before it is kept.
    let (status, body) = call_as(
        &a,
        &developer,
        Method::PUT,
        "/api/v1/service",
        Some(connection(&service)),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["needs"], "admin");
    let mut wrong = connection(&service);
    wrong["clientSecret"] = json!("not-the-secret");
    let (status, body) =
        call_as(&a, &team.admin, Method::PUT, "/api/v1/service", Some(wrong)).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("did not issue a token"),
        "{body}"
    );
    let (status, body) = call_as(
        &a,
        &team.admin,
        Method::PUT,
        "/api/v1/service",
        Some(connection(&service)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let secret = service.client_secret().expose().to_string();
    assert!(!body.to_string().contains(&secret));
    let (status, shown) = call_as(&b, &viewer, Method::GET, "/api/v1/service", None).await;
    assert_eq!(status, 200);
    assert_eq!(shown["connection"]["clientId"], service.client_id());
    assert!(!shown.to_string().contains(&secret), "{shown}");

    // A viewer may not sync; support may, once, on server A.
    let (status, body) =
        call_as(&a, &viewer, Method::POST, "/api/v1/transactions/sync", None).await;
    assert_eq!(status, 403);
    assert_eq!(body["needs"], "support");
    let (status, report) = call_as(
        &a,
        &support,
        Method::POST,
        "/api/v1/transactions/sync",
        None,
    )
    .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["end"], "complete");
    assert_eq!(report["state"]["transactions"], 300);
    assert!(report["state"]["asOf"].is_string());

    // A laptop's own index of the same service, for the answers to compare with.
    let client = PartnerClient::new(
        ConnectionConfig::new(
            service.base_url(),
            service.client_id(),
            service.client_secret().clone(),
        )
        .unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = Index::open(dir.path(), "laptop", &MemoryStore::new()).unwrap();
    partner_index::sync(&client, &local, |_| {}, &CancellationToken::new())
        .await
        .unwrap();

    // The three consoles ask on either server; each question is answered as the laptop's is.
    let all = local.find(&Filter::default(), 1_000, 0).unwrap();
    let sample = &all.items[7];
    let answered = all.items.iter().find(|t| t.response.is_some()).unwrap();
    let questions = [
        ("everything", json!({})),
        ("a status", json!({"status": "completed"})),
        (
            "a product by name, another case",
            json!({"product": sample.product_name().unwrap().to_uppercase()}),
        ),
        (
            "a response status",
            json!({"responseStatus": answered.response_status().unwrap().as_str()}),
        ),
        (
            "a reference number",
            json!({"referenceNumber": answered.response.as_ref().unwrap().reference_number.clone().unwrap().to_lowercase()}),
        ),
        ("an id as text", json!({"text": sample.id})),
        (
            "part of a party's name",
            json!({"requestingParty": sample.request.as_ref().unwrap().requesting_party_name().unwrap()[1..4].to_string()}),
        ),
        (
            "a range",
            json!({"createdSince": all.items[200].created, "createdBefore": all.items[100].created}),
        ),
        // Counted by joining the filters' indexes (`support_filter`).
        (
            "a status, a product and a response status",
            json!({"status": answered.status.as_ref().unwrap().as_str(), "product": answered.product_id(),
                "responseStatus": answered.response_status().unwrap().as_str()}),
        ),
        (
            "a status and a product by name",
            json!({"status": sample.status.as_ref().unwrap().as_str(),
                "product": sample.product_name().unwrap().to_lowercase()}),
        ),
    ];
    for (n, (name, filter)) in questions.iter().enumerate() {
        let want: Filter = serde_json::from_value(filter.clone()).unwrap();
        let want = local.find(&want, 1_000, 0).unwrap();
        assert!(want.total > 0, "{name}: the data has none to find");
        let (server, token) = match n % 3 {
            0 => (&a, &viewer),
            1 => (&b, &support),
            _ => (&b, &developer),
        };
        let (status, found) = call_as(
            server,
            token,
            Method::POST,
            "/api/v1/transactions/find",
            Some(json!({"filter": filter, "limit": 1000})),
        )
        .await;
        assert_eq!(status, 200, "{name}: {found}");
        assert_eq!(found["total"], want.total, "{name}");
        let want_ids: Vec<String> = want.items.iter().map(|t| t.id.clone()).collect();
        assert_eq!(
            ids(&found),
            want_ids,
            "{name}: the same transactions, newest first"
        );
        let (_, counts) = call_as(
            server,
            token,
            Method::POST,
            "/api/v1/transactions/counts",
            Some(json!({"filter": filter})),
        )
        .await;
        let want_counts = serde_json::to_value(
            local
                .counts(&serde_json::from_value(filter.clone()).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(counts["byStatus"], want_counts["byStatus"], "{name}");
        assert_eq!(counts["byProduct"], want_counts["byProduct"], "{name}");
    }
    // A page from an offset, and a bad question is the caller's (400), not the server's.
    let (_, page) = call_as(
        &a,
        &viewer,
        Method::POST,
        "/api/v1/transactions/find",
        Some(json!({"limit": 10, "offset": 20})),
    )
    .await;
    let want: Vec<String> = all.items[20..30].iter().map(|t| t.id.clone()).collect();
    assert_eq!(ids(&page), want);
    let (status, _) = call_as(
        &a,
        &viewer,
        Method::POST,
        "/api/v1/transactions/find",
        Some(json!({"filter": {"loan": [{"field": "a;drop", "value": "x"}]}})),
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = call_as(
        &a,
        &viewer,
        Method::POST,
        "/api/v1/transactions/find",
        Some(json!({"limit": 0})),
    )
    .await;
    assert_eq!(status, 400);

    // Syncs asked of both servers at once: one waits for the other; nothing is doubled.
    let (one, two) = tokio::join!(
        call_as(
            &a,
            &support,
            Method::POST,
            "/api/v1/transactions/sync",
            None
        ),
        call_as(
            &b,
            &developer,
            Method::POST,
            "/api/v1/transactions/sync",
            None
        ),
    );
    assert_eq!((one.0, two.0), (200, 200), "{} {}", one.1, two.1);
    assert_eq!(two.1["state"]["transactions"], 300);
    let (_, state) = call_as(&b, &viewer, Method::GET, "/api/v1/transactions/state", None).await;
    assert_eq!(state["transactions"], 300);
    assert_eq!(state["filled"], true);
}

#[tokio::test]
async fn an_answer_goes_through_the_workspace_under_the_members_name() {
    let service = sandbox(40).await;
    let team = Team::new().await;
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let support = team.member("sam", Role::Support).await;
    call_as(
        &server,
        &team.admin,
        Method::PUT,
        "/api/v1/service",
        Some(connection(&service)),
    )
    .await;
    call_as(
        &server,
        &support,
        Method::POST,
        "/api/v1/transactions/sync",
        None,
    )
    .await;
    let (_, open) = call_as(
        &server,
        &viewer,
        Method::POST,
        "/api/v1/transactions/find",
        Some(json!({"filter": {"status": "created"}, "limit": 1})),
    )
    .await;
    let id = ids(&open).remove(0);
    let response =
        json!({"status": "processing", "partnerStatus": "Reviewing", "referenceNumber": "REF-77"});
    let path = format!("/api/v1/transactions/{id}/respond");

    let (status, body) = call_as(
        &server,
        &viewer,
        Method::POST,
        &path,
        Some(response.clone()),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(body["needs"], "support");
    let (status, body) = call_as(
        &server,
        &support,
        Method::POST,
        &path,
        Some(json!({"status": "no-such"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = call_as(&server, &support, Method::POST, &path, Some(response)).await;
    assert_eq!(status, 200, "{body}");

    // The index holds the transaction as the service has it now; the audit names the member.
    let (_, found) = call_as(
        &server,
        &viewer,
        Method::POST,
        "/api/v1/transactions/find",
        Some(json!({"filter": {"referenceNumber": "ref-77"}})),
    )
    .await;
    assert_eq!(ids(&found), vec![id.clone()]);
    let (_, audit) = call_as(&server, &viewer, Method::GET, "/api/v1/audit", None).await;
    let entries = audit.as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["member"] == "sam"
            && e["action"] == "respond"
            && e["outcome"] == "done"
            && e["target"] == format!("transaction {id}")),
        "{audit}"
    );
    assert!(
        entries.iter().any(|e| e["member"] == "vera"
            && e["action"] == "respond"
            && e["outcome"] == "refused"),
        "{audit}"
    );
    assert!(
        entries
            .iter()
            .any(|e| e["member"] == "admin" && e["action"] == "manage-connection"),
        "{audit}"
    );
    // The counts kept beside the index followed the change: the same as counted over the rows.
    let (_, kept) = call_as(
        &server,
        &viewer,
        Method::POST,
        "/api/v1/transactions/counts",
        Some(json!({"filter": {}})),
    )
    .await;
    let (_, counted) = call_as(
        &server,
        &viewer,
        Method::POST,
        "/api/v1/transactions/counts",
        Some(json!({"filter": {"createdSince": "2000-01-01T00:00:00Z"}})),
    )
    .await;
    assert_eq!(kept["total"], 40);
    assert_eq!(kept["byStatus"], counted["byStatus"]);
    assert_eq!(kept["byProduct"], counted["byProduct"]);
    // An unknown transaction is the service's 404, passed on.
    let (status, _) = call_as(
        &server,
        &support,
        Method::POST,
        "/api/v1/transactions/no-such-id/respond",
        Some(json!({"status": "processing"})),
    )
    .await;
    assert_eq!(status, 404);
}

/// A member who stops waiting for a sync (the request dropped mid-way) leaves no lock behind:
/// the next sync runs.
#[tokio::test]
async fn a_sync_whose_caller_went_away_leaves_the_next_one_free() {
    let service = sandbox(3_000).await;
    let team = Team::new().await;
    let server = team.server().await;
    let support = team.member("sam", Role::Support).await;
    call_as(
        &server,
        &team.admin,
        Method::PUT,
        "/api/v1/service",
        Some(connection(&service)),
    )
    .await;
    let impatient = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(150))
        .build()
        .unwrap();
    let gone = impatient
        .post(format!(
            "http://{}/api/v1/transactions/sync",
            server.local_addr
        ))
        .bearer_auth(&support)
        .send()
        .await;
    assert!(
        gone.is_err(),
        "the fill of 3,000 took under 150 ms: nothing was dropped"
    );
    let next = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        call_as(
            &server,
            &support,
            Method::POST,
            "/api/v1/transactions/sync",
            None,
        ),
    )
    .await
    .expect("the next sync waited on a lock nobody holds");
    assert_eq!(next.0, 200, "{}", next.1);
    assert_eq!(next.1["state"]["transactions"], 3_000);
}

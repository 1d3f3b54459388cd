//! A team workspace over real HTTP on a real, throwaway PostgreSQL (partner-testkit): init,
//! members and roles, signing keys, the webhook endpoint's durable acknowledgement, two
//! servers on one database and the live feed between them, notes, the audit log.

// Helpers of tests panic on failure like the tests themselves.
#![allow(clippy::unwrap_used)]

mod common;

use common::Team;
use futures::StreamExt as _;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_seal::DataKey;
use partner_server::database;
use partner_server::{members, signing_keys, Role, RunningServer};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn notification(event_id: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "eventId": event_id,
        "eventType": "TransactionCreated",
        "resourceType": "transaction",
        "resourceId": "t-1",
        "meta": {"resourceType": "transaction"}
    }))
    .unwrap()
}

async fn deliver(server: &RunningServer, subscription: &str, key: &str, body: &[u8]) -> u16 {
    reqwest::Client::new()
        .post(server.webhook_url("/webhooks"))
        .header(SIGNATURE_HEADER, sign(key.as_bytes(), body))
        .header(SUBSCRIPTION_HEADER, subscription)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn call(
    server: &RunningServer,
    token: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let url = format!("http://{}{path}", server.local_addr);
    let client = reqwest::Client::new();
    let request = match body {
        Some(body) => client.post(url).json(&body),
        None => client.get(url),
    };
    let response = request.bearer_auth(token).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn page_query() -> Value {
    json!({"filter": {}, "grouping": "everyAttempt", "offset": 0, "limit": 50, "count": "upToCap"})
}

#[tokio::test]
async fn init_run_again_changes_nothing_and_makes_no_second_admin() {
    let team = Team::new().await;
    let again = database::init(&team.pool, &team.key).await.unwrap();
    assert!(again.applied.is_empty());
    assert!(again.admin_token.is_none());
    let admins = members::list(&team.pool).await.unwrap();
    assert_eq!(admins.len(), 1);
    let other = DataKey::generate();
    let error = database::init(&team.pool, &other)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("is not the workspace's"), "{error}");
}

#[tokio::test]
async fn a_signed_notification_is_acknowledged_once_committed_and_attempts_are_counted() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let server = team.server().await;
    assert_eq!(
        deliver(&server, "sub-1", "whsec-one", &notification("e-1")).await,
        200
    );
    assert_eq!(
        deliver(&server, "sub-1", "whsec-one", &notification("e-1")).await,
        200
    );
    assert_eq!(
        deliver(&server, "sub-1", "wrong-key", &notification("e-2")).await,
        401
    );
    assert_eq!(
        deliver(&server, "sub-9", "whsec-one", &notification("e-3")).await,
        401
    );
    // A new event type the spec does not show, validly signed, is taken (issue #46).
    let novel =
        serde_json::to_vec(&json!({"eventId": "e-4", "eventType": "SomethingNew"})).unwrap();
    assert_eq!(deliver(&server, "sub-1", "whsec-one", &novel).await, 200);

    let (status, page) = call(
        &server,
        &team.admin,
        "/api/v1/captures/page",
        Some(page_query()),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let items = page["items"].as_array().unwrap();
    let verdicts: Vec<(&str, u64)> = items
        .iter()
        .map(|c| {
            (
                c["verdict"].as_str().unwrap(),
                c["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("valid", 1),
            ("unknown-subscription", 1),
            ("invalid-signature", 1),
            ("valid", 2),
            ("valid", 1)
        ]
    );
    assert_eq!(page["total"], 5);
    // The body is kept exactly, and the search finds a word of it.
    let search = json!({"filter": {"text": "SomethingNew"}, "grouping": "everyAttempt", "offset": 0, "limit": 50, "count": "upToCap"});
    let (_, found) = call(&server, &team.admin, "/api/v1/captures/page", Some(search)).await;
    assert_eq!(found["total"], 1);
    // A junk request on another path is captured as such, not taken for a call.
    let junk = reqwest::get(format!("http://{}/wp-login.php", server.local_addr))
        .await
        .unwrap();
    assert_eq!(junk.status(), 404);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn each_role_is_refused_what_it_may_not_do_named_and_audited() {
    let team = Team::new().await;
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let support = team.member("sam", Role::Support).await;
    let developer = team.member("dev", Role::Developer).await;
    let clear = json!({"filter": {}});

    let (status, refusal) = call(
        &server,
        &viewer,
        "/api/v1/captures/clear",
        Some(clear.clone()),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(refusal["role"], "viewer");
    assert_eq!(refusal["needs"], "developer");
    assert_eq!(
        refusal["message"],
        "a viewer may not clear captures: it takes the developer role"
    );
    let (status, _) = call(
        &server,
        &support,
        "/api/v1/captures/clear",
        Some(clear.clone()),
    )
    .await;
    assert_eq!(status, 403);
    let (status, cleared) = call(&server, &developer, "/api/v1/captures/clear", Some(clear)).await;
    assert_eq!(status, 200, "{cleared}");

    let note = json!({"targetKind": "transaction", "targetId": "t-1", "text": "called the lender"});
    let (status, _) = call(&server, &viewer, "/api/v1/notes", Some(note.clone())).await;
    assert_eq!(status, 403);
    let (status, written) = call(&server, &support, "/api/v1/notes", Some(note)).await;
    assert_eq!(status, 201, "{written}");
    // A note written by one member is seen by another, with its author.
    let (_, notes) = call(
        &server,
        &viewer,
        "/api/v1/notes?targetKind=transaction&targetId=t-1",
        None,
    )
    .await;
    assert_eq!(notes[0]["author"], "sam");
    assert_eq!(notes[0]["text"], "called the lender");

    let (status, made) = call(
        &server,
        &developer,
        "/api/v1/members",
        Some(json!({"name": "x", "role": "admin"})),
    )
    .await;
    assert_eq!((status, made["needs"].as_str()), (403, Some("admin")));

    let (_, audit) = call(&server, &viewer, "/api/v1/audit", None).await;
    let lines: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .rev()
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
            "vera clear refused",
            "sam clear refused",
            "dev clear done",
            "vera write-note refused",
            "sam write-note done",
            "dev manage-members refused"
        ]
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn bad_tokens_bad_bodies_and_unknown_calls_are_the_callers_mistakes() {
    let team = Team::new().await;
    let server = team.server().await;
    let (status, body) = call(&server, "pcw_not-a-token", "/api/v1/me", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("unauthorized"))
    );
    let response = reqwest::Client::new()
        .post(format!("http://{}/api/v1/captures/page", server.local_addr))
        .bearer_auth(&team.admin)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let (status, _) = call(&server, &team.admin, "/api/v1/nothing-here", None).await;
    assert_eq!(status, 404);
    // Failed logins from one address are limited; the limit holds a good token back too.
    for _ in 0..10 {
        call(&server, "pcw_wrong", "/api/v1/me", None).await;
    }
    let (status, body) = call(&server, &team.admin, "/api/v1/me", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (429, Some("too-many-failed-logins"))
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_capture_taken_by_one_server_reaches_a_live_feed_on_another_within_a_second() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let (a, b) = (team.server().await, team.server().await);
    let viewer = team.member("vera", Role::Viewer).await;
    let feed = reqwest::Client::new()
        .get(format!("http://{}/api/v1/captures/live", b.local_addr))
        .bearer_auth(&viewer)
        .send()
        .await
        .unwrap();
    assert_eq!(feed.status(), 200);
    let mut events = feed.bytes_stream();
    // A key set through one server verifies on the other (NOTIFY partner_keys).
    signing_keys::set(&team.pool, &team.key, "sub-2", &Secret::new("whsec-two"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    assert_eq!(
        deliver(&a, "sub-2", "whsec-two", &notification("e-live")).await,
        200
    );
    let mut seen = String::new();
    while !seen.contains("e-live") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .expect("the live feed on server B said nothing")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let took = sent.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "server B's feed took {took:?}"
    );
    assert!(seen.contains("event: capture"), "{seen}");
    // Stopping ends the open feed rather than waiting on it.
    tokio::time::timeout(Duration::from_secs(5), b.stop())
        .await
        .expect("server B waited on its live feed")
        .unwrap();
    drop(events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_live_feeds_each_get_every_capture_of_a_stream_offered_at_a_thousand_a_second() {
    const FEEDS: usize = 20;
    const SECONDS: u64 = 2;
    const RATE: u64 = 1000;
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let mut feeds = Vec::new();
    for _ in 0..FEEDS {
        let response = reqwest::Client::new()
            .get(format!("http://{}/api/v1/captures/live", server.local_addr))
            .bearer_auth(&viewer)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        feeds.push(tokio::spawn(async move {
            let mut events = response.bytes_stream();
            let mut text = String::new();
            let mut seen = 0;
            let total = (SECONDS * RATE) as usize;
            while seen < total {
                match tokio::time::timeout(Duration::from_secs(10), events.next()).await {
                    Ok(Some(Ok(chunk))) => {
                        text.push_str(&String::from_utf8_lossy(&chunk));
                        // Count whole events only.
                        while let Some(end) = text.find("\n\n") {
                            if text[..end].contains("event: capture") {
                                seen += 1;
                            }
                            text.drain(..end + 2);
                        }
                    }
                    _ => break,
                }
            }
            seen
        }));
    }
    // A thousand a second, paced in slices of 10 ms, each slice's ten sent at once.
    let client = reqwest::Client::new();
    let url = server.webhook_url("/webhooks");
    let started = Instant::now();
    let mut sent = Vec::new();
    for slice in 0..(SECONDS * RATE / 10) {
        let due = started + Duration::from_millis(slice * 10);
        tokio::time::sleep_until(due.into()).await;
        for n in 0..10 {
            let (client, url) = (client.clone(), url.clone());
            sent.push(tokio::spawn(async move {
                let body = notification(&format!("e-{slice}-{n}"));
                client
                    .post(url)
                    .header(SIGNATURE_HEADER, sign(b"whsec-one", &body))
                    .header(SUBSCRIPTION_HEADER, "sub-1")
                    .body(body)
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0)
            }));
        }
    }
    let mut acknowledged = 0;
    for send in sent {
        if send.await.unwrap() == 200 {
            acknowledged += 1;
        }
    }
    let took = started.elapsed();
    assert_eq!(acknowledged, SECONDS * RATE, "acknowledged in {took:?}");
    for feed in feeds {
        assert_eq!(feed.await.unwrap(), (SECONDS * RATE) as usize);
    }
    eprintln!("{acknowledged} acknowledged in {took:?}; {FEEDS} feeds got every one");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_viewers_replay_is_refused_and_recorded_and_a_developers_arrives_marked_as_a_replay() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let developer = team.member("dev", Role::Developer).await;
    assert_eq!(
        deliver(&server, "sub-1", "whsec-one", &notification("e-1")).await,
        200
    );
    let to = json!({"to": server.webhook_url("/webhooks")});

    let (status, refusal) = call(
        &server,
        &viewer,
        "/api/v1/captures/1/replay",
        Some(to.clone()),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        refusal["message"],
        "a viewer may not replay captures: it takes the developer role"
    );
    let (status, record) = call(&server, &developer, "/api/v1/captures/1/replay", Some(to)).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["status"], 200);
    let (status, _) = call(
        &server,
        &developer,
        "/api/v1/captures/1/replay",
        Some(json!({"to": "ftp://x"})),
    )
    .await;
    assert_eq!(status, 400);

    // The replay arrived, verified with the same key, marked as a replay and not an attempt.
    let (_, page) = call(
        &server,
        &viewer,
        "/api/v1/captures/page",
        Some(page_query()),
    )
    .await;
    let newest = &page["items"][0];
    assert_eq!(
        (newest["verdict"].as_str(), newest["replay"].as_bool()),
        (Some("valid"), Some(true))
    );
    assert_eq!(newest["attempt"], 1);
    let (_, audit) = call(&server, &viewer, "/api/v1/audit", None).await;
    let replays: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|e| e["action"] == "replay")
        .map(|e| {
            format!(
                "{} {} {}",
                e["member"].as_str().unwrap(),
                e["target"].as_str().unwrap(),
                e["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(replays, ["vera capture 1 refused", "dev capture 1 done"]);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn evidence_of_a_notification_is_built_and_redacted_by_the_server() {
    let team = Team::new().await;
    signing_keys::set(
        &team.pool,
        &team.key,
        "sub-1",
        &Secret::new("whsec-evidence-key"),
    )
    .await
    .unwrap();
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let support = team.member("sam", Role::Support).await;
    // A body that carries the signing key itself (a careless sender) and a borrower's field.
    let body = serde_json::to_vec(&json!({
        "eventId": "e-ev", "eventType": "created", "resourceType": "transaction",
        "meta": {"resourceType": "transaction", "note": "whsec-evidence-key"},
        "borrower": {"ssn": "123-45-6789"}
    }))
    .unwrap();
    for _ in 0..2 {
        assert_eq!(
            deliver(&server, "sub-1", "whsec-evidence-key", &body).await,
            200
        );
    }
    assert_eq!(
        deliver(
            &server,
            "sub-1",
            "whsec-evidence-key",
            &notification("e-other")
        )
        .await,
        200
    );
    let request = json!({"eventId": "e-ev", "maskFields": ["/borrower/ssn"]});

    let (status, refused) = call(&server, &viewer, "/api/v1/evidence", Some(request.clone())).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["needs"], "support");
    let (status, bundle) = call(&server, &support, "/api/v1/evidence", Some(request)).await;
    assert_eq!(status, 200, "{bundle}");
    assert_eq!(
        bundle["captures"], 2,
        "both attempts, not the other notification"
    );
    let (har, summary) = (
        bundle["har"].as_str().unwrap(),
        bundle["summary"].as_str().unwrap(),
    );
    for text in [har, summary] {
        assert!(
            !text.contains("whsec-evidence-key"),
            "a signing key in the bundle"
        );
        assert!(
            !text.contains("123-45-6789"),
            "a masked field in the bundle"
        );
    }
    assert!(
        har.contains("[secret]") && har.contains("[masked]"),
        "{har}"
    );
    assert!(summary.contains("valid"), "{summary}");
    assert_eq!(bundle["report"]["fieldsMasked"], 2);

    // By capture ids; an unknown id and no selection are the caller's mistakes.
    let (status, by_ids) = call(
        &server,
        &support,
        "/api/v1/evidence",
        Some(json!({"ids": [3]})),
    )
    .await;
    assert_eq!(
        (status, by_ids["captures"].as_u64()),
        (200, Some(1)),
        "{by_ids}"
    );
    let (status, _) = call(
        &server,
        &support,
        "/api/v1/evidence",
        Some(json!({"ids": [999]})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(&server, &support, "/api/v1/evidence", Some(json!({}))).await;
    assert_eq!(status, 400);
    let (_, audit) = call(&server, &viewer, "/api/v1/audit", None).await;
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["member"] == "sam"
                && e["action"] == "export-evidence"
                && e["target"] == "notification e-ev"),
        "{audit}"
    );
}

#[tokio::test]
async fn the_inspectors_counts_attempts_and_an_edited_replay_are_answered_by_the_server() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-one"))
        .await
        .unwrap();
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;
    let developer = team.member("dev", Role::Developer).await;
    for (key, event) in [
        ("whsec-one", "e-1"),
        ("whsec-one", "e-1"),
        ("whsec-one", "e-2"),
        ("wrong-key", "e-3"),
    ] {
        deliver(&server, "sub-1", key, &notification(event)).await;
    }

    // Without a filter: every verdict's count, the choices, and what the workspace holds.
    let (status, all) = call(
        &server,
        &viewer,
        "/api/v1/captures/facets",
        Some(json!({"filter": {}})),
    )
    .await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["verdicts"], json!({"valid": 3, "invalid-signature": 1}));
    assert_eq!(all["eventTypes"], json!(["TransactionCreated"]));
    assert_eq!(all["subscriptions"], json!(["sub-1"]));
    assert_eq!(
        (all["total"].as_u64(), all["stored"].as_u64()),
        (Some(4), Some(4))
    );
    // A filter: the verdicts counted under the rest of it, the total under the whole of it.
    let (_, valid) = call(
        &server,
        &viewer,
        "/api/v1/captures/facets",
        Some(json!({"filter": {"verdicts": ["valid"], "ids": [1, 2, 4]}})),
    )
    .await;
    assert_eq!(
        valid["verdicts"],
        json!({"valid": 2, "invalid-signature": 1}),
        "{valid}"
    );
    assert_eq!(valid["total"], 2);
    assert_eq!(valid["stored"], 4);

    // The attempts of the notification the second capture belongs to: both, first first.
    let (status, attempts) = call(&server, &viewer, "/api/v1/captures/2/attempts", None).await;
    assert_eq!(status, 200, "{attempts}");
    let attempts: Vec<(i64, i64)> = attempts
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_i64().unwrap(), c["attempt"].as_i64().unwrap()))
        .collect();
    assert_eq!(attempts, [(1, 1), (2, 2)]);
    let (status, _) = call(&server, &viewer, "/api/v1/captures/99/attempts", None).await;
    assert_eq!(status, 404);

    // An edited body is re-signed with the subscription's key and arrives valid.
    let edited = String::from_utf8(notification("e-edited")).unwrap();
    let to = json!({"to": server.webhook_url("/webhooks"), "body": edited});
    let (status, record) = call(&server, &developer, "/api/v1/captures/3/replay", Some(to)).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["status"], 200);
    let search = json!({"filter": {"text": "e-edited"}, "grouping": "everyAttempt", "offset": 0, "limit": 50, "count": "upToCap"});
    let (_, found) = call(&server, &viewer, "/api/v1/captures/page", Some(search)).await;
    assert_eq!(found["items"][0]["verdict"], "valid", "{found}");
    assert_eq!(found["items"][0]["replay"], true);
    server.stop().await.unwrap();
}

//! Notes and the inspector of a console joined to a real team workspace: a throwaway
//! PostgreSQL, a real `partner-server` in-process over HTTP, consoles joined as members of
//! different roles. A note written on one console is read on another with its author and time;
//! a viewer's note and clear are refused with the sentence; the inspector's page, counts,
//! detail, comparison, replay, evidence and clear are the workspace's; a notification posted
//! signed to the server's webhook path reaches the window as the local listener's captures do.
use crate::harness::{form, Headless};
use crate::team::Team;
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_console_core::bridge::{CaptureSummary, EvidenceResult, NoteKind};
use partner_console_core::services::{captures, evidence, listener, notes, workspace};
use partner_console_core::{AppEvent, ErrorKind};
use partner_server::{signing_keys, Role};
use serde_json::json;

/// The subscription the team's notifications come signed for, and its key.
const SUBSCRIPTION: &str = "sub-team";
const KEY: &str = "whsec-team-inspector-key";

/// A team with the subscription's signing key set on its servers.
async fn start_team() -> Team {
    let team = Team::start().await;
    signing_keys::set(&team.pool, &team.key, SUBSCRIPTION, &Secret::new(KEY))
        .await
        .expect("a signing key");
    team
}

/// Posts a notification signed with the subscription's key to the server's webhook path, as
/// the service would; the server's answer.
async fn deliver(team: &Team, event_id: &str) -> u16 {
    let body = serde_json::to_vec(&json!({
        "eventId": event_id,
        "eventType": "TransactionCreated",
        "resourceType": "transaction",
        "resourceId": "t-team",
        "meta": {"resourceType": "transaction"}
    }))
    .expect("a body");
    reqwest::Client::new()
        .post(team.server.webhook_url("/webhooks"))
        .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
        .header(SUBSCRIPTION_HEADER, SUBSCRIPTION)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("delivered")
        .status()
        .as_u16()
}

fn every_capture() -> serde_json::Value {
    json!({"filter": {}, "grouped": false, "offset": 0, "limit": 50, "countPastPage": true})
}

#[tokio::test]
async fn a_note_written_on_one_console_is_read_on_another_and_a_viewers_writes_are_refused() {
    let team = start_team().await;
    let sam = team.joined(&team.member("sam", Role::Support).await).await;
    let vera = team.joined(&team.member("vera", Role::Viewer).await).await;

    let before = chrono::Utc::now();
    let written = notes::add(
        &sam.console,
        form(json!({"kind": "transaction", "targetId": " t-1 ", "text": "  The lender withdrew the loan.  "})),
    )
    .await
    .expect("sam writes a note");
    assert_eq!(
        (
            written.author.as_str(),
            written.text.as_str(),
            written.target_id.as_str()
        ),
        ("sam", "The lender withdrew the loan.", "t-1")
    );

    // Vera's console reads it: who wrote it, when, what.
    let read = notes::list(&vera.console, NoteKind::Transaction, "t-1")
        .await
        .expect("vera reads the notes");
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0].author, "sam");
    assert_eq!(read[0].text, "The lender withdrew the loan.");
    let at = chrono::DateTime::parse_from_rfc3339(&read[0].at).expect("an RFC 3339 time");
    assert!(
        at >= before - chrono::Duration::seconds(5)
            && at <= chrono::Utc::now() + chrono::Duration::seconds(5),
        "{at}"
    );
    // A note is on one target: the same id as a capture's has none.
    assert!(notes::list(&vera.console, NoteKind::Capture, "t-1")
        .await
        .expect("read")
        .is_empty());

    // A viewer may not write a note nor clear the team's captures: the sentence says who may.
    let refused = notes::add(
        &vera.console,
        form(json!({"kind": "transaction", "targetId": "t-1", "text": "me too"})),
    )
    .await
    .expect_err("a viewer's note");
    assert_eq!(refused.kind, ErrorKind::Refused);
    assert_eq!(
        refused.message,
        "A viewer may not write notes: support and up may. Ask an admin of the workspace."
    );
    let refused = captures::clear(
        &vera.console,
        form(json!({"filter": null, "upToId": i64::MAX})),
    )
    .await
    .expect_err("a viewer's clear");
    assert_eq!(refused.kind, ErrorKind::Refused);
    assert_eq!(
        refused.message,
        "A viewer may not clear captures: developer and up may. Ask an admin of the workspace."
    );
    // Nothing of either reached the workspace.
    assert_eq!(
        notes::list(&sam.console, NoteKind::Transaction, "t-1")
            .await
            .expect("read")
            .len(),
        1
    );

    // Left, the console has no notes to show, and says why.
    workspace::leave(&vera.console).await.expect("left");
    let alone = notes::list(&vera.console, NoteKind::Transaction, "t-1")
        .await
        .expect_err("not joined");
    assert_eq!(alone.kind, ErrorKind::NotConnected);
    assert!(alone.message.contains("team feature"), "{alone:?}");
    team.stop().await;
}

#[tokio::test]
async fn the_inspector_of_a_joined_console_is_the_workspaces_live_and_under_the_role() {
    let team = start_team().await;
    let app = team
        .joined(&team.member("dev", Role::Developer).await)
        .await;
    assert_eq!(deliver(&team, "e-team-1").await, 200);
    assert_eq!(deliver(&team, "e-team-1").await, 200);

    // The page and the counts are the workspace's (the app's own listener took the embedded
    // sandbox's notifications meanwhile, none of which is here).
    let page = captures::page(&app.console, form(every_capture()))
        .await
        .expect("the workspace's page");
    assert_eq!(page.total, 2, "{page:?}");
    let ids: Vec<(i64, u32)> = page.items.iter().map(|c| (c.id, c.attempts)).collect();
    assert_eq!(ids, [(2, 2), (1, 1)]);
    assert!(page.items.iter().all(|c| c.event_id == "e-team-1"));
    let grouped = captures::page(
        &app.console,
        form(
            json!({"filter": {}, "grouped": true, "offset": 0, "limit": 50, "countPastPage": true}),
        ),
    )
    .await
    .expect("grouped");
    assert_eq!(grouped.items.len(), 1);
    assert_eq!(grouped.items[0].group_attempts, 2);
    let facets = captures::facets(&app.console, form(json!({})))
        .await
        .expect("the workspace's counts");
    assert_eq!((facets.total, facets.stored), (2, 2));
    assert_eq!(facets.subscriptions, [SUBSCRIPTION]);

    // Detail, attempts and comparison of the workspace's captures.
    let detail = captures::detail_shown(&app.console, 2)
        .await
        .expect("the detail");
    assert!(detail.raw_body.contains("e-team-1"), "{}", detail.raw_body);
    assert_eq!(detail.attempts.len(), 2);
    let attempts = captures::attempts(&app.console, 1).await.expect("attempts");
    assert_eq!(attempts.iter().map(|a| a.id).collect::<Vec<_>>(), [1, 2]);
    let compared = captures::compare_shown(&app.console, 1, 2)
        .await
        .expect("compared");
    assert_eq!(
        (compared.first.id, compared.second.id),
        (1, 2),
        "{compared:?}"
    );
    assert!(
        matches!(
            compared.body,
            partner_listener::compare::BodyComparison::Identical
        ),
        "{compared:?}"
    );
    let missing = captures::detail_shown(&app.console, 999)
        .await
        .expect_err("no such capture");
    assert!(missing.message.contains("999"), "{missing:?}");
    // This machine's tools refuse a workspace's capture rather than read another by its id.
    let local =
        captures::local_only(&app.console, "The signature debugger").expect_err("a local tool");
    assert!(local.message.contains(&team.url()), "{local:?}");

    // The live feed: a notification the server takes reaches the window as a `captures`
    // event. The feed opens within a second of the join; a notification sent before it is
    // open is not in it (it starts from now), so one is sent each half second until one is.
    let seen = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        for attempt in 0.. {
            let event_id = format!("e-live-{attempt}");
            assert_eq!(deliver(&team, &event_id).await, 200);
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let arrived: Vec<CaptureSummary> = app
                .events(|e| match e {
                    AppEvent::Captures(batch) => Some(batch.captures.clone()),
                    _ => None,
                })
                .into_iter()
                .flatten()
                .filter(|c| c.event_id.starts_with("e-live-"))
                .collect();
            if let Some(first) = arrived.first() {
                return first.clone();
            }
        }
        unreachable!()
    })
    .await
    .expect("a live capture within 20 s");
    assert_eq!(seen.subscription_id, SUBSCRIPTION);
    assert!(seen.id > 2, "{seen:?}");

    // Replay by the workspace's server to its own endpoint, edited: it arrives re-signed.
    let replayed = listener::replay(
        &app.console,
        form(json!({"captureId": 1, "body": "{\"eventId\":\"e-edited\",\"eventType\":\"TransactionCreated\"}", "target": null})),
    )
    .await
    .expect("replayed");
    assert_eq!(replayed.answer.status, Some(200), "{replayed:?}");
    assert!(replayed.answer.url.ends_with("/webhooks"));
    let edited = captures::page(
        &app.console,
        form(json!({"filter": {"text": "e-edited"}, "grouped": false, "offset": 0, "limit": 50, "countPastPage": true})),
    )
    .await
    .expect("found");
    assert_eq!(edited.items.len(), 1, "{edited:?}");
    assert_eq!(edited.items[0].verdict, partner_listener::Verdict::Valid);
    assert!(edited.items[0].replayed);

    // Evidence built by the server, written here, without the key.
    let out = tempfile::tempdir().expect("a folder");
    let bundle: EvidenceResult = evidence::bundle(
        &app.console,
        form(json!({"captureId": 2, "scope": "notification", "shown": null, "maskFields": [], "path": out.path().join("ticket").display().to_string()})),
    )
    .await
    .expect("evidence");
    assert_eq!(bundle.captures, 2);
    let har = std::fs::read_to_string(&bundle.har_path).expect("the HAR");
    assert!(har.contains("e-team-1") && !har.contains(KEY));
    assert!(std::path::Path::new(&bundle.summary_path).exists());

    // A developer clears the team's captures.
    let cleared = captures::clear(&app.console, form(json!({"filter": null, "upToId": 2})))
        .await
        .expect("cleared");
    assert_eq!(cleared, 2);
    let facets = captures::facets(&app.console, form(json!({})))
        .await
        .expect("counts");
    assert!(
        facets.stored >= 2,
        "the live ones and the replay stay: {facets:?}"
    );

    // Left: the inspector is this machine's store again.
    workspace::leave(&app.console).await.expect("left");
    captures::local_only(&app.console, "The signature debugger").expect("local again");
    team.stop().await;
}

/// A capture as a workspace's live feed sends it.
fn live_capture(id: i64) -> partner_listener::Capture {
    partner_listener::Capture {
        id,
        received_at: chrono::Utc::now(),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: Vec::new(),
        body: Some(b"{}".to_vec()),
        body_size: 2,
        peer: None,
        verdict: partner_listener::Verdict::Valid,
        matched_key: None,
        subscription_id: Some(SUBSCRIPTION.into()),
        fields: partner_listener::NotificationFields {
            event_id: Some(format!("e-flaky-{id}")),
            ..partner_listener::NotificationFields::default()
        },
        attempt: 1,
        notification_id: Some(id),
        response: partner_listener::ResponseRecord {
            status: 200,
            body: String::new(),
            from_test_mode: false,
            delay_ms: 0,
        },
        processing_micros: 0,
        replay: false,
    }
}

/// A workspace whose live feed drops after each capture: `me` answers a developer, and each
/// `captures/live` connection sends one capture (ids 42, 43, ...) and is closed. Every feed
/// request's path and query is kept, in order.
async fn flaky_workspace() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let feeds = asked.clone();
    tokio::spawn(async move {
        let mut next = 41;
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buffer = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buffer[..n]),
                }
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
            let answer = if target.starts_with("/api/v1/me") {
                let body = r#"{"name":"dev","role":"developer"}"#;
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else if target.starts_with("/api/v1/captures/live") {
                feeds.lock().expect("the list").push(target);
                next += 1;
                let data = serde_json::to_string(&live_capture(next)).expect("json");
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n:hello\n\nevent: capture\nid: {next}\ndata: {data}\n\n"
                )
            } else {
                let body = r#"{"error":"not-found","message":"not here"}"#;
                format!(
                    "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
            let _ = socket.write_all(answer.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (url, asked)
}

#[tokio::test]
async fn a_live_feed_that_drops_is_opened_again_from_the_last_capture_it_read() {
    let (url, asked) = flaky_workspace().await;
    let app = Headless::start().await;
    workspace::join(
        &app.console,
        form(json!({ "url": url, "token": "pcw_flaky-member" })),
    )
    .await
    .expect("joined");
    let live = || -> Vec<i64> {
        app.events(|e| match e {
            AppEvent::Captures(batch) => Some(batch.captures.clone()),
            _ => None,
        })
        .into_iter()
        .flatten()
        .filter(|c| c.event_id.starts_with("e-flaky-"))
        .map(|c| c.id)
        .collect()
    };
    app.wait_for("two captures over two connections", || {
        (live().len() >= 2).then_some(())
    })
    .await;
    assert_eq!(live()[..2], [42, 43]);
    let feeds = asked.lock().expect("the list").clone();
    // The first feed starts from now; the next one goes on after the capture read last.
    assert_eq!(feeds[0], "/api/v1/captures/live", "{feeds:?}");
    assert_eq!(feeds[1], "/api/v1/captures/live?after=42", "{feeds:?}");

    // Left: the feed is not opened again (it would be within a second or two, the backoff
    // being back at its first wait after each capture).
    workspace::leave(&app.console).await.expect("left");
    let at_leave = asked.lock().expect("the list").len();
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    let after_leave = asked.lock().expect("the list").len();
    assert!(
        after_leave <= at_leave + 1,
        "feeds kept being opened after the leave: {at_leave} then {after_leave}"
    );
}

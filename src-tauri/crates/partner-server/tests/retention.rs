//! The workspace's retention over real HTTP and a real PostgreSQL: junk through a public URL
//! evicts no validly signed notification (the hardening issue's case: 50 valid among 3,000
//! junk under a count of 500), a byte budget is held, an age limit applies, and the tally the
//! prune reads stays equal to the table through inserts, prunes and a clear.

#![allow(clippy::unwrap_used)]

mod common;

use common::{call_as, config, Team};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::Retention;
use partner_server::{retention, signing_keys, RunningServer, ServerConfig};
use reqwest::Method;
use serde_json::json;

async fn send(
    http: &reqwest::Client,
    server: &RunningServer,
    path: &str,
    key: &str,
    body: &[u8],
) -> u16 {
    http.post(server.webhook_url(path))
        .header(SIGNATURE_HEADER, sign(key.as_bytes(), body))
        .header(SUBSCRIPTION_HEADER, "sub-1")
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn signed(n: usize, padding: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "eventId": format!("e-{n}"), "eventType": "created", "resourceType": "transaction",
        "meta": {"resourceType": "transaction"}, "padding": "x".repeat(padding)
    }))
    .unwrap()
}

/// (verdict, captures, bytes) as the tally says and as the table counts, each sorted.
async fn tally_and_table(team: &Team) -> (Vec<(String, i64, i64)>, Vec<(String, i64, i64)>) {
    let tally: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT verdict, captures, bytes FROM capture_tally WHERE captures > 0 ORDER BY verdict",
    )
    .fetch_all(&team.pool)
    .await
    .unwrap();
    let table: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT verdict, count(*), sum(size)::bigint FROM captures GROUP BY verdict ORDER BY verdict",
    )
    .fetch_all(&team.pool)
    .await
    .unwrap();
    (tally, table)
}

async fn valid_event_ids(team: &Team) -> Vec<String> {
    sqlx::query_scalar("SELECT event_id FROM captures WHERE verdict = 'valid' ORDER BY id")
        .fetch_all(&team.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn junk_evicts_no_signed_notification_under_a_count_limit() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-r"))
        .await
        .unwrap();
    // Every junk request stored in full (no summary past a rate), as the worst case.
    let server = team
        .server_configured(ServerConfig {
            junk_rate: None,
            ..config()
        })
        .await;
    let http = reqwest::Client::new();
    for n in 0..40 {
        assert_eq!(
            send(&http, &server, "/webhooks", "whsec-r", &signed(n, 0)).await,
            200
        );
    }
    for n in 0..3_000 {
        let (path, key) = match n % 3 {
            0 => ("/webhooks", "wrong-key"),
            1 => ("/wp-login.php", "whsec-r"),
            _ => ("/random/probe", "x"),
        };
        send(&http, &server, path, key, b"{\"eventId\":\"junk\"}").await;
    }
    for n in 40..50 {
        assert_eq!(
            send(&http, &server, "/webhooks", "whsec-r", &signed(n, 0)).await,
            200
        );
    }
    let limits = Retention {
        max_count: Some(500),
        ..Retention::default()
    };
    // Junk is cut to its share (a tenth of the limit) whether or not the whole is past it.
    let pruned = retention::prune(&team.pool, limits).await.unwrap();
    assert_eq!(pruned, 3_000 - 50);
    let kept: Vec<String> = (0..50).map(|n| format!("e-{n}")).collect();
    assert_eq!(
        valid_event_ids(&team).await,
        kept,
        "every signed notification kept"
    );
    let junk_count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM captures WHERE verdict <> 'valid'")
            .fetch_one(&team.pool)
            .await
            .unwrap()
    };
    assert_eq!(junk_count().await, 50, "the newest junk, its share");

    // Past the whole limit, the junk goes before any signed notification: a limit of 60
    // keeps the 50 signed ones and 6 junk (its share of 60).
    let tight = Retention {
        max_count: Some(60),
        ..Retention::default()
    };
    retention::prune(&team.pool, tight).await.unwrap();
    assert_eq!(valid_event_ids(&team).await, kept);
    assert_eq!(
        junk_count().await,
        6,
        "first cut to a tenth of 60, then under the limit"
    );

    // The tally the prune reads is the table's, through inserts, prunes and a clear.
    let (tally, table) = tally_and_table(&team).await;
    assert_eq!(tally, table);
    let (status, _) = call_as(
        &server,
        &team.admin,
        Method::POST,
        "/api/v1/captures/clear",
        Some(json!({"filter": {"verdicts": ["wrong-path"]}})),
    )
    .await;
    assert_eq!(status, 200);
    let (tally, table) = tally_and_table(&team).await;
    assert_eq!(tally, table);
    assert!(!tally.iter().any(|(verdict, _, _)| verdict == "wrong-path"));
}

#[tokio::test]
async fn a_byte_budget_is_held_oldest_first_and_an_age_limit_applies() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-r"))
        .await
        .unwrap();
    let server = team.server().await;
    let http = reqwest::Client::new();
    for n in 0..30 {
        assert_eq!(
            send(&http, &server, "/webhooks", "whsec-r", &signed(n, 20_000)).await,
            200
        );
    }
    let budget = 200_000;
    let pruned = retention::prune(
        &team.pool,
        Retention {
            max_bytes: Some(budget),
            ..Retention::default()
        },
    )
    .await
    .unwrap();
    assert!(pruned > 0);
    let held: i64 = sqlx::query_scalar("SELECT sum(size)::bigint FROM captures")
        .fetch_one(&team.pool)
        .await
        .unwrap();
    assert!(held <= budget as i64, "{held} bytes kept");
    let kept = valid_event_ids(&team).await;
    let newest: Vec<String> = (30 - kept.len()..30).map(|n| format!("e-{n}")).collect();
    assert_eq!(kept, newest, "the oldest went first");

    // Captures older than the age limit go, whatever their class.
    sqlx::query("UPDATE captures SET received_at = now() - interval '3 days' WHERE id IN (SELECT id FROM captures ORDER BY id LIMIT 2)")
        .execute(&team.pool)
        .await
        .unwrap();
    let before = valid_event_ids(&team).await.len();
    retention::prune(
        &team.pool,
        Retention {
            max_age: Some(chrono::TimeDelta::days(1)),
            ..Retention::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(valid_event_ids(&team).await.len(), before - 2);
    let (tally, table) = tally_and_table(&team).await;
    assert_eq!(tally, table);
}

#[tokio::test]
async fn a_server_prunes_on_its_own_to_the_limits_it_was_given() {
    let team = Team::new().await;
    signing_keys::set(&team.pool, &team.key, "sub-1", &Secret::new("whsec-r"))
        .await
        .unwrap();
    let server = team
        .server_configured(ServerConfig {
            retention: Retention {
                max_count: Some(5),
                ..Retention::default()
            },
            ..config()
        })
        .await;
    let http = reqwest::Client::new();
    for n in 0..12 {
        assert_eq!(
            send(&http, &server, "/webhooks", "whsec-r", &signed(n, 0)).await,
            200
        );
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let kept = valid_event_ids(&team).await;
        if kept.len() == 5 {
            let newest: Vec<String> = (7..12).map(|n| format!("e-{n}")).collect();
            assert_eq!(kept, newest);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still {} kept",
            kept.len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

//! Pages of the workspace's captures answered by each of the server's plans
//! (`partner_server::capture_pages`), every one checked against the same question answered
//! plainly from the rows: more captures than the count's cap (so the capped count and the walk
//! from the newest run), time ranges at the newest, in the middle and short (the probes choose
//! the walk or the arrival-time index), equality filters together (the self-join), grouped
//! pages with retries and with captures that are no notification, keyset and offset pages, and
//! captures imported with old arrival times at new ids.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "../benches/common/generated_captures.rs"]
mod generated_captures;

use chrono::{DateTime, Utc};
use common::{call_as, Team};
use partner_listener::COUNT_CAP;
use partner_server::Role;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// More than three times the count's cap, so a range in the middle has more than the cap
/// above it.
const GENERATED: i64 = 36_000;

/// What a page's answer is computed from: a capture's filtered columns.
struct Row {
    id: i64,
    at: DateTime<Utc>,
    verdict: String,
    subscription: Option<String>,
    event_type: Option<String>,
    notification: Option<i64>,
}

/// A question: its filter as the API takes it, and the same filter as a test of a row.
struct Question {
    name: &'static str,
    filter: Value,
    matches: Box<dyn Fn(&Row) -> bool>,
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

/// A capture of another listener's export: junk (no notification) or a notification's attempt.
fn imported(received_at: &str, path: &str, notification: Option<(&str, &str, &str)>) -> Value {
    let mut capture = json!({
        "id": 1, "receivedAt": received_at, "method": "POST", "path": path, "headers": [],
        "bodyBase64": "e30=", "bodySize": 2, "peer": "198.51.100.9:443",
        "verdict": "wrong-path", "matchedKey": null, "attempt": 1,
        "response": {"status": 404, "body": "", "fromTestMode": false, "delayMs": 0},
        "processingMicros": 10, "replay": false
    });
    if let Some((subscription, event_type, event_id)) = notification {
        let fields = capture.as_object_mut().unwrap();
        fields.insert("verdict".into(), json!("valid"));
        fields.insert("subscriptionId".into(), json!(subscription));
        fields.insert("eventId".into(), json!(event_id));
        fields.insert("eventType".into(), json!(event_type));
        fields.insert("resourceType".into(), json!("urn:svc:partner:transaction"));
    }
    capture
}

/// The page the plain reading of the rows gives: ids newest first with their group's matching
/// attempts, and the total before the cap.
fn expected(
    rows: &[Row],
    matches: &dyn Fn(&Row) -> bool,
    grouped: bool,
    before: Option<i64>,
    offset: usize,
) -> (Vec<(i64, u64)>, usize) {
    let mut listed: Vec<(i64, u64)> = if grouped {
        let mut groups: BTreeMap<i64, (i64, u64)> = BTreeMap::new();
        for row in rows.iter().filter(|row| matches(row)) {
            let group = groups
                .entry(row.notification.unwrap_or(row.id))
                .or_insert((row.id, 0));
            group.0 = group.0.max(row.id);
            group.1 += 1;
        }
        groups.into_values().collect()
    } else {
        rows.iter()
            .filter(|row| matches(row))
            .map(|row| (row.id, 1))
            .collect()
    };
    listed.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    let total = listed.len();
    let page = listed
        .into_iter()
        .filter(|(id, _)| before.is_none_or(|before| *id < before))
        .skip(offset)
        .take(50)
        .collect();
    (page, total)
}

#[tokio::test]
async fn every_plan_of_a_page_answers_what_a_plain_reading_of_the_rows_does() {
    let team = Team::new().await;
    generated_captures::insert(&team.pool, GENERATED).await;
    sqlx::query("ANALYZE captures")
        .execute(&team.pool)
        .await
        .unwrap();
    let server = team.server().await;
    let developer = team.member("dev", Role::Developer).await;

    // Imported after the generated ones: new ids, old arrival times. Two requests that are no
    // notification, and three attempts of one notification, two of them in the middle range.
    let (status, report) = call_as(
        &server,
        &developer,
        Method::POST,
        "/api/v1/captures/import",
        Some(json!({"captures": [
            imported("2026-11-01T09:00:00Z", "/wp-login.php", None),
            imported("2026-11-01T12:00:00Z", "/.env", None),
            imported("2026-11-01T10:00:00Z", "/webhooks", Some(("sub-4", "TransactionApproved", "late-1"))),
            imported("2026-11-01T10:00:01Z", "/webhooks", Some(("sub-4", "TransactionApproved", "late-1"))),
            imported("2026-11-01T23:59:00Z", "/webhooks", Some(("sub-4", "TransactionApproved", "late-1"))),
        ]})),
    )
    .await;
    assert_eq!(
        (status, report["imported"].as_u64()),
        (200, Some(5)),
        "{report}"
    );

    let rows: Vec<Row> = sqlx::query_as::<
        _,
        (
            i64,
            DateTime<Utc>,
            String,
            Option<String>,
            Option<String>,
            Option<i64>,
        ),
    >(
        "SELECT id, received_at, verdict, subscription_id, event_type, notification_id \
         FROM captures",
    )
    .fetch_all(&team.pool)
    .await
    .unwrap()
    .into_iter()
    .map(
        |(id, at, verdict, subscription, event_type, notification)| Row {
            id,
            at,
            verdict,
            subscription,
            event_type,
            notification,
        },
    )
    .collect();
    assert_eq!(rows.len(), GENERATED as usize + 5);
    assert_eq!(
        rows.iter().filter(|row| row.notification.is_none()).count(),
        2
    );
    let needle: HashSet<i64> = sqlx::query_scalar(
        "SELECT id FROM captures WHERE search @@ plainto_tsquery('simple', 'needle2')",
    )
    .fetch_all(&team.pool)
    .await
    .unwrap()
    .into_iter()
    .collect();
    assert_eq!(needle.len(), 1);

    let sub = |name: &'static str| move |row: &Row| row.subscription.as_deref() == Some(name);
    let event = |name: &'static str| move |row: &Row| row.event_type.as_deref() == Some(name);
    let between = |since: &'static str, until: &'static str| {
        move |row: &Row| row.at >= at(since) && row.at < at(until)
    };
    let questions = vec![
        Question {
            name: "everything",
            filter: json!({}),
            matches: Box::new(|_| true),
        },
        Question {
            // The newest 35,000 or so: a walk from the newest meets them at once.
            name: "since the first hour",
            filter: json!({"since": "2026-11-01T01:00:00Z"}),
            matches: Box::new(move |row| row.at >= at("2026-11-01T01:00:00Z")),
        },
        Question {
            // About 11,100 in the middle, 12,500 above them: read from the arrival-time index.
            name: "hours 9 to 17",
            filter: json!({"since": "2026-11-01T09:00:00Z", "until": "2026-11-01T17:00:00Z"}),
            matches: Box::new(between("2026-11-01T09:00:00Z", "2026-11-01T17:00:00Z")),
        },
        Question {
            name: "one hour in the middle",
            filter: json!({"since": "2026-11-01T12:00:00Z", "until": "2026-11-01T13:00:00Z"}),
            matches: Box::new(between("2026-11-01T12:00:00Z", "2026-11-01T13:00:00Z")),
        },
        Question {
            name: "event type and subscription",
            filter: json!({"eventType": "TransactionApproved", "subscriptionId": "sub-4"}),
            matches: Box::new(move |row| sub("sub-4")(row) && event("TransactionApproved")(row)),
        },
        Question {
            name: "event type and subscription, none together",
            filter: json!({"eventType": "TransactionApproved", "subscriptionId": "sub-3"}),
            matches: Box::new(|_| false),
        },
        Question {
            name: "verdict, event type, subscription and a time range",
            filter: json!({"verdicts": ["invalid-signature"], "eventType": "TransactionCreated",
                "subscriptionId": "sub-0", "until": "2026-11-01T20:00:00Z"}),
            matches: Box::new(move |row| {
                row.verdict == "invalid-signature"
                    && event("TransactionCreated")(row)
                    && sub("sub-0")(row)
                    && row.at < at("2026-11-01T20:00:00Z")
            }),
        },
        Question {
            name: "two verdicts and a subscription",
            filter: json!({"verdicts": ["valid", "wrong-path"], "subscriptionId": "sub-7"}),
            matches: Box::new(move |row| {
                ["valid", "wrong-path"].contains(&row.verdict.as_str()) && sub("sub-7")(row)
            }),
        },
        Question {
            name: "a rare word",
            filter: json!({"text": "needle2"}),
            matches: Box::new(move |row| needle.contains(&row.id)),
        },
    ];

    let cap = usize::try_from(COUNT_CAP).unwrap();
    let mut asked = 0;
    for question in &questions {
        for grouping in ["everyAttempt", "byNotification"] {
            let grouped = grouping == "byNotification";
            let (first, total) = expected(&rows, &*question.matches, grouped, None, 0);
            // The first page, the next by keyset, and the second by offset.
            let next = first.last().map(|(id, _)| *id);
            for (before, offset) in [(None, 0), (next, 0), (None, 50)] {
                let (want, _) = expected(&rows, &*question.matches, grouped, before, offset);
                let mut body = json!({"filter": question.filter, "grouping": grouping,
                    "offset": offset, "limit": 50, "count": "upToCap"});
                if let Some(before) = before {
                    body["before"] = json!(before);
                }
                let (status, page) = call_as(
                    &server,
                    &developer,
                    Method::POST,
                    "/api/v1/captures/page",
                    Some(body),
                )
                .await;
                let what = format!(
                    "{} ({grouping}, before {before:?}, offset {offset})",
                    question.name
                );
                assert_eq!(status, 200, "{what}: {page}");
                let got: Vec<(i64, u64)> = page["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|item| {
                        (
                            item["id"].as_i64().unwrap(),
                            item["groupAttempts"].as_u64().unwrap(),
                        )
                    })
                    .collect();
                assert_eq!(got, want, "{what}");
                assert_eq!(
                    (page["total"].as_u64(), page["totalCapped"].as_bool()),
                    (Some(total.min(cap) as u64), Some(total > cap)),
                    "{what}"
                );
                asked += 1;
            }
        }
    }
    assert_eq!(asked, questions.len() * 6);
    server.stop().await.unwrap();
}

//! The partner's side of transactions: the list (paging, every sort key, the cache staying
//! right after a change), one transaction, its events, and the response PATCH with its lock.

use crate::support::{expect_error, product, total, Api};
use partner_sandbox::{ClientCredentials, SandboxConfig};
use serde_json::{json, Value};
use std::collections::HashSet;

async fn all_pages(api: &Api, token: &str, sort: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut start = 0;
    loop {
        let response = api
            .get(
                &format!("/partner/v2/transactions?sort={sort}&start={start}&limit=50"),
                token,
            )
            .await;
        assert_eq!(response.status(), 200);
        let count = total(&response) as usize;
        let page: Vec<Value> = response.json().await.unwrap();
        start += page.len();
        items.extend(page);
        if start >= count {
            assert_eq!(items.len(), count);
            return items;
        }
    }
}

#[tokio::test]
async fn demo_list_defaults_paging_and_the_spec_sort() {
    let api = Api::demo().await;
    let token = api.token().await;
    let first = api.get("/partner/v2/transactions", &token).await;
    assert_eq!(total(&first), 600);
    assert_eq!(first.json::<Vec<Value>>().await.unwrap().len(), 25);

    let sorted = all_pages(&api, &token, "status,-created").await;
    let ids: HashSet<_> = sorted
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 600, "pages neither repeat nor skip");
    let statuses: HashSet<_> = sorted
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        HashSet::from(["created", "processing", "completed"])
    );
    for pair in sorted.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (sa, sb) = (a["status"].as_str().unwrap(), b["status"].as_str().unwrap());
        assert!(sa <= sb, "status ascending");
        if sa == sb {
            let ca: chrono::DateTime<chrono::Utc> = a["created"].as_str().unwrap().parse().unwrap();
            let cb: chrono::DateTime<chrono::Utc> = b["created"].as_str().unwrap().parse().unwrap();
            assert!(ca >= cb, "created descending within a status");
        }
    }
    // Every response status of the field notes is in the demo data.
    let responses: HashSet<_> = sorted
        .iter()
        .filter_map(|t| t["response"]["status"].as_str())
        .collect();
    assert_eq!(
        responses,
        HashSet::from([
            "processing",
            "completed",
            "failed",
            "canceled",
            "inputRequired"
        ])
    );
}

#[tokio::test]
async fn every_sort_key_orders_the_list() {
    let api = Api::demo().await;
    let token = api.token().await;
    for (key, field) in [
        ("id", "id"),
        ("status", "status"),
        ("created", "created"),
        ("updated", "updated"),
        ("requestType", "requestType"),
    ] {
        for descending in [false, true] {
            let sort = if descending {
                format!("-{key}")
            } else {
                key.to_string()
            };
            let items = all_pages(&api, &token, &sort).await;
            let values: Vec<String> = items
                .iter()
                .map(|t| match field {
                    "requestType" => t["request"]["type"].as_str().unwrap().to_string(),
                    "created" | "updated" => t[field]
                        .as_str()
                        .unwrap()
                        .parse::<chrono::DateTime<chrono::Utc>>()
                        .unwrap()
                        .to_rfc3339(),
                    _ => t[field].as_str().unwrap().to_lowercase(),
                })
                .collect();
            let mut expected = values.clone();
            expected.sort();
            if descending {
                expected.reverse();
            }
            assert_eq!(values, expected, "sort={sort}");
        }
    }
    let error = expect_error(
        api.get("/partner/v2/transactions?sort=amount", &token)
            .await,
        400,
    )
    .await;
    assert!(
        error.details.contains("requestType"),
        "names the sortable keys: {}",
        error.details
    );
    expect_error(
        api.get("/partner/v2/transactions?start=601", &token).await,
        400,
    )
    .await;
    let end = api.get("/partner/v2/transactions?start=600", &token).await;
    assert_eq!(end.json::<Vec<Value>>().await.unwrap().len(), 0);
    expect_error(
        api.get("/partner/v2/transactions?limit=51", &token).await,
        400,
    )
    .await;
    expect_error(
        api.get("/partner/v2/transactions?start=1.5", &token).await,
        400,
    )
    .await;
    expect_error(
        api.get("/partner/v2/transactions?start=%FF%FE", &token)
            .await,
        400,
    )
    .await;
}

#[tokio::test]
async fn a_change_reorders_the_next_sorted_page() {
    let api = Api::demo().await;
    let token = api.token().await;
    let before: Vec<Value> = api
        .get_json(
            "/partner/v2/transactions?sort=-updated&limit=50&start=0",
            &token,
        )
        .await
        .as_array()
        .unwrap()
        .clone();
    let open = all_pages(&api, &token, "status")
        .await
        .into_iter()
        .find(|t| t["status"] == "created")
        .unwrap();
    let id = open["id"].as_str().unwrap();
    api.sandbox
        .clock()
        .advance(std::time::Duration::from_secs(3600 * 24 * 365));
    let token = api.token().await;
    let response = api
        .patch_raw(
            &format!("/partner/v2/transactions/{id}/response"),
            Some(&token),
            "application/json",
            r#"{"status":"processing"}"#,
        )
        .await;
    assert_eq!(response.status(), 200);
    let after: Vec<Value> = api
        .get_json("/partner/v2/transactions?sort=-updated&limit=50", &token)
        .await
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        after[0]["id"], id,
        "the changed transaction is now the most recently updated"
    );
    assert_eq!(after[1]["id"], before[0]["id"]);
}

#[tokio::test]
async fn one_transaction_and_its_events() {
    let api = Api::start().await;
    let token = api.token().await;
    let created = api.create_product(&token, &product("p")).await;
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let id = transaction["id"].as_str().unwrap();
    let fetched = api
        .get_json(&format!("/partner/v2/transactions/{id}"), &token)
        .await;
    assert_eq!(fetched, transaction);
    assert_eq!(fetched["status"], "created");
    assert_eq!(fetched["product"]["name"], "p");
    assert_eq!(fetched["request"]["loan"]["loanAmount"], 250000);
    let events = api
        .get_json(&format!("/partner/v2/transactions/{id}/events"), &token)
        .await;
    let events = events.as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0]["type"],
        "urn:svc:partner:transaction:request:created"
    );
    assert_eq!(events[0]["from"], "System");
    assert_eq!(events[0]["details"]["transactionId"], id);
    let event_id = events[0]["id"].as_str().unwrap();
    let event = api
        .get_json(
            &format!("/partner/v2/transactions/{id}/events/{event_id}"),
            &token,
        )
        .await;
    assert_eq!(&event, &events[0]);
    expect_error(
        api.get(
            &format!("/partner/v2/transactions/{id}/events/nope"),
            &token,
        )
        .await,
        404,
    )
    .await;
    expect_error(api.get("/partner/v2/transactions/nope", &token).await, 404).await;
    expect_error(
        api.get("/partner/v2/transactions/nope/events", &token)
            .await,
        404,
    )
    .await;
}

#[tokio::test]
async fn another_partners_transactions_are_invisible() {
    let api = Api::with(SandboxConfig {
        clients: vec![
            ClientCredentials::new("alpha", "a-secret"),
            ClientCredentials::new("beta", "b-secret"),
        ],
        ..SandboxConfig::default()
    })
    .await;
    let alpha = api.token_for("alpha", "a-secret").await;
    let beta = api.token_for("beta", "b-secret").await;
    let created = api.create_product(&alpha, &product("p")).await;
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let id = transaction["id"].as_str().unwrap();
    let list = api
        .get("/partner/v2/transactions?sort=created", &beta)
        .await;
    assert_eq!(total(&list), 0);
    expect_error(
        api.get(&format!("/partner/v2/transactions/{id}"), &beta)
            .await,
        404,
    )
    .await;
    expect_error(
        api.get(&format!("/partner/v2/transactions/{id}/events"), &beta)
            .await,
        404,
    )
    .await;
    let respond = api
        .patch_raw(
            &format!("/partner/v2/transactions/{id}/response"),
            Some(&beta),
            "application/json",
            r#"{"status":"completed"}"#,
        )
        .await;
    expect_error(respond, 404).await;
    assert_eq!(total(&api.get("/partner/v2/transactions", &alpha).await), 1);
}

#[tokio::test]
async fn responses_merge_then_lock_the_transaction() {
    let api = Api::start().await;
    let token = api.token().await;
    let created = api.create_product(&token, &product("p")).await;
    let transaction = api.lender_create(created["id"].as_str().unwrap()).await;
    let id = transaction["id"].as_str().unwrap();
    let path = format!("/partner/v2/transactions/{id}/response");

    let first = api
        .patch_raw(
            &path,
            Some(&token),
            "application/json",
            r#"{"status":"processing","partnerStatus":"Ordered","referenceNumber":"R-1"}"#,
        )
        .await;
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["status"], "processing");
    assert_eq!(first["updatedBy"], api.sandbox.client_id());

    for (bad, status) in [
        (r#"{"status":"cancelled"}"#, 400),
        (r#"{"partnerStatus":"x"}"#, 400),
        (r#"{"status":"completed","extra":1}"#, 400),
        (r#"{"status":"completed","loan":[1]}"#, 400),
        ("[]", 400),
        ("{", 400),
    ] {
        expect_error(
            api.patch_raw(&path, Some(&token), "application/json", bad)
                .await,
            status,
        )
        .await;
    }
    expect_error(
        api.patch_raw(
            &path,
            Some(&token),
            "text/plain",
            r#"{"status":"completed"}"#,
        )
        .await,
        415,
    )
    .await;

    let done = api
        .patch_raw(
            &path,
            Some(&token),
            "application/merge-patch+json",
            r#"{"status":"completed"}"#,
        )
        .await;
    assert_eq!(done.status(), 200);
    let done: Value = done.json().await.unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["response"]["partnerStatus"], "Ordered",
        "left-out fields keep their values"
    );
    assert_eq!(done["response"]["referenceNumber"], "R-1");

    let events: Vec<Value> = api
        .get_json(&format!("/partner/v2/transactions/{id}/events"), &token)
        .await
        .as_array()
        .unwrap()
        .clone();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "urn:svc:partner:transaction:request:created",
            "urn:svc:partner:transaction:response:updated",
            "urn:svc:partner:transaction:response:processed",
            "urn:svc:partner:transaction:response:updated",
            "urn:svc:partner:transaction:response:processed",
        ]
    );

    // Locked: the partner and the lender can no longer change it; events may still be added.
    let error = expect_error(
        api.patch_raw(
            &path,
            Some(&token),
            "application/json",
            r#"{"status":"failed"}"#,
        )
        .await,
        409,
    )
    .await;
    assert!(error.summary.contains("locked"));
    let update = api
        .patch_raw(
            &format!("/sandbox/v1/transactions/{id}"),
            None,
            "application/json",
            r#"{"loan":{"loanAmount":1}}"#,
        )
        .await;
    expect_error(update, 409).await;
    let note = api
        .post_json(
            &format!("/sandbox/v1/transactions/{id}/events"),
            None,
            &json!({"type": "urn:lender:note", "text": "Thanks"}),
        )
        .await;
    assert_eq!(note.status(), 201);
    let after = api
        .get_json(&format!("/partner/v2/transactions/{id}"), &token)
        .await;
    assert_eq!(after["response"]["status"], "completed");
}

fn instant(value: &Value) -> chrono::DateTime<chrono::Utc> {
    value.as_str().unwrap().parse().unwrap()
}

/// Cached orders are patched by writes, not recomputed: after a burst of lender and partner
/// writes the sorted listings still hold every transaction exactly once, in order.
#[tokio::test]
async fn cached_orders_stay_right_through_writes() {
    let api = Api::demo().await;
    let token = api.token().await;
    // Prime the cache for two sorts.
    api.get("/partner/v2/transactions?sort=status,-created", &token)
        .await;
    api.get("/partner/v2/transactions?sort=-updated", &token)
        .await;
    let products: Vec<Value> = api
        .get_json("/partner/v2/products", &token)
        .await
        .as_array()
        .unwrap()
        .clone();
    let open: Vec<String> = all_pages(&api, &token, "-status")
        .await
        .into_iter()
        .rev()
        .filter(|t| t["status"] == "created")
        .take(10)
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    for (i, id) in open.iter().enumerate() {
        api.sandbox
            .clock()
            .advance(std::time::Duration::from_secs(60));
        let product_id = products[i % products.len()]["id"].as_str().unwrap();
        api.lender_create(product_id).await;
        let update = api
            .patch_raw(
                &format!("/sandbox/v1/transactions/{id}"),
                None,
                "application/json",
                r#"{"loan":{"loanAmount":1}}"#,
            )
            .await;
        assert_eq!(update.status(), 200);
        let status = if i % 2 == 0 {
            "processing"
        } else {
            "completed"
        };
        let response = api
            .patch_raw(
                &format!("/partner/v2/transactions/{id}/response"),
                Some(&token),
                "application/json",
                format!(r#"{{"status":"{status}"}}"#),
            )
            .await;
        assert_eq!(response.status(), 200);
    }
    let token = api.token().await;
    let natural: HashSet<String> = all_pages(&api, &token, "")
        .await
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(natural.len(), 610);

    let by_status = all_pages(&api, &token, "status,-created").await;
    let ids: HashSet<String> = by_status
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, natural);
    for pair in by_status.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (sa, sb) = (a["status"].as_str().unwrap(), b["status"].as_str().unwrap());
        assert!(
            sa < sb || (sa == sb && instant(&a["created"]) >= instant(&b["created"])),
            "{sa} {sb}"
        );
    }
    let by_updated = all_pages(&api, &token, "-updated").await;
    let ids: HashSet<String> = by_updated
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, natural);
    assert!(by_updated
        .windows(2)
        .all(|p| instant(&p[0]["updated"]) >= instant(&p[1]["updated"])));
    assert_eq!(
        by_updated[0]["id"].as_str().unwrap(),
        open.last().unwrap(),
        "the last change is first"
    );
}

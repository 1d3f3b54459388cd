//! The support desk's questions over 1,000,000 transactions in a workspace's index, answered by
//! the server over its API (`/api/v1/transactions/find` and `counts`): p50 and p95 per kind of
//! question (issue #50 asks p95 < 100 ms).
//!
//! `cargo bench -p partner-server --bench support_search` (PostgreSQL's server binaries needed,
//! as for `search`; `PARTNER_SEARCH_ROWS` sets another count). The rows are made inside
//! PostgreSQL with `generate_series` (a sync of a million from a sandbox would measure the
//! sync): each a transaction as the sandbox shapes one, filed under the columns
//! `partner_index::Columns` gives (12 products, three statuses, five response statuses on two in
//! three, 2,000 requesting parties, a unique loan and reference number each, two years of
//! creation times, a word found in 1 transaction of 10,000). `VACUUM (ANALYZE)` runs after the
//! load, as autovacuum would on a live server (statistics, and the visibility map that lets a
//! count skip the table's pages).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, Bench};
use serde_json::{json, Value};
use std::time::Instant;

const RUNS: usize = 20;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let rows: i64 = std::env::var("PARTNER_SEARCH_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let bench = Bench::start().await;
    let pool = bench.pool.clone();
    let token = bench.viewer().await;

    let loading = Instant::now();
    sqlx::query(
        "INSERT INTO index_transactions (id, status, product_id, product_name, request_type, \
            response_status, partner_status, reference_number, requesting_party, loan_number, \
            loan, created, updated, body, words) \
         SELECT id, status, product_id, product_name, 'NEW_REQUEST', response_status, \
            partner_status, reference_number, party, loan_number, loan, created, updated, \
            jsonb_build_object('id', id, 'status', status, 'created', created, 'updated', updated, \
              'product', jsonb_build_object('id', product_id, 'name', product_name), \
              'request', jsonb_build_object('requestType', 'NEW_REQUEST', \
                 'requestingParty', jsonb_build_object('name', party), 'loan', loan, \
                 'comment', note), \
              'response', CASE WHEN response_status IS NULL THEN NULL ELSE jsonb_build_object( \
                 'status', response_status, 'partnerStatus', partner_status, \
                 'referenceNumber', reference_number) END)::text, \
            to_tsvector('simple', concat_ws(' ', id, status, product_id, product_name, party, \
              loan_number, (loan ->> 'amount'), note, response_status, partner_status, \
              reference_number)) \
         FROM (SELECT 'tx-' || lpad(g::text, 8, '0') AS id, \
             (ARRAY['created','processing','completed'])[1 + g % 3] AS status, \
             'prod-' || (g % 12) AS product_id, \
             'Product ' || (ARRAY['Alder','Birch','Cedar','Dogwood','Elm','Fir','Ginkgo','Hazel','Ironwood','Juniper','Kauri','Larch'])[1 + g % 12] AS product_name, \
             CASE WHEN g % 3 = 0 THEN NULL ELSE (ARRAY['processing','completed','failed','canceled','inputRequired'])[1 + g % 5] END AS response_status, \
             CASE WHEN g % 3 = 0 THEN NULL ELSE (ARRAY['Reviewing','Approved','Declined','Waiting'])[1 + g % 4] END AS partner_status, \
             CASE WHEN g % 3 = 0 THEN NULL ELSE 'REF-' || g END AS reference_number, \
             (ARRAY['Ada','Bram','Cleo','Dara','Esme','Finn','Gus','Hana'])[1 + g % 8] || ' ' || \
               (ARRAY['Quill','Rook','Sable','Thorn','Umber'])[1 + (g / 8) % 5] || ' Lending ' || (g % 50) AS party, \
             'LN-' || lpad(g::text, 7, '0') AS loan_number, \
             jsonb_build_object('loanNumber', 'LN-' || lpad(g::text, 7, '0'), 'amount', 1000 + g % 400000, \
               'purpose', (ARRAY['purchase','refinance','equity'])[1 + g % 3]) AS loan, \
             CASE WHEN g % 10000 = 7 THEN 'needle' || (g / 10000) ELSE 'ordinary request' END AS note, \
             timestamptz '2025-01-01' + (g * interval '63 seconds') AS created, \
             timestamptz '2025-01-01' + (g * interval '63 seconds') + ((g % 100) * interval '1 minute') AS updated \
           FROM generate_series(1, $1) AS g) AS rows",
    )
    .bind(rows)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("VACUUM (ANALYZE) index_transactions")
        .execute(&pool)
        .await
        .unwrap();
    let loaded = loading.elapsed();

    let server = bench.server().await;
    let client = reqwest::Client::new();
    let find = format!("http://{}/api/v1/transactions/find", server.local_addr);
    let counts = format!("http://{}/api/v1/transactions/counts", server.local_addr);
    let page = |filter: Value| json!({"filter": filter, "limit": 50, "offset": 0});
    // A transaction half way (one with a response: every third has none), the rare word of
    // one in the first half, and a day in the middle of the rows' creation times.
    let middle = rows / 2 - rows / 2 % 3 + 1;
    let needle = format!("needle{}", rows / 20_000);
    // The first name of the transaction with that word (its row number's name, as loaded).
    let needle_name = ["Ada", "Bram", "Cleo", "Dara", "Esme", "Finn", "Gus", "Hana"]
        [usize::try_from((rows / 20_000 * 10_000 + 7) % 8).unwrap()];
    let day = chrono::DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
        .unwrap()
        .checked_add_signed(chrono::TimeDelta::seconds(middle * 63))
        .unwrap()
        .date_naive();
    let (day_from, day_to) = (
        format!("{day}T00:00:00Z"),
        format!("{}T00:00:00Z", day.succ_opt().unwrap()),
    );
    let questions = [
        ("newest page, no filter", &find, page(json!({}))),
        (
            "status (1 in 3)",
            &find,
            page(json!({"status": "processing"})),
        ),
        (
            "product by name, any case (1 in 12)",
            &find,
            page(json!({"product": "product cedar"})),
        ),
        (
            "status + product + response status",
            &find,
            page(json!({"status": "completed", "product": "prod-5", "responseStatus": "failed"})),
        ),
        (
            "a loan number exactly",
            &find,
            page(json!({"loan": [{"field": "loanNumber", "value": format!("ln-{middle:07}")}]})),
        ),
        (
            "a reference number exactly",
            &find,
            page(json!({"referenceNumber": format!("ref-{middle}")})),
        ),
        (
            "another loan field (purpose: 1 in 3)",
            &find,
            page(json!({"loan": [{"field": "purpose", "value": "equity"}]})),
        ),
        (
            "a rare word (1 in 10,000)",
            &find,
            page(json!({ "text": needle })),
        ),
        (
            "two words, a prefix",
            &find,
            page(json!({"text": "Cleo Sab"})),
        ),
        (
            "two words, one rare",
            &find,
            page(json!({ "text": format!("{needle_name} {needle}") })),
        ),
        (
            "a word in every transaction beside a name",
            &find,
            page(json!({"text": "ordinary Cleo"})),
        ),
        (
            "a word in every transaction",
            &find,
            page(json!({"text": "ordinary"})),
        ),
        (
            "part of a party's name",
            &find,
            page(json!({"requestingParty": "rook lending 4"})),
        ),
        (
            "one day of two years",
            &find,
            page(json!({"createdSince": day_from, "createdBefore": day_to})),
        ),
        (
            "a page 5,000 deep",
            &find,
            json!({"filter": {}, "limit": 50, "offset": 5000}),
        ),
        (
            "counts, one product",
            &counts,
            json!({"filter": {"product": "prod-3"}}),
        ),
        (
            "counts, one day",
            &counts,
            json!({"filter": {"createdSince": day_from, "createdBefore": day_to}}),
        ),
        ("counts, everything", &counts, json!({"filter": {}})),
    ];
    println!("partner-server support search bench: {rows} transactions loaded in {:.1} s; {RUNS} runs per question over HTTP (one server, PostgreSQL {})", loaded.as_secs_f64(),
        bench.server_version().await);
    for (name, url, body) in questions {
        ask(&client, url, &token, name, &body, RUNS, |answer| {
            json!({"total": answer["total"], "capped": answer["totalCapped"], "items": answer["items"].as_array().map(Vec::len)})
        })
        .await;
    }
    server.stop().await.unwrap();
}

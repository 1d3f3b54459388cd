//! The support desk's counts and pages as `support_filter` plans them, checked against the same
//! question asked of the rows plainly: more transactions than the count's cap, some without a
//! creation time (which the count's joins cannot meet), products matched by id and by name
//! alone, and parts of party names with wildcards in them, over real HTTP on a throwaway
//! PostgreSQL. The transactions are written straight into the index's table (as a sync would
//! write them, the triggers keeping the counts and the parties).

#![allow(clippy::unwrap_used)]

mod common;

use common::{call_as, Team};
use partner_server::{Role, RunningServer};
use reqwest::Method;
use serde_json::{json, Value};

/// Past the count's cap (10,000) for the broad questions.
const ROWS: i64 = 33_000;

/// The plain reading of a question: its count and its newest 50 ids, in SQL with no index
/// in mind.
async fn plainly(team: &Team, condition: &str) -> (i64, Vec<String>) {
    let count: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM index_transactions WHERE {condition}"
    ))
    .fetch_one(&team.pool)
    .await
    .unwrap();
    let ids: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT id FROM index_transactions WHERE {condition} \
         ORDER BY created DESC NULLS LAST, seq DESC LIMIT 50"
    ))
    .fetch_all(&team.pool)
    .await
    .unwrap();
    (count, ids)
}

/// Asks the server each question (a name, a filter, the same as SQL conditions) as `viewer`,
/// checking its total and its newest 50 against the rows' own; how many were past the cap.
async fn ask_each(
    team: &Team,
    server: &RunningServer,
    viewer: &str,
    questions: &[(&str, Value, &str)],
) -> usize {
    let mut capped = 0;
    for (name, filter, condition) in questions {
        let (count, newest) = plainly(team, condition).await;
        let (status, found) = call_as(
            server,
            viewer,
            Method::POST,
            "/api/v1/transactions/find",
            Some(json!({"filter": filter, "limit": 50})),
        )
        .await;
        assert_eq!(status, 200, "{name}: {found}");
        assert_eq!(
            (found["total"].as_i64(), found["totalCapped"].as_bool()),
            (Some(count.min(10_000)), Some(count > 10_000)),
            "{name}: {count} rows match"
        );
        let ids: Vec<&str> = found["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, newest, "{name}: the same newest 50");
        capped += usize::from(count > 10_000);
    }
    capped
}

#[tokio::test]
async fn counts_and_pages_of_joined_filters_and_party_parts_are_the_rows_own() {
    let team = Team::new().await;
    // Every 7th without a creation time; products prod-0..5, where half of prod-5's carry the
    // name "Product One" and half of prod-3's the name "prod-1" (another product's id, so
    // "prod-1" finds transactions by id and others by name alone); parties with `%` and `_` in
    // their names.
    sqlx::query(
        "INSERT INTO index_transactions (id, status, product_id, product_name, request_type, \
            response_status, requesting_party, created, updated, body, words) \
         SELECT 'tx-' || g, (ARRAY['created','processing','completed'])[1 + g % 3], \
            'prod-' || (g % 6), \
            CASE WHEN g % 12 = 5 THEN 'Product One' WHEN g % 12 = 3 THEN 'prod-1' \
                 ELSE 'Product ' || (ARRAY['Zero','One','Two','Three','Four','Five'])[1 + g % 6] END, \
            'NEW_REQUEST', \
            CASE WHEN g % 4 = 0 THEN NULL \
                 ELSE (ARRAY['completed','failed','canceled','failed','completed'])[1 + g % 5] END, \
            (ARRAY['Rook 5% Lending','Rook_Lending','Sable Lending 40','Sable Lending 4'])[1 + g % 4], \
            CASE WHEN g % 7 = 0 THEN NULL ELSE timestamptz '2025-01-01' + g * interval '1 minute' END, \
            NULL, json_build_object('id', 'tx-' || g)::text, to_tsvector('simple', 'ordinary') \
         FROM generate_series(1, $1) AS g",
    )
    .bind(ROWS)
    .execute(&team.pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE index_transactions")
        .execute(&team.pool)
        .await
        .unwrap();
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;

    let questions: [(&str, Value, &str); 10] = [
        (
            "status and product",
            json!({"status": "processing", "product": "prod-1"}),
            "status = 'processing' AND (product_id = 'prod-1' OR lower(product_name) = 'prod-1')",
        ),
        (
            "status and a product by name alone",
            json!({"status": "completed", "product": "product one"}),
            "status = 'completed' AND (product_id = 'product one' \
             OR lower(product_name) = 'product one')",
        ),
        (
            "a product by id and by name, and a response status",
            json!({"product": "prod-1", "responseStatus": "failed"}),
            "(product_id = 'prod-1' OR lower(product_name) = 'prod-1') \
             AND response_status = 'failed'",
        ),
        (
            "three filters",
            json!({"status": "completed", "product": "prod-5", "responseStatus": "failed"}),
            "status = 'completed' AND (product_id = 'prod-5' OR lower(product_name) = 'prod-5') \
             AND response_status = 'failed'",
        ),
        (
            "status and response status, no product",
            json!({"status": "created", "responseStatus": "canceled"}),
            "status = 'created' AND response_status = 'canceled'",
        ),
        (
            "status and request type, past the cap",
            json!({"requestType": "NEW_REQUEST", "status": "created"}),
            "request_type = 'NEW_REQUEST' AND status = 'created'",
        ),
        (
            "two filters and a word",
            json!({"status": "created", "responseStatus": "failed", "text": "ordinary"}),
            "status = 'created' AND response_status = 'failed'",
        ),
        (
            "part of a party, a percent sign taken as written",
            json!({"requestingParty": "k 5% l"}),
            "requesting_party ILIKE '%k 5\\% l%' ESCAPE '\\'",
        ),
        (
            "part of a party, an underscore taken as written",
            json!({"requestingParty": "rook_"}),
            "requesting_party ILIKE '%rook\\_%' ESCAPE '\\'",
        ),
        (
            "part of a party and a status",
            json!({"requestingParty": "lending 4", "status": "completed"}),
            "requesting_party ILIKE '%lending 4%' AND status = 'completed'",
        ),
    ];
    for (name, _, condition) in &questions {
        let (count, _) = plainly(&team, condition).await;
        assert!(count > 0, "{name}: the data has none to find");
    }
    let capped = ask_each(&team, &server, &viewer, &questions).await;
    assert_eq!(capped, 1, "one question past the cap");

    // The parties follow the rows: one moved to a new party, all of another's taken away.
    sqlx::query(
        "UPDATE index_transactions SET requesting_party = 'Thorn Lending' WHERE id = 'tx-2'",
    )
    .execute(&team.pool)
    .await
    .unwrap();
    sqlx::query("DELETE FROM index_transactions WHERE requesting_party = 'Rook_Lending'")
        .execute(&team.pool)
        .await
        .unwrap();
    for (part, want) in [("thorn", 1), ("rook_", 0)] {
        let (_, found) = call_as(
            &server,
            &viewer,
            Method::POST,
            "/api/v1/transactions/find",
            Some(json!({"filter": {"requestingParty": part}, "limit": 50})),
        )
        .await;
        assert_eq!(found["total"], want, "{part}: {found}");
    }
    server.stop().await.unwrap();
}

/// Several words are counted first with the common whole words they begin (`common_words`),
/// then, when that lower bound is under the cap, as prefixes: the totals are the rows' own in
/// every case (a bound past the cap; a bound under the cap with the answer past it; one under
/// it; words without common whole words; a word the parser splits).
#[tokio::test]
async fn several_words_are_counted_as_their_prefixes_whichever_count_answers() {
    let team = Team::new().await;
    // "Lending" in every one; Cleo or Ada (one in two, six by six), then Sable or Sabine (one
    // in six each) or one of 3,000 rarer words "samN"; every third has "LN-7" too.
    sqlx::query(
        "INSERT INTO index_transactions (id, status, created, body, words) \
         SELECT 'tx-' || g, (ARRAY['created','processing','completed'])[1 + g % 3], \
            timestamptz '2025-01-01' + g * interval '1 minute', \
            json_build_object('id', 'tx-' || g)::text, \
            to_tsvector('simple', concat_ws(' ', 'Lending', \
              CASE WHEN (g / 6) % 2 = 0 THEN 'Cleo' ELSE 'Ada' END, \
              CASE WHEN g % 6 = 0 THEN 'Sable' WHEN g % 6 = 1 THEN 'Sabine' \
                   ELSE 'sam' || (g % 3000) END, \
              CASE WHEN g % 3 = 0 THEN 'LN-7' END)) \
         FROM generate_series(1, $1) AS g",
    )
    .bind(48_000)
    .execute(&team.pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE index_transactions")
        .execute(&team.pool)
        .await
        .unwrap();
    // The bound is tried only where the statistics list the common words.
    let common: Vec<String> = sqlx::query_scalar(
        "SELECT unnest(most_common_elems::text::text[]) FROM pg_stats \
         WHERE tablename = 'index_transactions' AND attname = 'words'",
    )
    .fetch_all(&team.pool)
    .await
    .unwrap();
    for word in ["lending", "cleo", "ada", "sable", "sabine"] {
        assert!(common.iter().any(|w| w == word), "{word} in {common:?}");
    }
    let server = team.server().await;
    let viewer = team.member("vera", Role::Viewer).await;

    let questions: [(&str, Value, &str); 8] = [
        (
            "a bound past the cap (lending, and sable or sabine: 16,000)",
            json!({"text": "Lending Sab"}),
            "words @@ to_tsquery('simple', 'lending:* & sab:*')",
        ),
        (
            "a bound under the cap (8,000), the answer past it (the rarer words count too)",
            json!({"text": "Cleo S"}),
            "words @@ to_tsquery('simple', 'cleo:* & s:*')",
        ),
        (
            "a bound under the cap and the answer too",
            json!({"text": "Cleo Sab"}),
            "words @@ to_tsquery('simple', 'cleo:* & sab:*')",
        ),
        (
            "with a status",
            json!({"text": "Cl Sab", "status": "processing"}),
            "status = 'processing' AND words @@ to_tsquery('simple', 'cl:* & sab:*')",
        ),
        (
            "a prefix of rarer words",
            json!({"text": "ada sam1"}),
            "words @@ to_tsquery('simple', 'ada:* & sam1:*')",
        ),
        (
            "a word the parser splits beside a common one",
            json!({"text": "LN-7 Sabine"}),
            "words @@ to_tsquery('simple', '''LN-7'':* & sabine:*')",
        ),
        (
            "nothing has both",
            json!({"text": "Sable Sabine"}),
            "words @@ to_tsquery('simple', 'sable:* & sabine:*')",
        ),
        (
            "one word (no bound tried)",
            json!({"text": "Sabi"}),
            "words @@ to_tsquery('simple', 'sabi:*')",
        ),
    ];
    let capped = ask_each(&team, &server, &viewer, &questions).await;
    assert_eq!(capped, 2, "two questions past the cap");
    server.stop().await.unwrap();
}

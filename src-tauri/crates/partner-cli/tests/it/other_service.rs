//! `partner products|transactions|token` run as processes against a second, independent
//! implementation of the service (`partner_testkit::OtherService`): what the spec leaves open
//! is answered differently there than by our sandbox (issue #23).

use crate::{partner, text};
use partner_testkit::{Dialect, ErrorShape, OtherService, RetryAfter, Seed};
use std::process::Output;

fn json_of(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn products_list_reads_a_service_without_created() {
    let service = OtherService::start(Dialect::minimal()).await;
    let listed = json_of(&partner(&service, &["products", "list", "--output", "json"], &[]).await);
    assert_eq!(
        listed,
        serde_json::Value::Array(service.products()),
        "the service's own objects"
    );
    let table = partner(&service, &["products", "list"], &[]).await;
    assert!(table.status.success(), "{}", text(&table.stderr));
    assert!(text(&table.stdout).contains("other-product-1"));
    let transactions = partner(&service, &["transactions", "list", "--all"], &[]).await;
    assert!(
        transactions.status.success(),
        "{}",
        text(&transactions.stderr)
    );
    assert!(text(&transactions.stderr).contains("30 items"));
}

#[tokio::test]
async fn unknown_fields_reach_json_and_csv_unchanged() {
    let service = OtherService::start(Dialect::extra()).await;
    let id = service.products()[0]["id"].as_str().unwrap().to_owned();
    let product =
        json_of(&partner(&service, &["products", "get", &id, "--output", "json"], &[]).await);
    assert_eq!(product, service.products()[0]);
    assert_eq!(product["status"], "approved-pending");
    let csv = partner(
        &service,
        &["transactions", "list", "--limit", "5", "--output", "csv"],
        &[],
    )
    .await;
    assert!(csv.status.success(), "{}", text(&csv.stderr));
    let header = text(&csv.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(header.contains("priority"), "an unknown column: {header}");
    let events = partner(
        &service,
        &["transactions", "events", &service.transaction_ids()[2]],
        &[],
    )
    .await;
    assert!(events.status.success(), "{}", text(&events.stderr));
    assert!(text(&events.stdout).contains("urn:vendor:escalation:opened"));
    let token = partner(&service, &["token", "introspect", "--output", "json"], &[]).await;
    assert!(token.status.success(), "{}", text(&token.stderr));
}

#[tokio::test]
async fn an_all_walk_waits_out_rate_limits_and_says_so() {
    let service = OtherService::start_with(
        Dialect::rate_limited(3, 429, RetryAfter::Seconds(1)),
        Seed {
            products: 1,
            transactions: 17,
        },
    )
    .await;
    let output = partner(
        &service,
        &[
            "transactions",
            "list",
            "--all",
            "--limit",
            "5",
            "--output",
            "json",
        ],
        &[],
    )
    .await;
    let walked: Vec<String> = json_of(&output)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(walked, service.transaction_ids(), "none lost, none twice");
    assert!(
        text(&output.stderr).contains("waiting 1 s: rate limited"),
        "{}",
        text(&output.stderr)
    );
}

#[tokio::test]
async fn errors_are_printed_in_the_service_s_words() {
    for (shape, words) in [
        (ErrorShape::Problem, "Not Found: no product with that id"),
        (ErrorShape::Html, "no product with that id"),
        (ErrorShape::Empty, "empty body"),
    ] {
        let service = OtherService::start(Dialect::errors(shape)).await;
        let output = partner(&service, &["products", "get", "no-such-product"], &[]).await;
        assert_eq!(output.status.code(), Some(1), "{shape:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains(words), "{shape:?}: {stderr}");
        assert!(!stderr.contains(service.client_secret().expose()));
    }
}

/// Which keys a service sorts by is not in the spec: `--sort` sends any well-formed key, and a
/// refusal is printed in the service's words (not the sandbox's list of keys).
#[tokio::test]
async fn any_well_formed_sort_key_is_sent_and_the_service_judges_it() {
    let service = OtherService::start(Dialect::narrow_sorts()).await;
    let refused = partner(
        &service,
        &["transactions", "list", "--sort", "-updated"],
        &[],
    )
    .await;
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("sorting by 'updated' is not supported"),
        "the service's words: {}",
        text(&refused.stderr)
    );
    let before = service.api_calls();
    let malformed = partner(
        &service,
        &["transactions", "list", "--sort", "created,,id"],
        &[],
    )
    .await;
    assert!(!malformed.status.success());
    assert!(text(&malformed.stderr).contains("empty key"));
    assert_eq!(service.api_calls(), before, "refused before sending");

    // A key the sandbox does not have, on a service that sorts by it.
    let wide = OtherService::start(Dialect::extra()).await;
    let listed = json_of(
        &partner(
            &wide,
            &[
                "products",
                "list",
                "--sort",
                "-listingName",
                "--output",
                "json",
            ],
            &[],
        )
        .await,
    );
    assert!(listed.as_array().is_some_and(|a| !a.is_empty()));
    let by_own_key = partner(&wide, &["transactions", "list", "--sort", "priority"], &[]).await;
    assert_eq!(by_own_key.status.code(), Some(1));
    assert!(
        text(&by_own_key.stderr).contains("sorting by 'priority' is not supported"),
        "sent, and refused in the service's words: {}",
        text(&by_own_key.stderr)
    );
}

#[tokio::test]
async fn verbose_prints_each_call_and_curl_prints_it_without_a_secret() {
    let service = OtherService::start(Dialect::rate_limited(2, 429, RetryAfter::Seconds(1))).await;
    let output = partner(
        &service,
        &[
            "--verbose",
            "--curl",
            "transactions",
            "list",
            "--all",
            "--limit",
            "10",
        ],
        &[],
    )
    .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    let calls: Vec<&str> = stderr.lines().filter(|l| l.starts_with("call: ")).collect();
    assert!(
        calls[0].starts_with("call: POST /oauth2/v1/token 2"),
        "{stderr}"
    );
    assert!(
        calls
            .iter()
            .any(|l| l.starts_with("call: GET /partner/v2/transactions?")
                && l.contains(" wait")
                && !l.contains("retr")),
        "a rate-limited page waited: {stderr}"
    );
    assert!(
        calls
            .iter()
            .all(|l| l.contains("request id x-request-id=other-")),
        "{stderr}"
    );
    assert!(
        stderr.contains("Authorization: Bearer ${PARTNER_TOKEN}"),
        "{stderr}"
    );
    assert!(
        stderr.contains("-u \"${PARTNER_CLIENT_ID}:${PARTNER_CLIENT_SECRET}\""),
        "{stderr}"
    );
    partner_testkit::leaks::assert_no_secret(
        "partner --verbose --curl",
        &stderr,
        "the client secret",
        service.client_secret().expose(),
    );
    let quiet = partner(&service, &["transactions", "list"], &[]).await;
    assert!(!text(&quiet.stderr).contains("call: "), "only when asked");
}

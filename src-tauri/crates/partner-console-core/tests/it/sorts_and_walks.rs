//! Issue #23, part 3, through the app's services: which sort keys a service takes (learnt and
//! remembered per connection), walks that wait out rate limits and say so, walks by `updated`
//! that fall back to reading everything where a service does not sort so, and the support copy
//! of a service that sends only ids, or fields and values the console has never seen.
use crate::harness::{form, Headless};
use partner_console_core::services::{listings, missed, support};
use partner_console_core::{AppEvent, ErrorKind};
use partner_testkit::other_service::{Dialect, OtherService, RetryAfter, Seed};

fn page(sort: &str, try_refused: bool) -> partner_console_core::bridge::PageQuery {
    form(serde_json::json!({"start": 0, "limit": 10, "sort": sort, "tryRefused": try_refused}))
}

#[tokio::test]
async fn the_sandbox_s_keys_are_checked_before_sending_and_another_service_judges_its_own() {
    let app = Headless::start().await;
    // The embedded sandbox: its keys are known, so an unknown one never leaves the app.
    let keys = listings::sort_keys(app.console.state());
    assert!(keys.known);
    let refused = listings::transactions(app.console.state(), &page("colour", false))
        .await
        .expect_err("not a key of the sandbox");
    assert_eq!(refused.kind, ErrorKind::InvalidInput, "{refused:?}");
    assert!(
        refused.message.contains("cannot be sorted on"),
        "{refused:?}"
    );

    // Another service: any well-formed key is sent, and it says what it takes.
    let service = OtherService::start(Dialect::narrow_sorts()).await;
    app.connect_to(&service).await;
    let keys = listings::sort_keys(app.console.state());
    assert!(!keys.known);
    assert!(keys.tried_transactions.is_empty(), "nothing tried yet");
    let sorted = listings::transactions(app.console.state(), &page("-created", false))
        .await
        .expect("a key this service takes");
    assert_eq!(sorted.items.len(), 10);
    let malformed = listings::transactions(app.console.state(), &page("created,,id", false))
        .await
        .expect_err("the syntax is checked before sending");
    assert_eq!(malformed.kind, ErrorKind::InvalidInput);

    let before = service.api_calls();
    let refused = listings::transactions(app.console.state(), &page("status", false))
        .await
        .expect_err("not a key of this service");
    assert_eq!(refused.status, Some(400));
    assert!(
        refused
            .message
            .contains("sorting by 'status' is not supported"),
        "the service's words: {refused:?}"
    );
    assert_eq!(service.api_calls(), before + 1, "sent once");

    // The headers learn which is which, and the connection keeps it.
    let keys = listings::sort_keys(app.console.state());
    let standing = |key: &str| {
        keys.tried_transactions
            .iter()
            .find(|k| k.key == key)
            .map(|k| k.refusal.clone())
    };
    assert_eq!(standing("created"), Some(None), "accepted");
    assert!(
        standing("status")
            .flatten()
            .is_some_and(|words| words.contains("not supported")),
        "refused in the service's words: {keys:?}"
    );
    assert_eq!(standing("id"), None, "not tried yet");
    let active = app.console.status().active.expect("active").id;
    let saved = {
        let inner = app.console.state().lock();
        inner.settings.connection(&active).cloned().expect("saved")
    };
    assert!(saved
        .sorts_tried
        .transactions
        .refused
        .contains_key("status"));
    let on_disk = std::fs::read_to_string(app.console.state().settings_file.path()).unwrap();
    assert!(on_disk.contains("sortsTried"), "{on_disk}");

    // A refused key is not sent again unless the user asks.
    let before = service.api_calls();
    let held = listings::transactions(app.console.state(), &page("-status", false))
        .await
        .expect_err("refused before");
    assert_eq!(held.kind, ErrorKind::InvalidInput, "{held:?}");
    assert!(
        held.message.contains("refused sorting by `status` before"),
        "{held:?}"
    );
    assert_eq!(service.api_calls(), before, "nothing sent");
    let asked = listings::transactions(app.console.state(), &page("-status", true))
        .await
        .expect_err("still refused");
    assert_eq!(asked.status, Some(400));
    assert_eq!(
        service.api_calls(),
        before + 1,
        "sent because the user asked"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_search_and_an_export_wait_out_rate_limits_lose_nothing_and_say_so() {
    let app = Headless::start().await;
    let service = OtherService::start_with(
        Dialect::rate_limited(3, 429, RetryAfter::Seconds(1)),
        Seed {
            products: 1,
            transactions: 17,
        },
    )
    .await;
    app.connect_to(&service).await;
    let found = listings::search(
        &app.console,
        form(serde_json::json!({
            "searchId": "s-rate", "kind": "transactions", "sort": "", "text": "-4000-8000-"
        })),
    )
    .await
    .expect("searched");
    let ids: Vec<String> = found
        .items
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, service.transaction_ids(), "none lost, none twice");
    let said = app.events(|e| match e {
        AppEvent::SearchProgress(p) if p.search_id == "s-rate" => p.note.clone(),
        _ => None,
    });
    assert!(
        said.iter().any(|n| n == "waiting 1 s: rate limited"),
        "{said:?}"
    );

    let exported = listings::export(
        &app.console,
        form(serde_json::json!({
            "jobId": "e-rate", "kind": "transactions", "format": "json", "sort": ""
        })),
    )
    .await
    .expect("exported");
    let written: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(exported.path.unwrap()).unwrap()).unwrap();
    let ids: Vec<&str> = written.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, service.transaction_ids(), "none lost, none twice");
    let said = app.events(|e| match e {
        AppEvent::JobProgress(p) if p.job_id.as_deref() == Some("e-rate") => p.note.clone(),
        _ => None,
    });
    assert!(said.iter().any(|n| n.contains("rate limited")), "{said:?}");
    app.stop().await;
}

#[tokio::test]
async fn the_support_sync_waits_out_rate_limits_and_copies_every_transaction_once() {
    let app = Headless::start().await;
    let service = OtherService::start_with(
        Dialect::rate_limited(4, 503, RetryAfter::Seconds(1)),
        Seed {
            products: 2,
            transactions: 23,
        },
    )
    .await;
    app.connect_to(&service).await;
    let synced = support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "sync-rate", "allowProduction": true})),
    )
    .await
    .expect("synced");
    assert!(!synced.cancelled);
    assert_eq!(synced.index.transactions, 23, "{synced:?}");
    let page = support::find(
        app.console.state(),
        form(serde_json::json!({"filter": {"loan": []}, "offset": 0, "limit": 100})),
    )
    .await
    .expect("found");
    let mut ids: Vec<String> = page.items.iter().map(|t| t.id.clone()).collect();
    ids.sort();
    let mut expected = service.transaction_ids();
    expected.sort();
    assert_eq!(ids, expected, "none lost, none twice");
    let said = app.events(|e| match e {
        AppEvent::SupportSyncProgress(p) if p.job_id.as_deref() == Some("sync-rate") => {
            p.note.clone()
        }
        _ => None,
    });
    assert!(
        said.iter().any(|n| n == "waiting 1 s: service unavailable"),
        "{said:?}"
    );
    app.stop().await;
}

/// A service that sorts transactions by `created` only: the sync copies in the service's own
/// order and every refresh reads every item, and the missed check reads every transaction;
/// each says so, and the answers are the ones a service sorting by `updated` gives.
#[tokio::test]
async fn where_a_service_does_not_sort_by_updated_the_walks_say_so_and_read_everything() {
    let app = Headless::start().await;
    // Enough transactions that some come after the product's last change (the subscription
    // may not have existed before it, so the check starts there).
    let seed = Seed {
        products: 1,
        transactions: 60,
    };
    let service = OtherService::start_with(Dialect::narrow_sorts(), seed).await;
    app.connect_to(&service).await;
    let synced = support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "sync-narrow", "allowProduction": true})),
    )
    .await
    .expect("synced");
    assert_eq!(synced.index.transactions, 60, "{synced:?}");
    let again = support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "sync-narrow-2", "allowProduction": true})),
    )
    .await
    .expect("refreshed");
    assert_eq!((again.created, again.updated), (0, 0), "{again:?}");
    assert!(
        again
            .fallbacks
            .iter()
            .any(|n| n.contains("does not sort by `updated`")),
        "the result says it again once the progress is gone: {again:?}"
    );
    let said = app.events(|e| match e {
        AppEvent::SupportSyncProgress(p) => p.note.clone(),
        _ => None,
    });
    assert!(
        said.iter().any(|n| n.contains("does not sort by `updated`")
            && n.contains("sorting by 'updated' is not supported")),
        "plainly, in the service's words: {said:?}"
    );

    let since = "2026-11-02T00:00:00Z";
    let check = serde_json::json!({
        "subscriptionId": null, "since": since, "includeRecent": true, "allSubscriptions": true
    });
    let narrow = missed::find(&app.console, form(check.clone()))
        .await
        .expect("checked");
    assert!(narrow.full_walk.is_some(), "{narrow:?}");
    let progress = app.events(|e| match e {
        AppEvent::MissedProgress(p) => p.note.clone(),
        _ => None,
    });
    assert!(
        progress.iter().any(|n| n.contains("reading every item")),
        "{progress:?}"
    );

    // The same data on a service that sorts by `updated`: the same answer.
    let sorting = OtherService::start_with(Dialect::default(), seed).await;
    app.connect_to(&sorting).await;
    let sorted = missed::find(&app.console, form(check))
        .await
        .expect("checked");
    assert!(sorted.full_walk.is_none());
    assert!(!sorted.missed.is_empty(), "nothing arrived anywhere");
    let keys = |r: &partner_local::missed::MissedReport| {
        r.missed
            .iter()
            .map(|m| (m.event_id.clone(), m.resource_type))
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&narrow), keys(&sorted));
    app.stop().await;
}

/// The support copy of a service that sends only ids, and of one that sends fields and values
/// the console does not know: stored, counted, filtered and searched as sent.
#[tokio::test]
async fn the_support_copy_keeps_what_any_faithful_service_sends() {
    let app = Headless::start().await;
    let minimal = OtherService::start(Dialect::minimal()).await;
    app.connect_to(&minimal).await;
    let synced = support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "sync-min", "allowProduction": true})),
    )
    .await
    .expect("synced a service that sends only ids");
    assert_eq!(synced.index.transactions, 30);
    let all = support::find(
        app.console.state(),
        form(serde_json::json!({"filter": {"loan": []}, "offset": 0, "limit": 100})),
    )
    .await
    .expect("found");
    assert_eq!(all.items.len(), 30);
    let bare = all
        .items
        .iter()
        .find(|t| t.document.len() == 1)
        .expect("a transaction with only its id");
    assert!(bare.status.is_none() && bare.created.is_none());
    let counts = support::counts(app.console.state(), form(serde_json::json!({"loan": []})))
        .await
        .expect("counted");
    assert!(
        counts
            .by_status
            .iter()
            .any(|c| c.key == partner_index::NO_VALUE),
        "transactions without a status are counted: {counts:?}"
    );
    let missed_report = missed::find(
        &app.console,
        form(serde_json::json!({
            "subscriptionId": null, "since": "2026-11-01T00:00:00Z", "includeRecent": true,
            "allSubscriptions": true
        })),
    )
    .await
    .expect("the missed check on ids alone");
    assert_eq!(
        missed_report.transactions_without_product, 30,
        "said, not passed over: {missed_report:?}"
    );

    let extra = OtherService::start(Dialect::extra()).await;
    app.connect_to(&extra).await;
    support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "sync-extra", "allowProduction": true})),
    )
    .await
    .expect("synced a service with fields of its own");
    let found = support::find(
        app.console.state(),
        form(serde_json::json!({
            "filter": {"loan": [], "text": "kestrel"}, "offset": 0, "limit": 100
        })),
    )
    .await
    .expect("found by a word of an unknown field");
    assert_eq!(found.total, 30);
    assert!(found.items[0].document.contains_key("assignedDesk"));
    let escalated = support::find(
        app.console.state(),
        form(serde_json::json!({
            "filter": {"loan": [], "status": "escalated"}, "offset": 0, "limit": 100
        })),
    )
    .await
    .expect("filtered by a status the console does not know");
    assert!(escalated.total > 0);
    assert!(escalated
        .items
        .iter()
        .all(|t| t.document["status"] == "escalated"));
    let counts = support::counts(app.console.state(), form(serde_json::json!({"loan": []})))
        .await
        .expect("counted");
    assert!(
        counts.by_status.iter().any(|c| c.key == "on-hold"),
        "{counts:?}"
    );
    app.stop().await;
}

/// The service's count of API calls once the connection's background work (its subscriptions
/// listed for their keys) is done: the same count twice, 200 ms apart.
async fn calls_settled(service: &OtherService) -> u64 {
    let mut last = service.api_calls();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let now = service.api_calls();
        if now == last {
            return now;
        }
        last = now;
    }
}

/// A page asked in the screen's default sort (the user chose none).
fn default_page(sort: &str) -> partner_console_core::bridge::PageQuery {
    form(serde_json::json!({"start": 0, "limit": 10, "sort": sort, "defaultSort": true}))
}

/// Issue #46, item 8: the console's own default sort (`listingName`, `-created`) refused by a
/// service leaves the first screen in the service's own order with a note, never empty under an
/// error; a sort the user chose is refused as before.
#[tokio::test]
async fn a_default_sort_the_service_refuses_gives_its_own_order_with_a_note() {
    let app = Headless::start().await;
    // The sandbox sorts by both defaults: no note.
    let sandbox = listings::products(app.console.state(), &default_page("listingName"))
        .await
        .expect("the sandbox sorts by listingName");
    assert_eq!(sandbox.sort_note, None);
    assert_eq!(sandbox.sort, "listingName");

    let service = OtherService::start(Dialect::refusing_default_sorts()).await;
    app.connect_to(&service).await;
    let ids = |items: &[serde_json::Value]| -> Vec<String> {
        items
            .iter()
            .map(|item| item["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };

    // Products: refused once (400, the service's words), then asked again without `sort`.
    let before = calls_settled(&service).await;
    let first = listings::products(app.console.state(), &default_page("listingName"))
        .await
        .expect("the first screen is not an error");
    assert_eq!(
        service.api_calls(),
        before + 2,
        "refused, then asked without sort"
    );
    let own_order: Vec<String> = ids(&service.products()).into_iter().take(10).collect();
    assert_eq!(
        first.items.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
        own_order,
        "the service's own order"
    );
    assert!(!first.items.is_empty());
    assert_eq!(first.sort, "", "no sort applied");
    let note = first.sort_note.expect("a note");
    assert!(
        note.contains("this service does not sort by listingName"),
        "{note}"
    );
    // Next time the refused default is not sent again.
    let before = service.api_calls();
    let again = listings::products(app.console.state(), &default_page("listingName"))
        .await
        .expect("again");
    assert_eq!(
        service.api_calls(),
        before + 1,
        "only the page without sort"
    );
    assert!(again.sort_note.is_some());
    // A sort the user chose keeps today's behaviour: held (refused before), or sent and refused.
    let held = listings::products(app.console.state(), &page("listingName", false))
        .await
        .expect_err("the user's sort is not dropped");
    assert!(
        held.message
            .contains("refused sorting by `listingName` before"),
        "{held:?}"
    );
    let asked = listings::products(app.console.state(), &page("listingName", true))
        .await
        .expect_err("the service still refuses it");
    assert_eq!(asked.status, Some(400), "{asked:?}");
    // A default the service takes sorts as asked.
    let taken = listings::products(app.console.state(), &default_page("-name"))
        .await
        .expect("a key it takes");
    assert_eq!(taken.sort_note, None);
    assert_eq!(taken.sort, "-name");

    // Transactions: the user's `-created` is an error (the service's words) ...
    let chosen = listings::transactions(app.console.state(), &page("-created", false))
        .await
        .expect_err("the user's sort");
    assert_eq!(chosen.status, Some(400), "{chosen:?}");
    assert!(
        chosen
            .message
            .contains("sorting by 'created' is not supported"),
        "{chosen:?}"
    );
    // ... the screen's default `-created` is the service's own order with the note.
    let first = listings::transactions(app.console.state(), &default_page("-created"))
        .await
        .expect("the first screen is not an error");
    let own_order: Vec<String> = service.transaction_ids().into_iter().take(10).collect();
    assert_eq!(
        first.items.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        own_order
    );
    assert!(first
        .sort_note
        .as_deref()
        .is_some_and(|n| n.contains("this service does not sort by -created")));
    app.stop().await;
}

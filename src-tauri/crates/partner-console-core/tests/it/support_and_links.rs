//! The support desk's local copy, missed notifications, the service's delivery records,
//! links, the Demo screen's clock and jobs being cancelled, without a window.
use crate::harness::{form, Headless};
use partner_console_core::services::{deliveries, embedded, jobs, links, missed, support};
use partner_console_core::AppEvent;

#[tokio::test]
async fn the_support_copy_is_synced_and_answers_questions() {
    let app = Headless::start().await;
    let synced = support::sync(
        &app.console,
        form(serde_json::json!({"jobId": "s1", "allowProduction": false})),
    )
    .await
    .expect("synced");
    assert!(synced.filled >= 240, "{synced:?}");
    let progress = app.events(|e| match e {
        AppEvent::SupportSyncProgress(p) if p.job_id.as_deref() == Some("s1") => Some(p.done),
        _ => None,
    });
    assert!(
        !progress.is_empty(),
        "the sync's progress reached the window"
    );
    let page = support::find(
        &app.console,
        form(serde_json::json!({"filter": {"loan": []}, "offset": 0, "limit": 20})),
    )
    .await
    .expect("found");
    assert_eq!(page.items.len(), 20);
    assert!(page.total >= 240);
    let view = support::view(&app.console).await.expect("view");
    assert!(view.exists && view.filled, "{view:?}");
    support::forget(&app.console).await.expect("forgotten");
    app.stop().await;
}

#[tokio::test]
async fn the_missed_check_reports_its_progress_and_finds_nothing_missed_on_a_fresh_start() {
    let app = Headless::start().await;
    app.demo_subscribed().await;
    let report = missed::find(
        &app.console,
        form(serde_json::json!({
            "subscriptionId": null, "since": null, "includeRecent": true, "allSubscriptions": false
        })),
    )
    .await
    .expect("checked");
    assert!(report.missed.is_empty(), "{report:?}");
    let progress = app.events(|e| match e {
        AppEvent::MissedProgress(p) => Some(p.clone()),
        _ => None,
    });
    assert!(
        !progress.is_empty(),
        "the check's progress reached the window"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_embedded_sandbox_s_deliveries_are_listed_with_their_captures() {
    let app = Headless::start().await;
    let product = app.demo_product().await;
    let made = embedded::new_transaction(&app.console, product)
        .await
        .expect("made");
    let id = made.transaction_id.expect("id");
    let delivered = app
        .wait_for("its delivery record", || {
            let listed = futures::executor::block_on(deliveries::list(&app.console)).ok()?;
            listed
                .into_iter()
                // The record is listed as soon as its capture is; its attempt may be written
                // a moment later.
                .find(|d| {
                    d.resource_id == id && !d.capture_ids.is_empty() && !d.attempts.is_empty()
                })
        })
        .await;
    assert!(!delivered.attempts.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_link_opens_its_route_in_the_window() {
    let app = Headless::start().await;
    let link = links::link_to(&app.console, "transactions", "t-123", None).expect("a link");
    links::open(&app.console, vec![url::Url::parse(&link).expect("a URL")]).await;
    let routes = app.events(|e| match e {
        AppEvent::OpenLink(route) => Some(route.clone()),
        _ => None,
    });
    assert_eq!(routes, vec!["#/transactions/t-123".to_string()]);
    assert_eq!(
        links::take_pending(&app.console).as_deref(),
        Some("#/transactions/t-123")
    );
    app.stop().await;
}

#[tokio::test]
async fn the_sandbox_clock_moves_the_token_countdowns() {
    let app = Headless::start().await;
    let before = partner_console_core::services::token::now(&app.console);
    let outcome = embedded::advance_clock(&app.console, 10).expect("moved");
    let after = partner_console_core::services::token::now(&app.console);
    assert!(
        after - before >= chrono::Duration::minutes(10),
        "{outcome:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn cancelling_an_unknown_job_is_harmless() {
    let app = Headless::start().await;
    jobs::cancel(&app.console, "never-started");
    app.stop().await;
}

//! A notification's way through the console without a window: the lender acts on the embedded
//! sandbox, the service signs and sends, the listener verifies and keeps it, the window hears of
//! it in a batch, and the inspector, the detail, the signature debugger, replay, export, import,
//! clear and the listener's own switches all work on it.
use crate::harness::{form, Headless};
use partner_console_core::services::{captures, embedded, listener, missed, signatures};
use partner_console_core::AppEvent;
use partner_listener::Verdict;

#[tokio::test]
async fn a_lender_s_transaction_reaches_the_inspector_verified_and_the_window_in_a_batch() {
    let app = Headless::start().await;
    let product = app.demo_product().await;
    let made = embedded::new_transaction(&app.console, product)
        .await
        .expect("the lender's transaction");
    let transaction = made.transaction_id.expect("its id");

    let batch = app.capture_of(&transaction).await;
    assert_eq!(batch.verdict, Verdict::Valid);

    let page = app.inspector().await;
    let row = page
        .items
        .iter()
        .find(|c| c.resource_id == transaction)
        .expect("in the inspector");
    let detail = captures::detail(&app.console, row.id).expect("detail");
    assert!(detail.raw_body.contains(&transaction));
    assert!(
        matches!(
            &detail.open,
            partner_console_core::bridge::OpenResource::Transaction { transaction_id }
                if *transaction_id == transaction
        ),
        "a valid notification of this service opens its transaction: {:?}",
        detail.open
    );

    let report = signatures::report(&app.console, row.id, None).expect("report");
    assert!(report.checks.iter().any(|c| c.matches), "{report:?}");
    assert!(report
        .explanation
        .starts_with("The signature matches the current key"));

    // Replayed to the listener itself: kept as a replay, verified again.
    let replayed = listener::replay(
        &app.console,
        form(serde_json::json!({"captureId": row.id, "body": null, "target": null})),
    )
    .await
    .expect("replayed");
    assert_eq!(replayed.verdict, Some(Verdict::Valid), "{replayed:?}");

    // The replay beside the original: the same bytes, told apart by its Svc-Replay header.
    let replay = app
        .inspector()
        .await
        .items
        .into_iter()
        .find(|c| c.replayed && c.resource_id == transaction)
        .expect("the replay in the inspector");
    let compared = captures::compare(&app.console, row.id, replay.id).expect("compared");
    assert_eq!(
        compared.body,
        partner_listener::compare::BodyComparison::Identical
    );
    let marker = compared
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("svc-replay"))
        .expect("the replay's header");
    assert_eq!(
        (marker.first.as_deref(), marker.second.as_deref()),
        (None, Some("1"))
    );
    let missing = captures::compare(&app.console, row.id, 999_999).expect_err("no such capture");
    assert!(!missing.message.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn captures_are_exported_imported_and_cleared_through_the_dialogs() {
    let app = Headless::start().await;
    let product = app.demo_product().await;
    for _ in 0..3 {
        embedded::new_transaction(&app.console, product.clone())
            .await
            .expect("made");
    }
    // Each transaction is told twice (the transaction, and its "request created" event), to
    // the two subscriptions of the demo product.
    let kept = app
        .wait_for("six notifications kept", || {
            let page = futures::executor::block_on(app.inspector());
            (page.total >= 6).then_some(page.total)
        })
        .await;
    assert_eq!(kept, 6, "nothing else arrives");
    let no_filter = serde_json::json!({"verdict": null, "eventType": null, "resourceType": null,
        "subscriptionId": null, "since": null, "until": null, "text": null});
    let exported = captures::export(
        &app.console,
        form(
            serde_json::json!({"jobId": "e1", "format": "jsonl", "filter": no_filter, "ids": null}),
        ),
    )
    .await
    .expect("exported");
    assert_eq!(exported.count, kept);
    let jobs = app.events(|e| match e {
        AppEvent::JobProgress(p) if p.job_id == "e1" => Some(p.done),
        _ => None,
    });
    assert!(!jobs.is_empty(), "the export's progress reached the window");
    let written = std::path::PathBuf::from(exported.path.expect("a file"));

    let newest = app.inspector().await.items[0].id;
    let cleared = captures::clear(
        &app.console,
        form(serde_json::json!({"filter": null, "upToId": newest})),
    )
    .await
    .expect("cleared");
    assert_eq!(cleared, kept);
    assert_eq!(app.inspector().await.total, 0);

    // The open dialog offers the name an import suggests: put the export there.
    std::fs::rename(&written, app.dialogs.join("captures.jsonl")).expect("moved");
    let imported = captures::import(&app.console, "i1".into())
        .await
        .expect("imported");
    assert_eq!(imported.count, kept);
    assert!(!imported.cancelled);
    assert_eq!(app.inspector().await.total, kept);
    // It ended once the search index covered what it brought, and said so meanwhile.
    let store = app.console.state().captures().expect("the store");
    assert_eq!(store.search_backlog().expect("the backlog"), 0);
    let notes = app.events(|e| match e {
        AppEvent::JobProgress(p) if p.job_id == "i1" => p.note.clone(),
        _ => None,
    });
    assert!(
        notes.iter().any(|n| n == "indexing for search"),
        "{notes:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_listener_is_stopped_started_and_moved_and_its_view_follows() {
    let app = Headless::start().await;
    assert!(listener::view(&app.console).running);
    listener::stop(&app.console);
    assert!(!listener::view(&app.console).running);
    assert!(!app.console.status().listener.running);
    listener::start(&app.console).await.expect("started");
    assert!(listener::view(&app.console).running);
    listener::move_to(
        &app.console,
        form(serde_json::json!({"address": "127.0.0.1:0", "path": "/hooks"})),
    )
    .await
    .expect("moved");
    let view = listener::view(&app.console);
    assert!(view.running);
    assert!(
        view.path == "/hooks" && view.port.is_some_and(|p| p != 0),
        "{view:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_missed_notification_sent_again_is_the_service_s_own_bytes_marked_as_a_recovery() {
    let app = Headless::start().await;
    let (transaction, original) = app.new_transaction_notified().await;
    let detail = captures::detail(&app.console, original.id).expect("detail");
    let sent: serde_json::Value = serde_json::from_str(&detail.raw_body).expect("JSON");
    // What the missed check would report for it, had it never arrived.
    let missed = serde_json::json!({
        "subscriptionId": original.subscription_id,
        "productId": "p",
        "productName": sent["meta"]["instanceId"],
        "resourceType": sent["meta"]["resourceType"],
        "eventType": sent["eventType"],
        "eventId": sent["eventId"],
        "resourceId": sent["meta"]["resourceId"],
        "resourceRef": sent["meta"]["resourceRef"],
        "transactionId": transaction,
        "sentAt": sent["eventTime"],
    });
    let report = missed::resend(
        &app.console,
        form(serde_json::json!({"notifications": [missed.clone()], "target": null})),
    )
    .await
    .expect("sent again");
    assert!(!report.cancelled);
    assert_eq!(report.outcomes.len(), 1);
    let outcome = &report.outcomes[0];
    assert!(
        outcome.acknowledged && outcome.status == Some(200),
        "{outcome:?}"
    );
    assert_eq!(outcome.event_id, original.event_id);

    let recovery = app
        .wait_for("the recovery in the inspector", || {
            futures::executor::block_on(app.inspector())
                .items
                .into_iter()
                .find(|c| c.replayed && c.resource_id == transaction)
        })
        .await;
    assert_eq!(
        recovery.verdict,
        Verdict::Valid,
        "signed with the subscription's key"
    );
    let compared = captures::compare(&app.console, original.id, recovery.id).expect("compared");
    assert_eq!(
        compared.body,
        partner_listener::compare::BodyComparison::Identical,
        "rebuilt byte for byte as the service sent it"
    );
    let marker = compared
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("svc-replay"))
        .expect("the recovery's header");
    assert_eq!(marker.second.as_deref(), Some("recovery"));

    // Nothing chosen, or a target that is not a URL: said, nothing sent.
    let none = missed::resend(
        &app.console,
        form(serde_json::json!({"notifications": [], "target": null})),
    )
    .await
    .expect_err("nothing to send");
    assert!(none.message.contains("Choose"), "{none:?}");
    let bad = missed::resend(
        &app.console,
        form(serde_json::json!({"notifications": [missed], "target": "ftp://example.test/hooks"})),
    )
    .await
    .expect_err("not an http URL");
    assert!(bad.message.contains("http"), "{bad:?}");
    app.stop().await;
}

#[tokio::test]
async fn did_they_get_it_every_notification_of_a_transaction_as_one_timeline() {
    use partner_console_core::bridge::StoryStep;
    use partner_console_core::services::transaction_notifications;
    let app = Headless::start().await;
    let (transaction, original) = app.new_transaction_notified().await;
    listener::replay(
        &app.console,
        form(serde_json::json!({"captureId": original.id, "body": null, "target": null})),
    )
    .await
    .expect("replayed");

    // The replay's capture is stored a moment after its answer: read until it is there.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let story = loop {
        let timeline = transaction_notifications::timeline(&app.console, &transaction)
            .await
            .expect("timeline");
        assert!(timeline.captures_note.is_none(), "{timeline:?}");
        assert!(timeline.deliveries_note.is_none(), "{timeline:?}");
        let found = timeline.notifications.into_iter().find(|n| {
            n.event_id == original.event_id
                && n.resource_type == "urn:svc:partner:transaction"
                && n.entries
                    .iter()
                    .any(|e| e.step == StoryStep::ReplayCaptured)
                && n.entries
                    .iter()
                    .any(|e| e.step == StoryStep::ServiceAttempt)
        });
        if let Some(story) = found {
            break story;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the transaction's notification with its replay"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(story.outcome, "delivered", "{story:?}");
    assert_eq!(story.event_type, "created");
    let steps: Vec<StoryStep> = story.entries.iter().map(|e| e.step).collect();
    let position = |step| steps.iter().position(|s| *s == step).expect("a step");
    assert!(
        position(StoryStep::ServiceAttempt) < position(StoryStep::Captured)
            && position(StoryStep::Captured) < position(StoryStep::Replayed),
        "in time order: {steps:?}"
    );
    let captured = &story.entries[position(StoryStep::Captured)];
    assert_eq!(
        (captured.capture_id, captured.status, captured.verdict),
        (Some(original.id), Some(200), Some(Verdict::Valid))
    );

    // The event's own notification (transaction:event) is there too, and nothing of another
    // transaction is.
    let timeline = transaction_notifications::timeline(&app.console, &transaction)
        .await
        .expect("timeline");
    assert!(timeline
        .notifications
        .iter()
        .any(|n| n.resource_type == "urn:svc:partner:transaction:event"));

    // The evidence for a ticket: the transaction and its events as sent, and the timeline.
    let saved = transaction_notifications::save_evidence(&app.console, &transaction)
        .await
        .expect("saved");
    let path = saved.path.expect("a file");
    assert!(path.starts_with(app.dialogs.to_str().unwrap()), "{path}");
    let text = std::fs::read_to_string(&path).expect("written");
    let evidence: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(evidence["kind"], "partner-console transaction evidence");
    assert_eq!(evidence["transaction"]["id"], transaction.as_str());
    assert!(!evidence["events"].as_array().expect("events").is_empty());
    assert_eq!(
        evidence["notifications"]["notifications"]
            .as_array()
            .expect("the timeline")
            .len() as u64,
        saved.count
    );
    assert!(saved.count >= 2);
    assert!(
        !text.to_ascii_lowercase().contains("svc-signature"),
        "no header, no signature"
    );
    let other = embedded::new_transaction(&app.console, app.demo_product().await)
        .await
        .expect("another")
        .transaction_id
        .expect("its id");
    app.capture_of(&other).await;
    let again = transaction_notifications::timeline(&app.console, &transaction)
        .await
        .expect("timeline");
    assert_eq!(again.notifications.len(), timeline.notifications.len());
    let unknown = transaction_notifications::timeline(&app.console, "  ")
        .await
        .expect_err("no id");
    assert!(unknown.message.contains("Name the transaction"));
    app.stop().await;
}

#[tokio::test]
async fn the_shown_captures_sent_again_to_a_receiver_paced_with_each_answer_kept() {
    use partner_console_core::services::send_again;
    use partner_testkit::{Reply, TestReceiver};
    let app = Headless::start().await;
    let (_, first) = app.new_transaction_notified().await;
    let (_, second) = app.new_transaction_notified().await;
    let mut receiver = TestReceiver::start([Reply::Status(200), Reply::Status(503)])
        .await
        .expect("a receiver");
    let report = send_again::send_again(
        &app.console,
        form(serde_json::json!({
            "jobId": "again-1",
            "filter": {"verdict": null, "eventType": null, "resourceType": null,
                       "subscriptionId": null, "since": null, "until": null, "text": null,
                       "ids": [first.id, second.id]},
            "ids": null,
            "target": receiver.url(),
            "concurrency": 1,
            "perSecond": 50.0,
            "resign": true,
        })),
    )
    .await
    .expect("sent");
    assert!(!report.cancelled);
    let ids: Vec<i64> = report.sent.iter().map(|s| s.capture_id).collect();
    assert_eq!(ids, [first.id, second.id], "oldest first");
    assert!(report.sent.iter().all(|s| s.resigned), "{report:?}");
    assert_eq!(report.sent[0].failure, None);
    assert_eq!(
        report.sent[1].failure.as_deref(),
        Some("answered 503, expected 2xx, 3xx")
    );
    let received = receiver.take(2, std::time::Duration::from_secs(10)).await;
    assert_eq!(received.len(), 2);
    assert!(received.iter().all(|r| r.header("svc-replay") == Some("1")));
    // Each answer is kept beside its capture, as a replay's is.
    let detail = captures::detail(&app.console, second.id).expect("detail");
    assert!(
        detail
            .outbound
            .iter()
            .any(|o| o.status == Some(503) && o.url.starts_with(&receiver.url())),
        "{:?}",
        detail.outbound
    );
    let progress = app.events(|e| match e {
        AppEvent::JobProgress(p) if p.job_id == "again-1" => Some(p.done),
        _ => None,
    });
    assert_eq!(progress.last(), Some(&2));

    // Mistakes are said, nothing sent.
    for (concurrency, rate, target, words) in [
        (0, None, None, "at a time"),
        (4, Some(0.0), None, "per second"),
        (4, None, Some("ftp://example.test/"), "http"),
    ] {
        let refused = send_again::send_again(
            &app.console,
            form(serde_json::json!({
                "jobId": "again-2", "filter": {}, "ids": null, "target": target,
                "concurrency": concurrency, "perSecond": rate, "resign": false,
            })),
        )
        .await
        .expect_err("refused");
        assert!(refused.message.contains(words), "{refused:?}");
    }
    assert!(receiver.drain().is_empty());
    app.stop().await;
}

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
    let row_id = row.id;
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

    // What the window's commands run these through: the same answer and the same error, read
    // on the blocking pool rather than on the thread that asked (the window's, in the app).
    let asking_thread = std::thread::current().id();
    let (off_thread, through_pool) = app
        .console
        .blocking(move |console| {
            let detail = captures::detail(console, row_id)?;
            Ok((std::thread::current().id(), detail))
        })
        .await
        .expect("detail through the blocking pool");
    assert_ne!(off_thread, asking_thread);
    assert_eq!(through_pool.raw_body, detail.raw_body);
    let missing_there = app
        .console
        .blocking(move |console| captures::compare(console, row_id, 999_999))
        .await
        .expect_err("no such capture, through the blocking pool");
    assert_eq!(missing_there.message, missing.message);
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
        AppEvent::JobProgress(p) if p.job_id.as_deref() == Some("e1") => Some(p.done),
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
    // It ended with the search index covering what it brought, indexed as it was imported:
    // no catch-up after it to wait for or to show.
    let store = app.console.state().captures().expect("the store");
    assert_eq!(store.search_backlog().expect("the backlog"), 0);
    let notes = app.events(|e| match e {
        AppEvent::JobProgress(p) if p.job_id.as_deref() == Some("i1") => p.note.clone(),
        _ => None,
    });
    assert!(
        !notes.iter().any(|n| n == "indexing for search"),
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
        AppEvent::JobProgress(p) if p.job_id.as_deref() == Some("again-1") => Some(p.done),
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

#[tokio::test]
async fn a_notification_s_life_is_drawn_from_its_capture_and_its_transaction_and_exported() {
    use partner_console_core::bridge::{PictureFormat, PictureOf};
    use partner_console_core::services::picture;
    let app = Headless::start().await;
    let (transaction, original) = app.new_transaction_notified().await;
    let of_capture = PictureOf::Capture {
        capture_id: original.id,
    };
    // The service marks the record delivered a moment after the listener's answer.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let drawn = loop {
        let drawn = picture::draw(&app.console, of_capture.clone())
            .await
            .expect("drawn")
            .expect("known");
        if drawn.story.outcome == "delivered" {
            break drawn;
        }
        assert!(tokio::time::Instant::now() < deadline, "{:?}", drawn.story);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let svg = &drawn.svg;
    assert!(
        svg.contains(r#"data-lanes="lender service network listener""#),
        "{svg}"
    );
    assert!(
        svg.contains(
            r#"data-step="attempt" data-attempt="1" data-status="200" data-verdict="valid""#
        ),
        "{svg}"
    );
    assert!(svg.contains("✓ valid, current key"));
    assert!(svg.contains("var(--ink"), "coloured by the window's theme");
    assert_eq!(drawn.story.event_id, original.event_id);

    // The same notification named as the transaction's timeline names it, and the newest of the
    // transaction's (the Demo's live picture).
    let named = picture::draw(
        &app.console,
        PictureOf::Notification {
            subscription_id: drawn.story.subscription_id.clone(),
            resource_type: drawn.story.resource_type.clone(),
            event_id: drawn.story.event_id.clone(),
        },
    )
    .await
    .expect("drawn")
    .expect("known");
    assert_eq!(named.svg, drawn.svg);
    let newest = picture::draw(
        &app.console,
        PictureOf::NewestOfTransaction {
            transaction_id: transaction.clone(),
        },
    )
    .await
    .expect("drawn")
    .expect("the transaction has notifications");
    assert!(newest.svg.contains(r#"data-step="attempt""#));
    let unknown = picture::draw(
        &app.console,
        PictureOf::Notification {
            subscription_id: "nobody".into(),
            resource_type: "urn:svc:partner:transaction".into(),
            event_id: "never-sent".into(),
        },
    )
    .await
    .expect("asked");
    assert!(unknown.is_none(), "nothing is known of it");

    // Exported for slides: fixed colours, and a PNG twice the size.
    let svg_file = picture::export(&app.console, of_capture.clone(), PictureFormat::Svg)
        .await
        .expect("exported");
    let written = std::fs::read_to_string(svg_file.path.expect("a file")).expect("read");
    assert!(written.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
    assert!(!written.contains("var(--"), "no theme variable in a file");
    let png_file = picture::export(&app.console, of_capture.clone(), PictureFormat::Png)
        .await
        .expect("exported");
    let png = std::fs::read(png_file.path.expect("a file")).expect("read");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes"));
    assert_eq!((size(16), size(20)), (drawn.width * 2, drawn.height * 2));

    // The partner answers the service and a fault bites on the way: the console does not send
    // a write twice on its own, so the 429 is the answer, and the picture shows it beside the
    // answer that went through when the partner tried again.
    partner_console_core::services::faults::add(
        &app.console,
        form(serde_json::json!({
            "endpoint": "transactions", "status": 429, "retryAfterSeconds": 1,
            "latencyMs": null, "drop": false, "count": 1
        })),
    )
    .await
    .expect("a fault");
    let respond = || {
        partner_console_core::services::transactions::respond(
            &app.console,
            form(serde_json::json!({
                "transactionId": transaction,
                "response": serde_json::json!({"status": "processing"}).to_string(),
                "confirm": null,
            })),
        )
    };
    let bitten = respond().await.expect_err("the fault's 429");
    assert_eq!(bitten.status, Some(429));
    respond().await.expect("answered the second time");
    let answered = picture::draw(&app.console, of_capture.clone())
        .await
        .expect("drawn")
        .expect("known")
        .svg;
    let answers: Vec<&str> = answered
        .match_indices(r#"data-step="answer""#)
        .map(|(at, _)| &answered[at..at + answered[at..].find('>').expect("a tag")])
        .collect();
    assert_eq!(
        answers,
        [
            r#"data-step="answer" data-attempts="1" data-waited-ms="0" data-status="429""#,
            r#"data-step="answer" data-attempts="1" data-waited-ms="0" data-status="200""#,
        ],
        "{answered}"
    );
    assert!(answered.contains("your app: respond: processing"));
    assert!(
        answered.contains("429 Too Many Requests: rate limited"),
        "{answered}"
    );

    let missing = picture::draw(
        &app.console,
        PictureOf::Capture {
            capture_id: 999_999,
        },
    )
    .await
    .expect_err("no such capture");
    assert!(!missing.message.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn desktop_notices_are_opt_in_and_a_burst_of_failed_verifications_is_told_once_then_summed() {
    use partner_console_core::services::desktop_notices;
    use partner_console_core::{notices, NoticeKind};
    let app = Headless::start().await;
    let url = app.console.state().listener().expect("listening").url();
    let http = reqwest::Client::new();
    let post_unsigned = || async {
        http.post(&url)
            .header("content-type", "application/json")
            .body(r#"{"eventId":"e","eventType":"created"}"#)
            .send()
            .await
            .expect("answered")
    };
    // Every failed verification told to the window, counted, so the test knows it was seen.
    let failed_told = || {
        app.events(|e| match e {
            AppEvent::Captures(batch) => Some(
                batch
                    .captures
                    .iter()
                    .filter(|c| c.verdict != Verdict::Valid)
                    .count(),
            ),
            _ => None,
        })
        .into_iter()
        .sum::<usize>()
    };

    // Off until the user turns it on.
    post_unsigned().await;
    app.wait_for("the first failure in a batch", || {
        (failed_told() == 1).then_some(())
    })
    .await;
    notices::missed_found(&app.console, 3);
    notices::receiver_check_ended(
        &app.console,
        "https://r.example",
        &["signature-verified".into()],
    );
    assert!(app.sink.notices().is_empty(), "{:?}", app.sink.notices());

    let on = desktop_notices::set(
        &app.console,
        partner_local::DesktopNotices {
            failed_verification: true,
            receiver_check_failed: true,
            missed_found: true,
        },
    )
    .expect("saved");
    assert_eq!(desktop_notices::get(&app.console), on);

    post_unsigned().await;
    let first = app
        .wait_for("a notice", || app.sink.notices().first().cloned())
        .await;
    assert_eq!(first.kind, NoticeKind::FailedVerification);
    assert_eq!(first.title, "A notification failed verification");
    assert!(first.body.starts_with("1 missing signature"), "{first:?}");

    // Two more within the quiet time: held, then told as one.
    post_unsigned().await;
    post_unsigned().await;
    app.wait_for("both in batches", || (failed_told() == 4).then_some(()))
        .await;
    assert_eq!(app.sink.notices().len(), 1, "held back");
    let deadline = tokio::time::Instant::now()
        + notices::VERIFICATION_QUIET
        + std::time::Duration::from_secs(5);
    let second = loop {
        if let Some(notice) = app.sink.notices().get(1).cloned() {
            break notice;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the held failures were told"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(second.title, "2 notifications failed verification");
    assert!(second.body.starts_with("2 missing signature"), "{second:?}");

    notices::missed_found(&app.console, 0);
    notices::missed_found(&app.console, 3);
    notices::receiver_check_ended(&app.console, "https://r.example", &[]);
    notices::receiver_check_ended(
        &app.console,
        "https://r.example",
        &["signature-verified".into()],
    );
    let told: Vec<(NoticeKind, String)> = app.sink.notices()[2..]
        .iter()
        .map(|n| (n.kind, n.title.clone()))
        .collect();
    assert_eq!(
        told,
        vec![
            (
                NoticeKind::MissedFound,
                "3 notifications never arrived".to_string()
            ),
            (
                NoticeKind::ReceiverCheckFailed,
                "Receiver check: 1 rule failed".to_string()
            ),
        ]
    );
    // Kept in the settings file, as every setting is.
    let restarted = app.restart().await;
    assert!(desktop_notices::get(&restarted.console).failed_verification);
    restarted.stop().await;
}

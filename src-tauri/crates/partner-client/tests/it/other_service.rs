//! The client against a second, independent implementation of the service
//! (`partner_testkit::OtherService`), in each of its dialects: what the spec leaves open is
//! answered differently there than by our sandbox, and the client must read it all.

use futures::StreamExt;
use partner_api::read::{self, Document, Open};
use partner_api::{signing_key, EventType, ResourceType, ResponseStatus, Secret, SortSpec};
use partner_client::{
    ClientError, ConnectionConfig, ErrorKind, MemoryStore, NewSubscription, PageRequest,
    PagerOptions, PartnerClient, SecretStore,
};
use partner_testkit::{Compression, Dialect, ErrorShape, OtherService, RetryAfter, Seed};
use serde_json::Value;
use std::sync::Arc;

fn client_of(service: &OtherService) -> PartnerClient {
    let config = ConnectionConfig::new(
        &service.base_url(),
        service.client_id(),
        service.client_secret().clone(),
    )
    .unwrap();
    PartnerClient::new(config).unwrap()
}

async fn all_products(client: &PartnerClient) -> Vec<Document<read::ProductView>> {
    client
        .pager::<read::ProductView>(SortSpec::default(), PagerOptions::default())
        .unwrap()
        .map(|item| item.unwrap())
        .collect()
        .await
}

async fn all_transactions(
    client: &PartnerClient,
    options: PagerOptions,
) -> Vec<Document<read::TransactionView>> {
    client
        .pager::<read::TransactionView>(SortSpec::default(), options)
        .unwrap()
        .map(|item| item.unwrap())
        .collect()
        .await
}

#[tokio::test]
async fn a_minimal_service_is_read_without_the_sandbox_s_extra_fields() {
    let service = OtherService::start(Dialect::minimal()).await;
    let client = client_of(&service);

    let products = all_products(&client).await;
    assert_eq!(products.len(), 3);
    for (listed, sent) in products.iter().zip(service.products()) {
        assert_eq!(listed.created, None, "no `created` is no error (issue #23)");
        assert_eq!(
            serde_json::to_value(listed).unwrap(),
            sent,
            "the document is the service's, field for field"
        );
    }
    let one = client.get_product(&products[1].id).await.unwrap();
    assert_eq!(one.id, products[1].id);
    assert!(one.may_be_production() || one.environment.as_deref() == Some("sandbox"));

    let transactions = all_transactions(&client, PagerOptions::default()).await;
    assert_eq!(
        transactions
            .iter()
            .map(|t| t.id.clone())
            .collect::<Vec<_>>(),
        service.transaction_ids()
    );
    let bare = &transactions[3];
    assert_eq!(
        (bare.status.as_ref(), bare.created, bare.request_type()),
        (None, None, None),
        "only `id` is given"
    );
    let fetched = client.get_transaction(&bare.id).await.unwrap();
    assert_eq!(fetched.raw(), bare.raw());
    let events = client.list_events(&bare.id).await.unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].event_type, None, "an event with its id alone");
    let event = client.get_event(&bare.id, &events[1].id).await.unwrap();
    assert_eq!(event.raw(), events[1].raw());
}

#[tokio::test]
async fn unknown_fields_and_values_are_kept_as_sent() {
    let service = OtherService::start(Dialect::extra()).await;
    let client = client_of(&service);

    let products = all_products(&client).await;
    let sent = service.products();
    for (listed, sent) in products.iter().zip(&sent) {
        assert_eq!(&serde_json::to_value(listed).unwrap(), sent);
    }
    let first = &products[0];
    assert_eq!(first.status.as_deref(), Some("approved-pending"));
    assert_eq!(first.environment.as_deref(), Some("prod"));
    assert!(
        first.may_be_production(),
        "an unknown environment is read as production"
    );
    assert_eq!(first.extension_limit, Some(0), "a number sent as a string");
    assert_eq!(first.interface_url, None, "null is absent");
    assert_eq!(
        first.created,
        read::parse_instant("2026-11-02T09:00:00Z"),
        "an offset and a fraction"
    );
    assert_eq!(first.raw()["region"], Value::from("eu-west"));
    assert_eq!(first.credentials[0].kind.as_deref(), Some("secret-string"));
    assert_eq!(first.credentials[0].minimum, Some(8));
    let documents = first
        .webhooks
        .iter()
        .find(|w| w.subscription_id.as_deref() == Some("sub-0-documents"))
        .unwrap();
    assert_eq!(
        documents.resource,
        Some(Open::Other("urn:svc:partner:document".into()))
    );
    let transactions_hook = &first.webhooks[0];
    assert_eq!(
        transactions_hook.events,
        vec![
            Open::Known(EventType::Created),
            Open::Known(EventType::Updated),
            Open::Other("archived".into())
        ]
    );

    let transactions = all_transactions(&client, PagerOptions::default()).await;
    let on_hold = transactions
        .iter()
        .find(|t| t.status.as_ref().map(Open::as_str) == Some("on-hold"))
        .unwrap();
    assert_eq!(
        serde_json::to_value(on_hold.status.as_ref().unwrap()).unwrap(),
        Value::from("on-hold"),
        "an unknown status serialises back as sent"
    );
    let partial = transactions
        .iter()
        .find(|t| t.response_status().map(Open::as_str) == Some("partiallyCompleted"))
        .unwrap();
    assert!(
        !partial.is_locked() && partial.may_be_locked(),
        "unknown: may be final"
    );
    let completed = transactions
        .iter()
        .find(|t| t.response_status() == Some(&Open::Known(ResponseStatus::Completed)))
        .unwrap();
    assert!(completed.is_locked());
    let reissue = transactions
        .iter()
        .find(|t| t.request_type() == Some("REISSUE_REQUEST"))
        .unwrap();
    assert_eq!(reissue.raw()["request"]["channel"], Value::from("api"));
    let events = client.list_events(&partial.id).await.unwrap();
    assert_eq!(
        events[1].event_type.as_deref(),
        Some("urn:vendor:escalation:opened")
    );
    assert_eq!(events[1].comments, None);
    assert!(events[1].sent.is_some());
    assert_eq!(events[1].raw()["severity"], Value::from("high"));
}

#[tokio::test]
async fn tokens_are_issued_introspected_and_revoked_in_every_dialect() {
    for dialect in [Dialect::default(), Dialect::minimal(), Dialect::extra()] {
        let service = OtherService::start(dialect).await;
        let client = client_of(&service);
        let token = client.tokens().bearer().await.unwrap();
        assert!(service.token_is_active(token.expose()), "{dialect:?}");
        let introspection = client.tokens().introspect().await.unwrap();
        assert!(introspection.active, "{dialect:?}");
        assert_eq!(introspection.client_id, service.client_id());
        if dialect.extra {
            assert_eq!(introspection.environment, "prod");
            assert!(introspection.exp > 0, "exp sent as a string");
        }
        // However long `expires_in` says (none, a string "7200", 3600), the held token still
        // lapses within the spec's 15-minute idle window.
        let state = client.tokens().state();
        let expires = state.expires_at().unwrap();
        assert!(
            expires <= chrono::Utc::now() + chrono::TimeDelta::minutes(15),
            "{dialect:?}: {expires}"
        );
        client.sign_out().await.unwrap();
        assert!(!service.token_is_active(token.expose()), "{dialect:?}");
    }
}

#[tokio::test]
async fn subscribe_and_rotate_through_the_webhook_merge() {
    for dialect in [Dialect::default(), Dialect::extra()] {
        let service = OtherService::start(dialect).await;
        let client = client_of(&service);
        let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let product = all_products(&client).await.remove(0);
        let before = product.webhooks.len();

        let subscribed = client
            .add_subscription(
                &store,
                &product.id,
                &NewSubscription {
                    url: "https://hooks.example/new".into(),
                    events: vec![EventType::Created],
                    resource: ResourceType::TransactionEvent,
                },
                None,
            )
            .await
            .unwrap();
        assert_eq!(subscribed.product.webhooks.len(), before + 1, "{dialect:?}");
        assert_eq!(
            service.signing_key(&subscribed.subscription_id).as_deref(),
            Some(subscribed.key.expose()),
            "the service holds the key the client kept"
        );

        let chosen = Secret::new(signing_key::generate().expose().to_string());
        let rotation = client
            .rotate_signing_key(
                store.as_ref(),
                &product.id,
                "sub-0-transactions",
                Some(chosen.clone()),
            )
            .await
            .unwrap();
        assert_eq!(
            service.signing_key("sub-0-transactions").as_deref(),
            Some(chosen.expose())
        );
        assert_eq!(
            rotation.product.webhooks.len(),
            before + 1,
            "{dialect:?}: every other subscription kept, unknown ones too"
        );
        let kept = partner_client::signing_keys(store.as_ref(), "sub-0-transactions")
            .unwrap()
            .unwrap();
        assert!(kept.current.ct_eq(chosen.expose()));
    }
}

#[tokio::test]
async fn a_paged_walk_waits_out_rate_limits_without_losing_or_repeating_an_item() {
    for (status, retry_after) in [
        (429, RetryAfter::Seconds(1)),
        // An HTTP date has whole seconds: two ahead is always at least a second of wait, which
        // a watcher of `waiting()` cannot miss.
        (503, RetryAfter::HttpDate(2)),
    ] {
        let service = OtherService::start_with(
            Dialect::rate_limited(3, status, retry_after),
            Seed {
                products: 1,
                transactions: 23,
            },
        )
        .await;
        let client = client_of(&service);
        let mut waiting = client.waiting();
        let saw_a_wait = tokio::spawn(async move {
            while waiting.changed().await.is_ok() {
                if let Some(wait) = waiting.borrow().clone() {
                    return wait.to_string();
                }
            }
            String::new()
        });
        let walked = all_transactions(
            &client,
            PagerOptions {
                page_size: 5,
                concurrency: 2,
            },
        )
        .await;
        assert_eq!(
            walked.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
            service.transaction_ids(),
            "{status}: every item once, in order"
        );
        drop(client);
        let told = tokio::time::timeout(std::time::Duration::from_secs(10), saw_a_wait)
            .await
            .expect("a wait was told")
            .unwrap();
        assert!(told.starts_with("waiting "), "{told}");
        let reason = if status == 429 {
            "rate limited"
        } else {
            "service unavailable"
        };
        assert!(told.ends_with(reason), "{told}");
    }
}

#[tokio::test]
async fn a_write_is_never_repeated_after_a_rate_limit() {
    let service = OtherService::start(Dialect::rate_limited(2, 429, RetryAfter::Seconds(1))).await;
    let client = client_of(&service);
    let patch = serde_json::json!({"listingName": "Renamed"});
    let product_id = service.products()[0]["id"].as_str().unwrap().to_owned();
    // The first call is let through; the PATCH is the second, refused.
    client.get_product(&product_id).await.unwrap();
    let error = client.patch_product(&product_id, &patch).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited);
    assert!(
        error
            .to_string()
            .contains("rate limit of the partner environment exceeded"),
        "{error}"
    );
    assert_eq!(service.api_calls(), 2, "the PATCH was sent once");
}

async fn not_found_in(shape: ErrorShape) -> ClientError {
    let service = OtherService::start(Dialect::errors(shape)).await;
    let client = client_of(&service);
    client.get_product("no-such-product").await.unwrap_err()
}

#[tokio::test]
async fn errors_are_shown_in_the_service_s_words_whatever_their_shape() {
    let cases = [
        (ErrorShape::Problem, "Not Found: no product with that id"),
        (ErrorShape::Message, "Not Found: no product with that id"),
        (ErrorShape::Errors, "Not Found; no product with that id"),
        (ErrorShape::PlainText, "Not Found: no product with that id"),
        (ErrorShape::Html, "no product with that id"),
        (ErrorShape::Empty, "empty body"),
    ];
    for (shape, words) in cases {
        let error = not_found_in(shape).await;
        assert_eq!(error.kind(), ErrorKind::NotFound, "{shape:?}");
        let message = error.to_string();
        assert!(message.contains(words), "{shape:?}: {message}");
        assert!(!message.contains("understands"), "{shape:?}: {message}");
        if shape == ErrorShape::Html {
            assert!(message.contains("HTML page"), "{message}");
            assert!(!message.contains('<'), "no markup: {message}");
        }
    }
}

#[tokio::test]
async fn token_endpoint_errors_are_shown_in_oauth_words() {
    let service = OtherService::start(Dialect::default()).await;
    let config = ConnectionConfig::new(
        &service.base_url(),
        service.client_id(),
        Secret::new("not-the-secret"),
    )
    .unwrap();
    let client = PartnerClient::new(config).unwrap();
    let error = client.tokens().bearer().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unauthorized);
    let message = error.to_string();
    assert!(
        message.contains("invalid_client: Client authentication failed"),
        "{message}"
    );
    assert!(!message.contains("not-the-secret"));
}

#[tokio::test]
async fn another_sort_set_is_the_service_s_to_refuse() {
    let service = OtherService::start(Dialect {
        narrow_sorts: true,
        errors: ErrorShape::Message,
        ..Dialect::default()
    })
    .await;
    let client = client_of(&service);
    let by_listing = SortSpec::parse(
        "-listingName",
        <read::ProductView as partner_api::Sortable>::SORT_KEYS,
    )
    .unwrap();
    let page = client
        .list_products(&PageRequest::new(0, 10).unwrap().sorted(by_listing))
        .await
        .unwrap();
    let names: Vec<_> = page
        .items
        .iter()
        .map(|p| p.listing_name.clone().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(names, sorted);

    let by_name = SortSpec::parse(
        "name",
        <read::ProductView as partner_api::Sortable>::SORT_KEYS,
    )
    .unwrap();
    let error = client
        .list_products(&PageRequest::new(0, 10).unwrap().sorted(by_name))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        error
            .to_string()
            .contains("sorting by 'name' is not supported"),
        "{error}"
    );
}

#[tokio::test]
async fn compressed_and_chunked_answers_are_read() {
    for compression in [Compression::Gzip, Compression::Brotli, Compression::Deflate] {
        let service = OtherService::start(Dialect {
            extra: true,
            ..Dialect::compressed(compression)
        })
        .await;
        let client = client_of(&service);
        let products = all_products(&client).await;
        assert_eq!(products.len(), 3, "{compression:?}");
        assert_eq!(
            serde_json::to_value(&products[0]).unwrap(),
            service.products()[0]
        );
        let transactions = all_transactions(&client, PagerOptions::default()).await;
        assert_eq!(transactions.len(), 30, "{compression:?}");
        let error = client.get_transaction("missing").await.unwrap_err();
        assert!(
            error.to_string().contains("no transaction with that id"),
            "{compression:?}: {error}"
        );
    }
}

#[tokio::test]
async fn a_wait_longer_than_the_budget_is_the_caller_s_to_decide() {
    let service =
        OtherService::start(Dialect::rate_limited(1, 429, RetryAfter::Seconds(120))).await;
    let client = client_of(&service);
    let started = std::time::Instant::now();
    let error = client
        .list_products(&PageRequest::new(0, 5).unwrap())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "no wait"
    );
    assert_eq!(error.kind(), ErrorKind::RateLimited);
    match error {
        ClientError::RateLimited { retry_after, .. } => {
            assert_eq!(retry_after, Some(std::time::Duration::from_secs(120)))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(service.api_calls(), 1, "not sent again");
}

#[tokio::test]
async fn a_product_is_created_and_its_keys_kept_and_a_bad_key_is_refused_unechoed() {
    let service = OtherService::start(Dialect::extra()).await;
    let client = client_of(&service);
    let store = MemoryStore::default();
    let key = signing_key::generate();
    let created = client
        .create_product_storing_keys(
            &store,
            &partner_api::NewProduct {
                name: "made-elsewhere".into(),
                listing_name: "Made Elsewhere".into(),
                request_types: vec!["NEW_REQUEST".into()],
                webhooks: vec![partner_api::WebhookSubscriptionInput {
                    url: Some("https://hooks.example/made".into()),
                    events: Some(vec![EventType::Created, EventType::Updated]),
                    resource: Some(ResourceType::Transaction),
                    signing_key: Some(key.clone()),
                    ..Default::default()
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(created.status.as_deref(), Some("approved-pending"));
    let subscription = created.webhooks[0].subscription_id.clone().unwrap();
    assert_eq!(
        service.signing_key(&subscription).as_deref(),
        Some(key.expose())
    );
    let kept = partner_client::signing_keys(&store, &subscription)
        .unwrap()
        .unwrap();
    assert!(kept.current.ct_eq(key.expose()));

    // The service's own rule, past the client's: a key it refuses is never echoed back.
    let weak = "weak-key-without-upper-and-special-1234";
    let patch =
        serde_json::json!({"webhooks": [{"subscriptionId": subscription, "signingkey": weak}]});
    let error = client.patch_product(&created.id, &patch).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        error.to_string().contains("complexity rule") && !error.to_string().contains(weak),
        "{error}"
    );
    assert_eq!(
        service.signing_key(&subscription).as_deref(),
        Some(key.expose()),
        "the key stays"
    );
}

/// A service that does not sort by `updated` (the spec does not say one must): the walk says
/// so in the service's words and reads every item instead, handing over exactly the ones
/// changed since the point asked for, none twice, none lost.
#[tokio::test]
async fn a_walk_by_updated_falls_back_to_every_item_where_the_sort_is_refused() {
    let service = OtherService::start_with(
        Dialect::narrow_sorts(),
        Seed {
            products: 1,
            transactions: 23,
        },
    )
    .await;
    let client = client_of(&service);
    let every = all_transactions(&client, PagerOptions::default()).await;
    let since = every[11].last_change().expect("a stamp");
    let mut expected: Vec<String> = every
        .iter()
        .filter(|t| t.last_change().is_none_or(|at| at >= since))
        .map(|t| t.id.clone())
        .collect();
    expected.sort();
    let mut notes = Vec::new();
    let mut handed = Vec::new();
    let summary = client
        .walk_updated_since::<read::TransactionView>(
            since,
            PagerOptions {
                page_size: 5,
                concurrency: 2,
            },
            &tokio_util::sync::CancellationToken::new(),
            |walk| {
                if let Some(note) = walk.fallback_note() {
                    if notes.last() != Some(&note) {
                        notes.push(note);
                    }
                }
            },
            |item| {
                handed.push(item.id.clone());
                std::ops::ControlFlow::Continue(())
            },
        )
        .await
        .expect("a full walk instead");
    assert_eq!(summary.end, partner_client::WalkEnd::Complete);
    assert_eq!(summary.progress.read, 23, "every item read");
    handed.sort();
    assert_eq!(handed, expected, "exactly the changed ones, once each");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("sorting by 'updated' is not supported"),
        "the service's words: {notes:?}"
    );
}

/// A service whose transactions carry no `updated` (the spec shows none): they sort last under
/// `-updated`, so the walk reads on to the end for them rather than stop before items it
/// cannot place in time, and hands each over once.
#[tokio::test]
async fn a_walk_by_updated_hands_over_items_without_a_stamp_however_they_sort() {
    let service = OtherService::start(Dialect::minimal()).await;
    let client = client_of(&service);
    let mut handed = Vec::new();
    let summary = client
        .walk_updated_since::<read::TransactionView>(
            chrono::Utc::now() - chrono::Duration::days(1),
            PagerOptions {
                page_size: 7,
                concurrency: 2,
            },
            &tokio_util::sync::CancellationToken::new(),
            |_| {},
            |item| {
                handed.push(item.id.clone());
                std::ops::ControlFlow::Continue(())
            },
        )
        .await
        .expect("walked");
    assert_eq!(summary.end, partner_client::WalkEnd::Complete);
    assert!(summary.progress.fallback.is_none());
    handed.sort();
    let mut expected = service.transaction_ids();
    expected.sort();
    assert_eq!(handed, expected, "each once, none left out");
}

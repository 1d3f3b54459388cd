//! Browsing: the spec's paging example, two-key sorting against an independent sort, rule
//! violations refused before sending, and the pager.

use crate::support::Setup;
use crate::support::Strict;
use futures::StreamExt;
use partner_api::{PageParams, Product, SortKey, SortSpec, Sortable, Transaction};
use partner_client::{ConnectionConfig, ErrorKind, PageRequest, PagerOptions, PartnerClient};
use std::cmp::Ordering;
use std::time::Duration;
use tokio::net::TcpListener;

fn sort(raw: &str) -> SortSpec {
    SortSpec::parse(raw, Transaction::SORT_KEYS).unwrap()
}

#[tokio::test]
async fn paging_matches_the_spec_example_of_ten_items() {
    let setup = Setup::demo(10).await;
    let first = setup
        .client
        .list_transactions(&PageRequest::new(0, 5).unwrap())
        .await
        .unwrap()
        .strict();
    let second = setup
        .client
        .list_transactions(
            &PageRequest::new(5, 5)
                .unwrap()
                .with_known_total(first.total),
        )
        .await
        .unwrap()
        .strict();
    assert_eq!((first.total, first.start, first.limit), (10, 0, 5));
    assert_eq!((second.total, second.start, second.limit), (10, 5, 5));
    assert_eq!(first.items.len(), 5);
    assert_eq!(second.items.len(), 5);
    assert!(first.has_more() && !second.has_more());

    let all = setup
        .client
        .list_transactions(&PageRequest::new(0, 10).unwrap())
        .await
        .unwrap()
        .strict();
    let ids = |items: &[Transaction]| items.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&first.items), ids(&all.items[0..5]), "index 0-4");
    assert_eq!(ids(&second.items), ids(&all.items[5..10]), "index 5-9");

    // start = total is an empty page; start past the total is refused before sending.
    let end = setup
        .client
        .list_transactions(&PageRequest::new(10, 5).unwrap().with_known_total(10))
        .await
        .unwrap()
        .strict();
    assert!(end.items.is_empty());
    let err = setup
        .client
        .list_transactions(&PageRequest::new(11, 5).unwrap().with_known_total(10))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rule);
    assert!(err.to_string().contains("past the end"), "{err}");
}

/// status ascending (A to Z), then created descending: written out by hand, not with SortSpec.
fn by_status_then_newest(a: &Transaction, b: &Transaction) -> Ordering {
    a.status
        .as_str()
        .cmp(b.status.as_str())
        .then_with(|| b.created.cmp(&a.created))
}

#[tokio::test]
async fn two_keys_in_opposite_directions_match_an_independent_sort() {
    let setup = Setup::demo(120).await;
    let request = PageRequest::new(0, 50)
        .unwrap()
        .sorted(sort("status,-created"));
    let stream = setup
        .client
        .pager::<Transaction>(request.sort.clone(), PagerOptions::default())
        .unwrap();
    let sorted: Vec<Transaction> = stream.map(|item| item.unwrap().into_view()).collect().await;
    assert_eq!(sorted.len(), 120);
    let statuses: std::collections::HashSet<_> = sorted.iter().map(|t| t.status).collect();
    assert!(statuses.len() >= 2, "the demo data has several statuses");

    // The same data, fetched unsorted and sorted here.
    let mut independent: Vec<Transaction> = setup
        .client
        .pager::<Transaction>(SortSpec::default(), PagerOptions::default())
        .unwrap()
        .map(|item| item.unwrap().into_view())
        .collect()
        .await;
    independent.sort_by(by_status_then_newest);
    let keys = |items: &[Transaction]| {
        items
            .iter()
            .map(|t| (t.status.as_str(), t.created))
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&sorted), keys(&independent));
    // And one page in the middle is the same slice.
    let page = setup
        .client
        .list_transactions(
            &PageRequest::new(50, 50)
                .unwrap()
                .sorted(sort("status,-created")),
        )
        .await
        .unwrap()
        .strict();
    assert_eq!(keys(&page.items), keys(&independent[50..100]));
}

#[tokio::test]
async fn products_sort_by_two_keys() {
    let setup = Setup::demo(1).await;
    let products: Vec<Product> = setup
        .client
        .pager::<Product>(
            SortSpec::parse("-status,listingName", Product::SORT_KEYS).unwrap(),
            PagerOptions::default(),
        )
        .unwrap()
        .map(|item| item.unwrap().into_view())
        .collect()
        .await;
    assert!(!products.is_empty());
    for pair in products.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let ordered = b.status.cmp(&a.status).then_with(|| {
            a.listing_name
                .to_lowercase()
                .cmp(&b.listing_name.to_lowercase())
        });
        assert_ne!(
            ordered,
            Ordering::Greater,
            "{} / {}",
            a.listing_name,
            b.listing_name
        );
    }
}

/// A socket that records whether anything connected: the proof that nothing was sent.
async fn silent_service() -> (PartnerClient, TcpListener) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = ConnectionConfig::new(&url, "someone", "secret".into()).unwrap();
    (PartnerClient::new(config).unwrap(), listener)
}

#[tokio::test]
async fn every_rule_violation_is_refused_before_sending() {
    let (client, listener) = silent_service().await;
    let mut too_large = PageRequest::new(0, 10).unwrap();
    too_large.page = PageParams {
        start: 0,
        limit: 51,
    };
    // Which keys a service sorts by is the service's to say (it is not in the spec), but a key
    // that is no property name is refused before sending.
    let malformed_key = PageRequest::default()
        .sorted(SortSpec::new(vec![SortKey::asc("listing name")], &["listing name"]).unwrap());
    let past_total = PageRequest::new(11, 5).unwrap().with_known_total(10);

    let mut errors = vec![
        client.list_transactions(&too_large).await.unwrap_err(),
        client.list_products(&too_large).await.unwrap_err(),
        client.list_transactions(&malformed_key).await.unwrap_err(),
        client.list_transactions(&past_total).await.unwrap_err(),
        client.get_transaction("").await.unwrap_err(),
        client
            .pager::<Transaction>(
                sort("status"),
                PagerOptions {
                    page_size: 51,
                    concurrency: 4,
                },
            )
            .err()
            .unwrap(),
        client
            .pager::<Transaction>(
                SortSpec::new(vec![SortKey::asc("name;")], &["name;"]).unwrap(),
                PagerOptions::default(),
            )
            .err()
            .unwrap(),
        client
            .create_product(&partner_api::NewProduct {
                name: "".into(),
                listing_name: "x".into(),
                request_types: vec!["NEW_REQUEST".into()],
                ..Default::default()
            })
            .await
            .unwrap_err(),
        client
            .rotate_signing_key(
                &partner_client::MemoryStore::new(),
                "p",
                "s",
                Some("too-simple".into()),
            )
            .await
            .unwrap_err(),
    ];
    assert!(
        PageRequest::new(0, 51).is_err(),
        "and the constructor refuses it too"
    );
    assert!(SortSpec::parse("status,status", Transaction::SORT_KEYS).is_err());
    for err in errors.drain(..) {
        assert_eq!(err.kind(), ErrorKind::Rule, "{err}");
        assert!(!err.to_string().is_empty());
    }
    let connected = tokio::time::timeout(Duration::from_millis(300), listener.accept()).await;
    assert!(connected.is_err(), "nothing reached the network");
}

#[tokio::test]
async fn the_server_refuses_what_the_client_refuses() {
    // The client's rules are the server's rules: the same request sent raw gets a 400.
    let setup = Setup::demo(3).await;
    let token = setup.client.tokens().bearer().await.unwrap();
    for query in [
        "limit=51",
        "sort=listingName",
        "sort=status,status",
        "start=99",
    ] {
        let response = reqwest::Client::new()
            .get(
                setup
                    .sandbox
                    .url(&format!("/partner/v2/transactions?{query}")),
            )
            .bearer_auth(token.expose())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{query}");
    }
}

#[tokio::test]
async fn the_pager_walks_everything_in_order_and_stops_when_dropped() {
    let setup = Setup::demo(237).await;
    let sort = sort("-created,id");
    let walked: Vec<Transaction> = setup
        .client
        .pager::<Transaction>(
            sort.clone(),
            PagerOptions {
                page_size: 20,
                concurrency: 4,
            },
        )
        .unwrap()
        .map(|item| item.unwrap().into_view())
        .collect()
        .await;
    assert_eq!(walked.len(), 237);
    let mut sequential = Vec::new();
    let mut start = 0;
    loop {
        let page = setup
            .client
            .list_transactions(&PageRequest::new(start, 50).unwrap().sorted(sort.clone()))
            .await
            .unwrap()
            .strict();
        let n = page.items.len() as u64;
        sequential.extend(page.items);
        start += n;
        if n == 0 || start >= page.total {
            break;
        }
    }
    let ids = |items: &[Transaction]| items.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&walked), ids(&sequential), "server order kept");

    // From a position: the same items from there on, pages not aligned with it; at the
    // total, nothing; past it, the service's refusal.
    for start in [0u64, 1, 19, 20, 137, 236, 237] {
        let resumed: Vec<Transaction> = setup
            .client
            .pager_from::<Transaction>(
                start,
                sort.clone(),
                PagerOptions {
                    page_size: 20,
                    concurrency: 3,
                },
            )
            .unwrap()
            .map(|item| item.unwrap().into_view())
            .collect()
            .await;
        assert_eq!(
            ids(&resumed),
            ids(&sequential[start as usize..]),
            "from {start}"
        );
    }
    let past: Vec<_> = setup
        .client
        .pager_from::<Transaction>(238, sort.clone(), PagerOptions::default())
        .unwrap()
        .collect()
        .await;
    assert_eq!(past.len(), 1);
    assert!(past[0].is_err());

    // Taking ten and dropping the stream cancels the rest.
    let ten: Vec<_> = setup
        .client
        .pager::<Transaction>(sort, PagerOptions::default())
        .unwrap()
        .take(10)
        .collect()
        .await;
    assert_eq!(ten.len(), 10);

    // An empty listing is an empty stream.
    let empty = Setup::empty().await;
    let none: Vec<_> = empty
        .client
        .pager::<Transaction>(SortSpec::default(), PagerOptions::default())
        .unwrap()
        .collect()
        .await;
    assert!(none.is_empty());
}

#[tokio::test]
async fn single_resources_and_events() {
    let setup = Setup::demo(5).await;
    let page = setup
        .client
        .list_transactions(&PageRequest::new(0, 5).unwrap())
        .await
        .unwrap()
        .strict();
    let listed = &page.items[0];
    let transaction = setup
        .client
        .get_transaction(&listed.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(&transaction, listed);
    let events = setup
        .client
        .list_events(&transaction.id)
        .await
        .unwrap()
        .strict();
    assert!(
        !events.is_empty(),
        "a created transaction has its request:created event"
    );
    let event = setup
        .client
        .get_event(&transaction.id, &events[0].id)
        .await
        .unwrap()
        .strict();
    assert_eq!(event, events[0]);

    let product = setup
        .client
        .get_product(&transaction.product.id)
        .await
        .unwrap()
        .strict();
    assert_eq!(product.id, transaction.product.id);

    for err in [
        setup
            .client
            .get_transaction("no-such-id")
            .await
            .unwrap_err(),
        setup.client.get_product("no-such-id").await.unwrap_err(),
        setup
            .client
            .get_event(&transaction.id, "no-such-event")
            .await
            .unwrap_err(),
        // An id that tries to climb out of its path segment stays in it.
        setup
            .client
            .get_transaction("../products")
            .await
            .unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    }
}

#[tokio::test]
async fn responding_moves_the_transaction_and_a_final_answer_locks_it() {
    use partner_api::{event_types, ResponseStatus, TransactionStatus};
    let setup = Setup::empty().await;
    let product = setup
        .client
        .create_product(&crate::rotation::new_product("answering", vec![]))
        .await
        .unwrap()
        .strict();
    let id = crate::rotation::lender_creates_transaction(&setup, &product.id).await;
    let answer = crate::support::answer;
    let processing = setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Processing))
        .await
        .unwrap()
        .strict();
    assert_eq!(processing.status, TransactionStatus::Processing);
    assert!(!processing.is_locked());
    let completed = setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Completed))
        .await
        .unwrap()
        .strict();
    assert_eq!(completed.status, TransactionStatus::Completed);
    assert!(completed.is_locked());
    let locked = setup
        .client
        .respond_to_transaction(&id, &answer(ResponseStatus::Failed))
        .await
        .unwrap_err();
    assert_eq!(locked.kind(), ErrorKind::Conflict, "{locked}");
    let events = setup.client.list_events(&id).await.unwrap().strict();
    assert!(events
        .iter()
        .any(|e| e.event_type == event_types::RESPONSE_UPDATED));
}

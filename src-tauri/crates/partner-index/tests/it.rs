//! The index against a real sandbox over real HTTP on 127.0.0.1, with real files in a tempdir.

#![allow(clippy::unwrap_used)]

use chrono::{DateTime, Utc};
use futures::StreamExt;
use partner_api::{ResponseStatus, SortSpec, Transaction, TransactionStatus};
use partner_client::{ConnectionConfig, MemoryStore, PagerOptions, PartnerClient, SecretStore};
use partner_index::{
    forget, sync, ChangeKind, Error, Export, Filter, Index, LoanField, SyncEnd, SyncPhase,
};
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

struct Setup {
    sandbox: TestSandbox,
    client: PartnerClient,
    dir: tempfile::TempDir,
    keys: Arc<MemoryStore>,
    index: Index,
}

const ID: &str = "test-connection";

async fn setup(transactions: usize) -> Setup {
    let sandbox = TestSandbox::start_with(SandboxConfig {
        clients: vec![ClientCredentials::generate()],
        demo: Some(DemoData { transactions }),
        ..SandboxConfig::default()
    })
    .await;
    let client = PartnerClient::new(
        ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id(),
            sandbox.client_secret().clone(),
        )
        .unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keys = Arc::new(MemoryStore::new());
    let index = Index::open(dir.path(), ID, keys.as_ref()).unwrap();
    Setup {
        sandbox,
        client,
        dir,
        keys,
        index,
    }
}

/// The service's own listing, every transaction.
async fn service_transactions(client: &PartnerClient) -> Vec<Transaction> {
    let mut all = Vec::new();
    let mut stream = client
        .pager::<Transaction>(SortSpec::default(), PagerOptions::default())
        .unwrap();
    while let Some(item) = stream.next().await {
        all.push(item.unwrap().into_view());
    }
    all
}

async fn lender(sandbox: &TestSandbox, method: reqwest::Method, path: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .request(method, sandbox.url(path))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

async fn full_sync(setup: &Setup) -> partner_index::SyncReport {
    let report = sync(
        &setup.client,
        &setup.index,
        |_| {},
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(report.end, SyncEnd::Complete);
    report
}

#[tokio::test]
async fn sync_fills_the_index_then_a_refresh_finds_what_the_lender_changed() {
    let setup = setup(240).await;
    let mut phases = Vec::new();
    let report = sync(
        &setup.client,
        &setup.index,
        |p| phases.push(p.clone()),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(report.end, SyncEnd::Complete);
    assert_eq!(report.filled, 240);
    assert!(report.changes.is_empty(), "{:?}", report.changes);
    assert_eq!(report.products, 3);
    assert!(report.state.filled && report.state.as_of.is_some());
    assert_eq!(report.state.transactions, 240);
    let last_fill = phases
        .iter()
        .rev()
        .find(|p| p.phase == SyncPhase::Fill)
        .unwrap();
    assert_eq!((last_fill.done, last_fill.total), (240, Some(240)));
    // The index holds what the service holds, field for field.
    for transaction in service_transactions(&setup.client).await {
        let stored = setup
            .index
            .transaction(&transaction.id)
            .unwrap()
            .expect("stored");
        assert_eq!(
            serde_json::to_value(&stored).unwrap(),
            serde_json::to_value(&transaction).unwrap(),
            "the service's document, as sent"
        );
    }
    assert_eq!(setup.index.products().unwrap().len(), 3);

    // The lender creates one, updates another, adds an event to a third.
    let product = setup.index.products().unwrap()[0].id.clone();
    let created = lender(
        &setup.sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        json!({"productId": product, "requestType": "NEW_REQUEST",
               "loan": {"loanNumber": "LN-NEW-1", "loanAmount": 12345}}),
    )
    .await;
    let open = setup
        .index
        .find(
            &Filter {
                status: Some("created".into()),
                ..Filter::default()
            },
            5,
            0,
        )
        .unwrap();
    let updated_id = open.items[1].id.clone();
    lender(
        &setup.sandbox,
        reqwest::Method::PATCH,
        &format!("/sandbox/v1/transactions/{updated_id}"),
        json!({"loan": {"loanNumber": "LN-CHANGED", "loanPurpose": "Construction"}}),
    )
    .await;
    let noted_id = open.items[2].id.clone();
    lender(
        &setup.sandbox,
        reqwest::Method::POST,
        &format!("/sandbox/v1/transactions/{noted_id}/events"),
        json!({"type": "urn:lender:note", "text": "Appraiser rescheduled"}),
    )
    .await;

    let report = full_sync(&setup).await;
    let mut changes: Vec<(String, ChangeKind)> = report
        .changes
        .iter()
        .map(|c| (c.id.clone(), c.kind))
        .collect();
    changes.sort();
    let mut expected = vec![
        (
            created["id"].as_str().unwrap().to_string(),
            ChangeKind::Created,
        ),
        (updated_id.clone(), ChangeKind::Updated),
    ];
    expected.sort();
    assert_eq!(changes, expected);
    assert_eq!(report.state.transactions, 241);
    let stored = setup.index.transaction(&updated_id).unwrap().unwrap();
    assert_eq!(
        stored.raw()["request"]["loan"]["loanNumber"],
        "LN-CHANGED",
        "as the service sent it"
    );
    let by_loan = setup
        .index
        .find(
            &Filter {
                loan: vec![LoanField {
                    field: "loanNumber".into(),
                    value: "ln-changed".into(),
                }],
                ..Filter::default()
            },
            10,
            0,
        )
        .unwrap();
    assert_eq!(by_loan.total, 1);
    assert_eq!(by_loan.items[0].id, updated_id);

    // An event does not change the listing; a notification naming it refreshes that one.
    assert_eq!(setup.index.events(&noted_id).unwrap(), None);
    let change = partner_index::refresh_one(&setup.client, &setup.index, &noted_id)
        .await
        .unwrap();
    assert_eq!(change.kind, ChangeKind::Updated);
    let events = setup.index.events(&noted_id).unwrap().unwrap();
    assert!(events
        .iter()
        .any(|e| e.text.as_deref() == Some("Appraiser rescheduled")));
    let again = partner_index::refresh_one(&setup.client, &setup.index, &noted_id)
        .await
        .unwrap();
    assert_eq!(again.kind, ChangeKind::Unchanged);
    let missing = partner_index::refresh_one(&setup.client, &setup.index, "no-such-id")
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, Error::Client(e) if e.kind() == partner_client::ErrorKind::NotFound),
        "{missing}"
    );

    // Nothing changed since: a refresh finds nothing.
    assert!(full_sync(&setup).await.changes.is_empty());
}

#[tokio::test]
async fn a_cancelled_fill_resumes_where_it_stopped() {
    let setup = setup(1_500).await;
    // A slow network, as the sandbox's latency control makes it, so the walk is still going
    // when it is cancelled.
    lender(
        &setup.sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/latency",
        json!({"milliseconds": 15}),
    )
    .await;
    let cancel = CancellationToken::new();
    let report = sync(
        &setup.client,
        &setup.index,
        |p| {
            if p.phase == SyncPhase::Fill && p.done >= 300 {
                cancel.cancel();
            }
        },
        &cancel,
    )
    .await
    .unwrap();
    assert_eq!(report.end, SyncEnd::Cancelled);
    let state = setup.index.state().unwrap();
    assert!(!state.filled);
    assert!(state.as_of.is_none());
    assert!(
        (300..1_500).contains(&state.fill_position),
        "{}",
        state.fill_position
    );
    assert_eq!(state.transactions, state.fill_position);

    lender(
        &setup.sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/latency",
        json!({"milliseconds": 0}),
    )
    .await;
    // A transaction created meanwhile, then a new sync (a new process would reopen the file).
    let product = setup.index.products().unwrap()[0].id.clone();
    let created = lender(
        &setup.sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        json!({"productId": product, "requestType": "NEW_REQUEST"}),
    )
    .await;
    let reopened = Index::open(setup.dir.path(), ID, setup.keys.as_ref()).unwrap();
    drop(setup.index.clone());
    let report = sync(&setup.client, &reopened, |_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.end, SyncEnd::Complete);
    assert_eq!(
        report.filled,
        1_501 - state.fill_position,
        "it went on from where it stopped"
    );
    assert_eq!(report.state.transactions, 1_501);
    assert!(reopened
        .transaction(created["id"].as_str().unwrap())
        .unwrap()
        .is_some());
    let service: Vec<String> = service_transactions(&setup.client)
        .await
        .into_iter()
        .map(|t| t.id)
        .collect();
    for id in &service {
        assert!(reopened.transaction(id).unwrap().is_some(), "{id} missing");
    }
}

/// The ids the index answers `filter` with, all of them, in its order.
fn ids(index: &Index, filter: &Filter) -> Vec<String> {
    let found = index.find(filter, 1_000, 0).unwrap();
    assert_eq!(found.total as usize, found.items.len());
    found.items.into_iter().map(|t| t.id.clone()).collect()
}

/// The ids of the service's transactions that `keep` holds for, newest first.
fn expected(all: &[Transaction], keep: impl Fn(&Transaction) -> bool) -> Vec<String> {
    let mut kept: Vec<&Transaction> = all.iter().filter(|t| keep(t)).collect();
    kept.sort_by_key(|t| std::cmp::Reverse(t.created));
    kept.into_iter().map(|t| t.id.clone()).collect()
}

#[tokio::test]
async fn every_filter_answers_as_the_services_own_data_does() {
    let setup = setup(400).await;
    full_sync(&setup).await;
    let all = service_transactions(&setup.client).await;
    let index = &setup.index;
    let check = |name: &str, filter: Filter, keep: &dyn Fn(&Transaction) -> bool| {
        let want = expected(&all, keep);
        assert!(!want.is_empty(), "{name}: the data has none to find");
        assert_eq!(ids(index, &filter), want, "{name}");
    };

    check("everything", Filter::default(), &|_| true);
    for status in [
        TransactionStatus::Created,
        TransactionStatus::Processing,
        TransactionStatus::Completed,
    ] {
        check(
            status.as_str(),
            Filter {
                status: Some(status.as_str().into()),
                ..Filter::default()
            },
            &|t| t.status == status,
        );
    }
    for status in ResponseStatus::ALL {
        check(
            status.as_str(),
            Filter {
                response_status: Some(status.as_str().into()),
                ..Filter::default()
            },
            &|t| t.response.as_ref().map(|r| r.status) == Some(status),
        );
    }
    let product = all[0].product.clone();
    check(
        "product by id",
        Filter {
            product: Some(product.id.clone()),
            ..Filter::default()
        },
        &|t| t.product.id == product.id,
    );
    check(
        "product by name",
        Filter {
            product: Some(product.name.to_uppercase()),
            ..Filter::default()
        },
        &|t| t.product.name == product.name,
    );
    check(
        "request type",
        Filter {
            request_type: Some("NEW_REQUEST".into()),
            ..Filter::default()
        },
        &|t| t.request.request_type == "NEW_REQUEST",
    );
    let mut created: Vec<DateTime<Utc>> = all.iter().map(|t| t.created).collect();
    created.sort();
    let (from, to) = (created[100], created[200]);
    check(
        "created range",
        Filter {
            created_since: Some(from),
            created_before: Some(to),
            ..Filter::default()
        },
        &|t| t.created >= from && t.created < to,
    );
    let mut updated: Vec<DateTime<Utc>> = all.iter().map(|t| t.updated).collect();
    updated.sort();
    let since = updated[300];
    check(
        "updated since",
        Filter {
            updated_since: Some(since),
            ..Filter::default()
        },
        &|t| t.updated >= since,
    );
    check(
        "updated before",
        Filter {
            updated_before: Some(since),
            ..Filter::default()
        },
        &|t| t.updated < since,
    );
    let answered = all.iter().find(|t| t.response.is_some()).unwrap();
    let response = answered.response.clone().unwrap();
    let partner_status = response.partner_status.clone().unwrap();
    check(
        "partner status",
        Filter {
            partner_status: Some(partner_status.to_lowercase()),
            ..Filter::default()
        },
        &|t| {
            t.response
                .as_ref()
                .and_then(|r| r.partner_status.as_deref())
                == Some(partner_status.as_str())
        },
    );
    let reference = response.reference_number.clone().unwrap();
    check(
        "reference number",
        Filter {
            reference_number: Some(reference.clone()),
            ..Filter::default()
        },
        &|t| {
            t.response
                .as_ref()
                .and_then(|r| r.reference_number.as_deref())
                == Some(&reference)
        },
    );
    let party = answered.request.requesting_party.clone().unwrap().name;
    check(
        "requesting party",
        Filter {
            requesting_party: Some(party[2..8].to_lowercase()),
            ..Filter::default()
        },
        &|t| t.request.requesting_party.as_ref().map(|p| &p.name) == Some(&party),
    );
    assert!(ids(
        index,
        &Filter {
            requesting_party: Some("%_nobody".into()),
            ..Filter::default()
        }
    )
    .is_empty());
    check(
        "loan purpose and state",
        Filter {
            loan: vec![
                LoanField {
                    field: "loanPurpose".into(),
                    value: "refinance".into(),
                },
                LoanField {
                    field: "propertyState".into(),
                    value: "CA".into(),
                },
            ],
            ..Filter::default()
        },
        &|t| {
            t.request.loan["loanPurpose"] == "Refinance" && t.request.loan["propertyState"] == "CA"
        },
    );
    let amount = all[5].request.loan["loanAmount"].clone();
    check(
        "loan amount (a number)",
        Filter {
            loan: vec![LoanField {
                field: "loanAmount".into(),
                value: amount.to_string(),
            }],
            ..Filter::default()
        },
        &|t| t.request.loan["loanAmount"] == amount,
    );
    let loan_number = all[7].request.loan["loanNumber"]
        .as_str()
        .unwrap()
        .to_string();
    check(
        "text: a loan number",
        Filter {
            text: Some(loan_number.clone()),
            ..Filter::default()
        },
        &|t| t.request.loan["loanNumber"] == loan_number.as_str(),
    );
    check(
        "text: words of an error in the response, with a status",
        Filter {
            text: Some("address COULD not".into()),
            status: Some("completed".into()),
            ..Filter::default()
        },
        &|t| {
            t.response
                .as_ref()
                .and_then(|r| r.errors.as_ref())
                .is_some_and(|e| {
                    e.iter()
                        .any(|e| e.description.contains("address could not"))
                })
        },
    );
    // FTS syntax typed by a user is text, never an error.
    for hostile in [
        "\"",
        "*",
        "NEAR(",
        "a:b",
        "-x",
        "(",
        "AND OR NOT",
        "')--",
        "x\"y*",
        "^",
        "\u{0}",
    ] {
        index
            .find(
                &Filter {
                    text: Some(hostile.into()),
                    ..Filter::default()
                },
                10,
                0,
            )
            .unwrap_or_else(|e| panic!("{hostile:?}: {e}"));
    }
    let bad_field = index
        .find(
            &Filter {
                loan: vec![LoanField {
                    field: "a') OR 1=1 --".into(),
                    value: "x".into(),
                }],
                ..Filter::default()
            },
            10,
            0,
        )
        .unwrap_err();
    assert!(matches!(bad_field, Error::Invalid(_)));
    assert!(matches!(
        index.find(&Filter::default(), 0, 0),
        Err(Error::Invalid(_))
    ));

    // Paging, newest first.
    let everything = expected(&all, |_| true);
    let page = index.find(&Filter::default(), 7, 14).unwrap();
    assert_eq!(page.total, 400);
    assert_eq!(
        page.items.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        everything[14..21]
    );
    assert!(page.as_of.is_some());

    // Counts per status and per product.
    let counts = index.counts(&Filter::default()).unwrap();
    assert_eq!(counts.total, 400);
    for (status, n) in &counts.by_status {
        assert_eq!(
            *n as usize,
            all.iter().filter(|t| t.status.as_str() == status).count(),
            "{status}"
        );
    }
    assert_eq!(counts.by_product.len(), 3);
    for (id, name, n) in &counts.by_product {
        let want: Vec<&Transaction> = all.iter().filter(|t| &t.product.id == id).collect();
        assert_eq!(*n as usize, want.len());
        assert_eq!(&want[0].product.name, name);
    }

    // Export: the listing export's CSV over the same objects, and JSON.
    let filter = Filter {
        response_status: Some("failed".into()),
        ..Filter::default()
    };
    let (csv, n) = index
        .export(&filter, None, 0, Export::Csv, Vec::new())
        .unwrap();
    let want = expected(&all, |t| {
        t.response.as_ref().map(|r| r.status) == Some(ResponseStatus::Failed)
    });
    assert_eq!(n as usize, want.len());
    let rows: Vec<Value> = want
        .iter()
        .map(|id| serde_json::to_value(all.iter().find(|t| &t.id == id).unwrap()).unwrap())
        .collect();
    let listing_csv = partner_client::listing_export::write_csv(Vec::new(), &rows).unwrap();
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        String::from_utf8(listing_csv).unwrap()
    );
    let (json_out, _) = index
        .export(&filter, Some(3), 0, Export::Json, Vec::new())
        .unwrap();
    let exported: Vec<Value> = serde_json::from_slice(&json_out).unwrap();
    assert_eq!(exported, rows[..3]);
}

#[tokio::test]
async fn the_file_is_encrypted_private_and_never_overwritten() {
    let setup = setup(20).await;
    let product = {
        full_sync(&setup).await;
        setup.index.products().unwrap()[0].id.clone()
    };
    let borrower = "Zelda Quuxington";
    lender(
        &setup.sandbox,
        reqwest::Method::POST,
        "/sandbox/v1/transactions",
        json!({"productId": product, "requestType": "NEW_REQUEST",
               "loan": {"loanNumber": "LN-Z", "borrowerName": borrower}}),
    )
    .await;
    let report = full_sync(&setup).await;
    assert_eq!(report.changes.len(), 1);
    // It is in there, and found by text.
    let found = setup
        .index
        .find(
            &Filter {
                text: Some("quuxington".into()),
                ..Filter::default()
            },
            10,
            0,
        )
        .unwrap();
    assert_eq!(found.total, 1);
    let path = setup.index.path().to_path_buf();
    drop(found);
    let folder = setup.dir.path().join("index");
    // While open (the WAL holds the latest pages) and after closing: no plain borrower name,
    // loan number, JSON or SQLite header in any file of the index folder, each file 0600.
    let wal = folder.join(format!("{ID}.sqlite3-wal"));
    assert!(wal.exists(), "the WAL is there while the index is open");
    assert_nothing_plain(&folder, borrower);
    let Setup {
        dir, keys, index, ..
    } = setup;
    drop(index);
    assert_nothing_plain(&folder, borrower);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    // Without the key, SQLite sees no database.
    let plain = rusqlite::Connection::open(&path).unwrap();
    assert!(plain
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r
            .get::<_, i64>(0))
        .is_err());
    drop(plain);

    let before = std::fs::read(&path).unwrap();
    // Another key: an error naming the file, and the file untouched.
    let other = MemoryStore::new();
    other
        .set(
            &partner_client::SecretSlot::IndexKey {
                index_id: ID.into(),
            },
            &partner_api::Secret::new("ab".repeat(32)),
        )
        .unwrap();
    let wrong = Index::open(dir.path(), ID, &other).unwrap_err();
    assert!(matches!(wrong, Error::WrongKey { .. }), "{wrong}");
    assert!(wrong.to_string().contains("untouched"));
    assert!(!wrong.to_string().contains("Zelda"));
    // No key at all: the same, and no new key is made for the old file.
    let empty = MemoryStore::new();
    let missing = Index::open(dir.path(), ID, &empty).unwrap_err();
    assert!(matches!(missing, Error::KeyMissing { .. }), "{missing}");
    assert!(empty
        .get(&partner_client::SecretSlot::IndexKey {
            index_id: ID.into()
        })
        .unwrap()
        .is_none());
    assert_eq!(std::fs::read(&path).unwrap(), before, "never overwritten");

    // With its key it opens and still holds everything.
    let reopened = Index::open(dir.path(), ID, keys.as_ref()).unwrap();
    assert_eq!(reopened.state().unwrap().transactions, 21);
}

fn assert_nothing_plain(folder: &std::path::Path, borrower: &str) {
    let mut files = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let entry = entry.unwrap();
        files += 1;
        let bytes = std::fs::read(entry.path()).unwrap();
        for needle in [
            borrower.as_bytes(),
            b"Quuxington",
            b"LN-Z",
            b"loanNumber",
            b"SQLite format",
        ] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle),
                "{} holds {}",
                entry.path().display(),
                String::from_utf8_lossy(needle)
            );
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", entry.path().display());
        }
    }
    assert!(files >= 1);
}

#[tokio::test]
async fn forget_deletes_the_file_its_companions_and_the_key() {
    let setup = setup(30).await;
    full_sync(&setup).await;
    let folder = setup.dir.path().join("index");
    assert!(std::fs::read_dir(&folder).unwrap().count() >= 1);
    let slot = partner_client::SecretSlot::IndexKey {
        index_id: ID.into(),
    };
    assert!(setup.keys.get(&slot).unwrap().is_some());
    let Setup {
        dir, keys, index, ..
    } = setup;
    index.forget(keys.as_ref()).unwrap();
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    assert!(keys.get(&slot).unwrap().is_none());
    // Forgetting what is gone is fine; a fresh index starts empty with a new key.
    forget(dir.path(), ID, keys.as_ref()).unwrap();
    let fresh = Index::open(dir.path(), ID, keys.as_ref()).unwrap();
    assert_eq!(fresh.state().unwrap().transactions, 0);
    assert!(keys.get(&slot).unwrap().is_some());
    assert!(matches!(
        forget(dir.path(), "../escape", keys.as_ref()),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn the_index_id_is_the_same_for_the_same_service_and_client() {
    let a = url::Url::parse("https://api.example.com/").unwrap();
    let b = url::Url::parse("https://api.example.com").unwrap();
    assert_eq!(
        partner_index::index_id(&a, "client-1"),
        partner_index::index_id(&b, "client-1")
    );
    assert_ne!(
        partner_index::index_id(&a, "client-1"),
        partner_index::index_id(&a, "client-2")
    );
}

/// The index of a service other than the sandbox (`partner_testkit::OtherService`): one that
/// sends transactions with only an `id`, and one that sends fields and statuses the console
/// does not know. Everything is kept as sent, counted, filtered and searched.
#[tokio::test]
async fn any_faithful_service_is_copied_as_it_sends() {
    use partner_testkit::{Dialect, OtherService};
    for dialect in [
        Dialect::minimal(),
        Dialect::extra(),
        Dialect::narrow_sorts(),
    ] {
        let service = OtherService::start(dialect).await;
        let client = PartnerClient::new(
            ConnectionConfig::new(
                &service.base_url(),
                service.client_id(),
                service.client_secret().clone(),
            )
            .unwrap(),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let keys = MemoryStore::new();
        let index = Index::open(dir.path(), ID, &keys).unwrap();
        let mut notes = Vec::new();
        let report = sync(
            &client,
            &index,
            |p| notes.extend(p.note.clone()),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(report.end, SyncEnd::Complete, "{dialect:?}");
        assert_eq!(report.state.transactions, 30, "{dialect:?}");
        for id in service.transaction_ids() {
            let stored = index.transaction(&id).unwrap().expect("stored");
            assert_eq!(stored.id, id);
        }
        let all = index.find(&Filter::default(), 100, 0).unwrap();
        assert_eq!(all.total, 30);
        // Refreshing finds nothing new, whatever the service sorts by.
        let again = sync(&client, &index, |_| {}, &CancellationToken::new())
            .await
            .unwrap();
        assert!(again.changes.is_empty(), "{dialect:?}: {:?}", again.changes);
        let counts = index.counts(&Filter::default()).unwrap();
        assert_eq!(counts.total, 30);
        if dialect.minimal {
            assert!(all.items.iter().any(|t| t.raw().len() == 1), "ids alone");
            assert!(counts
                .by_status
                .iter()
                .any(|(s, _)| s == partner_index::NO_VALUE));
            assert!(counts
                .by_product
                .iter()
                .any(|(id, _, n)| id == partner_index::NO_VALUE && *n == 30));
        }
        if dialect.extra {
            let desk = Filter {
                text: Some("kestrel".into()),
                ..Filter::default()
            };
            assert_eq!(
                index.find(&desk, 100, 0).unwrap().total,
                30,
                "unknown field"
            );
            let escalated = Filter {
                status: Some("escalated".into()),
                ..Filter::default()
            };
            let found = index.find(&escalated, 100, 0).unwrap();
            assert!(found.total > 0);
            assert!(found.items.iter().all(|t| t.raw()["status"] == "escalated"));
            assert!(counts.by_status.iter().any(|(s, _)| s == "on-hold"));
            let (_, exported) = index
                .export(&Filter::default(), None, 0, Export::Csv, Vec::new())
                .unwrap();
            assert_eq!(exported, 30);
        }
        if dialect.narrow_sorts {
            assert!(
                notes
                    .iter()
                    .any(|n| n.contains("does not sort by `updated`")),
                "{notes:?}"
            );
            assert!(
                notes.iter().any(|n| n.contains("its own order")),
                "{notes:?}"
            );
        } else {
            assert!(notes.is_empty(), "{dialect:?}: {notes:?}");
        }
    }
}

//! The counts the inspector reads (`facets`, a page's total, `count`, the lists of values),
//! answered from `facet_counts` plus a scan of the captures the indexer has not reached: each
//! compared with a brute-force `COUNT(*)` over the captures table of the same file, for every
//! combination of filter values, after inserts, while the indexer is behind (an import), once
//! it has caught up, after each kind of clear, after pruning, after an import below the
//! watermark, and after a version-4 store migrates. Real store files in tempdirs.

use chrono::{Duration, Utc};
use partner_listener::export::{import_jsonl_with, write_jsonl};
use partner_listener::{
    Capture, CaptureFilter, CaptureQuery, Grouping, Header, HitCount, NotificationFields,
    ResponseRecord, Retention, Store, StoreReader, Verdict,
};
use std::ops::ControlFlow;
use std::path::Path;

const EVENT_TYPES: [Option<&str>; 3] = [Some("created"), Some("updated"), None];
const RESOURCE_TYPES: [Option<&str>; 3] = [
    Some("urn:svc:partner:transaction"),
    Some("urn:svc:partner:product"),
    None,
];
const SUBSCRIPTIONS: [Option<&str>; 3] = [Some("sub-a"), Some("sub-b"), None];
const VERDICTS: [Verdict; 3] = [
    Verdict::Valid,
    Verdict::InvalidSignature,
    Verdict::UnknownSubscription,
];

/// Capture `i` of a mix that goes through every combination of the columns counted, NULLs
/// included (a body without an event type, a request without a subscription).
fn capture(i: usize) -> Capture {
    let event_type = EVENT_TYPES[i % 3];
    let resource_type = RESOURCE_TYPES[(i / 3) % 3];
    let subscription = SUBSCRIPTIONS[(i / 9) % 3];
    let verdict = VERDICTS[(i / 2 + i / 27) % 3];
    let mut meta = format!(r#""resourceId":"res-{i}""#);
    if let Some(resource_type) = resource_type {
        meta.push_str(&format!(r#","resourceType":"{resource_type}""#));
    }
    let event_type_field = event_type.map_or(String::new(), |t| format!(r#","eventType":"{t}""#));
    let body = format!(
        r#"{{"eventId":"ev-{i}-{}","eventTime":"2024-05-01T10:00:00Z"{event_type_field},"meta":{{{meta}}},"note":"tally {i}"}}"#,
        uuid::Uuid::new_v4().simple()
    )
    .into_bytes();
    Capture {
        id: 0,
        received_at: Utc::now(),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: subscription
            .map(|s| vec![Header::new("svc-subscriptionid", s)])
            .unwrap_or_default(),
        body_size: body.len() as u64,
        fields: NotificationFields::read(&body).0,
        body: Some(body),
        peer: None,
        verdict,
        matched_key: None,
        subscription_id: subscription.map(Into::into),
        attempt: 0,
        notification_id: None,
        response: ResponseRecord {
            status: verdict.response().0,
            body: verdict.response().1.into(),
            from_test_mode: false,
            delay_ms: 0,
        },
        processing_micros: 5,
        replay: false,
    }
}

async fn insert(store: &Store, range: std::ops::Range<usize>) {
    let pending: Vec<_> = range.map(|i| store.insert(capture(i))).collect();
    futures::future::try_join_all(pending).await.unwrap();
}

async fn caught_up(store: &Store) {
    for _ in 0..1000 {
        if store.search_backlog().unwrap() == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the indexer did not catch up");
}

/// Every filter the counts answer: each value (and no value) of each column, with zero, one
/// or two verdicts.
fn filters() -> Vec<CaptureFilter> {
    let values = |options: [Option<&str>; 3]| {
        let mut all: Vec<Option<String>> = options
            .iter()
            .flatten()
            .map(|v| Some(v.to_string()))
            .collect();
        all.push(None);
        all.push(Some("absent".into()));
        all
    };
    let verdict_sets = [
        vec![],
        vec![Verdict::Valid],
        vec![Verdict::InvalidSignature, Verdict::UnknownSubscription],
        vec![Verdict::MalformedBody],
    ];
    let mut filters = Vec::new();
    for event_type in values(EVENT_TYPES) {
        for resource_type in values(RESOURCE_TYPES) {
            for subscription_id in values(SUBSCRIPTIONS) {
                for verdicts in &verdict_sets {
                    filters.push(CaptureFilter {
                        verdicts: verdicts.clone(),
                        event_type: event_type.clone(),
                        resource_type: resource_type.clone(),
                        subscription_id: subscription_id.clone(),
                        ..Default::default()
                    });
                }
            }
        }
    }
    filters
}

/// `COUNT(*)` over the captures table of the file, straight.
fn brute_count(conn: &rusqlite::Connection, filter: &CaptureFilter, with_verdicts: bool) -> u64 {
    let mut clauses = vec!["1 = 1".to_string()];
    let mut args: Vec<String> = Vec::new();
    if with_verdicts && !filter.verdicts.is_empty() {
        let list: Vec<String> = filter
            .verdicts
            .iter()
            .map(|v| {
                args.push(v.as_str().to_string());
                format!("?{}", args.len())
            })
            .collect();
        clauses.push(format!("verdict IN ({})", list.join(", ")));
    }
    for (column, value) in [
        ("event_type", &filter.event_type),
        ("resource_type", &filter.resource_type),
        ("subscription_id", &filter.subscription_id),
    ] {
        if let Some(value) = value {
            args.push(value.clone());
            clauses.push(format!("{column} = ?{}", args.len()));
        }
    }
    let count: i64 = conn
        .query_row(
            &format!(
                "SELECT COUNT(*) FROM captures WHERE {}",
                clauses.join(" AND ")
            ),
            rusqlite::params_from_iter(args.iter()),
            |row| row.get(0),
        )
        .unwrap();
    count as u64
}

fn brute_values(conn: &rusqlite::Connection, column: &str) -> Vec<String> {
    let mut select = conn
        .prepare(&format!(
            "SELECT DISTINCT {column} FROM captures WHERE {column} IS NOT NULL ORDER BY 1"
        ))
        .unwrap();
    select
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Every count the store answers for every filter equals the brute-force count. Returns the
/// number of captures above the watermark when it was checked (so a test can say it checked
/// a tail).
fn assert_exact(store: &StoreReader, path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tail: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM captures WHERE id > \
             (SELECT indexed_through FROM search_state WHERE one = 1)",
            [],
            |row| row.get(0),
        )
        .unwrap();
    for filter in filters() {
        let facets = store.facets(&filter).unwrap();
        assert_eq!(
            facets.total,
            brute_count(&conn, &filter, true),
            "{filter:?}"
        );
        assert!(!facets.capped);
        for verdict in VERDICTS.iter().chain([&Verdict::MalformedBody]) {
            let one = CaptureFilter {
                verdicts: vec![*verdict],
                ..filter.clone()
            };
            assert_eq!(
                facets.verdicts.get(verdict).copied().unwrap_or(0),
                brute_count(&conn, &one, true),
                "{verdict:?} under {filter:?}"
            );
            assert_ne!(
                facets.verdicts.get(verdict),
                Some(&0),
                "no zero counts listed"
            );
        }
        let page = store
            .page(&CaptureQuery {
                filter: filter.clone(),
                grouping: Grouping::EveryAttempt,
                offset: 0,
                limit: 5,
                count: HitCount::UpToCap,
            })
            .unwrap();
        assert_eq!(page.total, brute_count(&conn, &filter, true), "{filter:?}");
        assert_eq!(page.items.len() as u64, page.total.min(5));
        assert_eq!(store.count(&filter).unwrap(), page.total);
    }
    let facets = store.facets(&CaptureFilter::default()).unwrap();
    assert_eq!(facets.event_types, brute_values(&conn, "event_type"));
    assert_eq!(facets.resource_types, brute_values(&conn, "resource_type"));
    assert_eq!(facets.subscriptions, brute_values(&conn, "subscription_id"));
    tail
}

/// The counts table holds exactly the captures at or below the watermark, per combination.
fn assert_table_matches_captures(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let differences: i64 = conn
        .query_row(
            "WITH counted AS (SELECT verdict, event_type, resource_type, subscription_id, \
             COUNT(*) AS n FROM captures WHERE id <= \
             (SELECT indexed_through FROM search_state WHERE one = 1) GROUP BY 1, 2, 3, 4) \
             SELECT (SELECT COUNT(*) FROM counted c WHERE NOT EXISTS (SELECT 1 FROM \
             facet_counts f WHERE f.verdict = c.verdict AND f.event_type IS c.event_type \
             AND f.resource_type IS c.resource_type AND f.subscription_id IS c.subscription_id \
             AND f.captures = c.n)) + (SELECT COUNT(*) FROM facet_counts) - \
             (SELECT COUNT(*) FROM counted)",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        differences, 0,
        "facet_counts differs from the captures it covers"
    );
}

#[tokio::test]
async fn counts_are_exact_through_inserts_catch_up_clears_prune_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counts.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    // Just inserted: most of them are the tail.
    insert(&store, 0..160).await;
    assert_exact(&store, &path);
    caught_up(&store).await;
    assert_eq!(assert_exact(&store, &path), 0);
    assert_table_matches_captures(&path);
    // Clear by filter (a verdict and a column, a NULL-valued column's neighbour).
    let cleared = store
        .clear(&CaptureFilter {
            verdicts: vec![Verdict::InvalidSignature],
            event_type: Some("created".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(cleared > 0);
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    // Clear by search, and up to an id, with new captures not indexed yet above.
    insert(&store, 160..200).await;
    let cleared = store
        .clear(&CaptureFilter {
            text: Some("tally".into()),
            subscription_id: Some("sub-b".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(cleared > 0);
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    let newest = store.query(&CaptureFilter::default(), 0, 1).unwrap().items[0].id;
    store
        .clear(&CaptureFilter {
            max_id: Some(newest - 100),
            verdicts: vec![Verdict::Valid],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    caught_up(&store).await;
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    // Prune by count, then by age.
    let pruned = store
        .prune(Retention {
            max_count: Some(50),
            max_bytes: None,
            max_age: None,
        })
        .await
        .unwrap();
    assert!(pruned > 0);
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 50);
    // Export what is left, clear everything, import it back: ids below the watermark, counted
    // by the import itself.
    let mut exported = Vec::new();
    write_jsonl(&store, &CaptureFilter::default(), &mut exported).unwrap();
    store.clear_all().await.unwrap();
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    assert!(store
        .facets(&CaptureFilter::default())
        .unwrap()
        .event_types
        .is_empty());
    import_jsonl_with(&store, exported.as_slice(), &mut |_| {
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    assert_eq!(store.search_backlog().unwrap(), 0);
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    // New captures, then age pruning takes everything older than the future.
    insert(&store, 200..260).await;
    caught_up(&store).await;
    assert_exact(&store, &path);
    store
        .prune(Retention {
            max_count: None,
            max_bytes: None,
            max_age: Some(Duration::seconds(-60)),
        })
        .await
        .unwrap();
    assert_table_matches_captures(&path);
    assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 0);
    assert_exact(&store, &path);
}

#[tokio::test]
async fn counts_are_exact_after_an_import_and_while_the_indexer_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(dir.path().join("source.db"), Retention::default()).unwrap();
    insert(&source, 0..1500).await;
    let mut exported = Vec::new();
    write_jsonl(&source, &CaptureFilter::default(), &mut exported).unwrap();
    drop(source);
    let path = dir.path().join("imported.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    import_jsonl_with(&store, exported.as_slice(), &mut |_| {
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    // An import counts and indexes what it brings as it goes: nothing is left behind it.
    assert_eq!(assert_exact(&store, &path), 0);
    assert_table_matches_captures(&path);
    drop(store);
    // The index and its counts started again, as a migration starts them: every capture is
    // the tail, counted by scanning, read beside no writer (so no indexer moves it).
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DELETE FROM facet_counts; UPDATE search_state SET indexed_through = 0; \
             INSERT INTO search_ids (search_ids) VALUES ('delete-all'); \
             DROP TABLE search_text_0;",
        )
        .unwrap();
    }
    let reader = StoreReader::open(&path).unwrap();
    assert_eq!(assert_exact(&reader, &path), 1500);
    drop(reader);
    // A writer's indexer catches up; the counts are exact before and after.
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_exact(&store, &path);
    caught_up(&store).await;
    assert_eq!(assert_exact(&store, &path), 0);
    assert_table_matches_captures(&path);
    // A reader of its own (the CLI's `partner listen captures`) reads the same counts.
    let reader = StoreReader::open(&path).unwrap();
    assert_exact(&reader, &path);
}

include!("schema_v4.rs");

#[tokio::test]
async fn a_version_4_store_is_counted_when_it_opens_and_its_column_indexes_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    {
        let source = Store::open(dir.path().join("source.db"), Retention::default()).unwrap();
        insert(&source, 0..300).await;
        let mut exported = Vec::new();
        write_jsonl(&source, &CaptureFilter::default(), &mut exported).unwrap();
        drop(source);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA_V4).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA user_version = 4;")
            .unwrap();
        for (n, line) in String::from_utf8(exported).unwrap().lines().enumerate() {
            let c: Capture = serde_json::from_str(line).unwrap();
            conn.execute(
                "INSERT INTO captures (id, received_at, received_at_us, method, path, headers, \
                 body, body_size, verdict, subscription_id, event_id, event_type, \
                 resource_type, attempt, response_status, response_body, \
                 response_from_test_mode, response_delay_ms, processing_micros, replay) \
                 VALUES (?1, ?2, ?3, 'POST', '/webhooks', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
                 1, 200, 'ok', 0, 0, 5, 0)",
                rusqlite::params![
                    c.id,
                    c.received_at.to_rfc3339(),
                    c.received_at.timestamp_micros(),
                    serde_json::to_string(&c.headers).unwrap(),
                    c.body,
                    c.body_size as i64,
                    c.verdict.as_str(),
                    c.subscription_id,
                    c.fields.event_id,
                    c.fields.event_type,
                    c.fields.resource_type,
                ],
            )
            .unwrap();
            // A listener of schema 4 had indexed the first 200 for search.
            if n == 199 {
                conn.execute("UPDATE search_state SET indexed_through = ?1", [c.id])
                    .unwrap();
            }
        }
    }
    // Read beside its old listener: the old paths, through the column indexes.
    let reader = StoreReader::open(&path).unwrap();
    assert_exact(&reader, &path);
    drop(reader);
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_table_matches_captures(&path);
    assert!(
        assert_exact(&store, &path) > 0,
        "the migrated store has a tail"
    );
    caught_up(&store).await;
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    let column_indexes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('captures_verdict', \
             'captures_event_type', 'captures_resource_type', 'captures_subscription')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!((version, column_indexes), (7, 0));
    // A listener of schema 4 opening it again makes its indexes and keeps no counts while it
    // indexes and deletes: the next open of schema 5 counts again from the captures.
    conn.execute_batch(SCHEMA_V4).unwrap();
    conn.execute(
        "DELETE FROM captures WHERE id IN (SELECT id FROM captures ORDER BY id LIMIT 40)",
        [],
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_table_matches_captures(&path);
    assert_exact(&store, &path);
}

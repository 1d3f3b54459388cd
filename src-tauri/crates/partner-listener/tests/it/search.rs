//! The inspector's reads answered by the store: pages with every filter, grouped pages, counts,
//! facets and text search (body words, header values, id substrings, input full of FTS syntax),
//! the search index kept right by clear, prune and import, a version-3 store migrated and
//! searchable, and the streamed import's progress and cancel. Real store files in tempdirs.

use chrono::{Duration, Utc};
use partner_listener::export::{import_jsonl_with, write_jsonl, IMPORT_BATCH};
use partner_listener::{
    Capture, CaptureFilter, CaptureQuery, Grouping, Header, HitCount, NotificationFields,
    ResponseRecord, Retention, Store, StoreReader, Verdict,
};
use std::ops::ControlFlow;

/// A notification capture with the given identity and a body note of free text.
fn capture(
    event_id: &str,
    event_type: &str,
    resource_type: &str,
    subscription: &str,
    verdict: Verdict,
    note: &str,
) -> Capture {
    let body = format!(
        r#"{{"eventId":"{event_id}","eventTime":"2024-05-01T10:00:00Z","eventType":"{event_type}","meta":{{"instanceId":"inst-7","resourceId":"res-{event_id}","resourceType":"{resource_type}","resourceRef":"https://svc.example/partner/v2/things/res-{event_id}"}},"note":"{note}"}}"#
    )
    .into_bytes();
    Capture {
        id: 0,
        received_at: Utc::now(),
        method: "POST".into(),
        path: "/webhooks".into(),
        headers: vec![
            Header::new("svc-subscriptionid", subscription),
            Header::new("x-trace", format!("Trace-Value-{event_id}")),
        ],
        body_size: body.len() as u64,
        fields: NotificationFields::read(&body).0,
        body: Some(body),
        peer: None,
        verdict,
        matched_key: None,
        subscription_id: Some(subscription.into()),
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

const TX: &str = "urn:svc:partner:transaction";
const PRODUCT: &str = "urn:svc:partner:product";

fn page(filter: CaptureFilter, offset: u64, limit: u64) -> CaptureQuery {
    CaptureQuery {
        filter,
        grouping: Grouping::EveryAttempt,
        offset,
        limit,
        count: HitCount::UpToCap,
    }
}

fn text(search: &str) -> CaptureFilter {
    CaptureFilter {
        text: Some(search.into()),
        ..Default::default()
    }
}

/// The event ids a search finds, newest first.
fn found(store: &StoreReader, search: &str) -> Vec<String> {
    store
        .page(&page(text(search), 0, 100))
        .unwrap()
        .items
        .into_iter()
        .map(|row| row.capture.fields.event_id.unwrap_or_default())
        .collect()
}

async fn indexed(store: &Store) {
    for _ in 0..500 {
        if store.search_backlog().unwrap() == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the search index did not catch up");
}

/// Twelve captures: 3 event types x 2 resource types x 2 subscriptions, verdicts mixed.
async fn twelve(store: &Store) -> Vec<Capture> {
    let mut stored = Vec::new();
    for i in 0..12 {
        let event_type = ["created", "updated", "deleted"][i % 3];
        let resource_type = [TX, PRODUCT][i % 2];
        let subscription = ["sub-a", "sub-b"][(i / 6) % 2];
        let verdict = if i % 4 == 0 {
            Verdict::InvalidSignature
        } else {
            Verdict::Valid
        };
        let note = format!("crimson falcon number{i}");
        stored.push(
            store
                .insert(capture(
                    &format!("ev{i:02}-{}", uuid::Uuid::new_v4().simple()),
                    event_type,
                    resource_type,
                    subscription,
                    verdict,
                    &note,
                ))
                .await
                .unwrap(),
        );
    }
    stored
}

#[tokio::test]
async fn each_filter_alone_and_combined_pages_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    let stored = twelve(&store).await;
    let expect = |filter: CaptureFilter, keep: &dyn Fn(&Capture) -> bool| {
        let want: Vec<i64> = stored
            .iter()
            .rev()
            .filter(|c| keep(c))
            .map(|c| c.id)
            .collect();
        let got = store.page(&page(filter.clone(), 0, 50)).unwrap();
        let ids: Vec<i64> = got.items.iter().map(|row| row.capture.id).collect();
        assert_eq!(ids, want, "{filter:?}");
        assert_eq!(got.total, want.len() as u64, "{filter:?}");
        assert!(!got.total_capped);
        assert!(got.items.iter().all(|row| row.group_attempts == 1));
    };
    expect(CaptureFilter::default(), &|_| true);
    expect(
        CaptureFilter {
            verdicts: vec![Verdict::InvalidSignature],
            ..Default::default()
        },
        &|c| c.verdict == Verdict::InvalidSignature,
    );
    expect(
        CaptureFilter {
            event_type: Some("updated".into()),
            ..Default::default()
        },
        &|c| c.fields.event_type.as_deref() == Some("updated"),
    );
    expect(
        CaptureFilter {
            resource_type: Some(PRODUCT.into()),
            ..Default::default()
        },
        &|c| c.fields.resource_type.as_deref() == Some(PRODUCT),
    );
    expect(
        CaptureFilter {
            subscription_id: Some("sub-b".into()),
            ..Default::default()
        },
        &|c| c.subscription_id.as_deref() == Some("sub-b"),
    );
    let since = stored[3].received_at;
    let until = stored[9].received_at;
    expect(
        CaptureFilter {
            since: Some(since),
            until: Some(until),
            ..Default::default()
        },
        &|c| c.received_at >= since && c.received_at < until,
    );
    expect(
        CaptureFilter {
            verdicts: vec![Verdict::Valid],
            event_type: Some("created".into()),
            subscription_id: Some("sub-a".into()),
            ..Default::default()
        },
        &|c| {
            c.verdict == Verdict::Valid
                && c.fields.event_type.as_deref() == Some("created")
                && c.subscription_id.as_deref() == Some("sub-a")
        },
    );
    indexed(&store).await;
    expect(
        CaptureFilter {
            event_type: Some("deleted".into()),
            ..text("FALCON crimson")
        },
        &|c| c.fields.event_type.as_deref() == Some("deleted"),
    );
    expect(
        CaptureFilter {
            ids: vec![stored[2].id, stored[5].id],
            ..Default::default()
        },
        &|c| c.id == stored[2].id || c.id == stored[5].id,
    );

    // Paging: newest first, a middle page, past the end.
    let middle = store.page(&page(CaptureFilter::default(), 4, 3)).unwrap();
    let ids: Vec<i64> = middle.items.iter().map(|row| row.capture.id).collect();
    assert_eq!(ids, vec![stored[7].id, stored[6].id, stored[5].id]);
    assert_eq!(middle.total, 12);
    assert!(store
        .page(&page(CaptureFilter::default(), 12, 3))
        .unwrap()
        .items
        .is_empty());
    // The old list keeps its shape.
    let list = store.query(&CaptureFilter::default(), 0, 2).unwrap();
    assert_eq!(list.items[0].id, stored[11].id);
    assert_eq!(list.total, 12);
}

#[tokio::test]
async fn every_page_of_the_whole_list_is_right_with_or_without_gaps_in_the_ids() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    twelve(&store).await;
    twelve(&store).await;
    // Every page (of several sizes, and past the end) against the ids as SQL lists them.
    let check = |when: &str| {
        assert!(store.wait_for_tables());
        let conn = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
        let all: Vec<i64> = conn
            .prepare("SELECT id FROM captures ORDER BY id DESC")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for limit in [1u64, 5, 7, 100] {
            for offset in 0..=all.len() as u64 + 2 {
                let got = store
                    .page(&page(CaptureFilter::default(), offset, limit))
                    .unwrap();
                let ids: Vec<i64> = got.items.iter().map(|row| row.capture.id).collect();
                let want: Vec<i64> = all
                    .iter()
                    .skip(offset as usize)
                    .take(limit as usize)
                    .copied()
                    .collect();
                assert_eq!(ids, want, "{when}: offset {offset}, limit {limit}");
                assert_eq!(got.total, all.len() as u64, "{when}");
            }
        }
    };
    check("ids with no gap");
    // Retention deletes the oldest: still no gap.
    store
        .prune(Retention {
            max_count: Some(20),
            max_bytes: None,
            max_age: None,
        })
        .await
        .unwrap();
    check("after a prune");
    // A clear under a filter leaves gaps in the middle.
    store
        .clear(&CaptureFilter {
            verdicts: vec![Verdict::InvalidSignature],
            ..Default::default()
        })
        .await
        .unwrap();
    check("after a clear by verdict");
    // Newer captures after the gap, then everything cleared and new ones again.
    twelve(&store).await;
    check("captures after the gap");
    store.clear_all().await.unwrap();
    check("empty");
    twelve(&store).await;
    check("after a clear of everything");
}

#[tokio::test]
async fn a_page_counted_through_itself_stops_one_hit_past_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    let stored = twelve(&store).await;
    indexed(&store).await;
    let through = |filter: CaptureFilter, grouping: Grouping, offset: u64, limit: u64| {
        store
            .page(&CaptureQuery {
                filter,
                grouping,
                offset,
                limit,
                count: HitCount::ThroughPage,
            })
            .unwrap()
    };
    let newest_first = |page: &partner_listener::CapturePage| -> Vec<i64> {
        page.items.iter().map(|row| row.capture.id).collect()
    };
    // Twelve hits of a word every capture has: the same rows as the counted page, and a total
    // that says only "this far, and more follow".
    let counted = store.page(&page(text("falcon"), 3, 4)).unwrap();
    assert_eq!((counted.total, counted.total_capped), (12, false));
    let first = through(text("falcon"), Grouping::EveryAttempt, 3, 4);
    assert_eq!(newest_first(&first), newest_first(&counted));
    assert_eq!((first.total, first.total_capped), (7, true));
    // The last page: nothing follows, so the total is exact.
    let last = through(text("falcon"), Grouping::EveryAttempt, 8, 4);
    assert_eq!(
        newest_first(&last),
        vec![stored[3].id, stored[2].id, stored[1].id, stored[0].id]
    );
    assert_eq!((last.total, last.total_capped), (12, false));
    // A page that ends exactly on the last hit, one past the end, and a word in no capture.
    let exact = through(text("falcon"), Grouping::EveryAttempt, 0, 12);
    assert_eq!(
        (exact.items.len(), exact.total, exact.total_capped),
        (12, 12, false)
    );
    let past = through(text("falcon"), Grouping::EveryAttempt, 20, 4);
    assert_eq!(
        (past.items.len(), past.total, past.total_capped),
        (0, 12, false)
    );
    let none = through(text("osprey"), Grouping::EveryAttempt, 0, 4);
    assert_eq!(
        (none.items.len(), none.total, none.total_capped),
        (0, 0, false)
    );
    // Grouped, each capture its own notification here.
    let grouped = through(text("falcon"), Grouping::ByNotification, 0, 5);
    assert_eq!(grouped.items.len(), 5);
    assert_eq!((grouped.total, grouped.total_capped), (5, true));
    // A count that needs no walk is exact whatever the query asks.
    let listed = through(CaptureFilter::default(), Grouping::EveryAttempt, 0, 2);
    assert_eq!((listed.total, listed.total_capped), (12, false));
}

#[tokio::test]
async fn facets_count_verdicts_without_the_verdict_filter_and_list_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    twelve(&store).await;
    let facets = store
        .facets(&CaptureFilter {
            verdicts: vec![Verdict::InvalidSignature],
            subscription_id: Some("sub-a".into()),
            ..Default::default()
        })
        .unwrap();
    // sub-a holds captures 0-5; of these, 0 and 4 are invalid.
    assert_eq!(facets.verdicts[&Verdict::InvalidSignature], 2);
    assert_eq!(facets.verdicts[&Verdict::Valid], 4);
    assert_eq!(facets.verdicts.get(&Verdict::MissingSignature), None);
    assert_eq!(facets.total, 2);
    assert!(!facets.capped);
    assert_eq!(facets.event_types, vec!["created", "deleted", "updated"]);
    assert_eq!(facets.resource_types, vec![PRODUCT, TX]);
    assert_eq!(facets.subscriptions, vec!["sub-a", "sub-b"]);
    indexed(&store).await;
    let searched = store.facets(&text("number3")).unwrap();
    assert_eq!((searched.total, searched.verdicts[&Verdict::Valid]), (1, 1));
    let nothing = store.facets(&text("absentword")).unwrap();
    assert_eq!(nothing.total, 0);
    assert!(nothing.verdicts.is_empty());
    assert_eq!(nothing.event_types.len(), 3, "the choices are the store's");
}

#[tokio::test]
async fn search_finds_body_words_header_values_and_id_substrings_indexed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    let specs = [
        ("alpha-1", "Approved loan for Zoë Müller"),
        ("beta-2", "pending review by the branch office"),
        (
            "gamma-3",
            "approved: (loan) * -refinance- \\\"quoted\\\" 50%_off",
        ),
    ];
    let mut ids = Vec::new();
    for (event_id, note) in specs {
        ids.push(
            store
                .insert(capture(
                    event_id,
                    "created",
                    TX,
                    "sub-a",
                    Verdict::Valid,
                    note,
                ))
                .await
                .unwrap()
                .id,
        );
    }
    // What the index answers and the scan of the unindexed tail answers alike.
    let checks = |store: &StoreReader| {
        assert_eq!(found(store, "approved"), vec!["gamma-3", "alpha-1"]);
        assert_eq!(found(store, "APPROVED LOAN"), vec!["gamma-3", "alpha-1"]);
        assert_eq!(
            found(store, "approved refin"),
            vec!["gamma-3"],
            "last word is a prefix"
        );
        assert_eq!(found(store, "appro"), vec!["gamma-3", "alpha-1"]);
        assert_eq!(found(store, "\"branch office\""), vec!["beta-2"]);
        assert_eq!(
            found(store, "pending approved"),
            Vec::<String>::new(),
            "all words"
        );
        // Header values, case-insensitively; an id substring; the capture id.
        assert_eq!(found(store, "trace-value-beta"), vec!["beta-2"]);
        assert_eq!(found(store, "PHA-"), vec!["alpha-1"]);
        assert_eq!(found(store, "res-gam"), vec!["gamma-3"]);
        assert!(found(store, &ids[1].to_string()).contains(&"beta-2".to_string()));
        // FTS syntax and odd input are literal text, never an error.
        for odd in [
            "\"",
            "\"\"",
            "*",
            "-",
            "-refinance",
            "a:b",
            "(",
            ")",
            "(loan)",
            "NEAR(a b)",
            "AND",
            "OR loan",
            "NOT",
            "'",
            "\\",
            "%",
            "_",
            "50%_off",
            "^",
            "{x}",
            "é",
            "😀",
            "loan*",
            "col:loan",
            "\u{0}",
            "a\"b",
            "   ",
        ] {
            let result = store.page(&page(text(odd), 0, 10));
            assert!(result.is_ok(), "{odd:?}: {result:?}");
            let facets = store.facets(&text(odd));
            assert!(facets.is_ok(), "{odd:?}: {facets:?}");
        }
        assert_eq!(found(store, "(loan)"), vec!["gamma-3", "alpha-1"]);
        assert_eq!(found(store, "%"), Vec::<String>::new());
        assert_eq!(
            found(store, "-refinance"),
            vec!["gamma-3"],
            "a minus is not NOT"
        );
    };
    // Read beside the writer, before and after the index has caught up: the same answers.
    let reader = StoreReader::open(&path).unwrap();
    assert!(store.wait_for_tables());
    checks(&reader);
    indexed(&store).await;
    assert_eq!(store.search_backlog().unwrap(), 0);
    checks(&reader);
    checks(&store);
    // What only the index answers so precisely.
    assert!(
        found(&store, "\"appro\"").is_empty(),
        "a quoted word is not a prefix"
    );
    assert_eq!(
        found(&store, "zoe muller"),
        vec!["alpha-1"],
        "diacritics fold"
    );
    assert_eq!(
        found(&store, "\"office branch\""),
        Vec::<String>::new(),
        "phrase order"
    );
}

/// The index of ids keeps no positions: a capture that holds a string's trigrams apart (in one
/// id or across two) is a candidate only, and is not found; the one that holds the string is,
/// whatever its case, from the index as from the scan of the tail.
#[tokio::test]
async fn an_id_substring_is_found_only_where_it_stands_whole_indexed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    // Each of the three holds every trigram of "bcdef-7" (bcd, cde, def, ef-, f-7); only the
    // first holds the string. The second holds them apart in one id, the third across two.
    for (event_id, subscription) in [
        ("abcdef-77", "sub-a"),
        ("bcde-cdef-ef-7", "sub-a"),
        ("zbcdef", "sub-ef-7"),
    ] {
        store
            .insert(capture(
                event_id,
                "created",
                TX,
                subscription,
                Verdict::Valid,
                "a note",
            ))
            .await
            .unwrap();
    }
    let checks = |store: &StoreReader| {
        assert_eq!(found(store, "bcdef-7"), vec!["abcdef-77"]);
        assert_eq!(found(store, "BCDEF-7"), vec!["abcdef-77"], "any case");
        assert_eq!(found(store, "cdef-ef-7"), vec!["bcde-cdef-ef-7"]);
        assert_eq!(found(store, "sub-ef-7"), vec!["zbcdef"]);
        assert_eq!(
            found(store, "bcd"),
            vec!["zbcdef", "bcde-cdef-ef-7", "abcdef-77"],
            "one trigram"
        );
        let counted = store.facets(&text("bcdef-7")).unwrap();
        assert_eq!(counted.total, 1, "counted as found");
    };
    let reader = StoreReader::open(&path).unwrap();
    assert!(store.wait_for_tables());
    checks(&reader);
    indexed(&store).await;
    // The index itself gives all three: the check is what leaves two out.
    let candidates: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM search_ids WHERE search_ids MATCH \
             '\"bcd\" AND \"cde\" AND \"def\" AND \"ef-\" AND \"f-7\"'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(candidates, 3);
    checks(&reader);
    checks(&store);
}

#[tokio::test]
async fn grouped_pages_list_each_notification_once_with_its_matching_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.db"), Retention::default()).unwrap();
    let mut newest_of_thrice = 0;
    for i in 0..3 {
        let verdict = if i == 1 {
            Verdict::InvalidSignature
        } else {
            Verdict::Valid
        };
        store
            .insert(capture(
                "single-a",
                "created",
                TX,
                "sub-a",
                Verdict::Valid,
                "x",
            ))
            .await
            .unwrap();
        let stored = store
            .insert(capture(
                "thrice",
                "created",
                TX,
                "sub-a",
                verdict,
                "redelivered",
            ))
            .await
            .unwrap();
        assert_eq!(stored.attempt, i + 1);
        newest_of_thrice = stored.id;
    }
    let single = store
        .insert(capture(
            "single-b",
            "created",
            TX,
            "sub-a",
            Verdict::Valid,
            "x",
        ))
        .await
        .unwrap();
    let grouped = |filter: CaptureFilter, offset, limit| {
        store
            .page(&CaptureQuery {
                filter,
                grouping: Grouping::ByNotification,
                offset,
                limit,
                count: HitCount::UpToCap,
            })
            .unwrap()
    };
    let all = grouped(CaptureFilter::default(), 0, 10);
    let rows: Vec<(String, u32)> = all
        .items
        .iter()
        .map(|row| {
            (
                row.capture.fields.event_id.clone().unwrap(),
                row.group_attempts,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("single-b".to_string(), 1),
            ("thrice".to_string(), 3),
            ("single-a".to_string(), 3)
        ]
    );
    assert_eq!(all.items[0].capture.id, single.id);
    assert_eq!(
        all.items[1].capture.id, newest_of_thrice,
        "its newest attempt"
    );
    assert_eq!((all.total, all.total_capped), (3, false));
    // Paging over groups.
    let second = grouped(CaptureFilter::default(), 1, 1);
    assert_eq!(second.items.len(), 1);
    assert_eq!(
        second.items[0].capture.fields.event_id.as_deref(),
        Some("thrice")
    );
    assert_eq!(second.total, 3);
    assert!(grouped(CaptureFilter::default(), 3, 1).items.is_empty());
    // Under a filter, only matching attempts count and the newest matching one is shown.
    let valid_thrice = grouped(
        CaptureFilter {
            verdicts: vec![Verdict::Valid],
            ..text("redelivered")
        },
        0,
        10,
    );
    assert_eq!(valid_thrice.items.len(), 1);
    assert_eq!(valid_thrice.items[0].group_attempts, 2);
    assert_eq!(valid_thrice.items[0].capture.id, newest_of_thrice);
    let invalid = grouped(
        CaptureFilter {
            verdicts: vec![Verdict::InvalidSignature],
            ..Default::default()
        },
        0,
        10,
    );
    assert_eq!(invalid.items.len(), 1);
    assert_eq!(invalid.items[0].group_attempts, 1);
    assert_eq!(invalid.items[0].capture.attempt, 2);
}

/// Whether the search tables hold an entry for `id` (read straight from the file; the words'
/// index is cut into shards of 65,536 ids, `search_text_<id / 65,536>`).
fn in_index(path: &std::path::Path, id: i64) -> bool {
    let conn = rusqlite::Connection::open(path).unwrap();
    let shard = format!("search_text_{}", id / 65_536);
    let text: i64 = conn
        .query_row(
            &format!("SELECT COUNT(*) FROM {shard} WHERE rowid = ?1"),
            [id],
            |row| row.get(0),
        )
        .unwrap_or(0);
    let ids: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM search_ids WHERE rowid = ?1",
            [id],
            |row| row.get(0),
        )
        .unwrap();
    text + ids > 0
}

#[tokio::test]
async fn clear_prune_and_import_keep_the_index_right() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    let stored = twelve(&store).await;
    indexed(&store).await;
    assert!(in_index(&path, stored[0].id));
    // Clear by verdict: the cleared captures leave the index and are never found.
    let invalid = CaptureFilter {
        verdicts: vec![Verdict::InvalidSignature],
        ..Default::default()
    };
    assert_eq!(store.clear(&invalid).await.unwrap(), 3);
    assert!(found(&store, "number4").is_empty());
    assert!(!in_index(&path, stored[4].id));
    assert!(in_index(&path, stored[5].id));
    assert_eq!(found(&store, "crimson").len(), 9);
    // Clear by a search.
    assert_eq!(store.clear(&text("number5")).await.unwrap(), 1);
    assert!(!in_index(&path, stored[5].id));
    assert_eq!(found(&store, "crimson").len(), 8);
    // Prune to the newest 4.
    store
        .prune(Retention {
            max_count: Some(4),
            max_bytes: None,
            max_age: None,
        })
        .await
        .unwrap();
    assert_eq!(found(&store, "crimson").len(), 4);
    assert!(!in_index(&path, stored[6].id));
    assert!(in_index(&path, stored[11].id));
    // Export, clear everything, import the export back: the same ids, below the indexed
    // id, are indexed again by the import itself.
    let mut exported = Vec::new();
    write_jsonl(&store, &CaptureFilter::default(), &mut exported).unwrap();
    store.clear_all().await.unwrap();
    assert!(found(&store, "crimson").is_empty());
    assert!(!in_index(&path, stored[11].id));
    let report = import_jsonl_with(&store, exported.as_slice(), &mut |_| {
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    assert_eq!((report.imported, report.cancelled), (4, false));
    assert_eq!(store.search_backlog().unwrap(), 0);
    assert_eq!(found(&store, "crimson").len(), 4);
    assert_eq!(found(&store, "number11").len(), 1);
    // Max age prunes through the index too.
    store
        .prune(Retention {
            max_count: None,
            max_bytes: None,
            max_age: Some(Duration::seconds(-60)),
        })
        .await
        .unwrap();
    assert!(found(&store, "crimson").is_empty());
    assert!(!in_index(&path, stored[11].id));
}

include!("schema_v3.rs");

#[tokio::test]
async fn a_version_3_store_is_migrated_and_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    // A store as version 3 wrote it, with two captures.
    {
        let old_dir = tempfile::tempdir().unwrap();
        let source = Store::open(old_dir.path().join("src.db"), Retention::default()).unwrap();
        source
            .insert(capture(
                "old-one",
                "created",
                TX,
                "sub-a",
                Verdict::Valid,
                "ancient scroll",
            ))
            .await
            .unwrap();
        source
            .insert(capture(
                "old-two",
                "updated",
                TX,
                "sub-a",
                Verdict::Valid,
                "modern tablet",
            ))
            .await
            .unwrap();
        let mut exported = Vec::new();
        write_jsonl(&source, &CaptureFilter::default(), &mut exported).unwrap();
        drop(source);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA_V3).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA user_version = 3;")
            .unwrap();
        for line in String::from_utf8(exported).unwrap().lines() {
            let c: Capture = serde_json::from_str(line).unwrap();
            conn.execute(
                "INSERT INTO captures (id, received_at, received_at_us, method, path, headers, \
                 body, body_size, verdict, subscription_id, event_id, event_type, instance_id, \
                 resource_id, resource_type, resource_ref, attempt, notification_id, \
                 response_status, response_body, response_from_test_mode, response_delay_ms, \
                 processing_micros, replay) VALUES (?1, ?2, ?3, 'POST', '/webhooks', ?4, ?5, \
                 ?6, 'valid', 'sub-a', ?7, ?8, ?9, ?10, ?11, ?12, 1, ?1, 200, 'ok', 0, 0, 5, 0)",
                rusqlite::params![
                    c.id,
                    c.received_at.to_rfc3339(),
                    c.received_at.timestamp_micros(),
                    serde_json::to_string(&c.headers).unwrap(),
                    c.body,
                    c.body_size as i64,
                    c.fields.event_id,
                    c.fields.event_type,
                    c.fields.instance_id,
                    c.fields.resource_id,
                    c.fields.resource_type,
                    c.fields.resource_ref,
                ],
            )
            .unwrap();
        }
    }
    // Read beside an old listener (no index): a search scans, and finds.
    let reader = StoreReader::open(&path).unwrap();
    assert_eq!(found(&reader, "ancient"), vec!["old-one"]);
    assert!(found(&reader, "old-t").contains(&"old-two".to_string()));
    drop(reader);
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_eq!(found(&store, "tablet"), vec!["old-two"]);
    indexed(&store).await;
    assert_eq!(found(&store, "scroll"), vec!["old-one"]);
    assert_eq!(found(&store, "old-t"), vec!["old-two"]);
    assert!(in_index(&path, 1));
    let facets = store.facets(&CaptureFilter::default()).unwrap();
    assert_eq!(facets.event_types, vec!["created", "updated"]);
    // New captures go on after the old ones and are searchable too.
    store
        .insert(capture(
            "new-one",
            "created",
            TX,
            "sub-a",
            Verdict::Valid,
            "ancient again",
        ))
        .await
        .unwrap();
    assert_eq!(found(&store, "ancient"), vec!["new-one", "old-one"]);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 7);
}

#[tokio::test]
async fn an_import_reports_progress_and_a_cancel_keeps_what_was_imported() {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(dir.path().join("src.db"), Retention::default()).unwrap();
    let total = IMPORT_BATCH * 2 + 500;
    let mut pending = Vec::new();
    for i in 0..total {
        pending.push(source.insert(capture(
            &format!("bulk-{i}"),
            "created",
            TX,
            "sub-a",
            Verdict::Valid,
            "bulk",
        )));
    }
    futures::future::try_join_all(pending).await.unwrap();
    let mut exported = Vec::new();
    write_jsonl(&source, &CaptureFilter::default(), &mut exported).unwrap();
    drop(source);

    let cancelled = Store::open(dir.path().join("cancelled.db"), Retention::default()).unwrap();
    let mut calls = Vec::new();
    let report = import_jsonl_with(&cancelled, exported.as_slice(), &mut |lines| {
        calls.push(lines);
        ControlFlow::Break(())
    })
    .await
    .unwrap();
    assert!(report.cancelled);
    assert_eq!(calls, vec![IMPORT_BATCH as u64]);
    assert_eq!(report.imported, IMPORT_BATCH as u64);
    assert_eq!(
        cancelled.count(&CaptureFilter::default()).unwrap(),
        IMPORT_BATCH as u64,
        "what was imported before the cancel stays"
    );

    let whole = Store::open(dir.path().join("whole.db"), Retention::default()).unwrap();
    let mut calls = Vec::new();
    let report = import_jsonl_with(&whole, exported.as_slice(), &mut |lines| {
        calls.push(lines);
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    assert_eq!(
        calls,
        vec![IMPORT_BATCH as u64, 2 * IMPORT_BATCH as u64, total as u64]
    );
    assert_eq!(
        (report.imported, report.skipped, report.cancelled),
        (total as u64, 0, false)
    );
    // Again: every id is taken, all skipped.
    let again = import_jsonl_with(&whole, exported.as_slice(), &mut |_| {
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    assert_eq!((again.imported, again.skipped), (0, total as u64));
    indexed(&whole).await;
    let listed = whole.page(&page(text("bulk-1234"), 0, 5)).unwrap();
    assert_eq!(listed.items.len(), 1);
}

/// Imports captures with these ids (an import keeps them), each noting "falcon number<id>".
async fn with_ids(store: &Store, ids: &[i64]) {
    let mut lines = String::new();
    for &id in ids {
        let mut c = capture(
            &format!("ev-{id}"),
            "created",
            TX,
            "sub-a",
            Verdict::Valid,
            &format!("falcon number{id}"),
        );
        c.id = id;
        lines.push_str(&serde_json::to_string(&c).unwrap());
        lines.push('\n');
    }
    let report = import_jsonl_with(store, lines.as_bytes(), &mut |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert_eq!(report.imported, ids.len() as u64);
}

fn ids_of(page: &partner_listener::CapturePage) -> Vec<i64> {
    page.items.iter().map(|row| row.capture.id).collect()
}

fn shard_tables(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE name GLOB 'search_text*' \
             AND sql LIKE 'CREATE VIRTUAL TABLE%'",
        )
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_search_walks_the_shards_of_the_index_newest_first_across_their_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    // Shard 0 ends at 65,535; shard 2 starts at 131,072; nothing in between but these.
    let mut ids: Vec<i64> = vec![3, 4];
    ids.extend(65_530..=65_541);
    ids.extend(140_000..=140_003);
    with_ids(&store, &ids).await;
    indexed(&store).await;
    assert_eq!(
        shard_tables(&path),
        vec!["search_text_0", "search_text_1", "search_text_2"]
    );
    assert!(ids.iter().all(|&id| in_index(&path, id)));
    let newest_first: Vec<i64> = ids.iter().rev().copied().collect();

    // Every hit, newest first, by pages of every size, counted or through the page.
    for limit in [1u64, 3, 7, 50] {
        for offset in 0..ids.len() as u64 + 1 {
            let counted = store.page(&page(text("falcon"), offset, limit)).unwrap();
            let want: Vec<i64> = newest_first
                .iter()
                .skip(offset as usize)
                .take(limit as usize)
                .copied()
                .collect();
            assert_eq!(ids_of(&counted), want, "offset {offset}, limit {limit}");
            assert_eq!(
                (counted.total, counted.total_capped),
                (ids.len() as u64, false)
            );
            let through = store
                .page(&CaptureQuery {
                    count: HitCount::ThroughPage,
                    ..page(text("fal"), offset, limit)
                })
                .unwrap();
            assert_eq!(
                ids_of(&through),
                want,
                "prefix, offset {offset}, limit {limit}"
            );
        }
    }
    let facets = store.facets(&text("falcon")).unwrap();
    assert_eq!((facets.total, facets.capped), (ids.len() as u64, false));
    assert_eq!(store.count(&text("falcon")).unwrap(), ids.len() as u64);
    // A word in one capture of each shard, an id substring and a capture id.
    assert_eq!(found(&store, "number65535"), vec!["ev-65535"]);
    assert_eq!(found(&store, "number65536"), vec!["ev-65536"]);
    assert_eq!(
        found(&store, "number14000"),
        vec!["ev-140003", "ev-140002", "ev-140001", "ev-140000"]
    );
    assert_eq!(found(&store, "ev-65537"), vec!["ev-65537"]);
    assert_eq!(found(&store, "140001"), vec!["ev-140001"]);

    // A clear by a search reaches into every shard; a prune drops the shards it empties.
    assert_eq!(store.clear(&text("number65536 falcon")).await.unwrap(), 1);
    assert!(!in_index(&path, 65_536));
    assert_eq!(store.count(&text("falcon")).unwrap(), ids.len() as u64 - 1);
    store
        .prune(Retention {
            max_count: Some(6),
            max_bytes: None,
            max_age: None,
        })
        .await
        .unwrap();
    assert_eq!(shard_tables(&path), vec!["search_text_1", "search_text_2"]);
    assert_eq!(
        ids_of(&store.page(&page(text("falcon"), 0, 50)).unwrap()),
        vec![140_003, 140_002, 140_001, 140_000, 65_541, 65_540]
    );
    // New captures above every shard are found before the index reaches them (the tail),
    // then from their own shard.
    let fresh = store
        .insert(capture(
            "ev-new",
            "created",
            TX,
            "sub-a",
            Verdict::Valid,
            "falcon fresh",
        ))
        .await
        .unwrap();
    assert_eq!(fresh.id, 140_004);
    assert_eq!(found(&store, "fresh"), vec!["ev-new"]);
    indexed(&store).await;
    assert!(in_index(&path, fresh.id));
    assert_eq!(found(&store, "fresh"), vec!["ev-new"]);
    store.clear_all().await.unwrap();
    assert!(shard_tables(&path).is_empty());
    assert!(found(&store, "falcon").is_empty());
}

#[tokio::test]
async fn a_version_5_store_is_read_through_its_single_index_and_sharded_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    {
        let store = Store::open(&path, Retention::default()).unwrap();
        twelve(&store).await;
        indexed(&store).await;
    }
    // What version 5 left: one table for the words, every capture indexed in it.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_text_0;
             CREATE VIRTUAL TABLE search_text USING fts5(body, header_values, content='',
                 contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
             PRAGMA user_version = 5;",
        )
        .unwrap();
        let rows: Vec<(i64, Vec<u8>, String)> = conn
            .prepare("SELECT id, body, headers FROM captures")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (id, body, headers) in rows {
            let values: Vec<Header> = serde_json::from_str(&headers).unwrap();
            let values: Vec<String> = values.into_iter().map(|h| h.value).collect();
            conn.execute(
                "INSERT INTO search_text (rowid, body, header_values) VALUES (?1, ?2, ?3)",
                rusqlite::params![id, String::from_utf8(body).unwrap(), values.join("\n")],
            )
            .unwrap();
        }
    }
    // Read as it is (the command line beside an older app): the single table is a shard.
    let reader = StoreReader::open(&path).unwrap();
    assert_eq!(found(&reader, "falcon").len(), 12);
    assert_eq!(found(&reader, "number7").len(), 1);
    drop(reader);
    // Opened by a writer of this version: the table goes, every capture is indexed again into
    // shards, and searches stay complete meanwhile.
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_eq!(found(&store, "falcon").len(), 12);
    indexed(&store).await;
    assert_eq!(shard_tables(&path), vec!["search_text_0"]);
    assert_eq!(found(&store, "falcon").len(), 12);
    assert_eq!(found(&store, "number7").len(), 1);
    assert_eq!(store.facets(&CaptureFilter::default()).unwrap().total, 12);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 7);
}

/// What a store of version 6 (or 4 or 5) has for its index of ids: with positions.
const IDS_WITH_POSITIONS: &str = "CREATE VIRTUAL TABLE search_ids USING fts5(
    event_id, resource_id, instance_id, subscription_id, resource_ref,
    content='', contentless_delete=1, tokenize='trigram'
)";

/// The SQL `search_ids` is declared with in the store at `path`.
fn ids_table_sql(path: &std::path::Path) -> String {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'search_ids'",
            [],
            |row| row.get(0),
        )
        .unwrap()
}

#[tokio::test]
async fn a_version_6_store_is_read_through_its_index_of_ids_and_rebuilt_without_positions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.db");
    let stored = {
        let store = Store::open(&path, Retention::default()).unwrap();
        let stored = twelve(&store).await;
        indexed(&store).await;
        stored
    };
    // What version 6 left: the index of ids with positions, every capture indexed in it.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "DROP TABLE search_ids; {IDS_WITH_POSITIONS};
             INSERT INTO search_ids (rowid, event_id, resource_id, instance_id, subscription_id,
                 resource_ref)
             SELECT id, event_id, resource_id, instance_id, subscription_id, resource_ref
             FROM captures;
             PRAGMA user_version = 6;"
        ))
        .unwrap();
    }
    let sixth = stored[6].fields.event_id.clone().unwrap();
    // Inside its uuid (after "ev06-"): no word starts there, so only the index of ids finds it.
    let fragment = &sixth[8..23];
    // Read as it is (the command line beside an older app).
    let reader = StoreReader::open(&path).unwrap();
    assert_eq!(found(&reader, fragment), vec![sixth.clone()]);
    assert_eq!(found(&reader, "falcon").len(), 12);
    drop(reader);
    // Opened by a writer of this version: the index is made again, without positions, and
    // searches stay complete meanwhile.
    let store = Store::open(&path, Retention::default()).unwrap();
    assert!(ids_table_sql(&path).contains("detail=none"));
    assert_eq!(found(&store, fragment), vec![sixth.clone()]);
    indexed(&store).await;
    assert!(in_index(&path, stored[6].id));
    assert_eq!(found(&store, fragment), vec![sixth.clone()]);
    assert_eq!(found(&store, &fragment.to_uppercase()), vec![sixth]);
    assert_eq!(found(&store, "falcon").len(), 12);
    assert_eq!(found(&store, "inst-7").len(), 12);
    assert_eq!(store.facets(&CaptureFilter::default()).unwrap().total, 12);
    drop(store);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 7);
    // Opened again: nothing to rebuild, nothing lost.
    let store = Store::open(&path, Retention::default()).unwrap();
    assert_eq!(store.search_backlog().unwrap(), 0);
    assert_eq!(found(&store, "falcon").len(), 12);
}

/// The app readies the read connections before the user's first search
/// (`StoreReader::warm_up`): it answers on a store indexed or not, and what a search finds after
/// it is what it found before (the warm-up's own search finds nothing).
#[tokio::test]
async fn warming_the_readers_up_changes_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path, Retention::default()).unwrap();
    store.warm_up().expect("warm-up of an empty store");
    twelve(&store).await;
    store.warm_up().expect("warm-up with the index behind");
    let before_index = found(&store, "falcon");
    indexed(&store).await;
    let indexed_before = found(&store, "falcon");
    store.warm_up().expect("warm-up of an indexed store");
    assert_eq!(found(&store, "falcon"), indexed_before);
    assert_eq!(indexed_before, before_index);
    assert_eq!(indexed_before.len(), 12);
    let reader = StoreReader::open(&path).unwrap();
    reader.warm_up().expect("warm-up of a reader of its own");
    assert_eq!(found(&reader, "falcon"), indexed_before);
    assert!(found(&reader, "qxzjwarmupqxzj").is_empty());
}

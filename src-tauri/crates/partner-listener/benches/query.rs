//! The inspector's reads on a large store: builds stores of spec-shaped captures through the
//! JSON Lines import (measuring its rate, and how long the search index takes to catch up),
//! then times every read the desktop inspector makes, as p50 and p95 over repeated runs: the
//! first page and a middle one, each filter, a grouped page, text searches (a word in every
//! body, a rare word, an id substring, a word in no body) and the facets.
//!
//! Run: `cargo bench -p partner-listener --bench query` (env: QUERY_SIZES=100000,1000000,
//! QUERY_RUNS=20, QUERY_DIR=folder for the stores, default a temporary one under /tmp; a
//! million captures take about 10 GB there while the bench runs: 3.8 GB of JSON Lines, deleted
//! after the import, and a 6.3 GB store; QUERY_KEEP=1 keeps the stores; QUERY_STORE=FILE times
//! the reads on an existing store instead, encrypted with PARTNER_DATA_KEY or the `data.key`
//! beside it if either is there). Prints a table per size.

use chrono::Duration;
use partner_listener::export::import_jsonl;
use partner_listener::{
    CaptureFilter, CaptureQuery, Grouping, HitCount, Retention, Store, StoreOptions, StoreReader,
    Verdict,
};
use std::io::{BufWriter, Write};
use std::time::Instant;

#[path = "support/corpus.rs"]
mod corpus;

/// The key a store made by `partner listen` is encrypted with, found where `partner listen`
/// looks without a secret store: `PARTNER_DATA_KEY` (64 hex digits), else the key file
/// `data.key` beside the store. `None`: an unencrypted store (this bench's own).
fn key_beside(store: &std::path::Path) -> Option<partner_listener::StoreKey> {
    let file = store.with_file_name("data.key");
    let (text, home) = match std::env::var("PARTNER_DATA_KEY") {
        Ok(text) => (text, "PARTNER_DATA_KEY".to_string()),
        Err(_) => (
            std::fs::read_to_string(&file).ok()?,
            format!("the key file {}", file.display()),
        ),
    };
    let key = partner_seal::DataKey::from_hex(text.trim()).expect("a key of 64 hex digits");
    Some(partner_listener::StoreKey::new(key, home))
}

fn main() {
    let sizes: Vec<u64> = std::env::var("QUERY_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let runs: usize = std::env::var("QUERY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let root =
        std::env::var("QUERY_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // QUERY_STORE=FILE: time the reads on a store made before (by this bench with QUERY_KEEP,
    // by `seed_captures`, or by a flood: `benches/wrk/run.sh` with WRK_KEEP_STORE), opened as
    // a writer first so it has this version's indexes; encrypted with the key `key_beside`
    // finds, if there is one.
    if let Ok(existing) = std::env::var("QUERY_STORE") {
        let key = key_beside(std::path::Path::new(&existing));
        runtime.block_on(async {
            let options = StoreOptions {
                key: key.clone(),
                ..StoreOptions::default()
            };
            let store = Store::open_with(&existing, options).expect("store");
            while store.search_backlog().expect("backlog") > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        });
        let reader = StoreReader::open_keyed(&existing, key).expect("reader");
        let size = reader.count(&CaptureFilter::default()).expect("count");
        println!("\n{size} captures in {existing}");
        time_reads(&reader, size, runs);
        return;
    }
    for size in sizes {
        let dir = tempfile::tempdir_in(&root).expect("tempdir");
        let jsonl = dir.path().join("captures.jsonl");
        let db = dir.path().join("captures.sqlite3");
        {
            let mut out = BufWriter::new(std::fs::File::create(&jsonl).expect("jsonl"));
            std::io::copy(&mut corpus::CorpusReader::new(size), &mut out).expect("write jsonl");
            out.flush().expect("flush");
        }
        let (import_secs, index_secs) = runtime.block_on(async {
            let store = Store::open_with(
                &db,
                StoreOptions {
                    retention: Retention::default(),
                    holder: "the query bench",
                    ..StoreOptions::default()
                },
            )
            .expect("store");
            let file = std::io::BufReader::with_capacity(
                1 << 20,
                std::fs::File::open(&jsonl).expect("open jsonl"),
            );
            let started = Instant::now();
            let report = import_jsonl(&store, file).await.expect("import");
            let import_secs = started.elapsed().as_secs_f64();
            assert_eq!(report.imported, size);
            // The moment the import returns: a search for a rare word and an id fragment.
            let newest = store
                .query(&CaptureFilter::default(), 0, 1)
                .expect("newest")
                .items
                .remove(0);
            let fragment = newest.fields.event_id.expect("event id")[9..17].to_string();
            for (what, words) in [("rare word", corpus::RARE_WORD), ("id fragment", &fragment)] {
                let asked = Instant::now();
                let page = store
                    .page(&CaptureQuery {
                        filter: text(words),
                        limit: 50,
                        ..CaptureQuery::default()
                    })
                    .expect("search");
                println!(
                    "search ({what}) the moment the import returned: {:.1} ms, {} found, {} \
                     not searched yet",
                    asked.elapsed().as_secs_f64() * 1000.0,
                    page.total,
                    page.unsearched
                );
            }
            let indexing = Instant::now();
            while store.search_backlog().expect("backlog") > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            (import_secs, indexing.elapsed().as_secs_f64())
        });
        let floor = fts_floor(&jsonl, &dir.path().join("floor.sqlite3"));
        std::fs::remove_file(&jsonl).expect("remove jsonl");
        println!(
            "\nthe FTS5 floor: these captures' text alone (body, header values, the five ids) \
             into the same two FTS5 tables, nothing else: {floor:.0} captures/s; the import with \
             its index at {:.2}x of it",
            size as f64 / (import_secs + index_secs) / floor
        );
        let file_mb = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        println!(
            "\n{size} captures: import {import_secs:.1} s = {:.0} captures/s; search index \
             caught up {index_secs:.1} s later ({:.0} captures/s); store {file_mb:.0} MB",
            size as f64 / import_secs,
            size as f64 / (import_secs + index_secs),
        );
        let reader = StoreReader::open(&db).expect("reader");
        time_reads(&reader, size, runs);
        if std::env::var("QUERY_KEEP").is_ok() {
            let kept = dir.keep();
            println!("kept {}", kept.display());
        }
    }
}

/// How fast this machine's SQLite can index the captures of `jsonl` and nothing else: their
/// body, header values and five ids, written into a fresh store holding only the two FTS5
/// tables the search uses (the same tokenizers, the same FTS5 memory), in transactions of the
/// import's batch size; the JSON is read and the text made outside the timed part. What an
/// import with its index built is measured against (captures/s).
fn fts_floor(jsonl: &std::path::Path, db: &std::path::Path) -> f64 {
    use std::io::BufRead;
    let conn = rusqlite::Connection::open(db).expect("floor store");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE VIRTUAL TABLE words USING fts5(body, header_values, content='',
             contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
         INSERT INTO words (words, rank) VALUES ('hashsize', 16777216);
         CREATE VIRTUAL TABLE ids USING fts5(event_id, resource_id, instance_id,
             subscription_id, resource_ref, content='', contentless_delete=1, tokenize='trigram',
             detail=none);
         INSERT INTO ids (ids, rank) VALUES ('hashsize', 16777216);",
    )
    .expect("floor tables");
    let file = std::io::BufReader::new(std::fs::File::open(jsonl).expect("open jsonl"));
    let mut lines = file.lines();
    let mut spent = std::time::Duration::ZERO;
    let mut count = 0u64;
    loop {
        let batch: Vec<partner_listener::Capture> = lines
            .by_ref()
            .take(partner_listener::export::IMPORT_BATCH)
            .map(|line| serde_json::from_str(&line.expect("line")).expect("capture"))
            .collect();
        if batch.is_empty() {
            break;
        }
        let rows: Vec<_> = batch
            .iter()
            .map(|c| {
                let body = c.body.as_deref().map(String::from_utf8_lossy);
                let headers: Vec<&str> = c.headers.iter().map(|h| h.value.as_str()).collect();
                (c.id, body.map(|b| b.into_owned()), headers.join("\n"), c)
            })
            .collect();
        let started = Instant::now();
        let tx = conn.unchecked_transaction().expect("tx");
        for (id, body, header_values, c) in &rows {
            tx.prepare_cached("INSERT INTO words (rowid, body, header_values) VALUES (?1, ?2, ?3)")
                .expect("words")
                .execute(rusqlite::params![id, body, header_values])
                .expect("word row");
            tx.prepare_cached(
                "INSERT INTO ids (rowid, event_id, resource_id, instance_id, subscription_id, \
                 resource_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .expect("ids")
            .execute(rusqlite::params![
                id,
                c.fields.event_id,
                c.fields.resource_id,
                c.fields.instance_id,
                c.subscription_id,
                c.fields.resource_ref
            ])
            .expect("id row");
        }
        tx.commit().expect("commit");
        spent += started.elapsed();
        count += rows.len() as u64;
    }
    drop(conn);
    let _ = std::fs::remove_file(db);
    count as f64 / spent.as_secs_f64()
}

/// Times every read of the inspector on `reader` (a store of `size` corpus captures).
fn time_reads(reader: &StoreReader, size: u64, runs: usize) {
    {
        // The newest capture that names a notification (a store the app has run on also holds
        // its readiness probes and the like, which name none).
        let newest = reader
            .query(&CaptureFilter::default(), 0, 50)
            .expect("newest");
        let sample_event = newest
            .items
            .iter()
            .find_map(|capture| capture.fields.event_id.clone())
            .expect("a capture with an event id among the newest 50");
        let id_fragment = sample_event[9..17].to_string();
        let middle_time = newest.items[0].received_at - Duration::milliseconds(size as i64 * 125);
        let filter = |f: CaptureFilter| f;
        let cases: Vec<(&str, CaptureQuery)> = vec![
            ("first page", page(filter(CaptureFilter::default()), 0)),
            ("middle page", page(CaptureFilter::default(), size / 2)),
            (
                "verdict invalid-signature",
                page(
                    CaptureFilter {
                        verdicts: vec![Verdict::InvalidSignature],
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "verdict, middle page",
                page(
                    CaptureFilter {
                        verdicts: vec![Verdict::Valid],
                        ..Default::default()
                    },
                    size / 4,
                ),
            ),
            (
                "event type",
                page(
                    CaptureFilter {
                        event_type: Some("updated".into()),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "resource type",
                page(
                    CaptureFilter {
                        resource_type: Some("urn:svc:partner:lender".into()),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "subscription",
                page(
                    CaptureFilter {
                        subscription_id: Some(corpus::SUBSCRIPTIONS[2].into()),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "time window (1 h)",
                page(
                    CaptureFilter {
                        since: Some(middle_time),
                        until: Some(middle_time + Duration::hours(1)),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "verdict+type+subscription",
                page(
                    CaptureFilter {
                        verdicts: vec![Verdict::InvalidSignature],
                        event_type: Some("deleted".into()),
                        subscription_id: Some(corpus::SUBSCRIPTIONS[1].into()),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            ("grouped, first page", grouped(CaptureFilter::default(), 0)),
            (
                "grouped, offset 5000",
                grouped(CaptureFilter::default(), 5000),
            ),
            (
                "grouped, verdict",
                grouped(
                    CaptureFilter {
                        verdicts: vec![Verdict::InvalidSignature],
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "search: word in every body",
                page(text(corpus::COMMON_WORD), 0),
            ),
            (
                "search: every body, through page",
                CaptureQuery {
                    count: HitCount::ThroughPage,
                    ..page(text(corpus::COMMON_WORD), 0)
                },
            ),
            (
                "search: every body, offset 5000",
                page(text(corpus::COMMON_WORD), 5000),
            ),
            ("search: rare word", page(text(corpus::RARE_WORD), 0)),
            (
                "search: two words, prefix",
                page(text("borrower approv"), 0),
            ),
            ("search: id substring", page(text(&id_fragment), 0)),
            // Every capture's resourceRef holds this string's trigrams ("v2/", "par", "tne",
            // "er/"), none holds the string: the worst an index of ids without positions is
            // asked, each capture a candidate to check.
            ("search: id string held apart", page(text("v2/partner/"), 0)),
            (
                "search: word in no body",
                page(text(corpus::ABSENT_WORD), 0),
            ),
            (
                "search + verdict",
                page(
                    CaptureFilter {
                        verdicts: vec![Verdict::InvalidSignature],
                        ..text(corpus::COMMON_WORD)
                    },
                    0,
                ),
            ),
            (
                "search + verdict, through page",
                CaptureQuery {
                    count: HitCount::ThroughPage,
                    ..page(
                        CaptureFilter {
                            verdicts: vec![Verdict::InvalidSignature],
                            ..text(corpus::COMMON_WORD)
                        },
                        0,
                    )
                },
            ),
        ];
        println!(
            "{:<34} {:>9} {:>9} {:>10}",
            "read", "p50 ms", "p95 ms", "total"
        );
        for (name, query) in &cases {
            let mut total = String::new();
            let (p50, p95) = time(runs, || {
                let page = reader.page(query).expect("page");
                total = format!("{}{}", page.total, if page.total_capped { "+" } else { "" });
            });
            println!("{name:<34} {p50:>9.1} {p95:>9.1} {total:>10}");
        }
        for (name, f) in [
            ("facets", CaptureFilter::default()),
            (
                "facets, verdict+type",
                CaptureFilter {
                    verdicts: vec![Verdict::Valid],
                    event_type: Some("created".into()),
                    ..Default::default()
                },
            ),
            ("facets, word in every body", text(corpus::COMMON_WORD)),
            ("facets, rare word", text(corpus::RARE_WORD)),
        ] {
            let mut total = String::new();
            let (p50, p95) = time(runs, || {
                let facets = reader.facets(&f).expect("facets");
                total = format!("{}{}", facets.total, if facets.capped { "+" } else { "" });
            });
            println!("{name:<34} {p50:>9.1} {p95:>9.1} {total:>10}");
        }
    }
}

fn page(filter: CaptureFilter, offset: u64) -> CaptureQuery {
    CaptureQuery {
        filter,
        grouping: Grouping::EveryAttempt,
        offset,
        limit: 50,
        count: HitCount::UpToCap,
    }
}

fn grouped(filter: CaptureFilter, offset: u64) -> CaptureQuery {
    CaptureQuery {
        grouping: Grouping::ByNotification,
        ..page(filter, offset)
    }
}

fn text(words: &str) -> CaptureFilter {
    CaptureFilter {
        text: Some(words.into()),
        ..Default::default()
    }
}

/// p50 and p95 of `runs` calls, in milliseconds (one warm-up call first).
fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.95))
}

//! Fills a capture store with spec-shaped captures, fast, through the JSON Lines import the user
//! has (`benches/support/corpus.rs` says what they look like), then waits until the search index
//! has caught up, so the store is what months of traffic leave: for the desktop app's memory and
//! latency benchmark and for trying the inspector on a large store.
//!
//! Run: `cargo run --release -p partner-listener --example seed_captures -- --count 100000
//! --db /tmp/seeded.sqlite3` (the file must not hold a store in use by a listener).

use partner_listener::export::import_jsonl_with;
use partner_listener::{Retention, Store, StoreOptions};
use std::ops::ControlFlow;
use std::time::Instant;

#[path = "../benches/support/corpus.rs"]
mod corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut count = 100_000u64;
    let mut db = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--count" => count = args.next().ok_or("--count needs a number")?.parse()?,
            "--db" => db = Some(args.next().ok_or("--db needs a file")?),
            other => {
                return Err(format!("unknown argument {other}: use --count N --db FILE").into())
            }
        }
    }
    let db = db.ok_or("--db FILE is required")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = Store::open_with(
            &db,
            StoreOptions {
                retention: Retention::default(),
                holder: "seed_captures",
                ..StoreOptions::default()
            },
        )?;
        let started = Instant::now();
        let mut last_report = Instant::now();
        let report = import_jsonl_with(&store, corpus::CorpusReader::new(count), &mut |lines| {
            if last_report.elapsed().as_secs() >= 5 {
                eprintln!("seed: {lines} captures imported");
                last_report = Instant::now();
            }
            ControlFlow::Continue(())
        })
        .await?;
        let imported_in = started.elapsed();
        eprintln!(
            "seed: imported {} (skipped {}) in {:.1} s, {:.0} captures/s",
            report.imported,
            report.skipped,
            imported_in.as_secs_f64(),
            report.imported as f64 / imported_in.as_secs_f64()
        );
        let indexing = Instant::now();
        while store.search_backlog()? > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        eprintln!(
            "seed: search index caught up {:.1} s after the import",
            indexing.elapsed().as_secs_f64()
        );
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}

use partner_listener::{CaptureFilter, CaptureQuery, Grouping, HitCount, StoreReader};
use std::time::Instant;
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let words: Vec<String> = std::env::args().skip(2).collect();
    let store = StoreReader::open(&path).unwrap();
    if std::env::var("WARM").is_ok() {
        let t = Instant::now();
        store.warm_up().unwrap();
        println!("warm-up {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    for round in 0..2 {
        for w in &words {
            for count in [HitCount::UpToCap, HitCount::ThroughPage] {
                let filter = CaptureFilter {
                    text: Some(w.clone()),
                    ..CaptureFilter::default()
                };
                let t = Instant::now();
                let page = store
                    .page(&CaptureQuery {
                        filter: filter.clone(),
                        grouping: Grouping::EveryAttempt,
                        offset: 0,
                        limit: 100,
                        count,
                    })
                    .unwrap();
                println!(
                    "round {round} {w:>12} {count:?}: page {:.1} ms ({} rows, total {})",
                    t.elapsed().as_secs_f64() * 1e3,
                    page.items.len(),
                    page.total
                );
            }
        }
    }
}

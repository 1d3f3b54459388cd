//! Opens a capture store as a writer and says how long that took: what a migration costs
//! (schema 4 to 5 makes `facet_counts` from the captures and drops the column indexes).
//!
//! Run: `cargo run --release -p partner-listener --example open_store -- STORE`.

use partner_listener::{Retention, Store};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: open_store STORE (a capture store file)")?;
    let started = Instant::now();
    let store = Store::open(&path, Retention::default())?;
    let opened = started.elapsed();
    drop(store);
    println!("opened {path} in {:.1} ms", opened.as_secs_f64() * 1000.0);
    Ok(())
}

//! Opens a capture store as a writer and says how long that took: what a migration costs
//! (schema 4 to 5 makes `facet_counts` from the captures and drops the column indexes), and what
//! an open store holds in memory: the process's resident set (`VmRSS`) and its peak (`VmHWM`)
//! read from `/proc/self/status` while the store is still open (most of it is the writer's map
//! of notifications, [`partner_listener`]'s `redelivery` module). It allocates with mimalloc,
//! as the desktop app and `partner listen` do, so the numbers are the app's.
//!
//! Run: `cargo run --release -p partner-listener --example open_store -- STORE [HOURS]`, HOURS
//! the redelivery window the map is read for (default: the store's, six hours; a large one
//! reads every notification, as a store whose captures all arrived within the window would).

use partner_listener::{Store, StoreOptions};
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: open_store STORE (a capture store file)")?;
    let before = memory();
    let started = Instant::now();
    let window = match std::env::args().nth(2) {
        Some(hours) => Some(std::time::Duration::from_secs(
            hours
                .parse::<u64>()
                .map_err(|_| "HOURS is a whole number of hours")?
                .saturating_mul(3600),
        )),
        None => None,
    };
    let store = Store::open_with(
        &path,
        StoreOptions {
            redelivery_window: window,
            ..StoreOptions::default()
        },
    )?;
    let opened = started.elapsed();
    let open = memory();
    drop(store);
    println!("opened {path} in {:.1} ms", opened.as_secs_f64() * 1000.0);
    for (when, figures) in [("before opening", before), ("open", open)] {
        match figures {
            Some(Memory { rss_kib, hwm_kib }) => println!(
                "{when}: VmRSS {:.1} MiB, VmHWM {:.1} MiB",
                rss_kib as f64 / 1024.0,
                hwm_kib as f64 / 1024.0
            ),
            None => println!("{when}: no /proc/self/status (Linux only)"),
        }
    }
    Ok(())
}

struct Memory {
    rss_kib: u64,
    hwm_kib: u64,
}

/// The resident set and its peak, from `/proc/self/status` (None off Linux).
fn memory() -> Option<Memory> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
}

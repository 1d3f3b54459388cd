//! A new, empty store in a temporary folder, as each bench run starts with.

use partner_listener::{Durability, Retention, Store, StoreOptions};

/// The store and the folder that holds it (the folder goes when it is dropped).
pub fn fresh_store(durability: Durability) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_with(
        dir.path().join("bench.sqlite3"),
        StoreOptions {
            retention: Retention::default(),
            durability,
            holder: "the store bench",
            ..StoreOptions::default()
        },
    )
    .expect("store");
    (dir, store)
}

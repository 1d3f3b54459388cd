//! A new, empty store in a temporary folder, as each bench run starts with: encrypted at rest
//! with a new data key, as every program opens it, unless `BENCH_UNENCRYPTED=1` (the store as
//! it was before data at rest, to compare within one build).

use partner_listener::{Durability, Retention, Store, StoreKey, StoreOptions};

/// The store and the folder that holds it (the folder goes when it is dropped).
pub fn fresh_store(durability: Durability) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let unencrypted = std::env::var("BENCH_UNENCRYPTED").is_ok_and(|v| v == "1");
    let store = Store::open_with(
        dir.path().join("bench.sqlite3"),
        StoreOptions {
            retention: Retention::default(),
            durability,
            holder: "the store bench",
            key: (!unencrypted)
                .then(|| StoreKey::new(partner_seal::DataKey::generate(), "the bench")),
            ..StoreOptions::default()
        },
    )
    .expect("store");
    (dir, store)
}

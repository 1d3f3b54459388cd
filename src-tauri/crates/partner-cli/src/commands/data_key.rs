//! The console's data key for a command (`partner_local::data_key`): the key the audit log's
//! lines and a sandbox's `--data` file are encrypted with, the same one the app uses.
//!
//! `PARTNER_DATA_KEY`, `PARTNER_DATA_KEY_FILE` and a `data.key` in the data folder decide
//! without the OS's secret store (a headless run never touches it); otherwise the store is
//! probed (`partner_client::probe_secret_store`) and holds the key when it works, and a store
//! that does not work means a key file in the data folder, as on a server.

use partner_client::{KeyringStore, SecretStore};
use partner_local::data_key::{self, KeySources, ResolvedKey};

/// The key, found (or made) for the shared data folder, once per run (`resolve_once`: the
/// capture store's lookup for the same folder gets the same key). Blocking.
pub fn resolve() -> partner_local::Result<ResolvedKey> {
    resolve_in(&partner_local::paths::data_dir()?)
}

/// The key for the data in `folder` (a `data.key` there is the key file it looks for, and where
/// one is made without a secret store), as the capture store's `--db` finds its key. Blocking.
pub fn resolve_in(data_dir: &std::path::Path) -> partner_local::Result<ResolvedKey> {
    let sources = KeySources::from_process();
    let store = KeyringStore::default();
    let working = data_key::needs_secret_store(&sources, data_dir)
        && partner_client::probe_secret_store(&store).is_ok();
    let secrets: Option<&dyn SecretStore> = if working { Some(&store) } else { None };
    let resolved = data_key::resolve_once(&sources, data_dir, secrets)?;
    if resolved.new {
        eprintln!(
            "partner: made {} for the console's data at rest",
            resolved.describe()
        );
    }
    Ok(resolved)
}

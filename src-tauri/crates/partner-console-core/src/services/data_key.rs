//! The console's data key in the app (`partner_local::data_key`): the key the audit log's lines
//! and the embedded sandbox's data file are encrypted with.
//!
//! Found once per run and data folder (`data_key::resolve_once`, shared with the capture
//! store's lookup) and kept for the run: every user of it gets the same key, and a key made at a
//! first start is made once. A lookup that fails (a secret store that did not answer) is not
//! kept: the next use tries again.
//!
//! The OS's secret store is offered only when the start-up probe found it working
//! (`KeychainKeys::health`); otherwise the key is a key file in the data folder, as on a
//! server, unless data encrypted under a key is already there (then its key is in the keychain,
//! and the lookup fails until the keychain answers, as the capture store's does).
//! `PARTNER_DATA_KEY` or `PARTNER_DATA_KEY_FILE` decide first wherever they are set.

use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_client::SecretStore;
use partner_local::data_key::{self, KeySources, ResolvedKey};
use partner_local::{KeychainHealth, KeychainKeys};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What finding the key needs, taken from the state so it can move to a blocking thread (or
/// into a journal that looks the key up at its first write).
#[derive(Debug, Clone)]
pub struct KeyLookup {
    data_dir: PathBuf,
    secrets: Arc<dyn SecretStore>,
    /// Whether `secrets` works, as the start-up probe (and "Try again") found it.
    keychain: Arc<KeychainKeys>,
}

impl KeyLookup {
    pub fn of(state: &AppState) -> Self {
        Self {
            data_dir: state.data_dir.clone(),
            secrets: state.secrets.clone(),
            keychain: state.keys.clone(),
        }
    }

    /// The key (found or made, once per run and data folder). Blocking: the secret store's
    /// calls are round trips.
    pub fn resolve(&self) -> Result<ResolvedKey> {
        let sources = KeySources::from_process();
        let secrets = match self.keychain.health() {
            KeychainHealth::Available => Some(self.secrets.as_ref()),
            KeychainHealth::Unavailable(why)
                if data_key::needs_secret_store(&sources, &self.data_dir)
                    && data_under_a_key(&self.data_dir) =>
            {
                return Err(AppError::new(
                    ErrorKind::Keychain,
                    format!(
                        "The key of the console's data at rest is in the keychain, which is not available ({why})."
                    ),
                    "Unlock the keychain and try again.",
                ));
            }
            KeychainHealth::Unavailable(_) => None,
        };
        data_key::resolve_once(&sources, &self.data_dir, secrets).map_err(|e| {
            AppError::new(
                ErrorKind::Keychain,
                format!("The key of the console's data at rest could not be found: {e}."),
                "Unlock the keychain and try again, or set PARTNER_DATA_KEY_FILE to a key file.",
            )
        })
    }
}

/// Whether the data folder holds data encrypted under a key already (the capture store, the
/// embedded sandbox's data file, the audit log's sealed lines). With the keychain not
/// answering and no variable or key file giving the key, the key is then in the keychain: a
/// new key (in a key file, which would stay in the keychain's place) would not open them.
fn data_under_a_key(data_dir: &Path) -> bool {
    use partner_local::paths::{AUDIT_LOG, CAPTURE_STORE, EMBEDDED_SANDBOX};
    partner_listener::encrypted_at_rest(data_dir.join(CAPTURE_STORE))
        || partner_listener::encrypted_at_rest(data_dir.join(EMBEDDED_SANDBOX))
        || partner_local::AuditLog::sealed_at(&data_dir.join(AUDIT_LOG))
}

/// The key, found on a blocking thread.
pub async fn resolved(state: &AppState) -> Result<ResolvedKey> {
    let lookup = KeyLookup::of(state);
    tokio::task::spawn_blocking(move || lookup.resolve())
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("A keychain task failed: {e}."),
                "Try again.",
            )
        })?
}

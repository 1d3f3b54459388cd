//! The OS's secret store, checked before a command gives it a secret.
//!
//! Why: a store that does not keep what it is given (a locked or missing Secret Service, a build
//! without the OS's store) would lose a client secret, a signing key or an index key, and the
//! loss shows only later, as a sign-in that needs the secret again, notifications that fail
//! verification or an encrypted copy nobody can open. So before the first secret of a command
//! is given to it, the store is probed (`partner_client::probe_secret_store`: a marker written,
//! read back and deleted), and a store that fails is named with what to do, before the service
//! is changed or anything is saved.

use crate::error::{CliError, Result};
use partner_client::SecretStore;

/// Fails, naming the store and what to do, unless `store` keeps what it is given; `what` says
/// which secrets were about to go there ("signing keys").
pub fn ready(store: &dyn SecretStore, what: &str) -> Result<()> {
    partner_client::probe_secret_store(store).map_err(|e| {
        let said = match e {
            partner_client::ClientError::Keychain { message } => message,
            other => other.to_string(),
        };
        CliError::Usage(format!(
            "{what} go to the keychain, which is not available: {said}"
        ))
    })
}

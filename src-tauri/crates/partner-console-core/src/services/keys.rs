//! Loading the listener's signing keys for the active connection, in the background.
//!
//! Why in the background: it walks every product of the connection with the client's pager (to
//! learn its subscription ids) and reads the keychain for each, a D-Bus round trip apiece; start-up must not wait for
//! it (the products table comes first). Until it has run, a notification for a subscription not
//! yet loaded is still verified: the key source reads the keychain on a miss.
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use partner_client::PartnerClient;
use tokio_util::sync::CancellationToken;

/// The subscription ids of every product of `client`'s connection.
pub async fn subscription_ids(client: &PartnerClient) -> Result<Vec<String>> {
    Ok(client
        .all_subscriptions()
        .await?
        .into_iter()
        .filter_map(|at| at.subscription.subscription_id)
        .collect())
}

/// Reads the keys of the connection's subscriptions into the listener's key source, then
/// tells the UI whether the keychain answered. Stops with `stop` (another connection).
pub fn load_in_background(app: Console, client: PartnerClient, stop: CancellationToken) {
    app.clone().spawn(async move {
        let loaded = tokio::select! {
            loaded = load(&app, &client) => loaded,
            () = stop.cancelled() => return,
        };
        match loaded {
            Ok(count) => {
                crate::milestones::milestone(&format!("signing keys loaded ({count})"));
            }
            Err(error) => tracing::warn!(%error, "loading the signing keys failed"),
        }
        app.announce(|_| {});
    });
}

/// Lists the subscriptions and reads their keys (off the async workers).
pub async fn load(app: &Console, client: &PartnerClient) -> Result<usize> {
    let ids = subscription_ids(client).await?;
    let app = app.clone();
    tokio::task::spawn_blocking(move || {
        let state = app.state();
        state.keys.forget_misses();
        state.keys.load(&ids).map_err(AppError::from)
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Loading the signing keys failed: {e}."),
            "Try again.",
        )
    })?
}

/// "Try again" on the keychain banner: probes the store again (a marker written, read back and
/// deleted, which also makes the Secret Service ask to unlock, where it does), then reads the
/// active connection's keys again, and says how that went. A probe that fails leaves the
/// banner up with the store's name and what to do; the keys are not read from a store that
/// does not keep them.
pub async fn retry(app: &Console) -> Result<()> {
    let state = app.state();
    let probed = state
        .with_keychain(|store| partner_client::probe_secret_store(store))
        .await?;
    if let Err(error) = probed {
        state.keys.mark_unavailable(error.to_string());
        app.announce(|_| {});
        return Ok(());
    }
    state.keys.mark_available();
    let client = state.client()?;
    let outcome = load(app, &client).await;
    app.announce(|_| {});
    outcome.map(|_| ())
}

/// The current keys of `subscriptions` the app's keychain holds, read on a blocking thread (a
/// key not cached yet is a D-Bus round trip), so the sends that use them never wait on it.
pub async fn current_keys(
    state: &crate::state::AppState,
    subscriptions: Vec<String>,
) -> Result<partner_listener::keys::MemoryKeys> {
    use partner_listener::keys::KeySource;
    let keys = state.keys.clone();
    state
        .with_keychain(move |_| {
            let known = partner_listener::keys::MemoryKeys::new();
            for id in subscriptions {
                if let Some(found) = keys.keys(&id) {
                    known.insert(id, found.current);
                }
            }
            known
        })
        .await
}

//! Connections: the embedded sandbox (always in the list) and the saved ones (secret in the
//! keychain, the rest in the settings file), which one is active, and the connection the CLI's
//! environment variables name.
//!
//! Activating a connection starts what belongs to it: its token watcher, the loading of its
//! subscriptions' signing keys into the listener, and the check of its tunnel URL; all three
//! stop when another connection takes over.
use crate::bridge::{ConnectionView, NetworkChange, NewConnection};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::services::connection_network;
use crate::state::locked;
use crate::state::{Active, AppState};
use partner_api::Secret;
use partner_client::{ConnectionConfig, NetworkOptions, PartnerClient};
use partner_local::settings::EMBEDDED_CONNECTION_ID;
use partner_local::SavedConnection;

/// Makes `client` the active connection; starts its token watcher, its keys' loading and its
/// tunnel check.
pub fn activate(app: &Console, view: ConnectionView, client: PartnerClient) {
    let state = app.state();
    let stop = state.shutdown.child_token();
    crate::services::audit::journal(state, &view, &client);
    let previous = {
        locked(&state.token_history).clear();
        let mut inner = state.lock();
        inner.active.replace(Active {
            view,
            client: client.clone(),
            stop: stop.clone(),
        })
    };
    if let Some(previous) = previous {
        previous.stop.cancel();
    }
    app.announce(|_| {});
    learn_environment(app, client.clone(), stop.clone());
    crate::services::token::watch(app.clone(), client.clone(), stop.clone());
    crate::services::calls::watch(app.clone(), client.clone(), stop.clone());
    crate::services::keys::load_in_background(app.clone(), client, stop);
    crate::services::tunnel::check_in_background(app.clone());
}

/// Asks the service which environment the connection's token is in (introspection), in the
/// background, and treats the connection by it from then on: a connection labelled sandbox
/// whose service says `prod` is shown, and asked about, as production. Stops with `stop`
/// (another connection).
fn learn_environment(
    app: &Console,
    client: PartnerClient,
    stop: tokio_util::sync::CancellationToken,
) {
    let app = app.clone();
    app.clone().spawn(async move {
        let said = tokio::select! {
            said = client.tokens().introspect() => said,
            () = stop.cancelled() => return,
        };
        match said {
            Ok(introspection) => {
                let said = Some(introspection.environment).filter(|e| !e.trim().is_empty());
                app.announce(|inner| {
                    if let Some(active) = inner.active.as_mut().filter(|_| !stop.is_cancelled()) {
                        active.view = active.view.clone().with_service_environment(said);
                    }
                });
            }
            Err(error) => tracing::warn!(%error, "the service did not say its environment"),
        }
    });
}

/// A client of `view`'s service through `network` (building it reads the CA and client
/// certificate files, so a bad one is an error here).
pub(crate) fn client_for(
    view: &ConnectionView,
    secret: Secret,
    network: NetworkOptions,
) -> Result<PartnerClient> {
    let mut config = ConnectionConfig::new(&view.base_url, view.client_id.clone(), secret)?;
    config.network = network;
    config.read_only = view.read_only;
    Ok(PartnerClient::new(config)?)
}

/// A saved connection's configuration: its address and client, its secret and its network's
/// secrets from the keychain (off the runtime's threads), its network options from the settings.
pub async fn saved_config(state: &AppState, saved: &SavedConnection) -> Result<ConnectionConfig> {
    let base_url = partner_client::parse_base_url(&saved.base_url)?;
    let secret = read_client_secret(state, &base_url, &saved.client_id).await?;
    let (client_id, network) = (saved.client_id.clone(), saved.network.clone());
    let network = state
        .with_keychain(move |store| {
            connection_network::saved_options(store, &base_url, &client_id, &network)
        })
        .await??;
    let mut config = ConnectionConfig::new(&saved.base_url, saved.client_id.clone(), secret)?;
    config.network = network;
    config.read_only = saved.read_only;
    Ok(config)
}

/// A saved connection's client secret, from the keychain (off the runtime's threads).
pub(crate) async fn read_client_secret(
    state: &AppState,
    base_url: &url::Url,
    client_id: &str,
) -> Result<Secret> {
    let (base_url, client_id) = (base_url.clone(), client_id.to_string());
    state
        .with_keychain(move |store| partner_client::client_secret(store, &base_url, &client_id))
        .await??
        .ok_or_else(|| {
            AppError::new(
                ErrorKind::Keychain,
                "The client secret of this connection is not in the keychain.",
                "Remove the connection and add it again with its secret.",
            )
        })
}

/// Opens a connection by id: the embedded sandbox (started if it is not running) or a saved
/// one (its secret from the keychain), and remembers it as the one to open at the next start.
/// Returns the client when it was the embedded sandbox.
pub async fn open(app: &Console, id: &str) -> Result<Option<PartnerClient>> {
    let state = app.state();
    if id == EMBEDDED_CONNECTION_ID {
        let client = crate::services::embedded::ensure_started(app).await?;
        let view = crate::services::embedded::view(&state.lock());
        remember_last_active(state, id);
        activate(app, view, client.clone());
        return Ok(Some(client));
    }
    let saved = state
        .lock()
        .settings
        .connection(id)
        .cloned()
        .ok_or_else(|| AppError::invalid("There is no such connection any more."))?;
    let view = ConnectionView::from(&saved);
    let client = PartnerClient::new(saved_config(state, &saved).await?)?;
    remember_last_active(state, id);
    activate(app, view, client);
    Ok(None)
}

/// Remembers the connection to open at the next start. A settings file that cannot be
/// written is already reported; the connection opens all the same.
fn remember_last_active(state: &AppState, id: &str) {
    if let Err(error) = crate::services::settings::update(state, |s| {
        s.last_active = Some(id.to_string());
    }) {
        tracing::warn!(%error, "the active connection is not remembered");
    }
}

/// Adds a connection: signs in first, through its company network when it has one (so a wrong
/// secret, proxy or certificate is caught now), then keeps the secrets in the keychain and the
/// rest in the settings, and opens it.
pub async fn add(app: &Console, form: NewConnection) -> Result<()> {
    let state = app.state();
    if form.label.trim().is_empty() {
        return Err(AppError::invalid("Give the connection a name."));
    }
    let base_url = partner_client::parse_base_url(&form.base_url)?;
    let saved = SavedConnection {
        id: uuid::Uuid::new_v4().to_string(),
        label: form.label.trim().to_string(),
        base_url: base_url.as_str().trim_end_matches('/').to_string(),
        client_id: form.client_id.trim().to_string(),
        environment: form.environment,
        sorts_tried: Default::default(),
        read_only: form.read_only.unwrap_or(false),
        network: partner_local::ConnectionNetwork::default(),
    };
    let chosen = match &form.network {
        Some(network) => connection_network::from_form(network, &Default::default())?,
        None => Default::default(),
    };
    let saved = SavedConnection {
        network: chosen.saved,
        ..saved
    };
    let secret = Secret::new(form.client_secret);
    let view = ConnectionView::from(&saved);
    let client = client_for(&view, secret.clone(), chosen.options.clone())?;
    client.tokens().ensure_fresh().await?;
    connection_network::save_secrets(
        state.secrets.as_ref(),
        &base_url,
        &saved.client_id,
        &chosen.options,
    )?;
    partner_client::save_client_secret(
        state.secrets.as_ref(),
        &base_url,
        &saved.client_id,
        &secret,
    )?;
    let id = saved.id.clone();
    crate::services::settings::update(state, |s| {
        s.connections.push(saved);
        s.last_active = Some(id);
    })?;
    activate(app, view, client);
    Ok(())
}

/// Removes a saved connection and its secrets (client secret, proxy password, client key). The active one, and the embedded sandbox, stay.
pub fn remove(state: &AppState, id: &str) -> Result<()> {
    if id == EMBEDDED_CONNECTION_ID {
        return Err(AppError::invalid(
            "The embedded sandbox is always there; use Reset sandbox to start it again from its demo data.",
        ));
    }
    if state.active_id().as_deref() == Some(id) {
        return Err(AppError::invalid(
            "The active connection cannot be removed: switch to another first.",
        ));
    }
    let removed = crate::services::settings::update(state, |s| {
        let index = s.connections.iter().position(|c| c.id == id);
        let removed = index.map(|i| s.connections.remove(i));
        if removed.is_some() {
            s.tunnel_urls.remove(id);
        }
        removed
    })?;
    if let Some(saved) = removed {
        if let Ok(base_url) = partner_client::parse_base_url(&saved.base_url) {
            partner_client::forget_client_secret(
                state.secrets.as_ref(),
                &base_url,
                &saved.client_id,
            )?;
            connection_network::forget_secrets(
                state.secrets.as_ref(),
                &base_url,
                &saved.client_id,
            )?;
        }
    }
    Ok(())
}

/// The connection `PARTNER_BASE_URL`, `PARTNER_CLIENT_ID` and `PARTNER_CLIENT_SECRET` name,
/// added (or the saved one to the same service and client reused), its secret kept in the
/// keychain. Returns its id, or `None` when the variables are not set.
pub async fn adopt_environment(app: &Console) -> Result<Option<String>> {
    let Some(named) = partner_local::environment::read().map_err(|e| {
        AppError::new(
            ErrorKind::InvalidInput,
            format!("{e}."),
            "Set all three variables, or none.",
        )
    })?
    else {
        return Ok(None);
    };
    let state = app.state();
    let (saved, new) = named.adopt(&state.lock().settings);
    let (base_url, client_id, secret) = (
        named.base_url.clone(),
        named.client_id.clone(),
        named.client_secret.clone(),
    );
    state
        .with_keychain(move |store| {
            partner_client::save_client_secret(store, &base_url, &client_id, &secret)
        })
        .await??;
    let id = saved.id.clone();
    if new {
        crate::services::settings::update(state, |s| s.connections.push(saved))?;
    }
    Ok(Some(id))
}

/// Changes a saved connection's network: signs in through the new settings first, then keeps
/// them (secrets in the keychain, the rest in the settings). When it is the active connection,
/// its client is replaced by one using them.
pub async fn change_network(app: &Console, change: NetworkChange) -> Result<()> {
    let state = app.state();
    let saved = state
        .lock()
        .settings
        .connection(&change.id)
        .cloned()
        .ok_or_else(|| {
            AppError::invalid("The embedded sandbox has no network settings, or there is no such connection any more.")
        })?;
    let base_url = partner_client::parse_base_url(&saved.base_url)?;
    let secret = read_client_secret(state, &base_url, &saved.client_id).await?;
    let kept = connection_network::read_kept(state, &base_url, &saved.client_id).await?;
    let chosen = connection_network::from_form(&change.network, &kept)?;
    let mut updated = saved.clone();
    updated.network = chosen.saved.clone();
    let view = ConnectionView::from(&updated);
    let client = client_for(&view, secret, chosen.options.clone())?;
    client.tokens().ensure_fresh().await?;
    connection_network::save_secrets(
        state.secrets.as_ref(),
        &base_url,
        &saved.client_id,
        &chosen.options,
    )?;
    crate::services::settings::update(state, |s| {
        if let Some(connection) = s.connections.iter_mut().find(|c| c.id == change.id) {
            connection.network = chosen.saved.clone();
        }
    })?;
    if state.active_id().as_deref() == Some(change.id.as_str()) {
        activate(app, view, client);
    } else {
        app.announce(|_| {});
    }
    Ok(())
}

/// Marks a saved connection read-only (every write refused before sending) or not, kept in the
/// settings; when it is the active connection, its client follows at once (no new sign-in).
/// The embedded sandbox is a playground and is never read-only.
pub fn set_read_only(app: &Console, id: &str, read_only: bool) -> Result<()> {
    let state = app.state();
    if id == EMBEDDED_CONNECTION_ID {
        return Err(AppError::invalid(
            "The embedded sandbox is a playground: it cannot be made read-only.",
        ));
    }
    let found = crate::services::settings::update(state, |s| {
        s.connections
            .iter_mut()
            .find(|c| c.id == id)
            .map(|c| c.read_only = read_only)
            .is_some()
    })?;
    if !found {
        return Err(AppError::invalid("There is no such connection any more."));
    }
    app.announce(|inner| {
        if let Some(active) = inner.active.as_mut().filter(|a| a.view.id == id) {
            active.client.set_read_only(read_only);
            active.view.read_only = read_only;
        }
    });
    Ok(())
}

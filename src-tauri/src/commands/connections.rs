//! Connections: the embedded sandbox and the saved real ones (secret in the keychain).
use crate::bridge::{AppStatus, ConnectionView, NewConnection};
use crate::error::{AppError, Result};
use crate::state::{Active, AppState};
use partner_api::Secret;
use partner_client::{ConnectionConfig, PartnerClient};
use tauri::{AppHandle, Manager, State};

#[tauri::command]
pub fn app_status(state: State<'_, AppState>) -> AppStatus {
    state.status()
}

/// The app's status once start-up has ended (ready or failed): the UI awaits this instead of
/// polling `app_status`, so the first listing is asked for the moment it can be answered.
#[tauri::command]
pub async fn wait_for_start(state: State<'_, AppState>) -> Result<AppStatus> {
    state.started().await;
    Ok(state.status())
}

/// Makes `client` the active connection and starts watching its token.
pub fn activate(app: &AppHandle, view: ConnectionView, client: PartnerClient) {
    let state = app.state::<AppState>();
    let stop = state.shutdown.child_token();
    let (previous, announced) = {
        let mut inner = state.lock();
        inner.token_history.clear();
        let previous = inner.active.replace(Active {
            view,
            client: client.clone(),
            stop: stop.clone(),
        });
        (previous, state.announce_locked(&inner))
    };
    if let Some(previous) = previous {
        previous.stop.cancel();
    }
    crate::events::watch_token(app.clone(), client, stop);
    crate::events::emit_status(app, announced);
}

fn client_for(view: &ConnectionView, secret: Secret) -> Result<PartnerClient> {
    let config = ConnectionConfig::new(&view.base_url, view.client_id.clone(), secret)?;
    Ok(PartnerClient::new(config)?)
}

/// Adds a connection: signs in first (so a wrong secret is caught now), then keeps the
/// secret in the keychain and the rest in the app's data folder.
#[tauri::command]
pub async fn add_connection(
    app: AppHandle,
    state: State<'_, AppState>,
    form: NewConnection,
) -> Result<AppStatus> {
    if form.label.trim().is_empty() {
        return Err(AppError::invalid("Give the connection a name."));
    }
    let base_url = partner_client::parse_base_url(&form.base_url)?;
    let secret = Secret::new(form.client_secret);
    let view = ConnectionView {
        id: uuid::Uuid::new_v4().to_string(),
        label: form.label.trim().to_string(),
        base_url: base_url.as_str().trim_end_matches('/').to_string(),
        client_id: form.client_id.trim().to_string(),
        environment: form.environment,
        embedded: false,
    };
    let client = client_for(&view, secret.clone())?;
    client.tokens().ensure_fresh().await?;
    partner_client::save_client_secret(
        state.secrets.as_ref(),
        &base_url,
        &view.client_id,
        &secret,
    )?;
    {
        let mut inner = state.lock();
        inner.saved.connections.push(view.clone());
        inner.saved.last_active = Some(view.id.clone());
    }
    state.persist_connections()?;
    activate(&app, view, client);
    Ok(state.status())
}

#[tauri::command]
pub async fn select_connection(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> Result<AppStatus> {
    let (view, embedded_client) = {
        let inner = state.lock();
        match &inner.embedded {
            Some(embedded) if embedded.view.id == id => {
                (embedded.view.clone(), Some(embedded.client.clone()))
            }
            _ => (
                inner
                    .saved
                    .connections
                    .iter()
                    .find(|c| c.id == id)
                    .cloned()
                    .ok_or_else(|| AppError::invalid("There is no such connection any more."))?,
                None,
            ),
        }
    };
    let client = match embedded_client {
        Some(client) => client,
        None => {
            let base_url = partner_client::parse_base_url(&view.base_url)?;
            let secret =
                partner_client::client_secret(state.secrets.as_ref(), &base_url, &view.client_id)?
                    .ok_or_else(|| {
                        AppError::new(
                            crate::error::ErrorKind::Keychain,
                            "The client secret of this connection is not in the keychain.",
                            "Remove the connection and add it again with its secret.",
                        )
                    })?;
            client_for(&view, secret)?
        }
    };
    state.lock().saved.last_active = Some(view.id.clone());
    state.persist_connections()?;
    activate(&app, view, client);
    Ok(state.status())
}

#[tauri::command]
pub async fn remove_connection(state: State<'_, AppState>, id: String) -> Result<AppStatus> {
    let removed = {
        let mut inner = state.lock();
        if inner.active.as_ref().is_some_and(|a| a.view.id == id) {
            return Err(AppError::invalid(
                "The active connection cannot be removed: switch to another first.",
            ));
        }
        let index = inner.saved.connections.iter().position(|c| c.id == id);
        index.map(|i| inner.saved.connections.remove(i))
    };
    if let Some(view) = removed {
        if let Ok(base_url) = partner_client::parse_base_url(&view.base_url) {
            partner_client::forget_client_secret(
                state.secrets.as_ref(),
                &base_url,
                &view.client_id,
            )?;
        }
        state.persist_connections()?;
    }
    Ok(state.status())
}

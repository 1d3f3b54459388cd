//! Connections: the embedded sandbox (always there) and the saved ones; the keychain banner's
//! "Try again". Thin adapters over `services::connections`, `services::embedded` and
//! `services::keys`.
use crate::bridge::{AppStatus, NewConnection};
use crate::error::Result;
use crate::state::AppState;
use tauri::{AppHandle, State};

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

#[tauri::command]
pub async fn add_connection(
    app: AppHandle,
    state: State<'_, AppState>,
    form: NewConnection,
) -> Result<AppStatus> {
    crate::services::connections::add(&app, form).await?;
    Ok(state.status())
}

#[tauri::command]
pub async fn select_connection(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> Result<AppStatus> {
    crate::services::connections::open(&app, &id).await?;
    Ok(state.status())
}

#[tauri::command]
pub fn remove_connection(state: State<'_, AppState>, id: String) -> Result<AppStatus> {
    crate::services::connections::remove(&state, &id)?;
    Ok(state.status())
}

/// Starts the embedded sandbox again from its demo data.
#[tauri::command]
pub async fn reset_sandbox(app: AppHandle, state: State<'_, AppState>) -> Result<AppStatus> {
    crate::services::embedded::reset(&app).await?;
    Ok(state.status())
}

/// Reads the keychain again (after the user unlocked it).
#[tauri::command]
pub async fn retry_keychain(app: AppHandle, state: State<'_, AppState>) -> Result<AppStatus> {
    crate::services::keys::retry(&app).await?;
    Ok(state.status())
}

/// Forgets a notice the user has read.
#[tauri::command]
pub fn dismiss_notice(app: AppHandle, index: usize) -> AppStatus {
    crate::services::startup::dismiss_notice(&app, index)
}

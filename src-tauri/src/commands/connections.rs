//! Connections: the embedded sandbox (always there) and the saved ones; the keychain banner's
//! "Try again". Thin adapters over `services::connections`, `services::embedded` and
//! `services::keys`.
use partner_console_core::bridge::{AppStatus, ConnectionCheckView, NetworkChange, NewConnection};
use partner_console_core::Result;
use partner_console_core::{services, Console};
use tauri::State;

#[tauri::command]
pub fn app_status(state: State<'_, Console>) -> AppStatus {
    state.status()
}

/// The app's status once start-up has ended (ready or failed): the UI awaits this instead of
/// polling `app_status`, so the first listing is asked for the moment it can be answered.
#[tauri::command]
pub async fn wait_for_start(state: State<'_, Console>) -> Result<AppStatus> {
    state.started().await;
    Ok(state.status())
}

/// The page drew its first screen: the capture store, held back until then, opens.
#[tauri::command]
pub fn first_screen_shown(state: State<'_, Console>) {
    services::startup::first_screen_shown(&state);
}

#[tauri::command]
pub async fn add_connection(state: State<'_, Console>, form: NewConnection) -> Result<AppStatus> {
    state.status_after(services::connections::add(&state, form).await)
}

#[tauri::command]
pub async fn select_connection(state: State<'_, Console>, id: String) -> Result<AppStatus> {
    state.status_after(services::connections::open(&state, &id).await)
}

/// Marks a saved connection read-only, or not.
#[tauri::command]
pub async fn set_connection_read_only(
    state: State<'_, Console>,
    id: String,
    read_only: bool,
) -> Result<AppStatus> {
    state
        .blocking(move |console| {
            console.status_after(services::connections::set_read_only(
                console, &id, read_only,
            ))
        })
        .await
}

#[tauri::command]
pub async fn remove_connection(state: State<'_, Console>, id: String) -> Result<AppStatus> {
    state
        .blocking(move |console| console.status_after(services::connections::remove(console, &id)))
        .await
}

/// Starts the embedded sandbox again from its demo data.
#[tauri::command]
pub async fn reset_sandbox(state: State<'_, Console>) -> Result<AppStatus> {
    state.status_after(services::demo::reset(&state).await)
}

/// Reads the keychain again (after the user unlocked it).
#[tauri::command]
pub async fn retry_keychain(state: State<'_, Console>) -> Result<AppStatus> {
    state.status_after(services::keys::retry(&state).await)
}

/// Forgets a notice the user has read.
#[tauri::command]
pub fn dismiss_notice(state: State<'_, Console>, index: usize) -> AppStatus {
    services::startup::dismiss_notice(&state, index)
}

/// New company-network settings for a saved connection, tried by signing in first.
#[tauri::command]
pub async fn change_connection_network(
    state: State<'_, Console>,
    change: NetworkChange,
) -> Result<AppStatus> {
    state.status_after(services::connections::change_network(&state, change).await)
}

/// Checks a connection step by step (`connection-check` events as each step ends).
#[tauri::command]
pub async fn check_connection(
    state: State<'_, Console>,
    id: String,
) -> Result<ConnectionCheckView> {
    services::connection_check::check(&state, &id).await
}

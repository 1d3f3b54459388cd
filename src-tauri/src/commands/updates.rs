//! Updates: the state the window shows, "Check now", the user's yes, and the setting. The one
//! set of commands the shell serves itself (Tauri's updater is here): they are declared in the
//! core's list like every command (kind `shell`), and written here by hand.

use crate::updates::{self, Updates};
use partner_console_core::error::Result;
use partner_console_core::services::updates as update_settings;
use partner_console_core::Console;
use partner_local::updates::UpdateView;
use tauri::{AppHandle, State};

/// Where the update stands (the window also hears each change as the `update` event).
#[tauri::command]
pub fn update_state(updates: State<'_, Updates>) -> UpdateView {
    updates.view()
}

/// Asks the release page now (unless the fleet turned checks off).
#[tauri::command]
pub async fn check_for_update(app: AppHandle) -> UpdateView {
    updates::check(&app).await
}

/// The user's yes: downloads, verifies and installs the update found, then restarts the app.
#[tauri::command]
pub async fn install_update(app: AppHandle) -> UpdateView {
    updates::install(&app).await
}

/// Turns the check at start on or off.
#[tauri::command]
pub async fn set_update_checks(
    app: AppHandle,
    console: State<'_, Console>,
    updates: State<'_, Updates>,
    at_start: bool,
) -> Result<UpdateView> {
    let settings = console
        .blocking(move |console| update_settings::set_check_at_start(console, at_start))
        .await?;
    Ok(updates.set_settings(&app, settings))
}

//! The update settings the app keeps (`partner_local::updates` has the rules; the shell wires
//! the Tauri updater to them).
use crate::error::Result;
use crate::state::AppState;
use partner_local::updates::UpdateSettings;

pub fn settings(state: &AppState) -> UpdateSettings {
    state.lock().settings.updates
}

/// Saves whether the app looks for a newer version at start.
pub fn set_check_at_start(state: &AppState, on: bool) -> Result<UpdateSettings> {
    crate::services::settings::update(state, |settings| {
        settings.updates.check_at_start = on;
        settings.updates
    })
}

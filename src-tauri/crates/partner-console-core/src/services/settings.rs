//! Changing the settings: made in memory and written to the settings file at once (atomically,
//! by `partner_local::SettingsFile`), in the order the changes were made.
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_local::Settings;

/// Makes `change` to the settings and writes them when it changed something. A file that could not be read at start is
/// never written over: the change then holds for this run only, and the error says so.
pub fn update<T>(state: &AppState, change: impl FnOnce(&mut Settings) -> T) -> Result<T> {
    let _in_order = state
        .settings_write
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (result, snapshot, writable) = {
        let mut inner = state.lock();
        let before = inner.settings.clone();
        let result = change(&mut inner.settings);
        if inner.settings == before {
            // Nothing changed (opening the connection that is already the last active one, at
            // every start): no write, no fsync.
            return Ok(result);
        }
        (result, inner.settings.clone(), inner.settings_writable)
    };
    if !writable {
        return Err(AppError::new(
            ErrorKind::Io,
            format!(
                "The settings file {} could not be read at start, so it is not written over: this change holds until the app quits.",
                state.settings_file.path().display()
            ),
            "Fix the file's permissions and restart the app.",
        ));
    }
    state.settings_file.save(&snapshot).map_err(|e| {
        AppError::new(
            ErrorKind::Io,
            format!("The settings could not be saved: {e}."),
            "Check the data folder's free space and permissions, then try again.",
        )
    })?;
    Ok(result)
}

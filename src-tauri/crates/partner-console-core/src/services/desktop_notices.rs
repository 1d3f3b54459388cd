//! Which desktop notifications the user turned on (each is off until then): kept in the
//! settings file, read by `crate::notices` at each event.
use crate::error::Result;
use crate::state::AppState;
use partner_local::DesktopNotices;

pub fn get(state: &AppState) -> DesktopNotices {
    state.lock().settings.desktop_notices
}

/// Saves the choice; the next event is told (or not) by it.
pub fn set(state: &AppState, notices: DesktopNotices) -> Result<DesktopNotices> {
    crate::services::settings::update(state, |settings| settings.desktop_notices = notices)?;
    Ok(notices)
}

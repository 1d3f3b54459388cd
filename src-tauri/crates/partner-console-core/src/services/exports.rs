//! Where a file the app writes for the user goes: the path the user gave, or a new, stamped
//! name in the app's export folder (listing and capture exports, evidence bundles).
use crate::error::{AppError, Result};
use crate::state::AppState;
use std::path::PathBuf;

/// The user's `path`, or `<export folder>/<stem>-<time>[.<extension>]`, the folder created.
pub fn file(
    state: &AppState,
    path: Option<&str>,
    stem: &str,
    extension: Option<&str>,
) -> Result<PathBuf> {
    if let Some(path) = path.map(str::trim).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let dir = state.exports_dir();
    std::fs::create_dir_all(&dir).map_err(|e| AppError::io("create the export folder", &e))?;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S%.3f");
    Ok(dir.join(match extension {
        Some(extension) => format!("{stem}-{stamp}.{extension}"),
        None => format!("{stem}-{stamp}"),
    }))
}

//! The console's one data folder, shared by the app and the `partner` command.
//!
//! `PARTNER_DATA_DIR` when set (tests and scripted demos give each run its own), else
//! `$XDG_DATA_HOME/partner-console`, else `~/.local/share/partner-console`: the folder
//! `partner listen` has always kept its captures in, so the app and the CLI share one capture
//! store at one documented path.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The folder's name under the XDG data home.
pub const FOLDER: &str = "partner-console";
/// The capture store's file name.
pub const CAPTURE_STORE: &str = "captures.sqlite3";
/// The settings file's name.
pub const SETTINGS: &str = "settings.json";
/// The audit log's file name (every write the console sent or refused).
pub const AUDIT_LOG: &str = "audit-log.jsonl";
/// The embedded sandbox's data file's name.
pub const EMBEDDED_SANDBOX: &str = "embedded-sandbox.sqlite3";

/// The data folder (not created here).
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PARTNER_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        })
        .ok_or_else(|| {
            Error::Invalid(
                "no data folder is known: set PARTNER_DATA_DIR, XDG_DATA_HOME or HOME".into(),
            )
        })?;
    Ok(base.join(FOLDER))
}

/// The data folder, created (owner-only) if missing.
pub fn ensure_data_dir() -> Result<PathBuf> {
    let dir = data_dir()?;
    create_private_dir(&dir)?;
    Ok(dir)
}

/// Creates `dir` and its parents; on Unix the folder itself is owner-only, since captures hold
/// lenders' data.
pub fn create_private_dir(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create the folder", dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// The shared capture store.
pub fn capture_store() -> Result<PathBuf> {
    Ok(data_dir()?.join(CAPTURE_STORE))
}

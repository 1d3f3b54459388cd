//! Hooks for the end-to-end tests, compiled only with the `test-hooks` feature.
//!
//! Why a feature and not `#[cfg(test)]`: the end-to-end tests drive the real debug app through
//! WebDriver (`tests/e2e/run.sh` builds it with `--features partner-console/test-hooks`), so the
//! hooks must be in a binary that is not a test build; and they must not be in what users run:
//! the packages (`scripts/package.sh`, `tauri build`) build the app with its default features,
//! so a variable left in a user's environment cannot turn a save dialog into a silent write.
//!
//! `PARTNER_TEST_DIALOG_DIR`: the app's save and open dialogs answer from that folder (a save
//! goes there under the suggested name, an open reads the suggested name), since WebDriver
//! cannot reach a GTK file dialog.
//!
//! `PARTNER_TEST_ACCEPT_UPDATE=1`: an update the check at start finds is installed at once, as
//! if the user had said yes (the package test's update has no one to click), and
//! `PARTNER_TEST_UPDATE_PUBKEY`: the public key updates are verified with instead of the
//! configuration's (the test signs with a key it generates).

use partner_console_core::FolderDialogs;

/// The variable that makes the app answer its dialogs from a folder.
#[cfg(feature = "test-hooks")]
pub const DIALOG_DIR: &str = "PARTNER_TEST_DIALOG_DIR";

/// The folder dialogs `PARTNER_TEST_DIALOG_DIR` asks for, if it is set.
#[cfg(feature = "test-hooks")]
pub fn folder_dialogs() -> Option<FolderDialogs> {
    std::env::var_os(DIALOG_DIR)
        .filter(|dir| !dir.is_empty())
        .map(|dir| FolderDialogs {
            folder: std::path::PathBuf::from(dir),
        })
}

/// Without the feature the app always shows the desktop's dialogs.
#[cfg(not(feature = "test-hooks"))]
pub fn folder_dialogs() -> Option<FolderDialogs> {
    None
}

/// Whether an update found at start is installed without asking (`PARTNER_TEST_ACCEPT_UPDATE`).
#[cfg(feature = "test-hooks")]
pub fn accept_updates() -> bool {
    std::env::var("PARTNER_TEST_ACCEPT_UPDATE").is_ok_and(|v| v == "1")
}

/// Without the feature an update waits for the user's yes.
#[cfg(not(feature = "test-hooks"))]
pub fn accept_updates() -> bool {
    false
}

/// The public key the test's updates are signed with (`PARTNER_TEST_UPDATE_PUBKEY`).
#[cfg(feature = "test-hooks")]
pub fn update_pubkey() -> Option<String> {
    std::env::var("PARTNER_TEST_UPDATE_PUBKEY")
        .ok()
        .filter(|key| !key.trim().is_empty())
}

/// Without the feature updates are verified with the configuration's key only.
#[cfg(not(feature = "test-hooks"))]
pub fn update_pubkey() -> Option<String> {
    None
}

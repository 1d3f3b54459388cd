//! The desktop's save and open dialogs (Tauri's dialog plugin), asked from the shell: a command
//! gets back the path the user chose, or nothing when they closed the dialog, and goes on with
//! the file itself. The UI never handles paths it did not show.
//!
//! Why an environment variable: end-to-end tests drive the real app through WebDriver, which
//! cannot reach a GTK file dialog. `PARTNER_TEST_DIALOG_DIR` answers every dialog without a
//! window: a save goes to that folder under the suggested name, an open reads the suggested
//! name from it. Nothing else in the app reads it.
use std::path::PathBuf;
use tauri::AppHandle;
use tauri_plugin_dialog::DialogExt;

/// The folder that answers dialogs in tests (see the module note).
const TEST_DIALOG_DIR: &str = "PARTNER_TEST_DIALOG_DIR";

/// What the dialog asks for: its title, the name it suggests, the folder it opens in, and the
/// one kind of file it offers (a name and its extensions).
#[derive(Debug, Clone)]
pub struct FileChoice {
    pub title: String,
    pub suggested_name: String,
    pub folder: PathBuf,
    pub kind: &'static str,
    pub extensions: &'static [&'static str],
}

impl FileChoice {
    /// The save dialog of a CSV or JSON export of transactions or products, suggesting
    /// `<stem>-<time>.<csv|json>` in `folder`.
    pub fn table_export(
        title: String,
        stem: &str,
        format: crate::bridge::ExportFormat,
        folder: PathBuf,
    ) -> Self {
        use crate::bridge::ExportFormat;
        let (kind, extensions): (&'static str, &'static [&'static str]) = match format {
            ExportFormat::Csv => ("CSV", &["csv"]),
            ExportFormat::Json => ("JSON", &["json"]),
        };
        Self {
            title,
            suggested_name: crate::services::captures::suggested_name(stem, extensions[0]),
            folder,
            kind,
            extensions,
        }
    }
}

/// The path to write to, or `None` when the user closed the dialog.
pub async fn save(app: &AppHandle, choice: FileChoice) -> Option<PathBuf> {
    if let Some(dir) = test_dir() {
        return Some(dir.join(&choice.suggested_name));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    builder(app, &choice)
        .set_file_name(&choice.suggested_name)
        .save_file(move |path| {
            let _ = tx.send(path.and_then(|p| p.into_path().ok()));
        });
    rx.await.ok().flatten()
}

/// The file to read, or `None` when the user closed the dialog.
pub async fn open(app: &AppHandle, choice: FileChoice) -> Option<PathBuf> {
    if let Some(dir) = test_dir() {
        return Some(dir.join(&choice.suggested_name));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    builder(app, &choice).pick_file(move |path| {
        let _ = tx.send(path.and_then(|p| p.into_path().ok()));
    });
    rx.await.ok().flatten()
}

fn builder(
    app: &AppHandle,
    choice: &FileChoice,
) -> tauri_plugin_dialog::FileDialogBuilder<tauri::Wry> {
    let _ = std::fs::create_dir_all(&choice.folder);
    app.dialog()
        .file()
        .set_title(&choice.title)
        .set_directory(&choice.folder)
        .add_filter(choice.kind, choice.extensions)
}

fn test_dir() -> Option<PathBuf> {
    std::env::var_os(TEST_DIALOG_DIR)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

//! The save and open dialogs of exports and imports: what each one suggests, asked through the
//! console's [`FileDialogs`](crate::FileDialogs) (the desktop's dialogs in the app, a folder in
//! tests and under `PARTNER_TEST_DIALOG_DIR`). A command gets back the path the user chose, or
//! nothing when they closed the dialog, and goes on with the file itself.
use crate::console::Console;
pub use crate::console::FileChoice;
use std::path::PathBuf;

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
            suggested_name: suggested_name(stem, extensions[0]),
            folder,
            kind,
            extensions,
        }
    }
}

/// The path to write to, or `None` when the user closed the dialog.
pub async fn save(app: &Console, choice: FileChoice) -> Option<PathBuf> {
    app.dialogs().save(choice).await
}

/// The file to read, or `None` when the user closed the dialog.
pub async fn open(app: &Console, choice: FileChoice) -> Option<PathBuf> {
    app.dialogs().open(choice).await
}

/// A name to suggest for a new file: `<stem>-<time>.<extension>`.
pub fn suggested_name(stem: &str, extension: &str) -> String {
    format!(
        "{stem}-{}.{extension}",
        chrono::Utc::now().format("%Y%m%d-%H%M%S")
    )
}

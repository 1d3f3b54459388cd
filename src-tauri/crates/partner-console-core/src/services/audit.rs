//! The audit log of writes (`partner_local::audit`): every connection's client records its
//! writes into it from the moment the connection is activated (sent ones with the service's
//! answer, refused ones on a read-only connection), the CLI into the same file; the Audit log
//! screen reads the newest entries and exports the whole log. Its lines are sealed with the
//! console's data key (`services::data_key`).
use crate::bridge::{AuditEntryView, AuditLogView, ConnectionView, ExportFormat, FileJobResult};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::services::data_key::KeyLookup;
use crate::services::file_dialog::{self, FileChoice};
use crate::state::AppState;
use partner_local::audit::{AuditFormat, AuditLog};
use std::path::PathBuf;
use std::sync::Arc;

/// The entries the screen shows at most (the export has them all).
pub const SHOWN: usize = 500;

/// Where the app's audit log is: `audit-log.jsonl` in the data folder (its rotated files
/// beside it).
pub fn log_path(state: &AppState) -> PathBuf {
    state.data_dir.join(partner_local::paths::AUDIT_LOG)
}

/// What opens the app's audit log, sealed with the data key (`services::data_key`), on a
/// blocking thread.
#[derive(Debug, Clone)]
pub struct LogOpener {
    path: PathBuf,
    key: KeyLookup,
}

impl LogOpener {
    pub fn of(state: &AppState) -> Self {
        Self {
            path: log_path(state),
            key: KeyLookup::of(state),
        }
    }

    /// The log, with the data key looked up (once per run). Blocking.
    pub fn open(&self) -> Result<AuditLog> {
        let resolved = self.key.resolve()?;
        Ok(AuditLog::new(self.path.clone(), resolved.key))
    }
}

/// The app's audit log (the data key looked up on a blocking thread).
pub async fn log(state: &AppState) -> Result<AuditLog> {
    let opener = LogOpener::of(state);
    tokio::task::spawn_blocking(move || opener.open())
        .await
        .map_err(failed)?
}

/// Records `client`'s writes under `view`'s name from now on. The data key is looked up at the
/// first write.
pub fn journal(state: &AppState, view: &ConnectionView, client: &partner_client::PartnerClient) {
    let opener = LogOpener::of(state);
    let journal = AuditLog::lazy_journal(view.label.clone(), "app", move || {
        opener
            .open()
            .map_err(|e| partner_local::Error::Invalid(e.message))
    });
    client.journal_writes(Some(Arc::new(journal)));
}

fn failed(error: impl std::fmt::Display) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("Reading the audit log failed: {error}."),
        "Try again.",
    )
}

/// The newest entries, newest first.
pub async fn list(state: &AppState) -> Result<AuditLogView> {
    let log = log(state).await?;
    let path = log.path().display().to_string();
    let read = tokio::task::spawn_blocking(move || log.read(Some(SHOWN)))
        .await
        .map_err(failed)?
        .map_err(|e| {
            AppError::new(
                ErrorKind::Io,
                format!("{e}."),
                "Check the data folder's permissions.",
            )
        })?;
    if read.unopened > 0 {
        tracing::warn!(
            lines = read.unopened,
            "audit log lines do not open with this console's data key: another key sealed them"
        );
    }
    Ok(AuditLogView {
        entries: read.entries.iter().map(AuditEntryView::from).collect(),
        total: read.total as u64,
        unreadable: read.unreadable as u64,
        unopened: read.unopened as u64,
        path,
    })
}

/// The whole log, oldest first, written where the user chooses: JSON Lines as kept, or CSV.
pub async fn export(app: &Console, format: ExportFormat) -> Result<FileJobResult> {
    let state = app.state();
    let (kind, extensions): (&'static str, &'static [&'static str]) = match format {
        ExportFormat::Csv => ("CSV", &["csv"]),
        ExportFormat::Json => ("JSON Lines", &["jsonl"]),
    };
    let choice = FileChoice {
        title: "Export the audit log".into(),
        suggested_name: file_dialog::suggested_name("audit-log", extensions[0]),
        folder: state.exports_dir(),
        kind,
        extensions,
    };
    let Some(path) = file_dialog::save(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let log = log(state).await?;
    let format = match format {
        ExportFormat::Csv => AuditFormat::Csv,
        ExportFormat::Json => AuditFormat::JsonLines,
    };
    let target = path.clone();
    let count = tokio::task::spawn_blocking(move || -> Result<u64> {
        let read = log.read(None).map_err(|e| {
            AppError::new(
                ErrorKind::Io,
                format!("{e}."),
                "Check the data folder's permissions.",
            )
        })?;
        let oldest_first: Vec<_> = read.entries.into_iter().rev().collect();
        crate::services::captures::write_replacing(&target, |out| {
            partner_local::audit::write_entries(out, &oldest_first, format)
                .map_err(|e| AppError::io("write the audit log", &e))?;
            Ok((true, oldest_first.len() as u64))
        })
    })
    .await
    .map_err(failed)??;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count,
        skipped: 0,
        cancelled: false,
    })
}

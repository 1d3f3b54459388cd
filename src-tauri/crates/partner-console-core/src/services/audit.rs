//! The audit log of writes (`partner_local::audit`): every connection's client records its
//! writes into it from the moment the connection is activated (sent ones with the service's
//! answer, refused ones on a read-only connection), the CLI into the same file; the Audit log
//! screen reads the newest entries and exports the whole log. Its lines are sealed with the
//! console's data key (`services::data_key`).
//!
//! While the app is joined to a team workspace (#50), the screen and the export are the
//! workspace's log instead (`GET /api/v1/audit`): every member's writes and refusals there,
//! under their name and role. Why not both at once: while joined, the support desk's answers,
//! notes and the inspector's replays and clears are made through the workspace, which audits
//! them, so its log is where they are; this machine's log is shown again once the workspace is
//! left (it is still written meanwhile, by the connections' own writes and the CLI).
use crate::bridge::{AuditEntryView, AuditLogView, ConnectionView, ExportFormat, FileJobResult};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::services::data_key::KeyLookup;
use crate::services::file_dialog::{self, FileChoice};
use crate::services::workspace::{self, Joined};
use crate::state::AppState;
use partner_local::audit::{AuditFormat, AuditLog};
use partner_workspace::roles::Action;
use std::path::PathBuf;
use std::sync::Arc;

/// The entries the screen shows at most (the export has them all).
pub const SHOWN: usize = 500;

/// The entries the export asks the workspace for at a time (the server's own maximum).
const WORKSPACE_PAGE: i64 = 1000;

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

/// The newest entries, newest first: the team workspace's while joined, else this machine's.
pub async fn list(state: &AppState) -> Result<AuditLogView> {
    if let Some(joined) = workspace::joined(state) {
        return workspace_list(state, &joined).await;
    }
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
        older: false,
        path,
        workspace: None,
    })
}

/// The workspace's newest [`SHOWN`] entries; one more is asked for, to know whether there are
/// older ones (the workspace does not count its log).
async fn workspace_list(state: &AppState, joined: &Joined) -> Result<AuditLogView> {
    joined.may(Action::Read)?;
    let asked = i64::try_from(SHOWN + 1).unwrap_or(WORKSPACE_PAGE);
    let mut entries = workspace::answered(state, joined.client.audit(Some(asked), None).await)?;
    let older = entries.len() > SHOWN;
    entries.truncate(SHOWN);
    let url = joined.describe();
    Ok(AuditLogView {
        entries: entries
            .iter()
            .map(|entry| AuditEntryView::of_workspace(entry, &url))
            .collect(),
        total: entries.len() as u64,
        older,
        unreadable: 0,
        unopened: 0,
        path: url.clone(),
        workspace: Some(url),
    })
}

/// Every entry of the workspace's log, newest first: pages of [`WORKSPACE_PAGE`] going back by
/// id until one is empty (a server that caps a page lower is still read whole).
async fn workspace_entries(
    state: &AppState,
    joined: &Joined,
) -> Result<Vec<partner_workspace::AuditEntry>> {
    let mut all: Vec<partner_workspace::AuditEntry> = Vec::new();
    let mut before = None;
    loop {
        let page = workspace::answered(
            state,
            joined.client.audit(Some(WORKSPACE_PAGE), before).await,
        )?;
        let Some(last) = page.last() else {
            return Ok(all);
        };
        // Each page must go back by id, or the walk would never end: an answer that does not
        // is the workspace's mistake, said rather than looped on.
        let below = |id: i64| before.is_none_or(|before| id < before);
        if !page.iter().all(|entry| below(entry.id))
            || page.windows(2).any(|pair| pair[1].id >= pair[0].id)
        {
            return Err(AppError::new(
                ErrorKind::Server,
                format!(
                    "The team workspace {} answered its audit log out of order, so it cannot be exported whole.",
                    joined.describe()
                ),
                "Check that the workspace runs the same version of partner as this console (partner --version on both).",
            ));
        }
        before = Some(last.id);
        all.extend(page);
    }
}

/// Writes the workspace's entries: JSON Lines, one entry as the workspace answers it per
/// line, or CSV with a header (the shape of this machine's export, `partner_local::audit`).
pub fn write_workspace_entries<W: std::io::Write>(
    out: W,
    entries: &[partner_workspace::AuditEntry],
    format: AuditFormat,
) -> std::io::Result<W> {
    const HEADER: [&str; 8] = [
        "id", "at", "member", "role", "action", "target", "outcome", "detail",
    ];
    partner_local::audit::write_table(out, entries, format, &HEADER, |entry| {
        vec![
            entry.id.to_string(),
            entry.at.to_rfc3339(),
            entry.member.clone(),
            entry.role.clone(),
            entry.action.clone(),
            entry.target.clone(),
            entry.outcome.clone(),
            entry.detail.clone(),
        ]
    })
}

/// The whole log, oldest first, written where the user chooses: JSON Lines as kept, or CSV.
/// While joined, the team workspace's whole log (every page of it).
pub async fn export(app: &Console, format: ExportFormat) -> Result<FileJobResult> {
    let state = app.state();
    let joined = workspace::joined(state);
    if let Some(joined) = &joined {
        joined.may(Action::Read)?;
    }
    let (kind, extensions): (&'static str, &'static [&'static str]) = match format {
        ExportFormat::Csv => ("CSV", &["csv"]),
        ExportFormat::Json => ("JSON Lines", &["jsonl"]),
    };
    let (title, stem) = match &joined {
        Some(_) => (
            "Export the team workspace's audit log",
            "workspace-audit-log",
        ),
        None => ("Export the audit log", "audit-log"),
    };
    let choice = FileChoice {
        title: title.into(),
        suggested_name: file_dialog::suggested_name(stem, extensions[0]),
        folder: state.exports_dir(),
        kind,
        extensions,
    };
    let Some(path) = file_dialog::save(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let format = match format {
        ExportFormat::Csv => AuditFormat::Csv,
        ExportFormat::Json => AuditFormat::JsonLines,
    };
    let target = path.clone();
    if let Some(joined) = &joined {
        let mut entries = workspace_entries(state, joined).await?;
        entries.reverse();
        let count = tokio::task::spawn_blocking(move || -> Result<u64> {
            crate::services::captures::write_replacing(&target, |out| {
                write_workspace_entries(out, &entries, format)
                    .map_err(|e| AppError::io("write the audit log", &e))?;
                Ok((true, entries.len() as u64))
            })
        })
        .await
        .map_err(failed)??;
        return Ok(FileJobResult {
            path: Some(path.display().to_string()),
            count,
            skipped: 0,
            cancelled: false,
        });
    }
    let log = log(state).await?;
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

//! The audit log: every write the console sent to a service, or refused on a read-only
//! connection, kept on this machine so "who changed this, when, and what did the service say?"
//! has an answer after the window is closed.
//!
//! Why JSON Lines appended, not a database: a write is a person's act (a few a day), the app and
//! the `partner` command both write to it (one `write` of one line each, `O_APPEND`, so lines
//! from two processes never interleave), and a reader can `tail` it. The file is only ever
//! appended to: a line that cannot be read (a torn end after a crash, a hand edit) is counted
//! and reported, never dropped from the file or overwritten. Entries hold no secret:
//! `partner_client::writes` redacts every key-, secret- and token-named value of the body, and
//! the client's error messages never hold one.

use crate::error::{Error, Result};
use partner_client::{WriteJournal, WriteOutcome, WriteRecord};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};

/// One write as the audit log keeps it: the client's record, plus the connection's name and
/// which program sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// The connection's label where it is a saved one, else its base URL.
    pub connection: String,
    /// `app` or `cli`.
    pub via: String,
    #[serde(flatten)]
    pub write: WriteRecord,
}

/// The newest entries of the log, and what could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditRead {
    /// Newest first.
    pub entries: Vec<AuditEntry>,
    /// Entries in the file (readable ones), of which `entries` are the newest.
    pub total: usize,
    /// Lines that are not entries (kept in the file, left out here).
    pub unreadable: usize,
}

/// The audit log file.
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The log in the shared data folder (the app's and the CLI's).
    pub fn in_data_dir() -> Result<Self> {
        Ok(Self::new(
            crate::paths::data_dir()?.join(crate::paths::AUDIT_LOG),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry as one line (the folder and file created owner-only if missing) and
    /// syncs it, so an entry the caller was told of survives a crash.
    pub fn append(&self, entry: &AuditEntry) -> Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::paths::create_private_dir(dir)?;
        }
        let mut line = serde_json::to_vec(entry)
            .map_err(|e| Error::Invalid(format!("an audit entry could not be written ({e})")))?;
        line.push(b'\n');
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        // Owner-only. On Windows nothing is set: the log inherits the ACL of the data folder
        // under the user's profile, which grants it to the user, the administrators and SYSTEM.
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options
            .open(&self.path)
            .map_err(|e| Error::io("open the audit log", &self.path, e))?;
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::io("append to the audit log", &self.path, e))
    }

    /// The newest `limit` entries (all with `None`), newest first. A missing file is an empty
    /// log.
    pub fn read(&self, limit: Option<usize>) -> Result<AuditRead> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AuditRead::default()),
            Err(e) => return Err(Error::io("read the audit log", &self.path, e)),
        };
        let mut read = AuditRead::default();
        let mut entries = Vec::new();
        for line in std::io::BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| Error::io("read the audit log", &self.path, e))?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<AuditEntry>(&line) {
                Ok(entry) => entries.push(entry),
                Err(_) => read.unreadable += 1,
            }
        }
        read.total = entries.len();
        let keep = limit.unwrap_or(usize::MAX);
        read.entries = entries.into_iter().rev().take(keep).collect();
        Ok(read)
    }

    /// A journal that appends the writes of one connection to this log.
    pub fn journal(&self, connection: impl Into<String>, via: &'static str) -> AuditJournal {
        AuditJournal {
            log: self.clone(),
            connection: connection.into(),
            via,
        }
    }
}

/// A connection's writes, appended to the audit log (see [`AuditLog::journal`]).
#[derive(Debug, Clone)]
pub struct AuditJournal {
    log: AuditLog,
    connection: String,
    via: &'static str,
}

impl WriteJournal for AuditJournal {
    fn record(&self, record: &WriteRecord) {
        let entry = AuditEntry {
            connection: self.connection.clone(),
            via: self.via.to_owned(),
            write: record.clone(),
        };
        if let Err(error) = self.log.append(&entry) {
            // The write itself is done; losing its record is said, not hidden.
            tracing::warn!(%error, action = %record.action, "a write could not be added to the audit log");
        }
    }
}

/// How an entry ended, in a word: `done`, `failed` or `refused`.
pub fn outcome_word(outcome: &WriteOutcome) -> &'static str {
    match outcome {
        WriteOutcome::Done { .. } => "done",
        WriteOutcome::Failed { .. } => "failed",
        WriteOutcome::Refused { .. } => "refused",
    }
}

/// The service's answer or the refusal, in words: "200", "409 conflict: …", "refused: …".
pub fn answer_words(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Done { status, .. } => status.to_string(),
        WriteOutcome::Failed { status, error, .. } => match status {
            Some(status) => format!("{status} {error}"),
            None => error.clone(),
        },
        WriteOutcome::Refused { reason } => format!("refused: {reason}"),
    }
}

/// Export formats of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditFormat {
    /// One entry per line, as kept.
    JsonLines,
    /// One row per entry: when, connection, via, action, target, call, outcome, status,
    /// request id, answer, sent (the redacted body as JSON).
    Csv,
}

impl AuditFormat {
    /// By a file name's extension: `.csv` is CSV, anything else JSON Lines.
    pub fn for_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("csv") => AuditFormat::Csv,
            _ => AuditFormat::JsonLines,
        }
    }
}

/// Writes `entries` (in the order given) to `out` as `format`.
pub fn write_entries<W: std::io::Write>(
    out: W,
    entries: &[AuditEntry],
    format: AuditFormat,
) -> std::io::Result<W> {
    match format {
        AuditFormat::JsonLines => {
            let mut out = out;
            for entry in entries {
                serde_json::to_writer(&mut out, entry)?;
                out.write_all(b"\n")?;
            }
            Ok(out)
        }
        AuditFormat::Csv => {
            let mut writer = csv::Writer::from_writer(out);
            writer.write_record([
                "at",
                "connection",
                "via",
                "baseUrl",
                "clientId",
                "action",
                "target",
                "call",
                "outcome",
                "status",
                "requestId",
                "answer",
                "sent",
            ])?;
            for entry in entries {
                let write = &entry.write;
                let (status, request_id) = match &write.outcome {
                    WriteOutcome::Done { status, request_id } => (Some(*status), request_id),
                    WriteOutcome::Failed {
                        status, request_id, ..
                    } => (*status, request_id),
                    WriteOutcome::Refused { .. } => (None, &None),
                };
                writer.write_record([
                    write.at.to_rfc3339(),
                    entry.connection.clone(),
                    entry.via.clone(),
                    write.base_url.clone(),
                    write.client_id.clone(),
                    write.action.describe().to_owned(),
                    write.target.clone(),
                    write.call.clone(),
                    outcome_word(&write.outcome).to_owned(),
                    status.map(|s| s.to_string()).unwrap_or_default(),
                    request_id.clone().unwrap_or_default(),
                    answer_words(&write.outcome),
                    write.sent.to_string(),
                ])?;
            }
            writer.into_inner().map_err(|e| e.into_error())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_client::WriteAction;
    use serde_json::json;

    fn entry(target: &str, outcome: WriteOutcome) -> AuditEntry {
        AuditEntry {
            connection: "Prod".into(),
            via: "app".into(),
            write: WriteRecord {
                at: chrono::Utc::now(),
                base_url: "https://svc.test/".into(),
                client_id: "c1".into(),
                action: WriteAction::Respond,
                target: target.into(),
                call: "PATCH /partner/v2/transactions/t/response".into(),
                sent: json!({"status": "processing"}),
                outcome,
            },
        }
    }

    #[test]
    fn appends_and_reads_newest_first_keeping_unreadable_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("sub/audit.jsonl"));
        assert_eq!(log.read(None).unwrap(), AuditRead::default());
        let done = WriteOutcome::Done {
            status: 200,
            request_id: Some("r-1".into()),
        };
        log.append(&entry("transaction a", done.clone())).unwrap();
        // A torn line (a crash mid-write, a hand edit) stays in the file and is counted.
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap()
            .write_all(b"{\"connection\": \"half\n")
            .unwrap();
        log.append(&entry(
            "transaction b",
            WriteOutcome::Refused {
                reason: "the connection is read-only".into(),
            },
        ))
        .unwrap();
        let read = log.read(Some(1)).unwrap();
        assert_eq!((read.total, read.unreadable), (2, 1));
        assert_eq!(read.entries.len(), 1);
        assert_eq!(read.entries[0].write.target, "transaction b");
        let all = log.read(None).unwrap();
        assert_eq!(all.entries[1].write.outcome, done);
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(text.contains("\"connection\": \"half"), "never rewritten");
        // Unix alone: on Windows the log takes the profile folder's ACL, with no mode to check.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn exports_as_json_lines_and_csv() {
        let entries = vec![entry(
            "transaction \"a\", b",
            WriteOutcome::Failed {
                status: Some(409),
                error: "conflict: the transaction is locked".into(),
                request_id: None,
            },
        )];
        let lines = write_entries(Vec::new(), &entries, AuditFormat::JsonLines).unwrap();
        let back: AuditEntry = serde_json::from_slice(lines.trim_ascii_end()).unwrap();
        assert_eq!(back, entries[0]);
        let csv = write_entries(Vec::new(), &entries, AuditFormat::Csv).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_slice());
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!(&row[6], "transaction \"a\", b");
        assert_eq!(&row[8], "failed");
        assert_eq!(&row[9], "409");
        assert_eq!(&row[11], "409 conflict: the transaction is locked");
        assert_eq!(AuditFormat::for_path(Path::new("x.CSV")), AuditFormat::Csv);
    }
}

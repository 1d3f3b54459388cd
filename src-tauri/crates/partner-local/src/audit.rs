//! The audit log: every write the console sent to a service, or refused on a read-only
//! connection, kept on this machine so "who changed this, when, and what did the service say?"
//! has an answer after the window is closed.
//!
//! Why lines appended, not a database: a write is a person's act (a few a day), the app and the
//! `partner` command both write to it (one `write` of one line each, `O_APPEND`, so lines from
//! two processes never interleave), and a line that cannot be read (a torn end after a crash, a
//! hand edit, another key) is counted and reported, never dropped from the file. Entries hold
//! no secret: `partner_client::writes` redacts every key-, secret- and token-named value of the
//! body, and the client's error messages never hold one.
//!
//! Encrypted at rest: an entry names lenders' and borrowers' transactions and what was sent
//! about them, so each line is `sealed:` and the base64 of the entry's JSON sealed
//! (`partner_seal::seal`, AES-256-GCM-SIV) with the console's data key
//! (`crate::data_key`) under the context [`LINE_CONTEXT`]. A line stays one `write`, and each
//! opens by itself: a line another key sealed (or changed on disk) does not open and is
//! counted in [`AuditRead::unopened`], so the reader can say the key may differ.
//!
//! Shared by two processes, so every change of the files is made under an advisory lock on
//! `audit-log.jsonl.lock` (exclusive to write, rotate or migrate; shared to read): an append
//! never lands in a file that is being renamed, and a reader never sees a rotation halfway.
//! - **Migration.** A log written before encryption holds plain JSON lines. The first append
//!   of a process (under the lock) rewrites each file that holds a plain line: every line
//!   sealed as it is (a torn one too, so it stays counted as unreadable, not in the clear),
//!   written to a new file, fsynced and renamed over the old one. A crash before the rename
//!   leaves the old file whole; readers read plain lines meanwhile.
//! - **Rotation.** When an append takes the file past [`Rotation::max_bytes`] (10 MiB by
//!   default, `PARTNER_AUDIT_LOG_MAX_BYTES`), it becomes `audit-log.1.jsonl`, the older ones
//!   move up one number and the one past [`Rotation::keep`] (5 by default,
//!   `PARTNER_AUDIT_LOG_KEEP`) is removed. Readers read the current file, then `.1`, `.2`, …:
//!   newest first across them all.

use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use partner_client::{WriteJournal, WriteOutcome, WriteRecord};
use partner_seal::DataKey;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{BufRead, Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The context every line is sealed under: a line sealed for another file kind does not open
/// here.
pub const LINE_CONTEXT: &[u8] = b"partner-console audit log line";

/// What starts a sealed line (the base64 of the sealed bytes follows).
pub const SEALED_PREFIX: &str = "sealed:";

/// The variable that sets the size past which the log is rotated, in bytes (`10MiB`, `512KiB`
/// and `1GiB` are taken too).
pub const MAX_BYTES_ENV: &str = "PARTNER_AUDIT_LOG_MAX_BYTES";
/// The variable that sets how many rotated files are kept.
pub const KEEP_ENV: &str = "PARTNER_AUDIT_LOG_KEEP";

/// When the log is rotated, and how many older files are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    /// The current file is rotated once an append takes it past this many bytes.
    pub max_bytes: u64,
    /// Rotated files kept (`audit-log.1.jsonl` … `audit-log.{keep}.jsonl`); older ones are
    /// removed.
    pub keep: usize,
}

impl Default for Rotation {
    fn default() -> Self {
        Rotation {
            max_bytes: 10 * 1024 * 1024,
            keep: 5,
        }
    }
}

impl Rotation {
    /// The default, changed by `PARTNER_AUDIT_LOG_MAX_BYTES` and `PARTNER_AUDIT_LOG_KEEP`
    /// where they are set (a value that is not a size or a count is said in the log and
    /// ignored).
    pub fn configured() -> Self {
        let mut rotation = Rotation::default();
        if let Ok(text) = std::env::var(MAX_BYTES_ENV) {
            match parse_size(&text) {
                Some(bytes) if bytes > 0 => rotation.max_bytes = bytes,
                _ => {
                    tracing::warn!(value = %text, "{MAX_BYTES_ENV} is not a size; the default is used")
                }
            }
        }
        if let Ok(text) = std::env::var(KEEP_ENV) {
            match text.trim().parse::<usize>() {
                Ok(keep) => rotation.keep = keep,
                Err(_) => {
                    tracing::warn!(value = %text, "{KEEP_ENV} is not a count; the default is used")
                }
            }
        }
        rotation
    }
}

/// `1048576`, `512KiB`, `10MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`, `GB` as binary units).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        _ => return None,
    };
    number.checked_mul(factor)
}

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
    /// Entries in the files (readable ones), of which `entries` are the newest.
    pub total: usize,
    /// Lines that are not entries (kept in the files, left out here).
    pub unreadable: usize,
    /// Of `unreadable`, the sealed lines that do not open with this key: another data key
    /// sealed them (the key changed, or came from elsewhere), or they were changed on disk.
    pub unopened: usize,
}

/// The audit log: its current file and the rotated ones beside it.
#[derive(Clone)]
pub struct AuditLog {
    path: PathBuf,
    key: DataKey,
    rotation: Rotation,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("key", &self.key)
            .field("rotation", &self.rotation)
            .finish()
    }
}

/// How a file is locked.
#[derive(Clone, Copy)]
enum LockKind {
    Shared,
    Exclusive,
}

/// The files this process has checked for plain lines (and sealed them), once per process.
fn migrated() -> &'static Mutex<HashSet<PathBuf>> {
    static MIGRATED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    MIGRATED.get_or_init(Mutex::default)
}

fn owner_only(options: &mut std::fs::OpenOptions) {
    // Owner-only. On Windows nothing is set: the files inherit the ACL of the data folder
    // under the user's profile, which grants them to the user, the administrators and SYSTEM.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// Makes a rename in `dir` durable (Unix; elsewhere the rename is the file system's to keep).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The `n`th file of the log at `path` (0: `path` itself).
fn numbered_file(path: &Path, n: usize) -> PathBuf {
    if n == 0 {
        return path.to_path_buf();
    }
    let name = match (
        path.file_stem().and_then(|s| s.to_str()),
        path.extension().and_then(|e| e.to_str()),
    ) {
        (Some(stem), Some(ext)) => format!("{stem}.{n}.{ext}"),
        _ => format!(
            "{}.{n}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    };
    path.with_file_name(name)
}

impl AuditLog {
    /// The log at `path`, sealed with `key`, rotated as [`Rotation::configured`] says.
    pub fn new(path: impl Into<PathBuf>, key: DataKey) -> Self {
        Self {
            path: path.into(),
            key,
            rotation: Rotation::configured(),
        }
    }

    /// The log in the shared data folder (the app's and the CLI's).
    pub fn in_data_dir(key: DataKey) -> Result<Self> {
        Ok(Self::new(
            crate::paths::data_dir()?.join(crate::paths::AUDIT_LOG),
            key,
        ))
    }

    /// The same log, rotated by `rotation`.
    pub fn with_rotation(mut self, rotation: Rotation) -> Self {
        self.rotation = rotation;
        self
    }

    /// Whether a log is at `path` (its current file, or a rotated one after a rotation).
    pub fn exists(path: &Path) -> bool {
        path.exists() || numbered_file(path, 1).exists()
    }

    /// Whether the log at `path` holds sealed lines (its first file there starts with one): data
    /// under a data key, which a caller deciding where the key may come from asks.
    pub fn sealed_at(path: &Path) -> bool {
        [path.to_path_buf(), numbered_file(path, 1)]
            .into_iter()
            .find(|file| file.exists())
            .and_then(|file| {
                use std::io::Read as _;
                let mut start = [0u8; SEALED_PREFIX.len()];
                std::fs::File::open(file)
                    .and_then(|mut f| f.read_exact(&mut start))
                    .ok()
                    .map(|()| start == SEALED_PREFIX.as_bytes())
            })
            .unwrap_or(false)
    }

    /// The current file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fingerprint of the key the log is sealed with (shown to say which key it needs).
    pub fn key_fingerprint(&self) -> String {
        self.key.fingerprint()
    }

    /// The `n`th file: 0 the current one, then `audit-log.1.jsonl`, `audit-log.2.jsonl`, …
    pub fn file(&self, n: usize) -> PathBuf {
        numbered_file(&self.path, n)
    }

    fn beside(&self, suffix: &str) -> PathBuf {
        let mut name = self
            .path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(suffix);
        self.path.with_file_name(name)
    }

    fn dir(&self) -> Option<&Path> {
        self.path.parent().filter(|d| !d.as_os_str().is_empty())
    }

    /// Takes the log's lock (the lock file made owner-only if missing); released when the
    /// file returned is dropped.
    fn lock(&self, kind: LockKind) -> Result<std::fs::File> {
        let path = self.beside(".lock");
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        owner_only(&mut options);
        let file = options
            .open(&path)
            .map_err(|e| Error::io("open the audit log's lock", &path, e))?;
        match kind {
            LockKind::Shared => file.lock_shared(),
            LockKind::Exclusive => file.lock(),
        }
        .map_err(|e| Error::io("lock the audit log", &path, e))?;
        Ok(file)
    }

    /// `plaintext` as one sealed line, newline included.
    fn sealed_line(&self, plaintext: &[u8]) -> Vec<u8> {
        let sealed = partner_seal::seal(&self.key, LINE_CONTEXT, plaintext);
        let mut line = Vec::with_capacity(SEALED_PREFIX.len() + sealed.len() * 4 / 3 + 4);
        line.extend_from_slice(SEALED_PREFIX.as_bytes());
        line.extend_from_slice(BASE64.encode(sealed).as_bytes());
        line.push(b'\n');
        line
    }

    /// Appends one entry as one sealed line (the folder and file created owner-only if
    /// missing) and syncs it, so an entry the caller was told of survives a crash; then
    /// rotates the log if it passed its size. The first append of a process seals a log's
    /// plain lines first.
    pub fn append(&self, entry: &AuditEntry) -> Result<()> {
        if let Some(dir) = self.dir() {
            crate::paths::create_private_dir(dir)?;
        }
        let json = serde_json::to_vec(entry)
            .map_err(|e| Error::Invalid(format!("an audit entry could not be written ({e})")))?;
        let mut line = self.sealed_line(&json);
        let _lock = self.lock(LockKind::Exclusive)?;
        if let Err(error) = self.migrate_once() {
            // The entry is still appended, sealed; the plain lines are sealed by a later run.
            tracing::warn!(%error, "the audit log's plain lines could not be sealed yet");
        }
        let mut options = std::fs::OpenOptions::new();
        options.read(true).append(true).create(true);
        owner_only(&mut options);
        let mut file = options
            .open(&self.path)
            .map_err(|e| Error::io("open the audit log", &self.path, e))?;
        let written = (|| -> std::io::Result<u64> {
            // A torn last line (a crash mid-write) stays a line of its own.
            if file.metadata()?.len() > 0 {
                let mut last = [0u8; 1];
                file.seek(std::io::SeekFrom::End(-1))?;
                file.read_exact(&mut last)?;
                if last[0] != b'\n' {
                    line.insert(0, b'\n');
                }
            }
            file.write_all(&line)?;
            file.sync_data()?;
            Ok(file.metadata()?.len())
        })()
        .map_err(|e| Error::io("append to the audit log", &self.path, e))?;
        drop(file);
        if written > self.rotation.max_bytes {
            self.rotate()?;
        }
        Ok(())
    }

    /// Moves the current file to `.1` (and each older one up a number, the one past `keep`
    /// removed). Under the exclusive lock.
    fn rotate(&self) -> Result<()> {
        let oldest = self.file(self.rotation.keep.max(1));
        if self.rotation.keep == 0 {
            return std::fs::remove_file(&self.path)
                .map_err(|e| Error::io("remove the full audit log", &self.path, e));
        }
        match std::fs::remove_file(&oldest) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("remove the oldest audit log", &oldest, e)),
        }
        for n in (1..self.rotation.keep).rev() {
            let from = self.file(n);
            match std::fs::rename(&from, self.file(n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("rotate the audit log", &from, e)),
            }
        }
        std::fs::rename(&self.path, self.file(1))
            .map_err(|e| Error::io("rotate the audit log", &self.path, e))?;
        if let Some(dir) = self.dir() {
            sync_dir(dir);
        }
        Ok(())
    }

    /// Seals the plain lines of every file of the log, once per process. Under the exclusive
    /// lock.
    fn migrate_once(&self) -> Result<()> {
        let mut done = migrated().lock().unwrap_or_else(PoisonError::into_inner);
        if done.contains(&self.path) {
            return Ok(());
        }
        for n in 0..=self.rotation.keep {
            self.seal_plain_lines(&self.file(n))?;
        }
        done.insert(self.path.clone());
        Ok(())
    }

    /// Rewrites `file` with each plain line sealed (sealed lines kept as they are), through a
    /// new file fsynced and renamed over it. A file without plain lines is left alone.
    fn seal_plain_lines(&self, file: &Path) -> Result<()> {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("read the audit log", file, e)),
        };
        let lines = || {
            bytes
                .split(|b| *b == b'\n')
                .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        };
        if lines().all(|line| line.starts_with(SEALED_PREFIX.as_bytes())) {
            return Ok(());
        }
        let mut out = Vec::with_capacity(bytes.len() * 2);
        let mut sealed = 0usize;
        for line in lines() {
            if line.starts_with(SEALED_PREFIX.as_bytes()) {
                out.extend_from_slice(line);
                out.push(b'\n');
            } else {
                out.extend_from_slice(&self.sealed_line(line));
                sealed += 1;
            }
        }
        let temporary = {
            let mut name = file
                .file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_default();
            name.push(".sealing");
            file.with_file_name(name)
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        owner_only(&mut options);
        options
            .open(&temporary)
            .and_then(|mut new| {
                new.write_all(&out)?;
                new.sync_all()
            })
            .map_err(|e| Error::io("write the sealed audit log", &temporary, e))?;
        std::fs::rename(&temporary, file)
            .map_err(|e| Error::io("replace the audit log with its sealed copy", file, e))?;
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            sync_dir(dir);
        }
        tracing::info!(path = %file.display(), lines = sealed, "the audit log's plain lines were sealed");
        Ok(())
    }

    /// The newest `limit` entries (all with `None`), newest first, across the current file and
    /// the rotated ones. A missing log is an empty one.
    pub fn read(&self, limit: Option<usize>) -> Result<AuditRead> {
        if !self.path.exists() && !self.file(1).exists() {
            return Ok(AuditRead::default());
        }
        // Best effort: a folder the reader cannot write to is still read, unlocked.
        let _lock = match self.lock(LockKind::Shared) {
            Ok(lock) => Some(lock),
            Err(error) => {
                tracing::debug!(%error, "the audit log is read without its lock");
                None
            }
        };
        let mut read = AuditRead::default();
        let mut entries = Vec::new();
        let mut n = 0;
        loop {
            let file = self.file(n);
            match std::fs::File::open(&file) {
                Ok(opened) => {
                    let mut of_file = self.read_file(opened, &file, &mut read)?;
                    of_file.reverse();
                    entries.extend(of_file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    // The current file may be missing just after a rotation; an older one
                    // ends the log once past the ones kept.
                    if n > 0 && n >= self.rotation.keep {
                        break;
                    }
                }
                Err(e) => return Err(Error::io("read the audit log", &file, e)),
            }
            n += 1;
        }
        read.total = entries.len();
        entries.truncate(limit.unwrap_or(usize::MAX));
        read.entries = entries;
        Ok(read)
    }

    /// The entries of one file, oldest first; what is not an entry is counted in `read`.
    fn read_file(
        &self,
        file: std::fs::File,
        path: &Path,
        read: &mut AuditRead,
    ) -> Result<Vec<AuditEntry>> {
        let mut entries = Vec::new();
        for line in std::io::BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| Error::io("read the audit log", path, e))?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = match line.strip_prefix(SEALED_PREFIX.as_bytes()) {
                Some(text) => match BASE64
                    .decode(text.trim_ascii_end())
                    .ok()
                    .map(|sealed| partner_seal::open(&self.key, LINE_CONTEXT, &sealed))
                {
                    Some(Ok(json)) => serde_json::from_slice::<AuditEntry>(&json).ok(),
                    Some(Err(partner_seal::SealError::Open)) => {
                        read.unopened += 1;
                        None
                    }
                    _ => None,
                },
                // A plain line of a log not yet sealed.
                None => serde_json::from_slice::<AuditEntry>(&line).ok(),
            };
            match parsed {
                Some(entry) => entries.push(entry),
                None => read.unreadable += 1,
            }
        }
        Ok(entries)
    }

    /// A journal that appends the writes of one connection to this log.
    pub fn journal(&self, connection: impl Into<String>, via: &'static str) -> AuditJournal {
        AuditJournal {
            log: OnceLock::from(self.clone()),
            open: None,
            connection: connection.into(),
            via,
        }
    }

    /// A journal whose log is opened by `open` at its first record (`open` finds the data key:
    /// a command that never writes never asks the secret store for it). An `open` that fails
    /// is said in the log, and tried again at the next record.
    pub fn lazy_journal(
        connection: impl Into<String>,
        via: &'static str,
        open: impl Fn() -> Result<AuditLog> + Send + Sync + 'static,
    ) -> AuditJournal {
        AuditJournal {
            log: OnceLock::new(),
            open: Some(std::sync::Arc::new(open)),
            connection: connection.into(),
            via,
        }
    }
}

type OpenLog = std::sync::Arc<dyn Fn() -> Result<AuditLog> + Send + Sync>;

/// A connection's writes, appended to the audit log (see [`AuditLog::journal`]).
#[derive(Clone)]
pub struct AuditJournal {
    log: OnceLock<AuditLog>,
    open: Option<OpenLog>,
    connection: String,
    via: &'static str,
}

impl std::fmt::Debug for AuditJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditJournal")
            .field("log", &self.log.get())
            .field("connection", &self.connection)
            .field("via", &self.via)
            .finish_non_exhaustive()
    }
}

impl AuditJournal {
    fn log(&self) -> Result<&AuditLog> {
        if let Some(log) = self.log.get() {
            return Ok(log);
        }
        let open = self
            .open
            .as_ref()
            .ok_or_else(|| Error::Invalid("the audit log is not open".into()))?;
        let log = open()?;
        Ok(self.log.get_or_init(|| log))
    }
}

impl WriteJournal for AuditJournal {
    fn record(&self, record: &WriteRecord) {
        let entry = AuditEntry {
            connection: self.connection.clone(),
            via: self.via.to_owned(),
            write: record.clone(),
        };
        if let Err(error) = self.log().and_then(|log| log.append(&entry)) {
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
    const HEADER: [&str; 13] = [
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
    ];
    write_table(out, entries, format, &HEADER, |entry| {
        let write = &entry.write;
        let (status, request_id) = match &write.outcome {
            WriteOutcome::Done { status, request_id } => (Some(*status), request_id),
            WriteOutcome::Failed {
                status, request_id, ..
            } => (*status, request_id),
            WriteOutcome::Refused { .. } => (None, &None),
        };
        vec![
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
        ]
    })
}

/// The one shape of an audit export, for this machine's log and a team workspace's: JSON Lines
/// (each entry as it serialises, one a line) or CSV (`header`, then each entry's `row`).
pub fn write_table<W: std::io::Write, E: Serialize>(
    out: W,
    entries: &[E],
    format: AuditFormat,
    header: &[&str],
    row: impl Fn(&E) -> Vec<String>,
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
            writer.write_record(header)?;
            for entry in entries {
                writer.write_record(row(entry))?;
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
        let log = AuditLog::new(dir.path().join("sub/audit.jsonl"), DataKey::generate());
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
        assert!(text.contains("\"connection\": \"half"), "never dropped");
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

    fn numbered(n: usize) -> AuditEntry {
        let mut numbered = entry(
            &format!("transaction t_{n:04}"),
            WriteOutcome::Done {
                status: 200,
                request_id: Some(format!("r-{n}")),
            },
        );
        numbered.write.at = chrono::DateTime::from_timestamp(1_800_000_000 + n as i64, 0).unwrap();
        numbered
    }

    fn holds(bytes: &[u8], needle: &str) -> bool {
        bytes
            .windows(needle.len())
            .any(|window| window == needle.as_bytes())
    }

    /// Every file of the log, in one byte string.
    fn all_bytes(dir: &Path) -> Vec<u8> {
        let mut bytes = Vec::new();
        for file in std::fs::read_dir(dir).unwrap() {
            bytes.extend(std::fs::read(file.unwrap().path()).unwrap());
        }
        bytes
    }

    #[test]
    fn the_files_bytes_hold_no_entry_text() {
        let dir = tempfile::tempdir().unwrap();
        let key = DataKey::generate();
        let log = AuditLog::new(dir.path().join("audit-log.jsonl"), key.clone());
        for n in 0..3 {
            log.append(&numbered(n)).unwrap();
        }
        let bytes = std::fs::read(log.path()).unwrap();
        for needle in ["t_0001", "Prod", "PATCH", "processing", "svc.test", "r-1"] {
            assert!(!holds(&bytes, needle), "{needle} is in the file");
        }
        assert!(!holds(&bytes, &key.to_hex()[..16]));
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.lines().count(), 3, "one line per entry");
        assert!(text.lines().all(|line| line.starts_with(SEALED_PREFIX)));
        let read = log.read(None).unwrap();
        assert_eq!((read.total, read.unreadable, read.unopened), (3, 0, 0));
        assert_eq!(read.entries[0], numbered(2));
        assert_eq!(read.entries[2], numbered(0));
        assert!(!format!("{log:?}").contains(&key.to_hex()[..16]));
        assert!(AuditLog::sealed_at(log.path()));
        assert!(!AuditLog::sealed_at(&dir.path().join("missing.jsonl")));
    }

    #[test]
    fn a_line_another_key_sealed_is_counted_as_unopened_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit-log.jsonl");
        let ours = AuditLog::new(&path, DataKey::generate());
        let theirs = AuditLog::new(&path, DataKey::generate());
        ours.append(&numbered(1)).unwrap();
        theirs.append(&numbered(2)).unwrap();
        ours.append(&numbered(3)).unwrap();
        let read = ours.read(None).unwrap();
        assert_eq!((read.total, read.unreadable, read.unopened), (2, 1, 1));
        assert_eq!(read.entries, vec![numbered(3), numbered(1)]);
        let read = theirs.read(None).unwrap();
        assert_eq!((read.total, read.unreadable, read.unopened), (1, 2, 2));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "never dropped");
    }

    #[test]
    fn a_plain_log_of_todays_format_is_sealed_with_every_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit-log.jsonl");
        // As the log was written before encryption: one JSON line per entry, and a torn one.
        let old: Vec<AuditEntry> = (0..5).map(numbered).collect();
        let mut plain = Vec::new();
        for (n, entry) in old.iter().enumerate() {
            serde_json::to_writer(&mut plain, entry).unwrap();
            plain.push(b'\n');
            if n == 2 {
                plain.extend_from_slice(b"{\"connection\": \"half\n");
            }
        }
        std::fs::write(&path, &plain).unwrap();
        let log = AuditLog::new(&path, DataKey::generate());
        // Read as it is (readers change nothing).
        let before = log.read(None).unwrap();
        assert_eq!((before.total, before.unreadable), (5, 1));
        assert_eq!(std::fs::read(&path).unwrap(), plain);

        // The first append seals it.
        log.append(&numbered(5)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        for needle in ["t_000", "Prod", "half", "svc.test"] {
            assert!(!holds(&bytes, needle), "{needle} is still in the file");
        }
        assert!(!dir.path().join("audit-log.jsonl.sealing").exists());
        let after = log.read(None).unwrap();
        assert_eq!((after.total, after.unreadable, after.unopened), (6, 1, 0));
        let mut want: Vec<AuditEntry> = (0..6).map(numbered).collect();
        want.reverse();
        assert_eq!(after.entries, want);
        // Unix alone: on Windows the file takes the profile folder's ACL, with no mode to check.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn rotation_keeps_the_newest_entries_and_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let rotation = Rotation {
            max_bytes: 2_000,
            keep: 2,
        };
        let log = AuditLog::new(dir.path().join("audit-log.jsonl"), DataKey::generate())
            .with_rotation(rotation);
        for n in 0..60 {
            log.append(&numbered(n)).unwrap();
        }
        let line = std::fs::read_to_string(log.file(1))
            .unwrap()
            .lines()
            .map(|l| l.len() as u64 + 1)
            .max()
            .unwrap();
        for n in 0..=2 {
            let size = std::fs::metadata(log.file(n)).map_or(0, |m| m.len());
            assert!(size <= rotation.max_bytes + line, "file {n}: {size} bytes");
        }
        assert!(log.file(1).exists() && log.file(2).exists());
        assert!(!log.file(3).exists(), "the oldest is removed");
        assert_eq!(
            log.file(2).file_name().unwrap().to_str().unwrap(),
            "audit-log.2.jsonl"
        );
        let read = log.read(None).unwrap();
        assert!(read.total < 60 && read.total > 4, "{}", read.total);
        assert_eq!(read.unreadable, 0);
        // The newest ones, newest first, none missing between them.
        let want: Vec<AuditEntry> = (60 - read.total..60).rev().map(numbered).collect();
        assert_eq!(read.entries, want);
        assert_eq!(log.read(Some(3)).unwrap().entries, want[..3].to_vec());
    }

    #[test]
    fn two_writers_appending_at_once_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit-log.jsonl");
        let key = DataKey::generate();
        // A plain log to seal, and a cap that rotates many times while they write.
        let mut plain = Vec::new();
        for n in 0..5 {
            serde_json::to_writer(&mut plain, &numbered(9000 + n)).unwrap();
            plain.push(b'\n');
        }
        std::fs::write(&path, &plain).unwrap();
        let rotation = Rotation {
            max_bytes: 4_096,
            keep: 100,
        };
        let writers: Vec<_> = (0..4)
            .map(|w| {
                // Each its own log value (its own lock file handle), as two processes have.
                let log = AuditLog::new(&path, key.clone()).with_rotation(rotation);
                std::thread::spawn(move || {
                    for n in 0..50 {
                        log.append(&numbered(w * 1000 + n)).unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let log = AuditLog::new(&path, key).with_rotation(rotation);
        let read = log.read(None).unwrap();
        assert_eq!((read.total, read.unreadable), (205, 0));
        let targets: HashSet<String> = read
            .entries
            .iter()
            .map(|e| e.write.target.clone())
            .collect();
        assert_eq!(targets.len(), 205);
        // Each writer's own entries come back in the order it wrote them.
        for w in 0..4 {
            let mine: Vec<&AuditEntry> = read
                .entries
                .iter()
                .rev()
                .filter(|e| e.write.target.starts_with(&format!("transaction t_{w}")))
                .collect();
            let want: Vec<AuditEntry> = (0..50).map(|n| numbered(w * 1000 + n)).collect();
            assert_eq!(mine.into_iter().cloned().collect::<Vec<_>>(), want);
        }
        assert!(log.file(2).exists(), "it rotated");
        assert!(!holds(&all_bytes(dir.path()), "t_9000"));
    }

    #[test]
    fn sizes_are_read_with_their_units() {
        assert_eq!(parse_size("1048576"), Some(1_048_576));
        assert_eq!(parse_size("10MiB"), Some(10 * 1024 * 1024));
        assert_eq!(parse_size(" 512 KiB "), Some(512 * 1024));
        assert_eq!(parse_size("1g"), Some(1024 * 1024 * 1024));
        assert_eq!(parse_size("ten"), None);
        assert_eq!(parse_size("5 parsecs"), None);
    }

    #[test]
    fn a_lazy_journal_opens_its_log_at_the_first_record_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit-log.jsonl");
        let key = DataKey::generate();
        let opens = std::sync::Arc::new(AtomicUsize::new(0));
        let journal = AuditLog::lazy_journal("Prod", "cli", {
            let (path, key, opens) = (path.clone(), key.clone(), opens.clone());
            move || {
                opens.fetch_add(1, Ordering::SeqCst);
                Ok(AuditLog::new(&path, key.clone()))
            }
        });
        assert_eq!(
            opens.load(Ordering::SeqCst),
            0,
            "no key asked for without a write"
        );
        journal.record(&numbered(1).write);
        journal.record(&numbered(2).write);
        assert_eq!(opens.load(Ordering::SeqCst), 1);
        let read = AuditLog::new(&path, key).read(None).unwrap();
        assert_eq!(read.total, 2);
        assert_eq!(
            (
                read.entries[0].connection.as_str(),
                read.entries[0].via.as_str()
            ),
            ("Prod", "cli")
        );
    }

    /// The variable that makes [`audit_writer_child`] a writer: `path|key|first|count`.
    const CHILD: &str = "PARTNER_AUDIT_TEST_CHILD";

    /// Nothing by itself: run by [`two_processes_appending_at_once_lose_nothing`] as the other
    /// process, it appends `count` entries numbered from `first` to the log at `path`.
    #[test]
    fn audit_writer_child() {
        let Ok(spec) = std::env::var(CHILD) else {
            return;
        };
        let parts: Vec<&str> = spec.split('|').collect();
        let key = DataKey::from_hex(parts[1]).unwrap();
        let log = AuditLog::new(parts[0], key);
        let first: usize = parts[2].parse().unwrap();
        let count: usize = parts[3].parse().unwrap();
        for n in first..first + count {
            log.append(&numbered(n)).unwrap();
        }
    }

    #[test]
    fn two_processes_appending_at_once_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit-log.jsonl");
        let key = DataKey::generate();
        let mut plain = Vec::new();
        for n in 0..3 {
            serde_json::to_writer(&mut plain, &numbered(9000 + n)).unwrap();
            plain.push(b'\n');
        }
        std::fs::write(&path, &plain).unwrap();
        let children: Vec<_> = [0usize, 1000]
            .into_iter()
            .map(|first| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "audit::tests::audit_writer_child", "--quiet"])
                    .env(
                        CHILD,
                        format!("{}|{}|{first}|60", path.display(), key.to_hex().as_str()),
                    )
                    // Rotated many times while both write; nothing old enough to be removed.
                    .env(MAX_BYTES_ENV, "4KiB")
                    .env(KEEP_ENV, "100")
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let log = AuditLog::new(&path, key).with_rotation(Rotation {
            max_bytes: 4096,
            keep: 100,
        });
        let read = log.read(None).unwrap();
        assert_eq!((read.total, read.unreadable), (123, 0));
        for first in [0usize, 1000] {
            let mine: Vec<AuditEntry> = read
                .entries
                .iter()
                .rev()
                .filter(|e| {
                    (first..first + 60).any(|n| e.write.target == format!("transaction t_{n:04}"))
                })
                .cloned()
                .collect();
            let want: Vec<AuditEntry> = (first..first + 60).map(numbered).collect();
            assert_eq!(mine, want, "each process's entries, in its order");
        }
        assert!(log.file(3).exists(), "it rotated");
        assert!(
            !holds(&all_bytes(dir.path()), "t_9000"),
            "the plain lines sealed"
        );
    }
}

//! Keying a connection of the store with the data key, and the store's key note: what every
//! connection needs before its first read (`schema` opens them), below the encryption in place
//! of an old store ([`super::encryption`], whose notes say why SQLCipher and these settings).

use super::types::StoreKey;
use crate::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The first bytes of an unencrypted SQLite file (an encrypted one starts with random bytes).
const PLAIN_HEADER: &[u8; 16] = b"SQLite format 3\0";
/// SQLCipher's page MAC: HMAC-SHA256 rather than its default HMAC-SHA512, because SHA-256 has
/// instructions of its own on current x86 and ARM CPUs (SHA-NI, the ARMv8 SHA extensions) and
/// SHA-512 does not: the page MAC was a large part of what encryption added to the tables thread
/// (BENCHMARKS.md, listener, data at rest). HMAC-SHA256 is as sound a MAC for a page.
pub(super) const HMAC: &str = "HMAC_SHA256";
/// The key note's name is the store's with this appended.
const NOTE_SUFFIX: &str = "-key";
/// Keys `conn` with `key` (nothing for `None`, an unencrypted store), its pages `page_size`
/// bytes, and checks that the key opens the file.
pub(super) fn apply_key(
    conn: &Connection,
    key: Option<&StoreKey>,
    path: &Path,
    page_size: i64,
) -> Result<()> {
    let Some(key) = key else {
        return Ok(());
    };
    let sqlcipher_key = key.key.sqlcipher_key();
    let mut statement = Zeroizing::new(String::with_capacity(sqlcipher_key.len() + 16));
    statement.push_str("PRAGMA key = ");
    statement.push_str(&sqlcipher_key);
    statement.push(';');
    conn.execute_batch(&statement)?;
    let cipher: Option<String> = conn
        .query_row("PRAGMA cipher_version", [], |row| row.get(0))
        .optional()?;
    if cipher.is_none() {
        return Err(Error::EncryptStore {
            path: path.to_path_buf(),
            reason: "this build's SQLite has no SQLCipher, so the store would not be encrypted"
                .into(),
        });
    }
    conn.execute_batch(&format!(
        "PRAGMA cipher_page_size = {page_size}; PRAGMA cipher_hmac_algorithm = {HMAC}; \
         PRAGMA cipher_memory_security = OFF;"
    ))?;
    // The first read of a page tells whether the key is right.
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| {
        row.get::<_, i64>(0)
    }) {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::NotADatabase =>
        {
            Err(wrong_key(path, key))
        }
        Err(source) => Err(Error::OpenStore {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn wrong_key(path: &Path, key: &StoreKey) -> Error {
    let given = key.key.fingerprint();
    let needs = match read_note(path) {
        Some((fingerprint, _)) if fingerprint == given => format!(
            "; its key note ({}) names this same key, so the file is damaged or not a capture store",
            note_path(path).display()
        ),
        Some((fingerprint, home)) => format!(
            "; it needs the key {fingerprint}, kept in {home} (its key note {} says)",
            note_path(path).display()
        ),
        None => String::new(),
    };
    Error::StoreKey {
        path: path.to_path_buf(),
        given,
        home: key.home.clone(),
        needs,
    }
}

pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The key note beside the store at `path`.
pub(super) fn note_path(path: &Path) -> PathBuf {
    sibling(path, NOTE_SUFFIX)
}

/// (fingerprint, home) from the key note beside `path`, when there is one.
fn read_note(path: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(note_path(path)).ok()?;
    let mut fingerprint = None;
    let mut home = None;
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("fingerprint: ") {
            fingerprint = Some(value.trim().to_string());
        } else if let Some(value) = line.strip_prefix("kept in: ") {
            home = Some(value.trim().to_string());
        }
    }
    Some((
        fingerprint?,
        home.unwrap_or_else(|| "an unknown place".into()),
    ))
}

/// Writes the key note beside the store at `path` unless it already names `key` there. A note
/// that cannot be written is only a worse message later: logged, not an error.
pub(super) fn write_note(path: &Path, key: &StoreKey) {
    let fingerprint = key.key.fingerprint();
    if read_note(path).is_some_and(|(found, home)| found == fingerprint && home == key.home) {
        return;
    }
    let text = format!(
        "This capture store is encrypted with the Partner Console data key named below (its \
         fingerprint, never the key).\nfingerprint: {fingerprint}\nkept in: {}\n",
        key.home
    );
    if let Err(error) = std::fs::write(note_path(path), text) {
        tracing::warn!(%error, "the capture store's key note could not be written");
    }
}

/// Whether the file at `path` is an unencrypted SQLite database (none there, or empty: no).
pub(super) fn is_plain(path: &Path) -> Result<bool> {
    use std::io::Read as _;
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(Error::EncryptStore {
                path: path.to_path_buf(),
                reason: format!("its first bytes could not be read: {source}"),
            })
        }
    };
    let mut header = [0u8; 16];
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(source) => {
                return Err(Error::EncryptStore {
                    path: path.to_path_buf(),
                    reason: format!("its first bytes could not be read: {source}"),
                })
            }
        }
    }
    Ok(read == header.len() && &header == PLAIN_HEADER)
}

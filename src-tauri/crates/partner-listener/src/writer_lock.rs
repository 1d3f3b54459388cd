//! The one-writer lock of a capture store: an exclusive OS lock on `<store>.lock` beside it.
//!
//! Why: the store's writer keeps state in memory (the map of notifications that numbers
//! redelivery attempts, the next capture id), so two writers on one file would each number
//! attempts from their own map and hand out the same ids. SQLite would keep the file intact, but
//! the captures would say wrong things. So a writer takes this lock before it opens the database,
//! and a second writer, in another process or in this one, is refused with
//! [`Error::StoreInUse`] instead. Readers take no lock (WAL lets them read beside the writer).
//!
//! Why an advisory lock (`File::try_lock`, `flock` on Unix, `LockFileEx` on Windows) and not a
//! file that exists while a writer runs: the OS drops the lock when its holder dies, `kill -9`
//! included, so a crashed listener never leaves the store locked. The lock is held by the open
//! file description, so a second open in the same process is refused too. The file is never
//! deleted (deleting a lock file races with the next process opening it); what it holds (the
//! holder's pid and program) only lets a refusal name who is using the store.

use crate::{Error, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Held for as long as a store's writer may write; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

/// `<store>.lock` beside the store (`captures.sqlite3` → `captures.sqlite3.lock`).
pub fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl WriterLock {
    /// Takes the writer lock of the store at `store`, naming `holder` (the program, e.g.
    /// "partner listen") in the lock file for anyone refused while it is held.
    pub(crate) fn acquire(store: &Path, holder: &str) -> Result<Self> {
        let path = lock_path(store);
        let lock_error = |source: std::io::Error| Error::LockStore {
            path: path.clone(),
            source,
        };
        // Not truncated on open: until the lock is ours, the file names the current holder.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(lock_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::StoreInUse {
                    path: store.to_path_buf(),
                    holder: read_holder(&mut file),
                })
            }
            Err(TryLockError::Error(source)) => return Err(lock_error(source)),
        }
        // Naming the holder is a courtesy to whoever is refused next: a failure here is logged,
        // never a reason not to listen.
        let named = file
            .set_len(0)
            .and_then(|()| write!(file, "pid={}\nprogram={holder}\n", std::process::id()))
            .and_then(|()| file.flush());
        if let Err(error) = named {
            tracing::warn!(%error, lock = %path.display(), "could not name the holder in the store's lock file");
        }
        Ok(Self { _file: file })
    }
}

/// Whether a writer (a listener, an import, a clear) holds the store at `store` now.
///
/// Found by taking the lock and letting it go at once, as no other portable call tells: a writer
/// starting in that instant is refused with [`Error::StoreInUse`] (and may simply start again).
/// No lock file means no writer ever opened the store.
pub fn is_held(store: &Path) -> Result<bool> {
    let path = lock_path(store);
    let file = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(Error::LockStore { path, source }),
    };
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(source)) => Err(Error::LockStore { path, source }),
    }
}

/// "partner listen (pid 4242)" from the lock file, or a plain phrase when it names no one (the
/// holder may not have written it yet, or it was written by something else).
fn read_holder(file: &mut File) -> String {
    let mut text = String::new();
    // At most a few hundred bytes are ever written; reading more is not needed to name someone.
    if file.take(4096).read_to_string(&mut text).is_err() {
        return UNKNOWN_HOLDER.into();
    }
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    // Only printable text goes into the message (the file is anyone's to write).
    let clean = |value: &str| -> String {
        value
            .chars()
            .filter(|c| !c.is_control())
            .take(100)
            .collect()
    };
    match (field("program"), field("pid")) {
        (Some(program), Some(pid)) => format!("{} (pid {})", clean(program), clean(pid)),
        (Some(program), None) => clean(program),
        (None, Some(pid)) => format!("pid {}", clean(pid)),
        (None, None) => UNKNOWN_HOLDER.into(),
    }
}

const UNKNOWN_HOLDER: &str = "another listener";

/// What a store's writer calls itself in the lock file when the program did not say: the
/// executable's name.
pub(crate) fn default_holder() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "a program using partner-listener".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_holder_is_read_back_and_only_printable_text_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        std::fs::write(&path, "pid=12\nprogram=partner listen\u{7}\n").unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(read_holder(&mut file), "partner listen (pid 12)");
        std::fs::write(&path, "").unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(read_holder(&mut file), UNKNOWN_HOLDER);
        assert_eq!(
            lock_path(Path::new("/a/captures.sqlite3")),
            PathBuf::from("/a/captures.sqlite3.lock")
        );
    }
}

//! Small files the console keeps whole: written atomically, and a file it cannot read moved
//! aside rather than overwritten.
//!
//! Why one home: the settings file and the saved workspace login (`partner-workspace`) must
//! both survive a crash mid-write and never lose what a user (or a newer version) wrote, so
//! both write and keep aside through these two functions rather than each its own copy.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file beside it (created new), synced,
/// renamed over it, and (on Unix) the folder synced, so a crash leaves the old file or the new
/// one, never a torn one. The folder is created owner-only if missing. Owner-only: mode 0600
/// on Unix; on Windows the file inherits the ACL of the data folder under the user's profile,
/// which grants it to the user, the administrators and SYSTEM alone, so nothing is set.
/// `action` says what failed in an error ("write the settings").
pub fn write_atomically(path: &Path, bytes: &[u8], action: &'static str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    crate::paths::create_private_dir(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let temporary = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)?;
        sync_folder(&dir)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(Error::io(action, path, e));
    }
    Ok(())
}

/// Moves a file that cannot be used aside, beside itself, as `NAME.{suffix}-{UTC time}`
/// (`settings.json.corrupt-20260101T000000.000Z`), untouched, and returns where it went.
pub fn keep_aside(path: &Path, suffix: &str) -> Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let name = format!(
        "{}.{suffix}-{stamp}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into())
    );
    let aside = path.with_file_name(name);
    std::fs::rename(path, &aside)
        .map_err(|e| Error::io("move aside the unusable file", path, e))?;
    Ok(aside)
}

/// Makes a rename in `dir` durable. On Unix the folder is opened and synced (its entry for the
/// new name is on disk once the folder is). Windows refuses to open a folder as a file ("Access
/// denied", os error 5) and has no folder sync: NTFS journals the rename itself, and the file's
/// own data was synced before it, so nothing more is done there.
fn sync_folder(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("sub").join("f.json");
        write_atomically(&path, b"one", "write it").expect("first");
        write_atomically(&path, b"two", "write it").expect("second");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        let names: Vec<_> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.json")]);
    }

    #[test]
    fn a_file_kept_aside_keeps_its_bytes_beside_the_original_name() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f.json");
        std::fs::write(&path, b"garbage").expect("write");
        let aside = keep_aside(&path, "corrupt").expect("aside");
        assert!(!path.exists());
        assert!(aside
            .file_name()
            .expect("name")
            .to_string_lossy()
            .starts_with("f.json.corrupt-"));
        assert_eq!(std::fs::read(aside).expect("read"), b"garbage");
    }
}

//! The server key: what the workspace's secrets (the subscriptions' signing keys) are sealed
//! with in PostgreSQL (partner-seal's AES-256-GCM-SIV), so a copy of the database, a backup or a
//! replica holds no usable key.
//!
//! Where it comes from, in order: `PARTNER_SERVER_KEY` (64 hex digits, for a container's
//! secret), the file `PARTNER_SERVER_KEY_FILE` or `--key-file` names, or the default file the
//! CLI passes (the data folder's `server.key`). `partner server init` creates the file when it
//! does not exist (owner-only on Unix; on Windows the profile folder's ACL already keeps it the
//! owner's); every server of a workspace needs the same key, copied to each. The workspace keeps
//! the key's fingerprint, so a server started with another key is refused by name instead of
//! failing to open every signing key.

use crate::error::{Error, Result};
use partner_seal::DataKey;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable holding the key itself (64 hex digits).
pub const KEY_ENV: &str = "PARTNER_SERVER_KEY";
/// The environment variable naming the key file.
pub const KEY_FILE_ENV: &str = "PARTNER_SERVER_KEY_FILE";

/// Where the server key is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The key's hex text (from [`KEY_ENV`]); never printed.
    Env,
    /// A file holding the key's hex text.
    File(PathBuf),
}

impl KeySource {
    /// [`KEY_ENV`] when set, else the file given (`--key-file`, [`KEY_FILE_ENV`]), else
    /// `default_file()` (asked only then).
    pub fn choose<E>(
        file: Option<PathBuf>,
        default_file: impl FnOnce() -> std::result::Result<PathBuf, E>,
    ) -> std::result::Result<Self, E> {
        if std::env::var_os(KEY_ENV).is_some() {
            return Ok(KeySource::Env);
        }
        let file = file.or_else(|| std::env::var_os(KEY_FILE_ENV).map(PathBuf::from));
        Ok(KeySource::File(match file {
            Some(file) => file,
            None => default_file()?,
        }))
    }

    pub fn describe(&self) -> String {
        match self {
            KeySource::Env => format!("${KEY_ENV}"),
            KeySource::File(path) => path.display().to_string(),
        }
    }

    /// Reads the key.
    pub fn load(&self) -> Result<DataKey> {
        let text = match self {
            KeySource::Env => std::env::var(KEY_ENV)
                .map_err(|_| Error::ServerKey(format!("${KEY_ENV} is not set or not text")))?,
            KeySource::File(path) => read_file(path)?,
        };
        DataKey::from_hex(text.trim()).map_err(|error| {
            Error::ServerKey(format!("{} does not hold a key: {error}", self.describe()))
        })
    }

    /// Reads the key, creating its file with a new key when there is none (`init` only).
    pub fn load_or_create(&self) -> Result<(DataKey, bool)> {
        if let KeySource::File(path) = self {
            if !path.exists() {
                let key = DataKey::generate();
                write_new_file(path, key.to_hex().as_bytes())?;
                return Ok((key, true));
            }
        }
        Ok((self.load()?, false))
    }
}

fn read_file(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|error| {
        Error::ServerKey(if error.kind() == std::io::ErrorKind::NotFound {
            format!(
                "{} does not exist: copy the workspace's key file here, or set ${KEY_ENV} \
                 (`partner server init` made it where it first ran)",
                path.display()
            )
        } else {
            format!("{} could not be read: {error}", path.display())
        })
    })
}

/// Creates `path` (and its folder) holding `bytes`, readable by its owner only; refuses to
/// replace a file that appeared meanwhile.
fn write_new_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let failed = |error: std::io::Error| {
        Error::ServerKey(format!("{} could not be written: {error}", path.display()))
    };
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(failed)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    // Windows: a file under the user's profile inherits its ACL (the user, SYSTEM and the
    // administrators), which is what owner-only means there.
    let mut file = options.open(path).map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.sync_all().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_created_once_then_read_back() {
        let folder = tempfile::tempdir().unwrap();
        let source = KeySource::File(folder.path().join("keys/server.key"));
        let (made, created) = source.load_or_create().unwrap();
        assert!(created);
        let (again, created) = source.load_or_create().unwrap();
        assert!(!created);
        assert_eq!(made.fingerprint(), again.fingerprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(folder.path().join("keys/server.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_file_that_is_not_a_key_is_refused_without_its_contents() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("server.key");
        std::fs::write(&path, "not-a-key-secretish").unwrap();
        let error = KeySource::File(path).load().unwrap_err().to_string();
        assert!(error.contains("does not hold a key"), "{error}");
        assert!(!error.contains("secretish"), "{error}");
    }
}

//! Where the key of the console's data at rest comes from: the capture store, its journal, the
//! audit log and the embedded sandbox's data are encrypted with one [`DataKey`] per user.
//!
//! Looked for in this order, the first that is there wins:
//! 1. `PARTNER_DATA_KEY`: the key itself (64 hexadecimal digits), for a headless listener whose
//!    key is handed over by a service manager or CI's secrets;
//! 2. `PARTNER_DATA_KEY_FILE`: a key file named by its path (made when missing);
//! 3. `data.key` in the data folder, where a console without a secret store made it;
//! 4. the OS's secret store (the `data-key` entry), made there when missing: the desktop's
//!    default;
//! 5. with no secret store at all (a server, a container, CI): a new `data.key` in the data
//!    folder, and the caller says so.
//!
//! Why a file found beats the secret store: a file is there only because a console chose it
//! (by variable, or for want of a store), and the data written then is under that key; a
//! secret store that appears later (a desktop session on a server) must not change the key
//! under existing data.
//!
//! A key file is readable by its owner alone: made with mode 0600 on Unix, and refused while
//! group or others can read it, as ssh refuses a private key. On Windows it is made in the
//! user's profile, whose folders are the user's, the administrators' and SYSTEM's alone.
//! The key never appears in an error, a log line or a `Debug` print ([`DataKey`]'s `Debug`
//! shows its fingerprint).

use crate::error::{Error, Result};
use partner_api::Secret;
use partner_client::{SecretSlot, SecretStore};
pub use partner_seal::DataKey;
use std::path::{Path, PathBuf};

/// The variable that holds the key itself.
pub const KEY_ENV: &str = "PARTNER_DATA_KEY";
/// The variable that names a key file.
pub const KEY_FILE_ENV: &str = "PARTNER_DATA_KEY_FILE";
/// The key file's name in the data folder.
pub const KEY_FILE_NAME: &str = "data.key";

/// Where the key was found (or made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHome {
    /// `PARTNER_DATA_KEY`.
    Environment,
    /// A key file, readable by its owner alone.
    KeyFile(PathBuf),
    /// The OS's secret store.
    SecretStore,
}

impl std::fmt::Display for KeyHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyHome::Environment => write!(f, "the {KEY_ENV} variable"),
            KeyHome::KeyFile(path) => write!(f, "the key file {}", path.display()),
            KeyHome::SecretStore => write!(f, "the OS's secret store"),
        }
    }
}

/// The key and where it lives.
#[derive(Debug, Clone)]
pub struct ResolvedKey {
    pub key: DataKey,
    pub home: KeyHome,
    /// True when the key was made now (nothing can have been written under it yet).
    pub new: bool,
}

/// What the environment says about the key (read once; tests give their own).
#[derive(Default, Clone)]
pub struct KeySources {
    pub key: Option<Secret>,
    pub key_file: Option<PathBuf>,
}

impl std::fmt::Debug for KeySources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySources")
            .field("key", &self.key.as_ref().map(|_| "set"))
            .field("key_file", &self.key_file)
            .finish()
    }
}

impl KeySources {
    /// `PARTNER_DATA_KEY` and `PARTNER_DATA_KEY_FILE` of this process (empty ones ignored).
    pub fn from_process() -> Self {
        let key = std::env::var(KEY_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(Secret::new);
        let key_file = std::env::var_os(KEY_FILE_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        KeySources { key, key_file }
    }
}

/// Finds (or makes) the data key for the data folder `data_dir`, in the order the module says.
/// `secrets` is the OS's secret store where the caller has a working one (its start-up probe
/// passed), `None` where there is none.
pub fn resolve(
    sources: &KeySources,
    data_dir: &Path,
    secrets: Option<&dyn SecretStore>,
) -> Result<ResolvedKey> {
    if let Some(text) = &sources.key {
        let key = DataKey::from_hex(text.expose())
            .map_err(|e| Error::Invalid(format!("{KEY_ENV}: {e}")))?;
        return Ok(ResolvedKey {
            key,
            home: KeyHome::Environment,
            new: false,
        });
    }
    if let Some(path) = &sources.key_file {
        return read_or_make_file(path);
    }
    let in_folder = data_dir.join(KEY_FILE_NAME);
    if in_folder.exists() {
        return read_or_make_file(&in_folder);
    }
    let Some(store) = secrets else {
        return read_or_make_file(&in_folder);
    };
    if let Some(text) = store.get(&SecretSlot::DataKey)? {
        let key = DataKey::from_hex(text.expose())
            .map_err(|e| Error::Invalid(format!("the secret store's data-key entry: {e}")))?;
        return Ok(ResolvedKey {
            key,
            home: KeyHome::SecretStore,
            new: false,
        });
    }
    let key = DataKey::generate();
    store.set(&SecretSlot::DataKey, &Secret::new(key.to_hex().as_str()))?;
    // Read back: data written under a key the store did not keep could never be read again.
    let kept = store
        .get(&SecretSlot::DataKey)?
        .and_then(|text| DataKey::from_hex(text.expose()).ok());
    // Another program that found no key at the same moment made and stored its own, after
    // ours: nothing is under either yet, so the one the store kept is the key.
    if let Some(theirs) = kept.clone().filter(|kept| kept != &key) {
        return Ok(ResolvedKey {
            key: theirs,
            home: KeyHome::SecretStore,
            new: true,
        });
    }
    if kept.as_ref() != Some(&key) {
        return Err(Error::Invalid(
            "the OS's secret store did not keep the new data key; set PARTNER_DATA_KEY_FILE \
             to keep it in a file instead"
                .into(),
        ));
    }
    Ok(ResolvedKey {
        key,
        home: KeyHome::SecretStore,
        new: true,
    })
}

/// [`resolve`] once per data folder in this process, the later calls answered from memory:
/// every part of a program that encrypts (the capture store, the audit log, the sandbox's
/// data) gets the same key, and two first calls at once cannot each make a key (a secret
/// store's entry is set, not created, so the second would replace the first).
pub fn resolve_once(
    sources: &KeySources,
    data_dir: &Path,
    secrets: Option<&dyn SecretStore>,
) -> Result<ResolvedKey> {
    static RESOLVED: std::sync::Mutex<Vec<(PathBuf, ResolvedKey)>> =
        std::sync::Mutex::new(Vec::new());
    let mut resolved = RESOLVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, key)) = resolved.iter().find(|(dir, _)| dir == data_dir) {
        return Ok(key.clone());
    }
    let key = resolve(sources, data_dir, secrets)?;
    resolved.push((data_dir.to_path_buf(), key.clone()));
    Ok(key)
}

/// Whether [`resolve`] would look in the OS's secret store for `data_dir`: no variable names a
/// key or a key file, and the folder has no key file. A caller whose store costs a probe (the
/// CLI: D-Bus round trips) asks only then.
pub fn needs_secret_store(sources: &KeySources, data_dir: &Path) -> bool {
    sources.key.is_none() && sources.key_file.is_none() && !data_dir.join(KEY_FILE_NAME).exists()
}

impl ResolvedKey {
    /// The key as the capture store takes it (`partner_listener::StoreOptions::key`): with
    /// where it lives, which a store that does not open with it names.
    pub fn store_key(&self) -> partner_listener::StoreKey {
        partner_listener::StoreKey::new(self.key.clone(), self.home.to_string())
    }

    /// One line saying which key this is and where it lives (its fingerprint, never the key).
    pub fn describe(&self) -> String {
        format!(
            "the data key {} ({}{})",
            self.key.fingerprint(),
            self.home,
            if self.new { ", made now" } else { "" }
        )
    }
}

fn read_or_make_file(path: &Path) -> Result<ResolvedKey> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            refuse_if_others_read(path)?;
            let key = DataKey::from_hex(&text)
                .map_err(|e| Error::Invalid(format!("the key file {}: {e}", path.display())))?;
            Ok(ResolvedKey {
                key,
                home: KeyHome::KeyFile(path.to_path_buf()),
                new: false,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => make_file(path),
        Err(e) => Err(Error::io("read the key file", path, e)),
    }
}

fn make_file(path: &Path) -> Result<ResolvedKey> {
    use std::io::Write as _;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::paths::create_private_dir(parent)?;
    }
    let key = DataKey::generate();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    // Owner-only on Unix; on Windows the file inherits the data folder's ACL (the user's
    // profile: the user, the administrators, SYSTEM), as every file of the folder does.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        // Another process made it first: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return read_or_make_file(path),
        Err(e) => return Err(Error::io("make the key file", path, e)),
    };
    let mut text = key.to_hex();
    text.push('\n');
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io("write the key file", path, e))?;
    Ok(ResolvedKey {
        key,
        home: KeyHome::KeyFile(path.to_path_buf()),
        new: true,
    })
}

#[cfg(unix)]
fn refuse_if_others_read(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|e| Error::io("read the key file's permissions", path, e))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(Error::Invalid(format!(
            "the key file {} can be read by others (mode {:o}): run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    Ok(())
}

/// On Windows a file in the user's profile has the profile's ACL (the user, the administrators,
/// SYSTEM); a key file elsewhere is the user's to place.
#[cfg(not(unix))]
fn refuse_if_others_read(_path: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_client::MemoryStore;

    fn none() -> KeySources {
        KeySources::default()
    }

    #[test]
    fn the_variable_wins_and_a_bad_one_is_refused_without_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let key = DataKey::generate();
        let sources = KeySources {
            key: Some(Secret::new(key.to_hex().as_str())),
            key_file: Some(dir.path().join("ignored.key")),
        };
        let found = resolve(&sources, dir.path(), None).unwrap();
        assert_eq!((found.key, found.home), (key, KeyHome::Environment));
        assert!(!dir.path().join("ignored.key").exists());

        let bad = KeySources {
            key: Some(Secret::new("not-a-key-but-a-secret")),
            key_file: None,
        };
        let message = resolve(&bad, dir.path(), None).unwrap_err().to_string();
        assert!(message.contains(KEY_ENV), "{message}");
        assert!(!message.contains("not-a-key"), "{message}");
    }

    #[test]
    fn without_a_store_a_key_file_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let made = resolve(&none(), dir.path(), None).unwrap();
        let path = dir.path().join(KEY_FILE_NAME);
        assert_eq!(made.home, KeyHome::KeyFile(path.clone()));
        assert!(made.new);
        // Unix alone: on Windows the file takes the profile folder's ACL, with no mode to check.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = resolve(&none(), dir.path(), None).unwrap();
        assert_eq!(again.key, made.key);
        assert!(!again.new);
        // A store that appears later does not change the key under existing data.
        let store = MemoryStore::default();
        let with_store = resolve(&none(), dir.path(), Some(&store)).unwrap();
        assert_eq!(with_store.key, made.key);
        assert!(store.get(&SecretSlot::DataKey).unwrap().is_none());
    }

    #[test]
    fn with_a_store_the_key_lives_there_and_no_file_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::default();
        let made = resolve(&none(), dir.path(), Some(&store)).unwrap();
        assert_eq!(made.home, KeyHome::SecretStore);
        assert!(made.new);
        assert!(!dir.path().join(KEY_FILE_NAME).exists());
        let again = resolve(&none(), dir.path(), Some(&store)).unwrap();
        assert_eq!(again.key, made.key);
        assert!(!again.new);
    }

    /// Unix alone: Windows has no mode bits to open up; a key file there takes its folder's
    /// ACL (`refuse_if_others_read`).
    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.key");
        std::fs::write(&path, DataKey::generate().to_hex().as_str()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let sources = KeySources {
            key: None,
            key_file: Some(path),
        };
        let message = resolve(&sources, dir.path(), None).unwrap_err().to_string();
        assert!(message.contains("chmod 600"), "{message}");
    }

    #[test]
    fn a_damaged_key_file_is_an_error_and_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE_NAME);
        std::fs::write(&path, "half a key").unwrap();
        // Unix alone: owner-only, so the damage is the reason it is refused, not its mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert!(resolve(&none(), dir.path(), None).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "half a key");
    }
}

//! The console's one data folder, shared by the app and the `partner` command.
//!
//! `PARTNER_DATA_DIR` when set (tests and scripted demos give each run its own), else each OS's
//! own place for an app's data:
//! - Linux and the BSDs: `$XDG_DATA_HOME/partner-console`, else
//!   `~/.local/share/partner-console`: the folder `partner listen` has always kept its captures
//!   in, unchanged so that nothing moves for existing users;
//! - macOS: `~/Library/Application Support/<app id>`, where a Mac keeps an app's data (and where
//!   Tauri puts the app's own);
//! - Windows: `%LOCALAPPDATA%\<app id>`, not the roaming profile: the stores are large and
//!   belong to the machine.
//!
//! Data a Mac kept in the XDG place before (`~/.local/share/partner-console`: earlier versions
//! placed it so on every Unix) is moved to the new place the first time it is asked for, once.
//!
//! Why one function for both: the app and the CLI share one capture store, one settings file
//! and one audit log only if they agree on the folder, so the app uses [`data_dir`] too and has
//! no fallback of its own. The choice itself is [`data_dir_for`], a pure function of the OS and
//! the environment's values, so every OS's answer is tested on any OS.

use crate::error::{Error, Result};
use std::ffi::OsString;
use std::path::PathBuf;

/// The folder's name under the XDG data home (Linux and the BSDs).
pub const FOLDER: &str = "partner-console";
/// The app's identifier (`identifier` in `tauri.conf.json`): the folder's name on macOS and
/// Windows.
pub const APP_ID: &str = "dev.partnerconsole.app";
/// The capture store's file name.
pub const CAPTURE_STORE: &str = "captures.sqlite3";
/// The settings file's name.
pub const SETTINGS: &str = "settings.json";
/// The audit log's file name (every write the console sent or refused).
pub const AUDIT_LOG: &str = "audit-log.jsonl";
/// The embedded sandbox's data file's name.
pub const EMBEDDED_SANDBOX: &str = "embedded-sandbox.sqlite3";

/// Whose conventions place the data folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux, the BSDs and any other Unix: XDG.
    Xdg,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this build runs on.
    pub const CURRENT: Os = if cfg!(target_os = "macos") {
        Os::MacOs
    } else if cfg!(windows) {
        Os::Windows
    } else {
        Os::Xdg
    };
}

/// The environment's values the data folder is worked out from (empty ones count as unset).
#[derive(Debug, Clone, Default)]
pub struct FolderEnv {
    pub partner_data_dir: Option<OsString>,
    pub xdg_data_home: Option<OsString>,
    pub home: Option<OsString>,
    pub local_app_data: Option<OsString>,
    pub user_profile: Option<OsString>,
}

impl FolderEnv {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name);
        Self {
            partner_data_dir: var("PARTNER_DATA_DIR"),
            xdg_data_home: var("XDG_DATA_HOME"),
            home: var("HOME"),
            local_app_data: var("LOCALAPPDATA"),
            user_profile: var("USERPROFILE"),
        }
    }
}

/// The data folder (not created here). On macOS, a folder an earlier version kept in the XDG
/// place is moved here first ([`adopt_earlier_folder`]).
pub fn data_dir() -> Result<PathBuf> {
    let env = FolderEnv::from_process();
    let dir = data_dir_for(Os::CURRENT, &env)?;
    adopt_earlier_folder(Os::CURRENT, &env, &dir)?;
    Ok(dir)
}

/// Where versions before 0.1's "every desktop" kept the data on `os`, when that differs from
/// today's place: on macOS they took the XDG place (`$XDG_DATA_HOME/partner-console`, else
/// `~/.local/share/partner-console`). Linux never moved, and no earlier version ran on Windows.
pub fn earlier_data_dir_for(os: Os, env: &FolderEnv) -> Option<PathBuf> {
    if os != Os::MacOs || env.partner_data_dir.as_ref().is_some_and(|v| !v.is_empty()) {
        return None;
    }
    data_dir_for(Os::Xdg, env).ok()
}

/// Moves the data of an earlier version's place into `dir` when `dir` does not exist yet, so a
/// Mac user's captures, settings and audit log follow them to the new folder (one rename on
/// the same volume; two programs racing leave one folder, whichever renamed). An earlier folder
/// that cannot be moved is an error that names both, never a silent start on empty data.
pub fn adopt_earlier_folder(os: Os, env: &FolderEnv, dir: &std::path::Path) -> Result<()> {
    let Some(earlier) = earlier_data_dir_for(os, env) else {
        return Ok(());
    };
    if dir.exists() || !earlier.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create the folder", parent, e))?;
    }
    match std::fs::rename(&earlier, dir) {
        Ok(()) => {
            tracing::info!(from = %earlier.display(), to = %dir.display(), "moved the data folder to this OS's place");
            Ok(())
        }
        Err(_) if dir.exists() => Ok(()),
        Err(e) => Err(Error::Invalid(format!(
            "the data of an earlier version is in {} and could not be moved to {} ({e}): move it \
             by hand, or set PARTNER_DATA_DIR to {}",
            earlier.display(),
            dir.display(),
            earlier.display()
        ))),
    }
}

/// The data folder `os`'s conventions give for `env` (not created here).
pub fn data_dir_for(os: Os, env: &FolderEnv) -> Result<PathBuf> {
    let set = |value: &Option<OsString>| value.clone().filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(&env.partner_data_dir) {
        return Ok(dir);
    }
    let found = match os {
        Os::Xdg => set(&env.xdg_data_home)
            .or_else(|| set(&env.home).map(|home| home.join(".local").join("share")))
            .map(|base| base.join(FOLDER)),
        Os::MacOs => set(&env.home).map(|home| {
            home.join("Library")
                .join("Application Support")
                .join(APP_ID)
        }),
        // LOCALAPPDATA is set in every Windows session; the profile's own AppData\Local is
        // where it points when a stripped environment (a service, a test) lacks it.
        Os::Windows => set(&env.local_app_data)
            .or_else(|| set(&env.user_profile).map(|p| p.join("AppData").join("Local")))
            .map(|base| base.join(APP_ID)),
    };
    found.ok_or_else(|| {
        let names = match os {
            Os::Xdg => "PARTNER_DATA_DIR, XDG_DATA_HOME or HOME",
            Os::MacOs => "PARTNER_DATA_DIR or HOME",
            Os::Windows => "PARTNER_DATA_DIR, LOCALAPPDATA or USERPROFILE",
        };
        Error::Invalid(format!("no data folder is known: set {names}"))
    })
}

/// The data folder, created (owner-only) if missing.
pub fn ensure_data_dir() -> Result<PathBuf> {
    let dir = data_dir()?;
    create_private_dir(&dir)?;
    Ok(dir)
}

/// Creates `dir` and its parents, the folder itself readable by its owner alone, since captures
/// hold lenders' data. On Unix that is mode 0700. On Windows nothing is set: the folder is made
/// under the user's profile (`%LOCALAPPDATA%`), whose ACL already grants it to the user, the
/// administrators and SYSTEM alone, and a new folder inherits that ACL.
pub fn create_private_dir(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create the folder", dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// The shared capture store.
pub fn capture_store() -> Result<PathBuf> {
    Ok(data_dir()?.join(CAPTURE_STORE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_macs_earlier_xdg_folder_moves_to_application_support_once() {
        let home = tempfile::tempdir().unwrap();
        let env = env(&[("HOME", home.path().to_str().unwrap())]);
        let earlier = home.path().join(".local/share/partner-console");
        std::fs::create_dir_all(&earlier).unwrap();
        std::fs::write(earlier.join(CAPTURE_STORE), b"captures").unwrap();
        let dir = data_dir_for(Os::MacOs, &env).unwrap();
        adopt_earlier_folder(Os::MacOs, &env, &dir).unwrap();
        assert_eq!(std::fs::read(dir.join(CAPTURE_STORE)).unwrap(), b"captures");
        assert!(!earlier.exists());
        // Once moved, a new earlier folder (made by an old build run again) is left alone.
        std::fs::create_dir_all(&earlier).unwrap();
        adopt_earlier_folder(Os::MacOs, &env, &dir).unwrap();
        assert!(earlier.exists());
        assert_eq!(std::fs::read(dir.join(CAPTURE_STORE)).unwrap(), b"captures");
    }

    #[test]
    fn only_a_mac_without_partner_data_dir_has_an_earlier_folder() {
        let with_home = env(&[("HOME", "/home/u")]);
        assert_eq!(
            earlier_data_dir_for(Os::MacOs, &with_home),
            Some(PathBuf::from("/home/u/.local/share/partner-console"))
        );
        assert_eq!(earlier_data_dir_for(Os::Xdg, &with_home), None);
        assert_eq!(earlier_data_dir_for(Os::Windows, &with_home), None);
        let chosen = env(&[("HOME", "/home/u"), ("PARTNER_DATA_DIR", "/d")]);
        assert_eq!(earlier_data_dir_for(Os::MacOs, &chosen), None);
    }

    fn env(pairs: &[(&str, &str)]) -> FolderEnv {
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        };
        FolderEnv {
            partner_data_dir: get("PARTNER_DATA_DIR"),
            xdg_data_home: get("XDG_DATA_HOME"),
            home: get("HOME"),
            local_app_data: get("LOCALAPPDATA"),
            user_profile: get("USERPROFILE"),
        }
    }

    #[test]
    fn linux_keeps_its_xdg_folders() {
        let home = env(&[("HOME", "/home/ann")]);
        assert_eq!(
            data_dir_for(Os::Xdg, &home).unwrap(),
            Path::new("/home/ann/.local/share/partner-console")
        );
        let xdg = env(&[("HOME", "/home/ann"), ("XDG_DATA_HOME", "/data/ann")]);
        assert_eq!(
            data_dir_for(Os::Xdg, &xdg).unwrap(),
            Path::new("/data/ann/partner-console")
        );
        let empty_xdg = env(&[("HOME", "/home/ann"), ("XDG_DATA_HOME", "")]);
        assert_eq!(
            data_dir_for(Os::Xdg, &empty_xdg).unwrap(),
            Path::new("/home/ann/.local/share/partner-console")
        );
    }

    #[test]
    fn macos_uses_application_support_and_ignores_xdg() {
        let mac = env(&[("HOME", "/Users/ann"), ("XDG_DATA_HOME", "/Users/ann/.xdg")]);
        assert_eq!(
            data_dir_for(Os::MacOs, &mac).unwrap(),
            Path::new("/Users/ann/Library/Application Support/dev.partnerconsole.app")
        );
    }

    #[test]
    fn windows_uses_the_local_app_data() {
        let windows = env(&[
            ("LOCALAPPDATA", r"C:\Users\ann\AppData\Local"),
            ("USERPROFILE", r"C:\Users\ann"),
            ("HOME", "/home/ignored"),
        ]);
        assert_eq!(
            data_dir_for(Os::Windows, &windows).unwrap(),
            PathBuf::from(r"C:\Users\ann\AppData\Local").join(APP_ID)
        );
        let stripped = env(&[("USERPROFILE", r"C:\Users\ann")]);
        assert_eq!(
            data_dir_for(Os::Windows, &stripped).unwrap(),
            PathBuf::from(r"C:\Users\ann")
                .join("AppData")
                .join("Local")
                .join(APP_ID)
        );
    }

    #[test]
    fn partner_data_dir_overrides_on_every_os() {
        let given = env(&[
            ("PARTNER_DATA_DIR", "/tmp/run-1"),
            ("HOME", "/home/ann"),
            ("LOCALAPPDATA", r"C:\Local"),
        ]);
        for os in [Os::Xdg, Os::MacOs, Os::Windows] {
            assert_eq!(data_dir_for(os, &given).unwrap(), Path::new("/tmp/run-1"));
        }
    }

    #[test]
    fn no_folder_is_an_error_that_names_the_variables() {
        for (os, names) in [
            (Os::Xdg, "XDG_DATA_HOME or HOME"),
            (Os::MacOs, "PARTNER_DATA_DIR or HOME"),
            (Os::Windows, "LOCALAPPDATA or USERPROFILE"),
        ] {
            let said = data_dir_for(os, &env(&[("PARTNER_DATA_DIR", "")]))
                .unwrap_err()
                .to_string();
            assert!(said.contains(names), "{said}");
        }
    }

    /// The build's own OS, through the process's environment's reader.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_build_follows_xdg() {
        assert_eq!(Os::CURRENT, Os::Xdg);
    }

    #[cfg(target_os = "macos")]
    #[test]
    fn this_build_follows_macos() {
        assert_eq!(Os::CURRENT, Os::MacOs);
    }

    #[cfg(windows)]
    #[test]
    fn this_build_follows_windows() {
        assert_eq!(Os::CURRENT, Os::Windows);
    }

    /// The folder's name on macOS and Windows is the app's identifier, as Tauri's is.
    #[test]
    fn the_app_id_is_the_one_in_tauri_conf() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tauri.conf.json");
        let conf: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("tauri.conf.json")).unwrap();
        assert_eq!(conf["identifier"].as_str(), Some(APP_ID));
    }
}

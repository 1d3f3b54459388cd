//! Where a login to a workspace is kept, and which workspace a command acts on.
//!
//! A login is two things kept apart: the workspace's URL (and, for `status`, who logged in and
//! as what role) in a small JSON file in the console's data folder, `workspace.json`, written
//! atomically and owner-only as the settings are (`partner_local::files`); and the member's
//! token in the OS secret store (`partner_client::SecretStore`), under a slot of its own named
//! by the URL (`workspace-token:{url}`), never in a file. A file that cannot be read as a login
//! (corrupt, or of a newer version) is moved aside untouched and reported, never overwritten
//! silently.
//!
//! Which workspace ([`resolve`]): `PARTNER_WORKSPACE` (with `PARTNER_WORKSPACE_TOKEN`) when
//! set, so a script or CI names its own whatever is saved; else the saved login; else none (the
//! command acts on this machine's store). The secret store is asked only when a login file
//! exists, so a machine that never logged in never touches it.

use crate::client::{parse_url, Member, WorkspaceClient};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use partner_api::Secret;
use partner_client::{SecretSlot, SecretStore};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The workspace's URL.
pub const WORKSPACE_ENV: &str = "PARTNER_WORKSPACE";
/// The member's token.
pub const TOKEN_ENV: &str = "PARTNER_WORKSPACE_TOKEN";
/// The saved login's file name, in the data folder.
pub const LOGIN_FILE: &str = "workspace.json";
/// The version of the file this build writes and reads.
pub const LOGIN_VERSION: u32 = 1;

/// A workspace as the environment names it.
#[derive(Debug, Clone, Default)]
pub struct EnvWorkspace {
    /// `PARTNER_WORKSPACE`, when set and not blank.
    pub url: Option<String>,
    /// `PARTNER_WORKSPACE_TOKEN`, when set and not blank.
    pub token: Option<Secret>,
}

impl EnvWorkspace {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Self {
            url: var(WORKSPACE_ENV),
            token: var(TOKEN_ENV).map(Secret::new),
        }
    }

    /// The workspace the environment names, if any; a URL without a token, or one that is not
    /// a URL, is a usage error.
    pub fn client(&self) -> Result<Option<WorkspaceClient>> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let base = parse_url(url).map_err(|error| {
            Error::Usage(format!("${WORKSPACE_ENV} ({url}) is not a URL: {error}"))
        })?;
        let token = self.token.clone().ok_or_else(|| {
            Error::Usage(format!(
                "${WORKSPACE_ENV} is set but ${TOKEN_ENV} is not: set it to your personal \
                 token (an admin makes one with `partner server member add`)"
            ))
        })?;
        WorkspaceClient::new(base, token).map(Some)
    }
}

/// A saved login, as `workspace.json` holds it (never the token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedLogin {
    pub version: u32,
    /// The workspace's URL.
    pub url: String,
    /// Who logged in, and their role then (the workspace's word is `me`'s, asked again by
    /// `status`).
    pub member: String,
    pub role: String,
    pub saved_at: DateTime<Utc>,
}

impl SavedLogin {
    /// The login of `member` to `url`, now.
    pub fn new(url: &url::Url, member: &Member) -> Self {
        Self {
            version: LOGIN_VERSION,
            url: url.as_str().trim_end_matches('/').to_string(),
            member: member.name.clone(),
            role: member.role.to_string(),
            saved_at: Utc::now(),
        }
    }

    /// Its URL, parsed.
    pub fn url(&self) -> Result<url::Url> {
        parse_url(&self.url)
    }
}

/// What reading the login file found.
#[derive(Debug, Default)]
pub struct LoadedLogin {
    /// The login, when there is a usable one.
    pub login: Option<SavedLogin>,
    /// Set when the file could not be used: what was wrong and where it was kept.
    pub notice: Option<String>,
    pub kept_aside: Option<PathBuf>,
}

/// The login file (`workspace.json` in the data folder, or anywhere in tests).
#[derive(Debug, Clone)]
pub struct LoginFile {
    path: PathBuf,
}

impl LoginFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The login file in the console's data folder.
    pub fn in_data_dir() -> Result<Self> {
        let dir = partner_local::paths::data_dir().map_err(local)?;
        Ok(Self::new(dir.join(LOGIN_FILE)))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the login. A missing file is no login. A file that is not a login of a version
    /// this build reads is moved aside untouched, with a notice naming where; only a file that
    /// cannot be read at all (permissions) is an error, and then nothing is moved.
    pub fn load(&self) -> Result<LoadedLogin> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LoadedLogin::default()),
            Err(e) => {
                return Err(Error::SavedLogin(format!(
                    "could not read the saved workspace login {}: {e}",
                    self.path.display()
                )))
            }
        };
        let problem = match parse(&bytes) {
            Ok(login) => {
                return Ok(LoadedLogin {
                    login: Some(login),
                    ..LoadedLogin::default()
                })
            }
            Err(problem) => problem,
        };
        let (suffix, said) = match problem {
            Unusable::Newer(version) => (
                "newer",
                format!(
                    "was written by a newer version of the console (version {version}; this one \
                     reads {LOGIN_VERSION})"
                ),
            ),
            Unusable::Corrupt(why) => ("corrupt", format!("is not a workspace login ({why})")),
        };
        let aside = partner_local::files::keep_aside(&self.path, suffix).map_err(local)?;
        Ok(LoadedLogin {
            login: None,
            notice: Some(format!(
                "the saved workspace login {} {said}; it was kept as {}: log in again with \
                 `partner workspace login URL`",
                self.path.display(),
                aside.display()
            )),
            kept_aside: Some(aside),
        })
    }

    /// Writes the login atomically, owner-only.
    pub fn save(&self, login: &SavedLogin) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(login)
            .map_err(|e| Error::SavedLogin(format!("could not encode the login: {e}")))?;
        bytes.push(b'\n');
        partner_local::files::write_atomically(&self.path, &bytes, "write the workspace login")
            .map_err(local)
    }

    /// Deletes the file; whether there was one.
    pub fn remove(&self) -> Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::SavedLogin(format!(
                "could not delete the saved workspace login {}: {e}",
                self.path.display()
            ))),
        }
    }
}

enum Unusable {
    Corrupt(String),
    Newer(u32),
}

fn parse(bytes: &[u8]) -> std::result::Result<SavedLogin, Unusable> {
    #[derive(Deserialize)]
    struct VersionOnly {
        version: u32,
    }
    let version = serde_json::from_slice::<VersionOnly>(bytes)
        .map_err(|e| Unusable::Corrupt(e.to_string()))?
        .version;
    if version > LOGIN_VERSION {
        return Err(Unusable::Newer(version));
    }
    let login: SavedLogin =
        serde_json::from_slice(bytes).map_err(|e| Unusable::Corrupt(e.to_string()))?;
    if version == 0 {
        return Err(Unusable::Corrupt("version 0 does not exist".into()));
    }
    parse_url(&login.url).map_err(|e| Unusable::Corrupt(e.to_string()))?;
    Ok(login)
}

fn local(error: partner_local::Error) -> Error {
    Error::SavedLogin(error.to_string())
}

fn keychain(error: partner_client::ClientError) -> Error {
    Error::SavedLogin(error.to_string())
}

/// The saved login: its file and the secret store its token is in.
#[derive(Debug)]
pub struct Logins<'a> {
    pub file: LoginFile,
    pub secrets: &'a dyn SecretStore,
}

/// What a logout removed.
#[derive(Debug, Default)]
pub struct LoggedOut {
    pub login: Option<SavedLogin>,
    pub notice: Option<String>,
}

impl<'a> Logins<'a> {
    pub fn new(file: LoginFile, secrets: &'a dyn SecretStore) -> Self {
        Self { file, secrets }
    }

    /// The saved login, if any (the file only: the secret store is not asked).
    pub fn load(&self) -> Result<LoadedLogin> {
        self.file.load()
    }

    /// The saved login's client: its URL from the file, its token from the secret store. A
    /// file that was unusable (kept aside) is an error carrying the notice, so a command meant
    /// for the workspace does not act on this machine's store unannounced.
    pub fn client(&self) -> Result<Option<(WorkspaceClient, SavedLogin)>> {
        let loaded = self.load()?;
        if let Some(notice) = loaded.notice {
            return Err(Error::SavedLogin(notice));
        }
        let Some(login) = loaded.login else {
            return Ok(None);
        };
        let url = login.url()?;
        let token = self
            .secrets
            .get(&SecretSlot::workspace_token(&url))
            .map_err(keychain)?
            .ok_or_else(|| {
                Error::SavedLogin(format!(
                    "the saved login to the workspace {} has no token in {}: log in again \
                     with `partner workspace login {}`",
                    login.url,
                    partner_client::STORE_NAME,
                    login.url
                ))
            })?;
        Ok(Some((WorkspaceClient::new(url, token)?, login)))
    }

    /// Saves `client`'s login as `member` (checked by the caller with `me`): the token to the
    /// secret store first, then the file. A login to another workspace saved before is
    /// replaced, its token deleted. Returns the notice of an unusable file kept aside, if any.
    pub fn save(&self, client: &WorkspaceClient, member: &Member) -> Result<Option<String>> {
        let before = self.load()?;
        let login = SavedLogin::new(client.base(), member);
        let slot = SecretSlot::workspace_token(client.base());
        self.secrets.set(&slot, client.token()).map_err(keychain)?;
        if let Err(error) = self.file.save(&login) {
            // No token left behind without the file that names it.
            let _ = self.secrets.delete(&slot);
            return Err(error);
        }
        if let Some(old) = before.login.filter(|old| old.url != login.url) {
            if let Ok(url) = old.url() {
                self.secrets
                    .delete(&SecretSlot::workspace_token(&url))
                    .map_err(keychain)?;
            }
        }
        Ok(before.notice)
    }

    /// Deletes the saved login: its token from the secret store, then its file (the file stays
    /// while the token could not be deleted, so a logout can be tried again).
    pub fn remove(&self) -> Result<LoggedOut> {
        let loaded = self.load()?;
        if let Some(login) = &loaded.login {
            if let Ok(url) = login.url() {
                self.secrets
                    .delete(&SecretSlot::workspace_token(&url))
                    .map_err(keychain)?;
            }
            self.file.remove()?;
        }
        Ok(LoggedOut {
            login: loaded.login,
            notice: loaded.notice,
        })
    }
}

/// Where the workspace a command acts on came from.
#[derive(Debug, Clone)]
pub enum Source {
    /// `PARTNER_WORKSPACE` and `PARTNER_WORKSPACE_TOKEN`.
    Environment,
    /// The saved login.
    Saved(SavedLogin),
}

/// The workspace a command acts on.
#[derive(Debug)]
pub struct Resolved {
    pub client: WorkspaceClient,
    pub source: Source,
}

/// The workspace a command acts on: the environment's, else the saved login's (`logins`, when
/// a data folder is known), else none.
pub fn resolve(env: &EnvWorkspace, logins: Option<&Logins<'_>>) -> Result<Option<Resolved>> {
    if let Some(client) = env.client()? {
        return Ok(Some(Resolved {
            client,
            source: Source::Environment,
        }));
    }
    let Some(logins) = logins else {
        return Ok(None);
    };
    Ok(logins.client()?.map(|(client, login)| Resolved {
        client,
        source: Source::Saved(login),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_client::MemoryStore;

    fn member() -> Member {
        Member {
            name: "vera".into(),
            role: crate::roles::Role::Viewer,
        }
    }

    fn client(url: &str, token: &str) -> WorkspaceClient {
        WorkspaceClient::new(parse_url(url).expect("url"), Secret::new(token)).expect("client")
    }

    #[test]
    fn a_login_keeps_the_url_in_the_file_and_the_token_in_the_store_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let store = MemoryStore::new();
        let logins = Logins::new(LoginFile::new(dir.path().join(LOGIN_FILE)), &store);
        assert!(logins.client().expect("none").is_none());
        let notice = logins
            .save(&client("https://team.example/", "pcw_secret"), &member())
            .expect("save");
        assert!(notice.is_none());
        let text = std::fs::read_to_string(dir.path().join(LOGIN_FILE)).expect("file");
        assert!(text.contains("\"url\": \"https://team.example\""), "{text}");
        assert!(text.contains("\"member\": \"vera\""), "{text}");
        assert!(!text.contains("pcw_secret"), "{text}");
        let (again, login) = logins.client().expect("read").expect("saved");
        assert_eq!(again.describe(), "https://team.example");
        assert_eq!(again.token().expose(), "pcw_secret");
        assert_eq!(login.role, "viewer");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(LOGIN_FILE))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        let out = logins.remove().expect("logout");
        assert_eq!(out.login.expect("was saved").url, "https://team.example");
        assert!(!dir.path().join(LOGIN_FILE).exists());
        assert!(store
            .get(&SecretSlot::workspace_token(
                &parse_url("https://team.example").expect("url")
            ))
            .expect("get")
            .is_none());
        assert!(logins.remove().expect("again").login.is_none());
    }

    #[test]
    fn a_login_to_another_workspace_deletes_the_first_token() {
        let dir = tempfile::tempdir().expect("dir");
        let store = MemoryStore::new();
        let logins = Logins::new(LoginFile::new(dir.path().join(LOGIN_FILE)), &store);
        logins
            .save(&client("https://one.example", "pcw_one"), &member())
            .expect("one");
        logins
            .save(&client("https://two.example", "pcw_two"), &member())
            .expect("two");
        let slot = |u: &str| SecretSlot::workspace_token(&parse_url(u).expect("url"));
        assert!(store
            .get(&slot("https://one.example"))
            .expect("get")
            .is_none());
        assert!(store
            .get(&slot("https://two.example"))
            .expect("get")
            .is_some());
    }

    #[test]
    fn a_corrupt_file_is_kept_aside_reported_and_never_overwritten() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(LOGIN_FILE);
        let garbage = b"{\"version\": 1, \"url\": \"https://te";
        std::fs::write(&path, garbage).expect("write");
        let store = MemoryStore::new();
        let logins = Logins::new(LoginFile::new(&path), &store);
        // A command meant for the workspace stops and says so.
        let error = logins.client().expect_err("reported");
        let said = error.to_string();
        assert!(said.contains("is not a workspace login"), "{said}");
        assert!(said.contains(".corrupt-"), "{said}");
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().contains(".corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(std::fs::read(&aside[0]).expect("aside"), garbage);
        assert!(!path.exists());
        // A new login writes its own file beside it, the old bytes untouched.
        logins
            .save(&client("https://team.example", "pcw_x"), &member())
            .expect("save");
        assert_eq!(std::fs::read(&aside[0]).expect("aside"), garbage);
    }

    #[test]
    fn a_newer_file_is_kept_aside_with_its_own_words() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(LOGIN_FILE);
        std::fs::write(&path, br#"{"version": 9, "url": "https://x"}"#).expect("write");
        let loaded = LoginFile::new(&path).load().expect("load");
        assert!(loaded.login.is_none());
        assert!(loaded.notice.expect("notice").contains("newer version"));
        assert!(loaded
            .kept_aside
            .expect("aside")
            .to_string_lossy()
            .contains(".newer-"));
    }

    #[test]
    fn a_saved_login_without_its_token_says_to_log_in_again() {
        let dir = tempfile::tempdir().expect("dir");
        let file = LoginFile::new(dir.path().join(LOGIN_FILE));
        file.save(&SavedLogin::new(
            &parse_url("https://team.example").expect("url"),
            &member(),
        ))
        .expect("save");
        let store = MemoryStore::new();
        let said = Logins::new(file, &store)
            .client()
            .expect_err("no token")
            .to_string();
        assert!(said.contains("partner workspace login"), "{said}");
    }

    #[test]
    fn the_environment_comes_before_the_saved_login() {
        let dir = tempfile::tempdir().expect("dir");
        let store = MemoryStore::new();
        let logins = Logins::new(LoginFile::new(dir.path().join(LOGIN_FILE)), &store);
        logins
            .save(&client("https://saved.example", "pcw_saved"), &member())
            .expect("save");
        let none = EnvWorkspace::default();
        let saved = resolve(&none, Some(&logins)).expect("ok").expect("some");
        assert!(matches!(saved.source, Source::Saved(_)));
        assert_eq!(saved.client.describe(), "https://saved.example");
        let env = EnvWorkspace {
            url: Some("https://env.example".into()),
            token: Some(Secret::new("pcw_env")),
        };
        let from_env = resolve(&env, Some(&logins)).expect("ok").expect("some");
        assert!(matches!(from_env.source, Source::Environment));
        assert_eq!(from_env.client.describe(), "https://env.example");
        assert!(resolve(&none, None).expect("ok").is_none());
        let no_token = EnvWorkspace {
            url: Some("https://env.example".into()),
            token: None,
        };
        assert!(matches!(
            resolve(&no_token, Some(&logins)),
            Err(Error::Usage(_))
        ));
    }
}

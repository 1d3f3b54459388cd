//! Updates: the rules the desktop app and `partner version --check` share, free of Tauri.
//!
//! - **Where**: one manifest, the release page's `latest.json` ([`MANIFEST_URL`]), in the Tauri
//!   updater's static format (`version`, `notes`, `pub_date`, `platforms` keyed
//!   `linux-x86_64-deb`, `linux-x86_64`, …, each a `url` and a minisign `signature` of the file).
//!   `PARTNER_UPDATE_URL` ([`URL_VARIABLE`]) points both at another one (tests, a mirror).
//! - **When**: the app checks once at each start, and when asked ("Check now"); never
//!   in the background otherwise. The setting ([`UpdateSettings::check_at_start`]) turns the start's
//!   check off; `PARTNER_NO_UPDATE_CHECK=1` ([`OFF_VARIABLE`]) turns every check off, for
//!   managed fleets that ship updates their own way (the user cannot turn it back on).
//!   `partner` never asks by itself: `partner version --check` asks once, on demand.
//! - **What is said**: the offer ([`UpdateOffer`]): the version, its notes, that installing
//!   restarts the app (and so stops its webhook listener for a moment), and for a `.deb` or
//!   `.rpm` that the system's package manager installs it with an administrator's password;
//!   a failure in words ([`UpdateFailure`]), the version installed staying as it was.
//!
//! What verifies an update is the Tauri updater (the shell wires it): the file's minisign
//! signature against the public key in the app's configuration, bound to the announced version
//! (`requireSignedVersion`). Nothing here downloads a package.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use url::Url;

/// The release page's manifest: the newest release's `latest.json`.
pub const MANIFEST_URL: &str =
    "https://github.com/partner-console/partner-console/releases/latest/download/latest.json";

/// Another manifest's address, for tests and mirrors (the app and `partner version --check`).
pub const URL_VARIABLE: &str = "PARTNER_UPDATE_URL";

/// Set (to anything but `0`, `false`, `no` or nothing), no update check at all: for managed
/// fleets whose machines get their updates from their administrators.
pub const OFF_VARIABLE: &str = "PARTNER_NO_UPDATE_CHECK";

/// How long a check waits for the manifest: a start must not wait on a slow network.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// The update settings kept in `settings.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateSettings {
    /// Ask the release page for a newer version at each start (on until the user turns it off).
    #[serde(default = "yes")]
    pub check_at_start: bool,
}

fn yes() -> bool {
    true
}

impl Default for UpdateSettings {
    fn default() -> Self {
        Self {
            check_at_start: true,
        }
    }
}

/// Reads a variable of the process's environment (tests pass their own).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's own environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether [`OFF_VARIABLE`] turns checks off: set, and not `0`, `false`, `no` or empty.
pub fn off_by_environment(env: Env<'_>) -> bool {
    env(OFF_VARIABLE).is_some_and(|value| {
        let value = value.trim().to_ascii_lowercase();
        !matches!(value.as_str(), "" | "0" | "false" | "no" | "off")
    })
}

/// Why the app does not check (none: it may).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ChecksOff {
    /// `PARTNER_NO_UPDATE_CHECK`: every check, "Check now" too.
    Managed,
    /// The setting: the start's check only; "Check now" still asks.
    Setting,
    /// Built from source, not installed from a package: nothing to check at start, and an
    /// update found by "Check now" is installed from the release page, not by the app.
    NotInstalled,
}

impl ChecksOff {
    /// What the app says about it.
    pub fn explained(self) -> &'static str {
        match self {
            ChecksOff::Managed => "Update checks are turned off on this machine (PARTNER_NO_UPDATE_CHECK is set): your administrator provides updates.",
            ChecksOff::Setting => "Partner Console does not look for updates at start (your setting). \"Check now\" still asks.",
            ChecksOff::NotInstalled => "This copy was built from source, not installed from a package: it does not look for updates at start, and installs none itself. \"Check now\" still says whether there is a newer version.",
        }
    }
}

/// Whether the check at start runs: [`OFF_VARIABLE`] first, then the setting, then how this
/// copy was installed (a build from source has no package to update: it is not checked at start).
pub fn start_check(
    settings: &UpdateSettings,
    installer: Option<Installer>,
    env: Env<'_>,
) -> Result<(), ChecksOff> {
    if off_by_environment(env) {
        Err(ChecksOff::Managed)
    } else if !settings.check_at_start {
        Err(ChecksOff::Setting)
    } else if installer.is_none() {
        Err(ChecksOff::NotInstalled)
    } else {
        Ok(())
    }
}

/// Whether a check the user asked for runs: only [`OFF_VARIABLE`] stops it.
pub fn asked_check(env: Env<'_>) -> Result<(), ChecksOff> {
    if off_by_environment(env) {
        Err(ChecksOff::Managed)
    } else {
        Ok(())
    }
}

/// The manifest's address: [`URL_VARIABLE`] when set, else [`MANIFEST_URL`]. An `https`
/// address, or `http` to this machine (a test's server; the signature still decides).
pub fn manifest_url(env: Env<'_>) -> Result<Url, String> {
    let (text, from) = match env(URL_VARIABLE).filter(|v| !v.trim().is_empty()) {
        Some(value) => (value.trim().to_string(), URL_VARIABLE),
        None => (MANIFEST_URL.to_string(), "the release page"),
    };
    let url = Url::parse(&text).map_err(|e| format!("{from}: `{text}` is not a URL ({e})"))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(format!(
            "{from}: `{text}` must be an https address (plain http only to this machine)"
        )),
    }
}

/// Whether the URL's host is this machine.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// How the running app was installed, as the Tauri bundler marks its binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Installer {
    Deb,
    Rpm,
    AppImage,
    App,
    Msi,
    Nsis,
}

impl Installer {
    /// The suffix of its entry in the manifest's `platforms` (`linux-x86_64-deb`).
    pub fn name(self) -> &'static str {
        match self {
            Installer::Deb => "deb",
            Installer::Rpm => "rpm",
            Installer::AppImage => "appimage",
            Installer::App => "app",
            Installer::Msi => "msi",
            Installer::Nsis => "nsis",
        }
    }

    /// What installing needs that the user may not have: the system's package manager runs as
    /// root, so a `.deb` or `.rpm` asks for an administrator's password.
    pub fn admin_note(self) -> Option<&'static str> {
        match self {
            Installer::Deb => Some(
                "Partner Console was installed from a .deb: the update is installed by the system (dpkg), which asks for an administrator's password. Without one, nothing changes: ask your administrator to install the new version (sudo apt install ./partner-console_VERSION_amd64.deb).",
            ),
            Installer::Rpm => Some(
                "Partner Console was installed from an .rpm: the update is installed by the system (rpm), which asks for an administrator's password. Without one, nothing changes: ask your administrator to install the new version (sudo dnf install ./partner-console-VERSION-1.x86_64.rpm).",
            ),
            _ => None,
        }
    }
}

/// What installing does to the running app, said before the user agrees.
pub const RESTART_NOTE: &str = "Installing restarts Partner Console. Its webhook listener stops for a few seconds meanwhile; the service retries what it could not deliver (3 attempts, 20 s apart).";

/// A newer version the release page offers, as the app shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateOffer {
    pub version: String,
    pub current: String,
    /// The release's notes, as written (plain text or Markdown).
    pub notes: Option<String>,
    /// When it was published (RFC 3339), if the manifest says.
    pub date: Option<String>,
    /// How this copy was installed (`None`: not from a package, e.g. a development build).
    pub installer: Option<Installer>,
    /// What installing needs that the user may lack (a `.deb` or `.rpm`: an administrator).
    pub admin_note: Option<String>,
    /// That installing restarts the app and stops the listener for a moment.
    pub restart_note: String,
    /// Whether the app can install it (installed from a package; a build from source cannot).
    pub installable: bool,
}

impl UpdateOffer {
    pub fn new(
        version: impl Into<String>,
        current: impl Into<String>,
        notes: Option<String>,
        date: Option<String>,
        installer: Option<Installer>,
    ) -> Self {
        let version = version.into();
        let admin_note = installer
            .and_then(Installer::admin_note)
            .map(|note| note.replace("VERSION", &version));
        Self {
            version,
            current: current.into(),
            notes: notes.filter(|n| !n.trim().is_empty()),
            date,
            installer,
            admin_note,
            restart_note: RESTART_NOTE.to_string(),
            installable: installer.is_some(),
        }
    }
}

/// Where the app's update stands, as its window shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum UpdatePhase {
    /// Not asked in this run (checks off, or not yet).
    Idle,
    Checking,
    UpToDate,
    /// A newer version is offered (`offer`), waiting for the user's yes.
    Available,
    /// Downloading, verifying and installing `offer`; the app restarts at the end.
    Installing,
    /// The check or the install failed (`problem`); the installed version is unchanged.
    Failed,
}

/// The app's update state: what its settings screen and its prompt show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateView {
    /// The running version.
    pub current: String,
    /// How it was installed (`None`: built from source).
    pub installer: Option<Installer>,
    pub settings: UpdateSettings,
    /// Why checks are off, if they are ([`ChecksOff`]), and its sentence.
    pub off: Option<ChecksOff>,
    pub off_note: Option<String>,
    pub phase: UpdatePhase,
    pub offer: Option<UpdateOffer>,
    pub problem: Option<UpdateProblem>,
    /// When the last check ended (RFC 3339).
    pub checked_at: Option<String>,
    /// While installing: bytes downloaded, and of how many (when the server says).
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub downloaded: Option<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub total: Option<u64>,
}

impl UpdateView {
    /// Before any check: what the settings and the environment say.
    pub fn new(
        current: impl Into<String>,
        settings: UpdateSettings,
        installer: Option<Installer>,
        env: Env<'_>,
    ) -> Self {
        let off = start_check(&settings, installer, env).err();
        Self {
            current: current.into(),
            installer,
            settings,
            off,
            off_note: off.map(|o| o.explained().to_string()),
            phase: UpdatePhase::Idle,
            offer: None,
            problem: None,
            checked_at: None,
            downloaded: None,
            total: None,
        }
    }
}

/// Why a check or an install did not end in the new version. What the Tauri updater reports is
/// sorted into these by the shell; the words are here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateFailure {
    /// The signature was made with another key than the app's.
    SignedByAnotherKey,
    /// The downloaded bytes are not what was signed (altered, or damaged on the way).
    BytesDoNotMatch,
    /// The signature itself cannot be read.
    UnreadableSignature,
    /// The signature is for another version than the manifest announced.
    SignedForAnotherVersion { signed: String, announced: String },
    /// The manifest has no package for this installation (`linux-x86_64-deb`, …).
    NoPackageForThis(Vec<String>),
    /// The downloaded file is not a package this installation can install.
    NotAPackage,
    /// The package manager did not install it: no administrator's password, or refused.
    InstallRefused { installer: Option<Installer> },
    /// The manifest or the package could not be fetched.
    Unreachable(String),
    /// The manifest is not an update manifest.
    BadManifest(String),
    /// Anything else, as the updater said it.
    Other(String),
}

/// A failure as the app shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateProblem {
    pub message: String,
    pub hint: String,
}

impl UpdateFailure {
    /// Whether the update was refused as not genuine (the signature's verdict).
    pub fn is_refused_as_not_genuine(&self) -> bool {
        matches!(
            self,
            UpdateFailure::SignedByAnotherKey
                | UpdateFailure::BytesDoNotMatch
                | UpdateFailure::UnreadableSignature
                | UpdateFailure::SignedForAnotherVersion { .. }
        )
    }

    /// The words for it; `version` is the one offered (if known), `current` the one kept.
    pub fn problem(&self, version: Option<&str>, current: &str) -> UpdateProblem {
        let update = version
            .map(|v| format!("The update to {v}"))
            .unwrap_or_else(|| "The update".into());
        let kept = format!("Nothing was installed: Partner Console {current} stays as it is.");
        let (message, hint) = match self {
            UpdateFailure::SignedByAnotherKey => (
                format!("{update} was refused: it is not signed with Partner Console's release key."),
                format!("{kept} The release page or the address in PARTNER_UPDATE_URL did not serve a genuine release; try again later, or download it from the release page."),
            ),
            UpdateFailure::BytesDoNotMatch => (
                format!("{update} was refused: the downloaded package does not match its signature (it was altered or damaged on the way)."),
                format!("{kept} Try again; if it keeps failing, download it from the release page."),
            ),
            UpdateFailure::UnreadableSignature => (
                format!("{update} was refused: its signature cannot be read."),
                format!("{kept} The release's manifest is damaged; try again later."),
            ),
            UpdateFailure::SignedForAnotherVersion { signed, announced } => (
                format!("{update} was refused: the manifest announces {announced} but the package is signed as {signed}."),
                format!("{kept} The manifest was altered to offer another release under this number."),
            ),
            UpdateFailure::NoPackageForThis(targets) => (
                format!("{update} has no package for this installation ({}).", targets.join(", ")),
                format!("{kept} Download it from the release page."),
            ),
            UpdateFailure::NotAPackage => (
                format!("{update} was refused: the download is not a package this installation can install."),
                kept,
            ),
            UpdateFailure::InstallRefused { installer } => {
                let tool = match installer {
                    Some(Installer::Rpm) => "rpm",
                    _ => "dpkg",
                };
                (
                    format!("{update} was not installed: the system's package manager ({tool}) needs an administrator's password, and none was given."),
                    format!("{kept} Ask your administrator to install the new version from the release page (sudo apt install ./partner-console_…_amd64.deb, or sudo dnf install ./partner-console-….rpm), or try again and enter the password when asked."),
                )
            }
            UpdateFailure::Unreachable(why) => (
                format!("Could not reach the update server: {why}"),
                "Check the network (and a proxy), then try again.".into(),
            ),
            UpdateFailure::BadManifest(why) => (
                format!("The update server's answer is not an update manifest: {why}"),
                "Try again later; if PARTNER_UPDATE_URL is set, check the address.".into(),
            ),
            UpdateFailure::Other(why) => (format!("{update} failed: {why}"), kept),
        };
        UpdateProblem { message, hint }
    }
}

/// One platform's package in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ManifestPlatform {
    pub url: String,
    pub signature: String,
}

/// The update manifest (`latest.json`), as `partner version --check` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Manifest {
    pub version: String,
    #[serde(default)]
    pub notes: Option<String>,
    #[serde(default)]
    pub pub_date: Option<String>,
    #[serde(default)]
    pub platforms: BTreeMap<String, ManifestPlatform>,
}

impl Manifest {
    /// Reads a manifest; its version must be a version (`1.2.3`, a leading `v` allowed).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let manifest: Manifest = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        parse_version(&manifest.version)?;
        Ok(manifest)
    }

    /// Whether it offers a version newer than `current`.
    pub fn is_newer_than(&self, current: &str) -> Result<bool, String> {
        Ok(parse_version(&self.version)? > parse_version(current)?)
    }
}

fn parse_version(text: &str) -> Result<semver::Version, String> {
    semver::Version::parse(text.trim().trim_start_matches('v'))
        .map_err(|e| format!("`{text}` is not a version ({e})"))
}

/// What `partner version --check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionCheck {
    pub current: String,
    pub latest: String,
    pub newer: bool,
    pub notes: Option<String>,
    pub date: Option<String>,
    pub manifest: String,
}

/// Asks `url` for the manifest once and compares it with `current`.
pub async fn check(url: &Url, current: &str) -> Result<VersionCheck, UpdateFailure> {
    let client = reqwest::Client::builder()
        .timeout(CHECK_TIMEOUT)
        .user_agent(concat!("partner/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| UpdateFailure::Other(e.to_string()))?;
    let response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| UpdateFailure::Unreachable(describe_reqwest(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(UpdateFailure::BadManifest(format!(
            "{url} answered {status}"
        )));
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| UpdateFailure::Unreachable(describe_reqwest(&e)))?;
    let manifest = Manifest::parse(&body).map_err(UpdateFailure::BadManifest)?;
    let newer = manifest
        .is_newer_than(current)
        .map_err(UpdateFailure::BadManifest)?;
    Ok(VersionCheck {
        current: current.to_string(),
        latest: manifest.version.trim_start_matches('v').to_string(),
        newer,
        notes: manifest.notes.filter(|n| !n.trim().is_empty()),
        date: manifest.pub_date,
        manifest: url.to_string(),
    })
}

fn describe_reqwest(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_start_checks_unless_the_setting_or_the_fleet_says_no() {
        let on = UpdateSettings::default();
        let off = UpdateSettings {
            check_at_start: false,
        };
        let deb = Some(Installer::Deb);
        assert_eq!(start_check(&on, deb, &env_of(&[])), Ok(()));
        assert_eq!(
            start_check(&off, deb, &env_of(&[])),
            Err(ChecksOff::Setting)
        );
        let managed = env_of(&[(OFF_VARIABLE, "1")]);
        assert_eq!(start_check(&on, deb, &managed), Err(ChecksOff::Managed));
        assert_eq!(start_check(&off, deb, &managed), Err(ChecksOff::Managed));
        // A build from source (the end-to-end tests' too) does not phone home at start.
        assert_eq!(
            start_check(&on, None, &env_of(&[])),
            Err(ChecksOff::NotInstalled)
        );
        let view = UpdateView::new("0.1.0", off, deb, &env_of(&[]));
        assert_eq!(view.off, Some(ChecksOff::Setting));
        assert!(view.off_note.unwrap().contains("Check now"));
        assert_eq!(view.phase, UpdatePhase::Idle);
        // "Check now" is stopped only by the fleet's variable.
        assert_eq!(asked_check(&env_of(&[])), Ok(()));
        assert_eq!(asked_check(&managed), Err(ChecksOff::Managed));
    }

    #[test]
    fn the_fleet_variable_reads_as_people_write_it() {
        for value in ["1", "yes", "true", "TRUE", "on"] {
            let pairs: &'static [(&str, &str)] =
                Box::leak(vec![(OFF_VARIABLE, value)].into_boxed_slice());
            assert!(off_by_environment(&env_of(pairs)), "{value}");
        }
        for value in ["", "0", "false", "no", " off "] {
            let pairs: &'static [(&str, &str)] =
                Box::leak(vec![(OFF_VARIABLE, value)].into_boxed_slice());
            assert!(!off_by_environment(&env_of(pairs)), "{value:?}");
        }
        assert!(!off_by_environment(&env_of(&[])));
    }

    #[test]
    fn settings_without_updates_check_at_start() {
        let read: UpdateSettings = serde_json::from_str("{}").unwrap();
        assert!(read.check_at_start);
        let written = serde_json::to_string(&UpdateSettings {
            check_at_start: false,
        })
        .unwrap();
        assert_eq!(written, r#"{"checkAtStart":false}"#);
    }

    #[test]
    fn the_manifest_is_the_release_pages_unless_the_variable_names_another() {
        assert_eq!(manifest_url(&env_of(&[])).unwrap().as_str(), MANIFEST_URL);
        assert!(MANIFEST_URL.starts_with("https://"));
        assert!(MANIFEST_URL.ends_with("/latest.json"));
        let local = env_of(&[(URL_VARIABLE, "http://127.0.0.1:8123/latest.json")]);
        assert_eq!(
            manifest_url(&local).unwrap().as_str(),
            "http://127.0.0.1:8123/latest.json"
        );
        let localhost = env_of(&[(URL_VARIABLE, "http://localhost:1/m.json")]);
        assert!(manifest_url(&localhost).is_ok());
        let mirror = env_of(&[(URL_VARIABLE, "https://mirror.example/latest.json")]);
        assert!(manifest_url(&mirror).is_ok());
        // Plain http elsewhere, or not a URL, is refused with the variable named.
        let plain = env_of(&[(URL_VARIABLE, "http://mirror.example/latest.json")]);
        let error = manifest_url(&plain).unwrap_err();
        assert!(
            error.contains(URL_VARIABLE) && error.contains("https"),
            "{error}"
        );
        let junk = env_of(&[(URL_VARIABLE, "not a url")]);
        assert!(manifest_url(&junk).unwrap_err().contains("not a URL"));
        // Blank is unset.
        let blank = env_of(&[(URL_VARIABLE, "  ")]);
        assert_eq!(manifest_url(&blank).unwrap().as_str(), MANIFEST_URL);
    }

    #[test]
    fn an_offer_says_what_installing_does_and_what_a_package_needs() {
        let deb = UpdateOffer::new(
            "0.2.0",
            "0.1.0",
            Some("Faster".into()),
            None,
            Some(Installer::Deb),
        );
        assert!(deb.restart_note.contains("restarts"));
        assert!(deb.restart_note.contains("listener"));
        let note = deb.admin_note.unwrap();
        assert!(note.contains("administrator") && note.contains("partner-console_0.2.0_amd64.deb"));
        let rpm = UpdateOffer::new("0.2.0", "0.1.0", None, None, Some(Installer::Rpm));
        assert!(rpm.admin_note.unwrap().contains("rpm"));
        let appimage = UpdateOffer::new("0.2.0", "0.1.0", Some(" ".into()), None, None);
        assert_eq!(appimage.admin_note, None);
        assert!(deb.installable && !appimage.installable);
        assert_eq!(appimage.notes, None, "blank notes are no notes");
    }

    #[test]
    fn refusals_say_what_was_wrong_and_that_nothing_changed() {
        for failure in [
            UpdateFailure::SignedByAnotherKey,
            UpdateFailure::BytesDoNotMatch,
            UpdateFailure::UnreadableSignature,
            UpdateFailure::SignedForAnotherVersion {
                signed: "0.1.0".into(),
                announced: "0.2.0".into(),
            },
        ] {
            assert!(failure.is_refused_as_not_genuine());
            let problem = failure.problem(Some("0.2.0"), "0.1.0");
            assert!(problem
                .message
                .starts_with("The update to 0.2.0 was refused"));
            assert!(problem.hint.contains("0.1.0 stays"), "{problem:?}");
        }
        let key = UpdateFailure::SignedByAnotherKey.problem(Some("0.2.0"), "0.1.0");
        assert!(key.message.contains("release key"));
        let bytes = UpdateFailure::BytesDoNotMatch.problem(Some("0.2.0"), "0.1.0");
        assert!(bytes.message.contains("does not match its signature"));
        let admin = UpdateFailure::InstallRefused {
            installer: Some(Installer::Deb),
        }
        .problem(Some("0.2.0"), "0.1.0");
        assert!(!UpdateFailure::NotAPackage.is_refused_as_not_genuine());
        assert!(admin.message.contains("administrator") && admin.message.contains("dpkg"));
        assert!(admin.hint.contains("sudo apt install"));
    }

    #[test]
    fn a_manifest_is_read_and_compared_as_versions() {
        let manifest = Manifest::parse(
            br#"{"version":"v0.10.0","notes":"New","pub_date":"2026-12-01T00:00:00Z",
                "platforms":{"linux-x86_64-deb":{"url":"https://x/p.deb","signature":"c2ln"}}}"#,
        )
        .unwrap();
        assert!(
            manifest.is_newer_than("0.9.3").unwrap(),
            "10 > 9, not as text"
        );
        assert!(!manifest.is_newer_than("0.10.0").unwrap());
        assert!(!manifest.is_newer_than("1.0.0").unwrap());
        assert_eq!(
            manifest.platforms["linux-x86_64-deb"].url,
            "https://x/p.deb"
        );
        assert!(Manifest::parse(br#"{"version":"soon"}"#)
            .unwrap_err()
            .contains("not a version"));
        assert!(Manifest::parse(b"<html>").is_err());
        // A pre-release is older than its release.
        let rc = Manifest::parse(br#"{"version":"0.2.0-rc.1"}"#).unwrap();
        assert!(!rc.is_newer_than("0.2.0").unwrap());
        assert!(rc.is_newer_than("0.1.9").unwrap());
    }
}

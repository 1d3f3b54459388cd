//! The console's settings: one versioned JSON file in the data folder, written atomically.
//!
//! Why one file: everything a user sets (connections without their secrets, the listener's
//! address and path, each connection's tunnel URL, capture retention, the last active
//! connection) must survive a restart, and one file written whole cannot be half old and half
//! new. A write goes to a temporary file beside it, is synced, then renamed over the old one
//! (and the folder synced), so a crash leaves the old file or the new one, never a torn one.
//!
//! A file that cannot be read as settings (corrupt, or written by a newer version of the
//! console) is never overwritten: it is renamed aside (`settings.json.corrupt-…` or
//! `settings.json.newer-…`), the console starts from defaults, and the caller gets a notice
//! naming where the old file went. Secrets are never here: client secrets are in the keychain.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The version this build writes and reads.
pub const SETTINGS_VERSION: u32 = 1;
/// The listener's address unless set otherwise: the same as `partner listen`'s default, so a
/// tunnel set up for one serves the other.
pub const DEFAULT_LISTENER_ADDRESS: &str = "127.0.0.1:7070";
/// The listener's path unless set otherwise.
pub const DEFAULT_LISTENER_PATH: &str = "/webhooks";
/// Captures kept unless set otherwise (the oldest go first).
pub const DEFAULT_MAX_CAPTURES: u64 = 200_000;
/// The app's byte budget for captures (bodies and headers): 2 GiB. Without one, the count
/// limit alone let a scan of a public tunnel URL fill about 200 GB with bodies of 1 MiB.
pub const DEFAULT_MAX_CAPTURE_BYTES: u64 = 2 << 30;
/// The id of the embedded sandbox's connection (it is always in the list).
pub const EMBEDDED_CONNECTION_ID: &str = "embedded-sandbox";

/// Sandbox or production: shown as a colour everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Environment {
    Sandbox,
    Production,
}

impl Environment {
    /// How the console treats a connection labelled `self` whose service says its tokens are in
    /// `said` (the introspection's `environment`, whose values the spec does not show): as
    /// production unless both the label and the service say otherwise. Only `sandbox` and
    /// `test` (any case) read as not production; anything else the service says (`prod`,
    /// `live`, `uat`, a word of its own) is read cautiously, so every "are you sure" still asks.
    pub fn with_service_saying(self, said: Option<&str>) -> Environment {
        let service = said.map(str::trim).filter(|s| !s.is_empty()).map(|s| {
            if s.eq_ignore_ascii_case("sandbox") || s.eq_ignore_ascii_case("test") {
                Environment::Sandbox
            } else {
                Environment::Production
            }
        });
        match (self, service) {
            (Environment::Sandbox, Some(Environment::Sandbox) | None) => Environment::Sandbox,
            _ => Environment::Production,
        }
    }
}

/// A saved connection to a service; its client secret is in the keychain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedConnection {
    pub id: String,
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    pub environment: Environment,
    /// What this service said of sort keys the console sent (accepted, refused): not in the
    /// spec, so learnt per connection. Absent in files written before it was kept.
    #[serde(default, skip_serializing_if = "crate::SortsTried::is_empty")]
    pub sorts_tried: crate::SortsTried,
    /// How the connection reaches the service from a company network. Missing in files written
    /// before it was kept.
    #[serde(default, skip_serializing_if = "ConnectionNetwork::is_default")]
    pub network: ConnectionNetwork,
    /// Every write refused before sending (support staff looking at production). Missing in
    /// files written before it was kept: then writes are allowed, as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A saved connection's proxy, extra CA and client certificate: file paths and names only.
/// The proxy password and the client certificate's private key are in the keychain
/// (`partner_client::SecretSlot::ProxyPassword` / `ClientCertificateKey`), never here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionNetwork {
    /// `http://host:port` of a proxy that replaces HTTPS_PROXY/HTTP_PROXY for this connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_user: Option<String>,
    /// A PEM file of CA certificates trusted beside the system's store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert_file: Option<std::path::PathBuf>,
    /// The client certificate (PEM) shown to the service; its key is in the keychain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert_file: Option<std::path::PathBuf>,
}

impl ConnectionNetwork {
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

/// Where the webhook listener listens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerSettings {
    pub address: SocketAddr,
    pub path: String,
    /// Where valid notifications are forwarded, the first matching rule first (see
    /// `partner_listener::forward`). Missing in files written before forwarding was kept.
    #[serde(default)]
    pub forward_rules: Vec<partner_listener::ForwardRule>,
    /// The test mode as the user left it. Missing in files written before it was kept.
    #[serde(default)]
    pub test_mode: TestModeSettings,
}

/// The listener's test mode as the user left it: on or off, and its answer. The answer is kept
/// while the mode is off, so turning it on again (after a restart too) brings the same values
/// back instead of the defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TestModeSettings {
    pub enabled: bool,
    pub answer: partner_listener::TestMode,
}

impl TestModeSettings {
    /// What the listener answers by: `answer` when on, the verdicts' own answers when off.
    pub fn in_effect(&self) -> partner_listener::TestMode {
        if self.enabled {
            self.answer.clone()
        } else {
            partner_listener::TestMode::default()
        }
    }
}

impl Default for ListenerSettings {
    fn default() -> Self {
        Self {
            address: DEFAULT_LISTENER_ADDRESS
                .parse()
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 7070))),
            path: DEFAULT_LISTENER_PATH.into(),
            forward_rules: Vec::new(),
            test_mode: TestModeSettings::default(),
        }
    }
}

/// How many captures are kept, how many bytes of them, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionSettings {
    pub max_captures: Option<u64>,
    /// Absent from settings saved before it: the default budget (`null`: no budget).
    #[serde(default = "default_max_capture_bytes")]
    pub max_bytes: Option<u64>,
    pub max_age_days: Option<u32>,
    /// Junk stored in full per second before a flood of it is only counted
    /// (`partner_listener::flood`); absent from settings saved before it: the default
    /// (`null`: every request stored).
    #[serde(default = "default_junk_rate")]
    pub junk_rate: Option<u32>,
}

fn default_max_capture_bytes() -> Option<u64> {
    Some(DEFAULT_MAX_CAPTURE_BYTES)
}

/// The listener's own default rate.
pub fn default_junk_rate() -> Option<u32> {
    Some(partner_listener::DEFAULT_JUNK_RATE)
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            max_captures: Some(DEFAULT_MAX_CAPTURES),
            max_bytes: default_max_capture_bytes(),
            max_age_days: None,
            junk_rate: default_junk_rate(),
        }
    }
}

/// Which events the app tells the desktop about (its notification area): each off until the
/// user turns it on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DesktopNotices {
    /// A notification arrived that failed verification (any verdict but valid).
    #[serde(default)]
    pub failed_verification: bool,
    /// A receiver check ended with a rule failed.
    #[serde(default)]
    pub receiver_check_failed: bool,
    /// The missed-notification check found notifications that never arrived.
    #[serde(default)]
    pub missed_found: bool,
}

/// Everything the console keeps between runs, secrets aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub version: u32,
    #[serde(default)]
    pub listener: ListenerSettings,
    #[serde(default)]
    pub retention: RetentionSettings,
    #[serde(default)]
    pub connections: Vec<SavedConnection>,
    /// The connection opened at start: a saved one's id or [`EMBEDDED_CONNECTION_ID`].
    #[serde(default)]
    pub last_active: Option<String>,
    /// Each connection's tunnel URL (the public https address that reaches the listener).
    #[serde(default)]
    pub tunnel_urls: BTreeMap<String, String>,
    /// The loopback port the embedded sandbox took at its first start, taken again at every
    /// start: its base URL is in what earlier runs kept (captures' `resourceRef`s, the name of
    /// its support copy), so it must not change from run to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_sandbox_port: Option<u16>,
    #[serde(default)]
    pub desktop_notices: DesktopNotices,
    /// Whether the app looks for a newer version at start (`crate::updates`).
    #[serde(default)]
    pub updates: crate::updates::UpdateSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            version: SETTINGS_VERSION,
            listener: ListenerSettings::default(),
            retention: RetentionSettings::default(),
            connections: Vec::new(),
            last_active: None,
            tunnel_urls: BTreeMap::new(),
            embedded_sandbox_port: None,
            desktop_notices: DesktopNotices::default(),
            updates: crate::updates::UpdateSettings::default(),
        }
    }
}

impl Settings {
    /// The saved connection with this id.
    pub fn connection(&self, id: &str) -> Option<&SavedConnection> {
        self.connections.iter().find(|c| c.id == id)
    }

    /// The saved connection to `base_url` with `client_id`, if any.
    pub fn connection_to(&self, base_url: &str, client_id: &str) -> Option<&SavedConnection> {
        let wanted = base_url.trim_end_matches('/');
        self.connections
            .iter()
            .find(|c| c.base_url.trim_end_matches('/') == wanted && c.client_id == client_id)
    }

    /// Checks what a hand-edited file could get wrong that serde cannot see.
    pub fn check(&self) -> std::result::Result<(), String> {
        check_listener_path(&self.listener.path)?;
        let mut ids = std::collections::BTreeSet::new();
        for connection in &self.connections {
            if connection.id == EMBEDDED_CONNECTION_ID {
                return Err(format!(
                    "a saved connection may not use the embedded sandbox's id `{EMBEDDED_CONNECTION_ID}`"
                ));
            }
            if !ids.insert(connection.id.as_str()) {
                return Err(format!("two connections have the id `{}`", connection.id));
            }
        }
        Ok(())
    }
}

/// A listener path: starts with `/`, no query or fragment, no spaces.
pub fn check_listener_path(path: &str) -> std::result::Result<(), String> {
    if !path.starts_with('/') {
        return Err("the listener's path must start with `/`".into());
    }
    if path.len() > 200 {
        return Err("the listener's path is longer than 200 characters".into());
    }
    if path
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#'))
    {
        return Err("the listener's path may not hold spaces, `?` or `#`".into());
    }
    Ok(())
}

/// The settings file at a path.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    path: PathBuf,
}

/// Settings as loaded, with what the user must be told about the file.
#[derive(Debug, Clone)]
pub struct LoadedSettings {
    pub settings: Settings,
    /// Set when the file could not be used: what happened, and where the file went.
    pub notice: Option<String>,
    /// Where an unusable file was moved.
    pub kept_aside: Option<PathBuf>,
}

/// The shape of the app's connections file before the settings file (`connections.json`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegacyConnections {
    #[serde(default)]
    connections: Vec<SavedConnection>,
    #[serde(default)]
    last_active: Option<String>,
}

impl SettingsFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The settings file in the data folder.
    pub fn in_data_dir() -> Result<Self> {
        Ok(Self::new(
            crate::paths::data_dir()?.join(crate::paths::SETTINGS),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the settings. A missing file is the defaults (taking the connections of an older
    /// console's `legacy` connections file, if given and present). A file that is not valid
    /// settings, or is of a newer version, is moved aside and the defaults come back with a
    /// notice. Only a file that cannot even be read (permissions) is an error: then nothing is
    /// moved and the caller must not write.
    pub fn load(&self, legacy: Option<&Path>) -> Result<LoadedSettings> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LoadedSettings {
                    settings: legacy.and_then(read_legacy).unwrap_or_default(),
                    notice: None,
                    kept_aside: None,
                })
            }
            Err(e) => return Err(Error::io("read the settings", &self.path, e)),
        };
        match parse_settings(&bytes) {
            Ok(settings) => Ok(LoadedSettings {
                settings,
                notice: None,
                kept_aside: None,
            }),
            Err(problem) => {
                let aside = self.keep_aside(problem.suffix())?;
                Ok(LoadedSettings {
                    settings: Settings::default(),
                    notice: Some(format!(
                        "The settings file {} {}; it was kept as {} and the console started from its defaults.",
                        self.path.display(),
                        problem.describe(),
                        aside.display()
                    )),
                    kept_aside: Some(aside),
                })
            }
        }
    }

    fn keep_aside(&self, suffix: &str) -> Result<PathBuf> {
        crate::files::keep_aside(&self.path, suffix)
    }

    /// Writes the settings atomically: a temporary file beside the real one, synced, renamed
    /// over it, and (on Unix) the folder synced. Owner-only: mode 0600 on Unix; on Windows the
    /// file inherits the ACL of the data folder under the user's profile, which grants it to
    /// the user, the administrators and SYSTEM alone, so nothing is set.
    pub fn save(&self, settings: &Settings) -> Result<()> {
        settings.check().map_err(Error::Invalid)?;
        let mut bytes = serde_json::to_vec_pretty(settings)
            .map_err(|e| Error::Invalid(format!("could not encode the settings: {e}")))?;
        bytes.push(b'\n');
        crate::files::write_atomically(&self.path, &bytes, "write the settings")
    }
}

/// Why bytes are not usable settings, in words ("is not valid settings (…)").
#[derive(Debug)]
pub struct UnusableSettings(Unusable);

impl std::fmt::Display for UnusableSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.describe())
    }
}

/// Reads settings from bytes without touching any file (readers such as the CLI use this;
/// only the app, at its start, moves an unusable file aside).
pub fn parse(bytes: &[u8]) -> std::result::Result<Settings, UnusableSettings> {
    parse_settings(bytes).map_err(UnusableSettings)
}

#[derive(Debug)]
enum Unusable {
    Corrupt(String),
    Newer(u32),
    Invalid(String),
}

impl Unusable {
    fn suffix(&self) -> &'static str {
        match self {
            Unusable::Newer(_) => "newer",
            Unusable::Corrupt(_) | Unusable::Invalid(_) => "corrupt",
        }
    }

    fn describe(&self) -> String {
        match self {
            Unusable::Corrupt(e) => format!("is not valid settings ({e})"),
            Unusable::Newer(v) => format!(
                "was written by a newer version of the console (settings version {v}; this one reads {SETTINGS_VERSION})"
            ),
            Unusable::Invalid(e) => format!("holds settings this console cannot use ({e})"),
        }
    }
}

fn parse_settings(bytes: &[u8]) -> std::result::Result<Settings, Unusable> {
    #[derive(Deserialize)]
    struct VersionOnly {
        version: u32,
    }
    let version = serde_json::from_slice::<VersionOnly>(bytes)
        .map_err(|e| Unusable::Corrupt(e.to_string()))?
        .version;
    if version > SETTINGS_VERSION {
        return Err(Unusable::Newer(version));
    }
    if version == 0 {
        return Err(Unusable::Corrupt("version 0 does not exist".into()));
    }
    let settings: Settings =
        serde_json::from_slice(bytes).map_err(|e| Unusable::Corrupt(e.to_string()))?;
    settings.check().map_err(Unusable::Invalid)?;
    Ok(settings)
}

fn read_legacy(path: &Path) -> Option<Settings> {
    let bytes = std::fs::read(path).ok()?;
    let legacy: LegacyConnections = serde_json::from_slice(&bytes)
        .map_err(|e| tracing::warn!(path = %path.display(), %e, "an older connections file could not be read; ignored"))
        .ok()?;
    let settings = Settings {
        connections: legacy
            .connections
            .into_iter()
            .filter(|c| c.id != EMBEDDED_CONNECTION_ID)
            .collect(),
        last_active: legacy.last_active,
        ..Settings::default()
    };
    settings.check().ok()?;
    Some(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_saved_before_the_byte_budget_gets_the_default_and_null_stays_no_limit() {
        let before: RetentionSettings =
            serde_json::from_str(r#"{"maxCaptures": 5000, "maxAgeDays": null}"#).unwrap();
        assert_eq!(before.max_bytes, Some(DEFAULT_MAX_CAPTURE_BYTES));
        assert_eq!(before.max_captures, Some(5000));
        let unlimited: RetentionSettings =
            serde_json::from_str(r#"{"maxCaptures": null, "maxBytes": null, "maxAgeDays": null}"#)
                .unwrap();
        assert_eq!(unlimited.max_bytes, None);
        assert_eq!(RetentionSettings::default().max_bytes, Some(2 << 30));
        // The junk rate likewise: absent is the listener's default, null no summary.
        assert_eq!(before.junk_rate, Some(partner_listener::DEFAULT_JUNK_RATE));
        let no_summary: RetentionSettings =
            serde_json::from_str(r#"{"maxCaptures": 1, "maxAgeDays": null, "junkRate": null}"#)
                .unwrap();
        assert_eq!(no_summary.junk_rate, None);
    }

    fn sample() -> Settings {
        let mut settings = Settings::default();
        settings.connections.push(SavedConnection {
            id: "c1".into(),
            label: "Staging".into(),
            base_url: "https://staging.example.test".into(),
            client_id: "partner-1".into(),
            environment: Environment::Production,
            sorts_tried: Default::default(),
            read_only: false,
            network: ConnectionNetwork::default(),
        });
        settings.last_active = Some("c1".into());
        settings
            .tunnel_urls
            .insert("c1".into(), "https://abc.tunnel.test".into());
        settings.listener.address = "127.0.0.1:7171".parse().expect("addr");
        settings.embedded_sandbox_port = Some(41234);
        settings
    }

    #[test]
    fn settings_round_trip_through_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        let file = SettingsFile::new(dir.path().join("settings.json"));
        file.save(&sample()).expect("save");
        let loaded = file.load(None).expect("load");
        assert_eq!(loaded.settings, sample());
        assert!(loaded.notice.is_none());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(
            leftovers.len(),
            1,
            "no temporary file is left: {leftovers:?}"
        );
    }

    /// Rewrites the settings file at `path` as an older version wrote it: without the listener's
    /// field `name`.
    fn write_without_listener_field(path: &Path, name: &str) {
        let mut older: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json");
        older["listener"]
            .as_object_mut()
            .expect("listener")
            .remove(name);
        std::fs::write(path, older.to_string()).expect("write");
    }

    #[test]
    fn a_connection_s_network_is_kept_without_secrets_and_an_older_file_has_none() {
        let dir = tempfile::tempdir().expect("dir");
        let file = SettingsFile::new(dir.path().join("settings.json"));
        let mut settings = sample();
        let network = ConnectionNetwork {
            proxy_url: Some("http://proxy.corp:3128".into()),
            proxy_user: Some("alice".into()),
            ca_cert_file: Some("/etc/corp/ca.pem".into()),
            client_cert_file: Some("/home/alice/client.pem".into()),
        };
        settings.connections[0].network = network.clone();
        file.save(&settings).expect("save");
        let loaded = file.load(None).expect("load").settings;
        assert_eq!(loaded.connections[0].network, network);

        // A connection without network options is written as before: no `network` field, so
        // a file from before it was kept reads the same.
        file.save(&sample()).expect("save");
        let text = std::fs::read_to_string(dir.path().join("settings.json")).expect("read");
        assert!(!text.contains("network"), "{text}");
        let loaded = file.load(None).expect("load").settings;
        assert!(loaded.connections[0].network.is_default());
    }

    #[test]
    fn forward_rules_are_kept_in_order_and_an_older_file_has_none() {
        let dir = tempfile::tempdir().expect("dir");
        let file = SettingsFile::new(dir.path().join("settings.json"));
        let mut settings = sample();
        let events = partner_listener::ForwardRule {
            resource_type: Some("urn:svc:partner:transaction:event".into()),
            event_type: None,
            url: url::Url::parse("http://localhost:3000/hooks/events").expect("url"),
        };
        let rest = partner_listener::ForwardRule::catch_all(
            url::Url::parse("http://localhost:4000/all").expect("url"),
        );
        settings.listener.forward_rules = vec![events.clone(), rest.clone()];
        file.save(&settings).expect("save");
        let loaded = file.load(None).expect("load").settings;
        assert_eq!(loaded.listener.forward_rules, vec![events, rest]);

        // A file from before forwarding was kept: no rules, nothing else lost.
        write_without_listener_field(&dir.path().join("settings.json"), "forwardRules");
        let loaded = file.load(None).expect("load");
        assert!(loaded.notice.is_none());
        assert!(loaded.settings.listener.forward_rules.is_empty());
        assert_eq!(loaded.settings.connections, sample().connections);
    }

    #[test]
    fn the_test_mode_is_kept_with_its_answer_while_off_and_an_older_file_has_it_off() {
        let dir = tempfile::tempdir().expect("dir");
        let file = SettingsFile::new(dir.path().join("settings.json"));
        let mut settings = sample();
        let answer = partner_listener::TestMode {
            status: Some(202),
            delay: Some(std::time::Duration::from_millis(1500)),
            fail_rate: 0.25,
            fail_first_attempts: 2,
            failure_status: Some(503),
        };
        settings.listener.test_mode = TestModeSettings {
            enabled: true,
            answer: answer.clone(),
        };
        file.save(&settings).expect("save");
        let loaded = file.load(None).expect("load").settings.listener.test_mode;
        assert!(loaded.enabled);
        assert_eq!(loaded.answer, answer);
        assert_eq!(loaded.in_effect(), answer);

        // Off: the listener answers by verdict, and the values wait for the next time it is on.
        settings.listener.test_mode.enabled = false;
        file.save(&settings).expect("save");
        let loaded = file.load(None).expect("load").settings.listener.test_mode;
        assert!(!loaded.enabled);
        assert_eq!(loaded.answer, answer);
        assert!(!loaded.in_effect().is_active());

        // A file from before the test mode was kept: off, nothing else lost.
        write_without_listener_field(&dir.path().join("settings.json"), "testMode");
        let loaded = file.load(None).expect("load");
        assert!(loaded.notice.is_none());
        assert_eq!(
            loaded.settings.listener.test_mode,
            TestModeSettings::default()
        );
        assert_eq!(loaded.settings.connections, sample().connections);
    }

    #[test]
    fn a_missing_file_is_the_defaults() {
        let dir = tempfile::tempdir().expect("dir");
        let loaded = SettingsFile::new(dir.path().join("settings.json"))
            .load(None)
            .expect("load");
        assert_eq!(loaded.settings, Settings::default());
        assert_eq!(
            loaded.settings.listener.address.to_string(),
            "127.0.0.1:7070"
        );
    }

    #[test]
    fn a_corrupt_file_is_kept_aside_untouched_and_never_overwritten() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("settings.json");
        let garbage = b"{\"version\": 1, \"connections\": [tru";
        std::fs::write(&path, garbage).expect("write");
        let file = SettingsFile::new(&path);
        let loaded = file.load(None).expect("load");
        assert_eq!(loaded.settings, Settings::default());
        let notice = loaded.notice.expect("a notice");
        let aside = loaded.kept_aside.expect("kept aside");
        assert!(notice.contains("is not valid settings"), "{notice}");
        assert!(notice.contains(&aside.display().to_string()), "{notice}");
        assert_eq!(std::fs::read(&aside).expect("aside"), garbage);
        file.save(&sample()).expect("save the defaults' successor");
        assert_eq!(
            std::fs::read(&aside).expect("aside"),
            garbage,
            "still untouched"
        );
    }

    #[test]
    fn a_newer_version_is_kept_aside_with_its_own_words() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("settings.json");
        let newer = br#"{"version": 7, "somethingNew": true}"#;
        std::fs::write(&path, newer).expect("write");
        let loaded = SettingsFile::new(&path).load(None).expect("load");
        assert!(loaded.notice.expect("notice").contains("newer version"));
        let aside = loaded.kept_aside.expect("aside");
        assert!(aside.to_string_lossy().contains(".newer-"));
        assert_eq!(std::fs::read(aside).expect("aside"), newer);
        assert!(!path.exists());
    }

    #[test]
    fn settings_a_hand_edit_broke_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            br#"{"version": 1, "listener": {"address": "127.0.0.1:7070", "path": "no-slash"}}"#,
        )
        .expect("write");
        let loaded = SettingsFile::new(&path).load(None).expect("load");
        assert!(loaded
            .notice
            .expect("notice")
            .contains("must start with `/`"));
    }

    #[test]
    fn an_older_consoles_connections_are_taken_over() {
        let dir = tempfile::tempdir().expect("dir");
        let legacy = dir.path().join("connections.json");
        std::fs::write(
            &legacy,
            br#"{"connections":[{"id":"c9","label":"Prod","baseUrl":"https://api.example.test","clientId":"p","environment":"production","embedded":false}],"lastActive":"c9"}"#,
        )
        .expect("write");
        let loaded = SettingsFile::new(dir.path().join("settings.json"))
            .load(Some(&legacy))
            .expect("load");
        assert_eq!(loaded.settings.connections.len(), 1);
        assert_eq!(loaded.settings.last_active.as_deref(), Some("c9"));
    }

    // Unix alone: on Windows the file takes the profile folder's ACL (see `save`), with no
    // mode to check.
    #[cfg(unix)]
    #[test]
    fn the_file_is_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("settings.json");
        SettingsFile::new(&path).save(&sample()).expect("save");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[cfg(test)]
mod environment_tests {
    use super::Environment::{Production, Sandbox};

    #[test]
    fn production_when_the_label_or_the_service_says_so() {
        assert_eq!(Sandbox.with_service_saying(None), Sandbox);
        assert_eq!(Sandbox.with_service_saying(Some("sandbox")), Sandbox);
        assert_eq!(Sandbox.with_service_saying(Some("TEST")), Sandbox);
        assert_eq!(Sandbox.with_service_saying(Some(" ")), Sandbox);
        assert_eq!(Sandbox.with_service_saying(Some("prod")), Production);
        assert_eq!(Sandbox.with_service_saying(Some("uat")), Production);
        assert_eq!(Production.with_service_saying(Some("sandbox")), Production);
        assert_eq!(Production.with_service_saying(None), Production);
    }
}

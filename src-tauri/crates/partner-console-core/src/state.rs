//! The app's state: the settings, the active client, the embedded sandbox, the running
//! listener and its capture store, and the one shutdown signal every long-running task watches.
//!
//! Why shaped so: commands borrow what they need (a cloned `PartnerClient`, a cloned `Listener`)
//! and release the lock before any await, so a slow request never blocks another command. Every
//! background task is a child of `shutdown`, so closing the window stops them all in one place.
//! The state holds data only: what changes it, and in what order, is in [`crate::services`].

use crate::bridge::{
    AppStatus, ConnectionView, DemoSubscription, KeychainView, ListenerBrief, StartupPhase,
    TokenHistoryEntry, TunnelStatus,
};
use crate::error::{AppError, ErrorKind, Result};
use partner_client::{PartnerClient, SecretStore};
use partner_listener::{Listener, Store};
use partner_local::{KeychainHealth, KeychainKeys, ListenerAddress, Settings, SettingsFile};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// How long a replaced signing key keeps verifying unless the user retires it: effectively
/// until retired.
pub const PREVIOUS_KEY_GRACE: chrono::Duration = chrono::Duration::days(3650);

/// How many token events the history keeps.
pub const TOKEN_HISTORY: usize = 50;

/// The running listener and what stops it.
#[derive(Debug, Clone)]
pub struct RunningListener {
    pub listener: Listener,
    pub addr: SocketAddr,
    pub stop: CancellationToken,
    /// Cancelled once the listener has stopped serving: requests in flight answered and its
    /// run's stop written to the store (what the missed-notification check reads as the time
    /// it went down).
    pub finished: CancellationToken,
}

impl RunningListener {
    /// The loopback URL notifications are posted to.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.listener.config().path)
    }
}

/// What failed verification while a desktop notice of it was held back (`crate::notices`
/// tells at most one per quiet time).
#[derive(Debug, Default)]
pub struct VerificationThrottle {
    pub last_told: Option<std::time::Instant>,
    /// Held back since the last notice, by verdict.
    pub held: std::collections::BTreeMap<&'static str, u64>,
    /// A task will tell the held ones when the quiet time ends.
    pub flush_due: bool,
}

/// The active connection: its view and its client.
#[derive(Debug, Clone)]
pub struct Active {
    pub view: ConnectionView,
    pub client: PartnerClient,
    /// Stops this connection's token watcher and key loading when another takes over.
    pub stop: CancellationToken,
}

/// The running embedded sandbox and its client.
#[derive(Debug)]
pub struct Embedded {
    pub client: PartnerClient,
    pub sandbox: Arc<partner_sandbox::SandboxHandle>,
}

impl Embedded {
    /// Stops the sandbox (requests in flight get a few seconds).
    pub async fn stop(self) {
        match Arc::try_unwrap(self.sandbox) {
            Ok(handle) => handle.shutdown().await,
            Err(_) => tracing::warn!("the embedded sandbox is still in use at exit"),
        }
    }
}

/// Why the listener is not running, and a free address to offer.
#[derive(Debug, Clone)]
pub struct ListenerProblem {
    pub error: AppError,
    pub suggestion: Option<SocketAddr>,
}

impl ListenerProblem {
    /// The free address to offer, as the UI shows it.
    pub fn suggested_address(&self) -> Option<String> {
        self.suggestion.map(|address| address.to_string())
    }
}

/// The team workspace the app works with (`services::workspace`), while it answers: the
/// member's client (their token inside, never shown) and who the workspace says they are.
#[derive(Debug, Clone)]
pub struct Joined {
    pub client: partner_workspace::WorkspaceClient,
    pub member: partner_workspace::Member,
}

/// The app's side of a team workspace (`services::workspace`): joined or not, and how the
/// workspace answered last.
#[derive(Debug, Default)]
pub struct WorkspaceSession {
    /// The workspace answered who the member is: the support desk's questions go to it.
    pub joined: Option<Joined>,
    /// A login that did not answer (unreachable at start): asked again with the status, and
    /// joined once it answers. A token the workspace refused is not kept here (asking again
    /// would count as failed logins against this address).
    pub waiting: Option<partner_workspace::WorkspaceClient>,
    /// The workspace last named (joined, waiting or refused), for the view.
    pub url: Option<String>,
    /// It came from `PARTNER_WORKSPACE`.
    pub from_environment: bool,
    /// The last call to it was answered.
    pub reachable: bool,
    pub last_error: Option<String>,
    pub checked_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug)]
pub struct Inner {
    pub startup_error: Option<AppError>,
    pub demo_subscription: Option<DemoSubscription>,
    /// What the settings file holds (saved through `services::settings`).
    pub settings: Settings,
    /// False when the settings file could not be read: then it is never written over.
    pub settings_writable: bool,
    pub notices: Vec<String>,
    pub embedded: Option<Embedded>,
    pub active: Option<Active>,
    /// The capture store, opened once and shared by every listener of this run.
    pub captures: Option<Store>,
    /// Where the key the capture store is encrypted with lives (`partner_local::data_key`'s
    /// words: the OS's secret store, a key file, the variable), once the store is open.
    pub data_key_home: Option<String>,
    pub listener: Option<RunningListener>,
    /// The `finished` of the listener stopped last, so a start right after it waits for its
    /// port to come free (a headless listener keeps its port across a stop).
    pub listener_stopping: Option<CancellationToken>,
    /// Where this run's listener listens (the settings' address unless the environment said).
    pub listener_address: ListenerAddress,
    pub listener_problem: Option<ListenerProblem>,
    pub tunnel: Option<TunnelStatus>,
}

#[derive(Debug)]
pub struct AppState {
    inner: Mutex<Inner>,
    /// Cancelled once, on exit: every background task stops.
    pub shutdown: CancellationToken,
    /// Where the settings, the captures, the embedded sandbox's data and exports live.
    pub data_dir: PathBuf,
    pub settings_file: SettingsFile,
    /// Held while the settings are written, so writes land in the order of the changes.
    pub settings_write: Mutex<()>,
    /// Held while the embedded sandbox starts or resets: one sandbox on its data file.
    pub embedded_start: tokio::sync::Mutex<()>,
    /// The OS keychain, or memory when there is none (the UI says so).
    pub secrets: Arc<dyn SecretStore>,
    /// The keys the listener verifies with, read from `secrets`.
    pub keys: Arc<KeychainKeys>,
    /// What each service keeps for itself, each behind a lock of its own (the fields of
    /// [`Inner`] are the ones the status is made of, changed and read under one lock so a
    /// status is a snapshot of one version):
    /// the token's history (`services::token`),
    pub token_history: Mutex<Vec<TokenHistoryEntry>>,
    /// running searches across a listing's pages, by the id the UI gave them
    /// (`services::listings`),
    pub searches: Mutex<HashMap<String, CancellationToken>>,
    /// running exports and imports, by the id the UI gave them (`services::jobs`),
    pub jobs: Mutex<HashMap<String, CancellationToken>>,
    /// running receiver checks, by subscription id (`services::receiver_check`),
    pub receiver_checks: Mutex<HashMap<String, CancellationToken>>,
    /// the running missed-notification check (`services::missed`),
    pub missed_check: Mutex<Option<CancellationToken>>,
    /// failed verifications held back between two desktop notices (`notices`),
    pub verification_notices: Mutex<VerificationThrottle>,
    /// the route a `partner-console://` link asked for, until the page takes it
    /// (`services::links`),
    pub pending_link: Mutex<Option<String>>,
    /// the active connection's local index, open (`services::support`),
    pub support_index: Mutex<Option<OpenIndex>>,
    /// the team workspace joined, if any (`services::workspace`),
    pub workspace: Mutex<WorkspaceSession>,
    /// and the scenario being played on the embedded sandbox, one step at a time
    /// (`services::scenarios`).
    pub scenario_play: tokio::sync::Mutex<Option<crate::scenario::Play>>,
    /// The start-up phase, watched so a command can answer the moment start-up ends (the UI
    /// awaits it instead of polling).
    phase: tokio::sync::watch::Sender<StartupPhase>,
    /// Whether the window's first screen is drawn, or there is no window to wait for (true from
    /// the start until [`AppState::expect_first_screen`]): the capture store opens at start only
    /// then (see `services::startup`).
    first_screen: tokio::sync::watch::Sender<bool>,
    /// Bumped on every announced change of the status ([`AppState::announce`]). A status
    /// reaches the UI both as a command's answer and as an event, whose order the webview does
    /// not guarantee, so the UI keeps whichever carries the higher version.
    status_version: AtomicU64,
}

impl AppState {
    /// Runs `work` on the keychain on a blocking thread (each keychain call is a D-Bus round
    /// trip, which must not hold a runtime thread).
    pub async fn with_keychain<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn SecretStore) -> T + Send + 'static,
    ) -> Result<T> {
        let secrets = self.secrets.clone();
        tokio::task::spawn_blocking(move || work(secrets.as_ref()))
            .await
            .map_err(|e| {
                AppError::new(
                    ErrorKind::Internal,
                    format!("A keychain task failed: {e}."),
                    "Try again.",
                )
            })
    }

    /// The state over the settings as loaded; `listener_address` is this run's.
    pub fn new(
        data_dir: PathBuf,
        settings_file: SettingsFile,
        settings: Settings,
        listener_address: ListenerAddress,
        secrets: Arc<dyn SecretStore>,
        keys: Arc<KeychainKeys>,
    ) -> Self {
        Self {
            inner: Mutex::new(Inner {
                startup_error: None,
                demo_subscription: None,
                settings,
                settings_writable: true,
                notices: Vec::new(),
                embedded: None,
                active: None,
                captures: None,
                data_key_home: None,
                listener: None,
                listener_stopping: None,
                listener_address,
                listener_problem: None,
                tunnel: None,
            }),
            shutdown: CancellationToken::new(),
            data_dir,
            settings_file,
            settings_write: Mutex::new(()),
            embedded_start: tokio::sync::Mutex::new(()),
            secrets,
            keys,
            token_history: Mutex::default(),
            searches: Mutex::default(),
            jobs: Mutex::default(),
            receiver_checks: Mutex::default(),
            verification_notices: Mutex::default(),
            missed_check: Mutex::default(),
            pending_link: Mutex::default(),
            scenario_play: tokio::sync::Mutex::default(),
            support_index: Mutex::default(),
            workspace: Mutex::default(),
            phase: tokio::sync::watch::Sender::new(StartupPhase::Starting),
            first_screen: tokio::sync::watch::Sender::new(true),
            status_version: AtomicU64::new(0),
        }
    }

    pub fn phase(&self) -> StartupPhase {
        *self.phase.borrow()
    }

    pub fn set_phase(&self, phase: StartupPhase) {
        self.phase.send_replace(phase);
    }

    /// Waits until start-up has ended (ready or failed).
    pub async fn started(&self) -> StartupPhase {
        let mut phase = self.phase.subscribe();
        // The sender lives in `self`, so the wait cannot end with a closed channel.
        let ended = phase
            .wait_for(|p| *p != StartupPhase::Starting)
            .await
            .map(|p| *p);
        ended.unwrap_or_else(|_| self.phase())
    }

    /// A window is coming whose page will say when its first screen is drawn
    /// ([`AppState::first_screen_shown`]).
    pub fn expect_first_screen(&self) {
        self.first_screen.send_replace(false);
    }

    /// The window's first screen is drawn; true when this is the news (it was awaited).
    pub fn first_screen_shown(&self) -> bool {
        !self.first_screen.send_replace(true)
    }

    /// Waits until the window's first screen is drawn (at once without a window), or `limit`
    /// at most: a page that never says so (it failed to load) only delays what waits.
    pub async fn first_screen_drawn(&self, limit: std::time::Duration) {
        let mut shown = self.first_screen.subscribe();
        let _ = tokio::time::timeout(limit, shown.wait_for(|shown| *shown)).await;
    }

    /// The state under its lock; never held across an await.
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        locked(&self.inner)
    }

    pub fn client(&self) -> Result<PartnerClient> {
        self.lock()
            .active
            .as_ref()
            .map(|a| a.client.clone())
            .ok_or_else(AppError::not_connected)
    }

    pub fn listener(&self) -> Result<RunningListener> {
        let inner = self.lock();
        if let Some(running) = &inner.listener {
            return Ok(running.clone());
        }
        Err(match &inner.listener_problem {
            Some(problem) => problem.error.clone(),
            None => AppError::new(
                ErrorKind::Listener,
                "The webhook listener is not running.",
                "Turn it on in Webhooks.",
            ),
        })
    }

    /// The capture store, whether or not the listener runs.
    pub fn captures(&self) -> Result<Store> {
        let inner = self.lock();
        if let Some(store) = &inner.captures {
            return Ok(store.clone());
        }
        Err(match &inner.listener_problem {
            Some(problem) => problem.error.clone(),
            None => AppError::new(
                ErrorKind::Listener,
                "The capture store is not open yet.",
                "Wait for start-up to finish.",
            ),
        })
    }

    /// The active connection's id.
    /// The active connection's base URL.
    pub fn base_url(&self) -> Option<String> {
        self.lock().active.as_ref().map(|a| a.view.base_url.clone())
    }

    pub fn active_id(&self) -> Option<String> {
        self.lock().active.as_ref().map(|a| a.view.id.clone())
    }

    pub fn status(&self) -> AppStatus {
        let inner = self.lock();
        self.status_of(&inner)
    }

    /// The status as `inner` has it. Read under the lock that every announced change holds
    /// while it writes and raises the version ([`AppState::announce`]), so a status is a
    /// snapshot of one version: two statuses with the same version say the same. (When the
    /// version was read before the lock, an answer could pair a change's fields with the
    /// version before it, and the UI, keeping the later of two equal versions, showed the
    /// announcement of the step before after it: "Subscribing…" back after "Demo webhooks: …",
    /// caught in an e2e screenshot.)
    fn status_of(&self, inner: &Inner) -> AppStatus {
        let version = self.status_version.load(Ordering::SeqCst);
        let mut connections = vec![ConnectionView::embedded(
            inner.embedded.as_ref().map(|e| e.sandbox.base_url()),
        )];
        connections.extend(inner.settings.connections.iter().map(ConnectionView::from));
        let keychain = match self.keys.health() {
            KeychainHealth::Available => KeychainView {
                available: true,
                message: None,
            },
            KeychainHealth::Unavailable(message) => KeychainView {
                available: false,
                message: Some(message),
            },
        };
        AppStatus {
            phase: self.phase(),
            startup_error: inner.startup_error.clone(),
            active: inner.active.as_ref().map(|a| a.view.clone()),
            connections,
            embedded_sandbox: inner
                .embedded
                .as_ref()
                .map(|e| e.sandbox.base_url().to_string()),
            demo_subscription: inner.demo_subscription.clone(),
            keychain,
            notices: inner.notices.clone(),
            listener: ListenerBrief {
                running: inner.listener.is_some(),
                url: inner.listener.as_ref().map(RunningListener::url),
                problem: inner.listener_problem.as_ref().map(|p| p.error.clone()),
                suggested_address: inner
                    .listener_problem
                    .as_ref()
                    .and_then(ListenerProblem::suggested_address),
            },
            tunnel: inner.tunnel.clone(),
            version,
        }
    }

    /// Makes `change` and raises the status version under one lock; returns the status after
    /// it (what the status event carries).
    pub fn announce(&self, change: impl FnOnce(&mut Inner)) -> AppStatus {
        let mut inner = self.lock();
        change(&mut inner);
        self.announce_locked(&inner)
    }

    /// Raises the status version for a change the caller made while holding `inner`'s lock,
    /// which it still holds; returns the status after the change.
    pub fn announce_locked(&self, inner: &Inner) -> AppStatus {
        self.status_version.fetch_add(1, Ordering::SeqCst);
        self.status_of(inner)
    }

    /// Adds a token event; a run of `used` events is kept as one line (the latest), so the
    /// history shows issuance, refresh, revocation and failure rather than every request.
    pub fn record_token_event(&self, entry: TokenHistoryEntry) {
        let mut history = locked(&self.token_history);
        let repeat_use =
            entry.kind == "used" && history.last().is_some_and(|last| last.kind == "used");
        if repeat_use {
            history.pop();
        }
        history.push(entry);
        let excess = history.len().saturating_sub(TOKEN_HISTORY);
        history.drain(..excess);
    }

    /// The time the token countdowns run on: the embedded sandbox's clock when it is the
    /// active connection (so "advance clock" moves them), the system clock otherwise.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        let inner = self.lock();
        match (&inner.embedded, &inner.active) {
            (Some(embedded), Some(active))
                if active.view.id == partner_local::settings::EMBEDDED_CONNECTION_ID =>
            {
                embedded.sandbox.clock().now()
            }
            _ => chrono::Utc::now(),
        }
    }

    pub fn exports_dir(&self) -> PathBuf {
        self.data_dir.join("exports")
    }
}

/// `mutex` locked; a lock a panicking thread left behind is taken as it is (every value kept
/// under these locks is whole between statements).
pub fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A local index the app holds open, by its id, with the file it opened.
#[derive(Debug, Clone)]
pub struct OpenIndex {
    pub id: String,
    pub index: partner_index::Index,
    /// The file as opened: when the file at the index's path is no longer this one (deleted,
    /// or deleted and made again, by `partner transactions forget` and `sync` while the app
    /// runs), the index is opened again rather than read from the deleted file.
    pub file: FileIdentity,
}

/// Which file a path names (the same path can name a new file after the old was deleted):
/// device and inode on Unix; on Windows, whose stable std has no file index, the volume is left
/// out and the file's creation time stands for the inode (a file made again has a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
}

impl FileIdentity {
    /// The file at `path` now, or `None` when there is none.
    pub fn of(path: &std::path::Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Self {
                device: metadata.dev(),
                inode: metadata.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let created = metadata
                .created()
                .ok()
                .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| {
                    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
                });
            Some(Self {
                device: 0,
                inode: created,
            })
        }
    }
}

/// A state over `dir` with an in-memory keychain, for tests.
#[cfg(test)]
pub fn test_state(dir: PathBuf) -> AppState {
    headless_state(dir, Arc::new(partner_client::MemoryStore::new()))
}

/// A state over `dir` with the given keychain, the settings file in `dir` (the defaults when
/// there is none yet, or it cannot be read) and the listener on a free loopback port: a
/// console without a window (tests, a headless run) that touches nothing of the user's, and
/// that a second start on the same `dir` finds as the first one left it.
pub fn headless_state(dir: PathBuf, secrets: Arc<dyn SecretStore>) -> AppState {
    let file = SettingsFile::new(dir.join(partner_local::paths::SETTINGS));
    let settings = file
        .load(None)
        .map(|loaded| loaded.settings)
        .unwrap_or_default();
    let address = ListenerAddress::resolve(&settings.listener, Some("127.0.0.1:0"))
        .unwrap_or_else(|_| ListenerAddress::from_settings(&settings.listener));
    AppState::new(
        dir.clone(),
        file,
        settings,
        address,
        secrets.clone(),
        Arc::new(KeychainKeys::new(secrets, PREVIOUS_KEY_GRACE)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn state() -> Arc<AppState> {
        Arc::new(test_state(
            std::env::temp_dir().join(format!("partner-state-{}", uuid::Uuid::new_v4())),
        ))
    }

    #[tokio::test]
    async fn the_first_screen_is_waited_for_only_where_a_window_is_coming_and_not_forever() {
        let silent = state();
        let state = state();
        let at_once = Duration::from_secs(60);
        tokio::time::timeout(Duration::from_secs(5), state.first_screen_drawn(at_once))
            .await
            .expect("no window: nothing to wait for");

        state.expect_first_screen();
        let waiting = tokio::spawn({
            let state = state.clone();
            async move { state.first_screen_drawn(Duration::from_secs(60)).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "the window's first screen is not drawn yet"
        );
        assert!(state.first_screen_shown(), "the news");
        assert!(!state.first_screen_shown(), "said again: no news");
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the wait ends when the first screen is shown")
            .unwrap();

        silent.expect_first_screen();
        let begun = std::time::Instant::now();
        silent.first_screen_drawn(Duration::from_millis(100)).await;
        assert!(
            begun.elapsed() >= Duration::from_millis(100),
            "a page that never says waits out the limit"
        );
    }

    #[tokio::test]
    async fn started_answers_the_moment_start_up_ends() {
        let state = state();
        assert_eq!(state.status().phase, StartupPhase::Starting);
        let waiting = tokio::spawn({
            let state = state.clone();
            async move { state.started().await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "still starting: the wait goes on");
        state.set_phase(StartupPhase::Ready);
        let phase = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the wait ends with start-up")
            .expect("the task ran");
        assert_eq!(phase, StartupPhase::Ready);
        assert_eq!(state.status().phase, StartupPhase::Ready);
    }

    #[test]
    fn every_announced_change_raises_the_status_version() {
        let state = state();
        let before = state.status().version;
        let announced = state.announce(|inner| {
            inner.demo_subscription = Some(crate::bridge::DemoSubscription {
                phase: crate::bridge::StepPhase::Running,
                product_name: None,
                error: None,
            });
        });
        assert_eq!(announced.version, before + 1);
        assert!(announced.demo_subscription.is_some());
        assert_eq!(
            state.status().version,
            announced.version,
            "reads do not bump it"
        );
        assert!(state.announce(|_| {}).version > announced.version);
    }

    #[test]
    fn a_status_read_during_an_announced_change_pairs_its_fields_with_their_version() {
        // A reader racing the change sees either the old fields with the old version or the
        // new fields with the new one, never the new fields with the old version.
        let state = Arc::new(state());
        let reader = {
            let state = state.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for _ in 0..20_000 {
                    let status = state.status();
                    seen.push((status.version, status.demo_subscription.is_some()));
                }
                seen
            })
        };
        let base = state.status().version;
        for round in 0..200 {
            state.announce(|inner| {
                inner.demo_subscription =
                    (round % 2 == 0).then_some(crate::bridge::DemoSubscription {
                        phase: crate::bridge::StepPhase::Running,
                        product_name: None,
                        error: None,
                    });
            });
        }
        for (version, has_subscription) in reader.join().expect("reader") {
            let changes = version - base;
            // After an odd number of changes (1st, 3rd, ...) the subscription is set.
            assert_eq!(has_subscription, changes % 2 == 1, "version {version}");
        }
    }

    #[tokio::test]
    async fn started_after_the_end_answers_at_once() {
        let state = state();
        state.set_phase(StartupPhase::Failed);
        let phase = tokio::time::timeout(Duration::from_millis(100), state.started())
            .await
            .expect("no wait once start-up has ended");
        assert_eq!(phase, StartupPhase::Failed);
    }
}

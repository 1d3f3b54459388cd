//! The app's state: the saved connections, the active client, the embedded sandbox, the running
//! listener, and the one shutdown signal every long-running task watches.
//!
//! Why shaped so: commands borrow what they need (a cloned `PartnerClient`, a cloned `Listener`)
//! and release the lock before any await, so a slow request never blocks another command. Every
//! background task is a child of `shutdown`, so closing the window stops them all in one place.

use crate::bridge::{
    AppStatus, ConnectionView, DemoSubscription, StartupPhase, TestMode, TokenHistoryEntry,
};
use crate::error::{AppError, ErrorKind, Result};
use partner_client::{PartnerClient, SecretStore};
use partner_listener::{Listener, MemoryKeys};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// How many token events the history keeps.
pub const TOKEN_HISTORY: usize = 50;

/// The running listener and what stops it.
#[derive(Debug, Clone)]
pub struct RunningListener {
    pub listener: Listener,
    pub addr: SocketAddr,
    pub stop: CancellationToken,
}

impl RunningListener {
    /// The loopback URL notifications are posted to.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.listener.config().path)
    }
}

/// The active connection: its view and its client.
#[derive(Debug, Clone)]
pub struct Active {
    pub view: ConnectionView,
    pub client: PartnerClient,
    /// Stops this connection's token watcher when another connection takes over.
    pub stop: CancellationToken,
}

/// Saved connections, without secrets (those are in the keychain).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedConnections {
    pub connections: Vec<ConnectionView>,
    pub last_active: Option<String>,
}

#[derive(Debug)]
pub struct Inner {
    pub startup_error: Option<AppError>,
    pub demo_subscription: Option<DemoSubscription>,
    pub saved: SavedConnections,
    pub embedded: Option<crate::embedded::Embedded>,
    pub active: Option<Active>,
    pub listener: Option<RunningListener>,
    /// The port the listener last ran on, to start it on the same one again.
    pub listener_port: Option<u16>,
    pub tunnel_url: Option<String>,
    pub test_mode: TestMode,
    pub token_history: Vec<TokenHistoryEntry>,
    pub searches: HashMap<String, CancellationToken>,
}

#[derive(Debug)]
pub struct AppState {
    inner: Mutex<Inner>,
    /// Cancelled once, on exit: every background task stops.
    pub shutdown: CancellationToken,
    /// Where connections, captures and exports live.
    pub data_dir: PathBuf,
    /// The OS keychain, or memory when there is none (the UI says so).
    pub secrets: Arc<dyn SecretStore>,
    /// The keys the listener verifies with, loaded from `secrets`.
    pub keys: Arc<MemoryKeys>,
    /// The start-up phase, watched so a command can answer the moment start-up ends (the UI
    /// awaits it instead of polling).
    phase: tokio::sync::watch::Sender<StartupPhase>,
    /// Bumped on every announced change of the status ([`AppState::announce`]). A status
    /// reaches the UI both as a command's answer and as an event, whose order the webview does
    /// not guarantee, so the UI keeps whichever carries the higher version.
    status_version: AtomicU64,
}

impl AppState {
    pub fn new(data_dir: PathBuf, secrets: Arc<dyn SecretStore>, keys: Arc<MemoryKeys>) -> Self {
        let saved = std::fs::read(data_dir.join(CONNECTIONS_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Self {
            inner: Mutex::new(Inner {
                startup_error: None,
                demo_subscription: None,
                saved,
                embedded: None,
                active: None,
                listener: None,
                listener_port: None,
                tunnel_url: None,
                test_mode: TestMode {
                    enabled: false,
                    status: 200,
                    delay_ms: 0,
                },
                token_history: Vec::new(),
                searches: HashMap::new(),
            }),
            shutdown: CancellationToken::new(),
            data_dir,
            secrets,
            keys,
            phase: tokio::sync::watch::Sender::new(StartupPhase::Starting),
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

    /// The state under its lock; never held across an await.
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn client(&self) -> Result<PartnerClient> {
        self.lock()
            .active
            .as_ref()
            .map(|a| a.client.clone())
            .ok_or_else(AppError::not_connected)
    }

    pub fn listener(&self) -> Result<RunningListener> {
        self.lock().listener.clone().ok_or_else(|| {
            AppError::new(
                ErrorKind::Listener,
                "The webhook listener is not running.",
                "Turn it on in Webhooks.",
            )
        })
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
        let mut connections = Vec::new();
        if let Some(embedded) = &inner.embedded {
            connections.push(embedded.view.clone());
        }
        connections.extend(inner.saved.connections.iter().cloned());
        AppStatus {
            phase: self.phase(),
            startup_error: inner.startup_error.clone(),
            active: inner.active.as_ref().map(|a| a.view.clone()),
            connections,
            embedded_sandbox: inner.embedded.as_ref().map(|e| e.view.base_url.clone()),
            demo_subscription: inner.demo_subscription.clone(),
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
        let mut inner = self.lock();
        let repeat_use = entry.kind == "used"
            && inner
                .token_history
                .last()
                .is_some_and(|last| last.kind == "used");
        if repeat_use {
            inner.token_history.pop();
        }
        inner.token_history.push(entry);
        let excess = inner.token_history.len().saturating_sub(TOKEN_HISTORY);
        inner.token_history.drain(..excess);
    }

    /// Writes the saved connections (no secrets in them).
    pub fn persist_connections(&self) -> Result<()> {
        let saved = self.lock().saved.clone();
        std::fs::create_dir_all(&self.data_dir)
            .map_err(|e| AppError::io("create the app's data folder", &e))?;
        let bytes = serde_json::to_vec_pretty(&saved).map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Could not encode the connections: {e}."),
                "Try again.",
            )
        })?;
        std::fs::write(self.data_dir.join(CONNECTIONS_FILE), bytes)
            .map_err(|e| AppError::io("save the connections", &e))
    }

    pub fn exports_dir(&self) -> PathBuf {
        self.data_dir.join("exports")
    }
}

pub const CONNECTIONS_FILE: &str = "connections.json";

#[cfg(test)]
mod tests {
    use super::*;
    use partner_client::MemoryStore;
    use std::time::Duration;

    fn state() -> Arc<AppState> {
        let dir = std::env::temp_dir().join(format!("partner-state-{}", uuid::Uuid::new_v4()));
        Arc::new(AppState::new(
            dir,
            Arc::new(MemoryStore::new()),
            Arc::new(MemoryKeys::default()),
        ))
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

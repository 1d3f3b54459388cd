//! Start-up and shut-down. At start: the listener on its fixed address, and at the same time
//! the connection: the one the environment names (`PARTNER_BASE_URL`, …), else the last
//! active one, else the embedded sandbox, whose demo product is then subscribed to the
//! listener.
//!
//! Why in this order: the first thing a user sees is the products table, so start-up ends
//! (phase `ready`, the UI lists) as soon as a connection is active. The listener and the
//! connection (embedded sandbox start + token) start at the same time on tasks of their own;
//! the keys of the connection's subscriptions, the tunnel check and the demo product's
//! subscription (a list, two PATCHes, keys into the keychain) run after start-up in the
//! background, their outcomes in the status. The UI does not poll: `wait_for_start` answers the
//! moment the phase leaves `starting`.
use crate::bridge::{AppStatus, StartupPhase};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::milestones::milestone;
use crate::state::AppState;
use partner_client::PartnerClient;
use partner_local::settings::EMBEDDED_CONNECTION_ID;

/// The window's page drew its first screen: what waited for it (the capture store) goes on.
pub fn first_screen_shown(app: &Console) {
    if app.state().first_screen_shown() {
        milestone("first screen shown");
    }
}

/// Which connection start-up opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// The environment's, else the last active one, else the embedded sandbox (the app).
    AsConfigured,
    /// The embedded sandbox, whatever the environment or the settings name (a scenario).
    EmbeddedOnly,
}

/// Start-up of the app: the connection the environment or the settings name.
pub async fn first_run(app: Console) {
    run(app, Opening::AsConfigured).await
}

/// Start-up of a console that plays scenarios without a window (`partner demo run`): the
/// embedded sandbox and nothing else. Why: a scenario plays on its own sandbox and listener,
/// and a partner developer's shell often exports `PARTNER_BASE_URL`, `PARTNER_CLIENT_ID` and
/// `PARTNER_CLIENT_SECRET` for the real service; read here, they made the demo sign in there
/// (a token request to a service the user did not ask the demo to touch) and then wait in
/// vain for the embedded sandbox's demo subscription. The environment's variables are not
/// read at all, so nothing is adopted, kept in the keychain or sent.
pub async fn first_run_on_sandbox(app: Console) {
    run(app, Opening::EmbeddedOnly).await
}

async fn run(app: Console, opening: Opening) {
    milestone("first run begins");
    // The listener and the connection start side by side, and the screens are ready once the
    // connection is: the listener's store can take a moment to open (its map of the
    // notifications inside the redelivery window: about 200 ms of CPU when a million are), and
    // the products table does not need it. In a window the store opens only once the first
    // screen is drawn (`first_screen_shown`, `listener::FIRST_SCREEN_WAIT` at most; the
    // listener's port is bound before, so a notification waits rather than being refused): on
    // two cores that CPU delayed the first rows by about 35 ms (BENCHMARKS.md, desktop round
    // 14). The listener announces itself when it is up; the demo subscription and the tunnel
    // check wait for it.
    let listener = {
        let app = app.clone();
        app.clone().spawn(async move {
            let started = crate::services::listener::start(&app).await;
            milestone("listener started");
            started
        })
    };
    // The team workspace's saved login (or `PARTNER_WORKSPACE`), checked beside the connection
    // and awaited before the screens are ready, so the support desk's first question goes where
    // it will be answered from then on. A scenario's console joins none (as it opens no
    // configured connection).
    let workspace = match opening {
        Opening::AsConfigured => {
            let app = app.clone();
            Some(app.clone().spawn(async move {
                crate::services::workspace::restore(
                    &app,
                    partner_workspace::EnvWorkspace::from_process(),
                )
                .await;
            }))
        }
        Opening::EmbeddedOnly => None,
    };
    // While a workspace is joined, its captures reach the inspector live
    // (`services::workspace_feed`, which follows joins and leaves on its own).
    if opening == Opening::AsConfigured {
        crate::services::workspace_feed::follow(&app);
    }
    let connection = {
        let app = app.clone();
        app.clone().spawn(async move {
            match opening {
                Opening::AsConfigured => open_at_start(&app).await,
                Opening::EmbeddedOnly => {
                    crate::services::connections::open(&app, EMBEDDED_CONNECTION_ID).await
                }
            }
        })
    }
    .await
    .unwrap_or_else(|e| Err(task_failed(&e)));
    if let Some(workspace) = workspace {
        if let Err(error) = workspace.await {
            tracing::error!(%error, "restoring the team workspace failed");
        }
    }
    let state = app.state();
    if let Err(error) = &connection {
        tracing::error!(%error, "start-up failed");
        state.lock().startup_error = Some(error.clone());
    }
    let phase = if connection.is_ok() {
        StartupPhase::Ready
    } else {
        StartupPhase::Failed
    };
    app.announce(|_| state.set_phase(phase));
    milestone("ready");
    let listener = listener.await.unwrap_or_else(|e| Err(task_failed(&e)));
    if let Err(error) = &listener {
        tracing::error!(%error, "the listener did not start");
    }
    if let Ok(Some(client)) = connection {
        if listener.is_ok() {
            crate::services::demo::spawn_subscription(app.clone(), client);
        }
    }
    // The tunnel check waits for the listener: run it now that both are up.
    crate::services::tunnel::check_in_background(app.clone());
}

fn task_failed(error: &tokio::task::JoinError) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("A start-up task failed: {error}."),
        "Restart the app.",
    )
}

/// The connection to open at start: the environment's, else the last active one, else the
/// embedded sandbox. What could not be opened is told as a notice, and the next one is tried.
/// Returns the embedded sandbox's client when that was opened (it gets its demo subscription).
async fn open_at_start(app: &Console) -> Result<Option<PartnerClient>> {
    let state = app.state();
    let notice = |text: String| {
        app.announce(|inner| inner.notices.push(text));
    };
    match crate::services::connections::adopt_environment(app).await {
        Ok(Some(id)) => match crate::services::connections::open(app, &id).await {
            Ok(client) => return Ok(client),
            Err(error) => notice(format!(
                "The connection named by PARTNER_BASE_URL could not be opened: {} {}",
                error.message, error.hint
            )),
        },
        Ok(None) => {}
        Err(error) => notice(format!(
            "The connection from the environment was not used: {}",
            error.message
        )),
    }
    let last = state.lock().settings.last_active.clone();
    if let Some(id) = last.filter(|id| id != EMBEDDED_CONNECTION_ID) {
        match crate::services::connections::open(app, &id).await {
            Ok(client) => return Ok(client),
            Err(error) => notice(format!(
                "The last connection could not be opened ({}); the embedded sandbox opened instead.",
                error.message.trim_end_matches('.')
            )),
        }
    }
    crate::services::connections::open(app, EMBEDDED_CONNECTION_ID).await
}

/// Forgets a notice the user has read (a start-up notice: a settings file kept aside, a
/// connection that could not be opened); tells the UI.
pub fn dismiss_notice(app: &Console, index: usize) -> AppStatus {
    let state = app.state();
    let status = state.announce(|inner| {
        if index < inner.notices.len() {
            inner.notices.remove(index);
        }
    });
    app.emit_status(status.clone());
    status
}

/// Stops what runs in the background, after the shutdown signal: the embedded sandbox last.
pub async fn stop(app: Console) {
    let state = app.state();
    // The listener first: its run's stop is written once the requests in flight are answered,
    // so the next start knows when it went down (a few seconds at most; a listener that does
    // not finish by then is left to the process's end, and its run reads as unclean).
    let listener = state.lock().listener.take();
    if let Some(listener) = listener {
        listener.stop.cancel();
        let finished = listener.finished.cancelled();
        if tokio::time::timeout(LISTENER_STOP_WAIT, finished)
            .await
            .is_err()
        {
            tracing::warn!("the listener did not stop in time; its run is not closed");
        }
    }
    let embedded = state.lock().embedded.take();
    if let Some(embedded) = embedded {
        embedded.stop().await;
    }
}

/// How long quitting waits for the listener to answer what is in flight and close its run.
const LISTENER_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Checks the OS's secret store once ([`partner_client::probe_secret_store`]: a marker written,
/// read back through a fresh entry and deleted), a few round trips (D-Bus to the Secret
/// Service on Linux, 100+ ms on a cold session) that the shell runs on a thread of its own
/// before it builds the window, so it overlaps the window's creation instead of holding the
/// page load. A store that refuses, is locked or missing, or does not keep what it is given
/// sets the keychain's health: the banner names the store and what to do, and "Try again"
/// probes again after an unlock. Why a write and not a read: a read of an absent entry is
/// "nothing there" from a working store and from one that keeps nothing alike.
pub fn probe_keychain() -> std::result::Result<(), String> {
    partner_client::probe_secret_store(&partner_client::KeyringStore::default())
        .map_err(|e| e.to_string())
}

/// The data folder the app and the CLI share, made if missing and checked writable before the
/// window is built: a folder another user owns (left by a run under `sudo`, say) is said with
/// its path and the app does not start, rather than fail later inside the window's set-up with
/// a bare "Permission denied".
pub fn data_folder() -> std::result::Result<std::path::PathBuf, String> {
    let dir = partner_local::paths::data_dir().map_err(|e| e.to_string())?;
    check_writable(&dir)?;
    Ok(dir)
}

fn check_writable(dir: &std::path::Path) -> std::result::Result<(), String> {
    let said = |what: &str, e: std::io::Error| {
        format!(
            "the data folder {} cannot be used ({what}: {e}); give this user that folder, or set PARTNER_DATA_DIR to one it may write",
            dir.display()
        )
    };
    std::fs::create_dir_all(dir).map_err(|e| said("creating it", e))?;
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| said("writing in it", e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The app's state at start: the settings read from `data_dir` (a file that cannot be read is
/// reported and never written over; `legacy` is the connections file of consoles before the
/// settings file), this run's listener address, the OS keychain with the listener's keys over
/// it, and what `keychain_probe` said of it.
pub fn open_state(
    data_dir: std::path::PathBuf,
    legacy: Option<std::path::PathBuf>,
    keychain_probe: std::result::Result<(), String>,
) -> AppState {
    use partner_client::{KeyringStore, SecretStore};
    use partner_local::{KeychainKeys, ListenerAddress, SettingsFile};
    use std::sync::Arc;
    let file = SettingsFile::new(data_dir.join(partner_local::paths::SETTINGS));
    let (settings, mut notices, writable) = match file.load(legacy.as_deref()) {
        Ok(loaded) => (loaded.settings, loaded.notice.into_iter().collect(), true),
        Err(error) => (
            partner_local::Settings::default(),
            vec![format!("The settings could not be read ({error}); the app runs on its defaults and will not write over the file.")],
            false,
        ),
    };
    let listener_address =
        ListenerAddress::from_env(&settings.listener).unwrap_or_else(|problem| {
            notices.push(format!(
                "{problem}; the listener uses the address in the settings."
            ));
            ListenerAddress::from_settings(&settings.listener)
        });
    let secrets: Arc<dyn SecretStore> = Arc::new(KeyringStore::default());
    // A replaced key keeps verifying until the user retires it (Product detail).
    let keys = Arc::new(KeychainKeys::new(
        secrets.clone(),
        crate::state::PREVIOUS_KEY_GRACE,
    ));
    if let Err(why) = keychain_probe {
        keys.mark_unavailable(why);
    }
    let state = AppState::new(
        data_dir.clone(),
        SettingsFile::new(data_dir.join(partner_local::paths::SETTINGS)),
        settings,
        listener_address,
        secrets,
        keys,
    );
    {
        let mut inner = state.lock();
        inner.notices = notices;
        inner.settings_writable = writable;
    }
    state
}

/// How the OS asks the app to quit from outside its window: SIGTERM (a session logging out,
/// `kill`, a test driver ending its session) and SIGINT on Linux and macOS; Ctrl+C, Ctrl+Break,
/// the console closed, the user logging off or the machine shutting down on Windows. Waits for
/// any, so the shell can quit the way closing its window does and the same clean stop runs (the
/// listener answers what is in flight and closes its run, the embedded sandbox stops). Never
/// returns when none can be watched.
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut terminate), Ok(mut interrupt)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            tracing::warn!("termination signals cannot be watched; they end the app at once");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM: quitting"),
            _ = interrupt.recv() => tracing::info!("SIGINT: quitting"),
        }
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown};
        let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut logoff), Ok(mut shutdown)) = (
            ctrl_c(),
            ctrl_break(),
            ctrl_close(),
            ctrl_logoff(),
            ctrl_shutdown(),
        ) else {
            tracing::warn!("console events cannot be watched; they end the app at once");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = c.recv() => tracing::info!("Ctrl+C: quitting"),
            _ = brk.recv() => tracing::info!("Ctrl+Break: quitting"),
            _ = close.recv() => tracing::info!("console closed: quitting"),
            _ = logoff.recv() => tracing::info!("logging off: quitting"),
            _ = shutdown.recv() => tracing::info!("shutting down: quitting"),
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("Ctrl+C: quitting");
    }
}

#[cfg(test)]
mod tests {
    use super::check_writable;

    #[test]
    fn a_data_folder_that_cannot_be_made_is_said_with_its_path() {
        let base = std::env::temp_dir().join(format!("partner-folder-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&base).unwrap();
        // A file where the folder should be: refused even for root, who passes every mode.
        let file = base.join("not-a-folder");
        std::fs::write(&file, b"").unwrap();
        let dir = file.join("partner-console");
        let said = check_writable(&dir).unwrap_err();
        assert!(said.contains(&dir.display().to_string()), "{said}");
        assert!(said.contains("PARTNER_DATA_DIR"), "{said}");
        check_writable(&base.join("fine")).unwrap();
        assert!(base.join("fine").is_dir());
        assert_eq!(
            std::fs::read_dir(base.join("fine")).unwrap().count(),
            0,
            "no probe left"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}

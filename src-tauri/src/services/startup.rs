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
use crate::bridge::{AppStatus, DemoSubscription, StartupPhase, StepPhase};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_client::PartnerClient;
use partner_local::settings::EMBEDDED_CONNECTION_ID;
use std::sync::OnceLock;
use std::time::Instant;
use tauri::{AppHandle, Manager};

static PROCESS_START: OnceLock<Instant> = OnceLock::new();

/// Marks the process start (first thing in `run`), for the start-up milestones in the log.
pub fn mark_process_start() {
    PROCESS_START.get_or_init(Instant::now);
}

/// A start-up milestone in the log (`PARTNER_LOG=info`), with the milliseconds since the
/// process started: where start-up time goes, without a profiler.
pub fn milestone(what: &str) {
    let ms = PROCESS_START.get().map_or(0, |t| t.elapsed().as_millis());
    tracing::info!(since_start_ms = ms, "start-up: {what}");
}

pub async fn first_run(app: AppHandle) {
    milestone("first run begins");
    // The listener and the connection start side by side, and the screens are ready once the
    // connection is: the listener's store can take a moment to open when it holds a million
    // captures (it rebuilds its notification map), and the products table does not need it. The
    // listener announces itself when it is up; the demo subscription and the tunnel check wait
    // for it.
    let listener = {
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let started = crate::services::listener::start(&app).await;
            milestone("listener started");
            started
        })
    };
    let connection = {
        let app = app.clone();
        tauri::async_runtime::spawn(async move { open_at_start(&app).await })
    }
    .await
    .unwrap_or_else(|e| Err(task_failed(&e)));
    let state = app.state::<AppState>();
    if let Err(error) = &connection {
        tracing::error!(%error, "start-up failed");
        state.lock().startup_error = Some(error.clone());
    }
    let phase = if connection.is_ok() {
        StartupPhase::Ready
    } else {
        StartupPhase::Failed
    };
    crate::events::announce(&app, |_| state.set_phase(phase));
    milestone("ready");
    let listener = listener.await.unwrap_or_else(|e| Err(task_failed(&e)));
    if let Err(error) = &listener {
        tracing::error!(%error, "the listener did not start");
    }
    if let Ok(Some(client)) = connection {
        if listener.is_ok() {
            spawn_demo_subscription(app.clone(), client);
        }
    }
    // The tunnel check waits for the listener: run it now that both are up.
    crate::services::tunnel::check_in_background(app.clone());
}

fn task_failed(error: &tauri::Error) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("A start-up task failed: {error}."),
        "Restart the app.",
    )
}

/// The connection to open at start: the environment's, else the last active one, else the
/// embedded sandbox. What could not be opened is told as a notice, and the next one is tried.
/// Returns the embedded sandbox's client when that was opened (it gets its demo subscription).
async fn open_at_start(app: &AppHandle) -> Result<Option<PartnerClient>> {
    let state = app.state::<AppState>();
    let notice = |text: String| {
        crate::events::announce(app, |inner| inner.notices.push(text));
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

/// Subscribes the embedded sandbox's first demo product to the listener, in the background.
pub fn spawn_demo_subscription(app: AppHandle, client: PartnerClient) {
    tauri::async_runtime::spawn(subscribe_demo_product(app, client));
}

/// The embedded sandbox's demo subscription, after start-up (and again from
/// [`retry_demo_subscription`] after a failure); its outcome goes to the UI as a status.
async fn subscribe_demo_product(app: AppHandle, client: PartnerClient) {
    let state = app.state::<AppState>();
    let set = |subscription: DemoSubscription| {
        crate::events::announce(&app, |inner| inner.demo_subscription = Some(subscription));
    };
    set(DemoSubscription {
        phase: StepPhase::Running,
        product_name: None,
        error: None,
    });
    let outcome = match state.listener() {
        Ok(listener) => {
            crate::services::embedded::subscribe_demo_product(&state, &client, &listener.url())
                .await
        }
        Err(error) => Err(error),
    };
    milestone("demo product subscribed");
    set(match outcome {
        Ok(product_name) => DemoSubscription {
            phase: StepPhase::Done,
            product_name,
            error: None,
        },
        Err(error) => {
            tracing::error!(%error, "subscribing the demo product failed");
            DemoSubscription {
                phase: StepPhase::Failed,
                product_name: None,
                error: Some(error),
            }
        }
    });
}

/// Runs the demo subscription again after it failed (a locked keychain, say), once the user
/// has dealt with the cause. Its progress reaches the UI as the first run's does.
pub fn retry_demo_subscription(app: &AppHandle) -> Result<AppStatus> {
    let state = app.state::<AppState>();
    crate::services::embedded::active_sandbox(&state)?;
    let client = state.client()?;
    state.listener()?;
    let announced = {
        let mut inner = state.lock();
        let failed = matches!(
            inner.demo_subscription.as_ref().map(|d| d.phase),
            Some(StepPhase::Failed)
        );
        if !failed {
            return Err(AppError::invalid(
                "The demo subscription has not failed, so there is nothing to try again.",
            ));
        }
        // Marked here, not in the task, so a second click cannot start a second run.
        inner.demo_subscription = Some(DemoSubscription {
            phase: StepPhase::Running,
            product_name: None,
            error: None,
        });
        state.announce_locked(&inner)
    };
    spawn_demo_subscription(app.clone(), client);
    crate::events::emit_status(app, announced.clone());
    Ok(announced)
}

/// Forgets a notice the user has read (a start-up notice: a settings file kept aside, a
/// connection that could not be opened); tells the UI.
pub fn dismiss_notice(app: &AppHandle, index: usize) -> AppStatus {
    let state = app.state::<AppState>();
    let status = state.announce(|inner| {
        if index < inner.notices.len() {
            inner.notices.remove(index);
        }
    });
    crate::events::emit_status(app, status.clone());
    status
}

/// Stops what runs in the background, after the shutdown signal: the embedded sandbox last.
pub async fn stop(app: AppHandle) {
    let state = app.state::<AppState>();
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

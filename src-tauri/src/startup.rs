//! Start-up and shut-down. First run, no set-up: start the listener on loopback, then open the
//! last used saved connection or, with none, the embedded sandbox with its demo client and a
//! demo product subscribed to the listener.
//!
//! Why in this order: the first thing a user sees is the products table, so start-up ends
//! (phase `ready`, the UI lists) as soon as a connection is active. The listener and the
//! connection (embedded sandbox start + token) start at the same time on tasks of their own,
//! and the demo product's subscription (a list, two PATCHes, keys into the keychain) runs
//! after start-up in the background, its progress in `AppStatus::demo_subscription`. The UI
//! does not poll: `wait_for_start` answers the moment the phase leaves `starting`.
use crate::bridge::{DemoSubscription, StartupPhase, StepPhase};
use crate::error::{AppError, ErrorKind};
use crate::state::{AppState, RunningListener};
use partner_client::PartnerClient;
use std::sync::OnceLock;
use std::time::Instant;
use tauri::{AppHandle, Manager};

/// How long a replaced signing key keeps verifying unless the user retires it: effectively
/// until retired.
pub const PREVIOUS_KEY_GRACE: chrono::Duration = chrono::Duration::days(3650);

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
    let (listener, connection) = start(&app).await;
    let state = app.state::<AppState>();
    let failure = connection.as_ref().err().or(listener.as_ref().err());
    if let Some(error) = failure {
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
    if let (Ok(listener), Ok(Some(client))) = (listener, connection) {
        tauri::async_runtime::spawn(subscribe_demo_product(app.clone(), client, listener));
    }
}

/// Starts the listener and opens a connection at the same time. The connection is the
/// embedded sandbox's client when the embedded sandbox was started (it still needs its demo
/// subscription), `None` when a saved connection was opened.
async fn start(
    app: &AppHandle,
) -> (
    Result<RunningListener, AppError>,
    Result<Option<PartnerClient>, AppError>,
) {
    let port = std::env::var("PARTNER_LISTENER_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = {
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let listener = crate::events::start_listener(&app, port).await;
            milestone("listener started");
            listener
        })
    };
    let connection = {
        let app = app.clone();
        tauri::async_runtime::spawn(async move { open_connection(&app).await })
    };
    let (listener, connection) = futures::join!(listener, connection);
    (
        listener.unwrap_or_else(|e| Err(task_failed(&e))),
        connection.unwrap_or_else(|e| Err(task_failed(&e))),
    )
}

fn task_failed(error: &tauri::Error) -> AppError {
    AppError::new(
        ErrorKind::Internal,
        format!("A start-up task failed: {error}."),
        "Restart the app.",
    )
}

/// The last used saved connection, or the embedded sandbox when there is none (or it fails).
async fn open_connection(app: &AppHandle) -> Result<Option<PartnerClient>, AppError> {
    let state = app.state::<AppState>();
    let last = state.lock().saved.last_active.clone();
    if let Some(id) = last {
        if crate::commands::select_connection(app.clone(), state.clone(), id)
            .await
            .is_ok()
        {
            return Ok(None);
        }
    }
    crate::embedded::start(app).await.map(Some)
}

/// The first run's demo subscription, after start-up (and again from
/// [`crate::embedded::retry_demo_subscription`] after a failure); its outcome goes to the UI as a
/// status.
pub(crate) async fn subscribe_demo_product(
    app: AppHandle,
    client: PartnerClient,
    listener: RunningListener,
) {
    let state = app.state::<AppState>();
    let set = |subscription: DemoSubscription| {
        crate::events::announce(&app, |inner| inner.demo_subscription = Some(subscription));
    };
    set(DemoSubscription {
        phase: StepPhase::Running,
        product_name: None,
        error: None,
    });
    let outcome = crate::embedded::subscribe_demo_product(&state, &client, &listener).await;
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

/// Stops what runs in the background, after the shutdown signal: the embedded sandbox last.
pub async fn stop(app: AppHandle) {
    let state = app.state::<AppState>();
    let embedded = state.lock().embedded.take();
    if let Some(embedded) = embedded {
        embedded.stop().await;
    }
}

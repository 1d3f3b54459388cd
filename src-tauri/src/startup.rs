//! Start-up and shut-down. First run, no set-up: start the listener on loopback, then open the
//! last used saved connection or, with none, the embedded sandbox with its demo client and a
//! demo product subscribed to the listener.
use crate::bridge::StartupPhase;
use crate::error::AppError;
use crate::state::AppState;
use tauri::{AppHandle, Manager};

/// How long a replaced signing key keeps verifying unless the user retires it: effectively
/// until retired.
pub const PREVIOUS_KEY_GRACE: chrono::Duration = chrono::Duration::days(3650);

pub async fn first_run(app: AppHandle) {
    let result = start(&app).await;
    let state = app.state::<AppState>();
    {
        let mut inner = state.lock();
        match result {
            Ok(()) => inner.phase = StartupPhase::Ready,
            Err(error) => {
                tracing::error!(%error, "start-up failed");
                inner.phase = StartupPhase::Failed;
                inner.startup_error = Some(error);
            }
        }
    }
    crate::events::status_changed(&app);
}

async fn start(app: &AppHandle) -> Result<(), AppError> {
    let port = std::env::var("PARTNER_LISTENER_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    crate::events::start_listener(app, port).await?;
    let state = app.state::<AppState>();
    let last = state.lock().saved.last_active.clone();
    if let Some(id) = last {
        if crate::commands::select_connection(app.clone(), state.clone(), id)
            .await
            .is_ok()
        {
            return Ok(());
        }
    }
    crate::embedded::start(app).await
}

/// Stops what runs in the background, after the shutdown signal: the embedded sandbox last.
pub async fn stop(app: AppHandle) {
    let state = app.state::<AppState>();
    let embedded = state.lock().embedded.take();
    if let Some(embedded) = embedded {
        embedded.stop().await;
    }
}

//! The embedded sandbox's demo: its first product subscribed to the listener after start-up
//! (again after a failure, from the user's "Try again"), and "Reset sandbox", which starts the
//! sandbox again from its demo data and subscribes it again. It sits above `embedded` and
//! `connections`, which it drives, so neither has to call back up.
use crate::bridge::{AppStatus, DemoSubscription, StepPhase};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::milestones::milestone;
use crate::services::embedded;
use partner_client::PartnerClient;
use partner_local::settings::EMBEDDED_CONNECTION_ID;

/// Starts the embedded sandbox again from its demo data: stopped, its data file set aside by
/// the sandbox library, started, and made active again if it was. Its demo product is
/// subscribed to the listener again afterwards.
pub async fn reset(app: &Console) -> Result<()> {
    let state = app.state();
    let was_active = state.active_id().as_deref() == Some(EMBEDDED_CONNECTION_ID);
    {
        let _one_at_a_time = state.embedded_start.lock().await;
        let running = state.lock().embedded.take();
        if let Some(running) = running {
            running.stop().await;
        }
        partner_sandbox::reset_data_file(&embedded::data_file(state)).map_err(|e| {
            AppError::new(
                ErrorKind::Io,
                format!("The embedded sandbox's data could not be reset: {e}."),
                "Check the data folder's permissions, then try again.",
            )
        })?;
    }
    let client = embedded::ensure_started(app).await?;
    if was_active {
        // The view is taken first: `activate` takes the state's lock itself (holding it across
        // the call deadlocked the app).
        let view = embedded::view(&state.lock());
        crate::services::connections::activate(app, view, client.clone());
        spawn_subscription(app.clone(), client);
    }
    Ok(())
}

/// Subscribes the embedded sandbox's first demo product to the listener, in the background.
pub fn spawn_subscription(app: Console, client: PartnerClient) {
    app.spawn(subscribe_demo_product(app.clone(), client));
}

/// The embedded sandbox's demo subscription, after start-up (and again from
/// [`retry_demo_subscription`] after a failure); its outcome goes to the UI as a status.
async fn subscribe_demo_product(app: Console, client: PartnerClient) {
    let state = app.state();
    let set = |subscription: DemoSubscription| {
        app.announce(|inner| inner.demo_subscription = Some(subscription));
    };
    set(DemoSubscription {
        phase: StepPhase::Running,
        product_name: None,
        error: None,
    });
    let outcome = match state.listener() {
        Ok(listener) => embedded::subscribe_demo_product(state, &client, &listener.url()).await,
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
pub fn retry_subscription(app: &Console) -> Result<AppStatus> {
    let state = app.state();
    embedded::active_sandbox(state)?;
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
    spawn_subscription(app.clone(), client);
    app.emit_status(announced.clone());
    Ok(announced)
}

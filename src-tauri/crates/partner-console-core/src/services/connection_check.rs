//! "Check connection": `partner_client::check_connection` (the same as `partner doctor`) on a
//! connection exactly as the app opens it (its secret and its network's secrets from the
//! keychain, its proxy, CA and client certificate from the settings), each step told to the
//! window as it ends, the report returned with its text for a support ticket.
use crate::bridge::{CheckStepEvent, CheckStepView, ConnectionCheckView};
use crate::console::{AppEvent, Console};
use crate::error::{AppError, Result};
use partner_client::ConnectionConfig;
use partner_local::settings::EMBEDDED_CONNECTION_ID;

/// Checks connection `id` (a saved one, or the embedded sandbox, started if need be).
pub async fn check(app: &Console, id: &str) -> Result<ConnectionCheckView> {
    let config = config_of(app, id).await?;
    let emitter = app.clone();
    let connection_id = id.to_string();
    let report = partner_client::check_connection(&config, move |step| {
        emitter.emit(AppEvent::ConnectionCheck(CheckStepEvent {
            connection_id: connection_id.clone(),
            step: CheckStepView::from(step),
        }));
    })
    .await;
    Ok(ConnectionCheckView {
        connection_id: id.to_string(),
        base_url: report.base_url.clone(),
        client_id: report.client_id.clone(),
        steps: report.steps.iter().map(CheckStepView::from).collect(),
        all_passed: report.all_passed(),
        text: report.to_text(),
    })
}

async fn config_of(app: &Console, id: &str) -> Result<ConnectionConfig> {
    let state = app.state();
    if id == EMBEDDED_CONNECTION_ID {
        crate::services::embedded::ensure_started(app).await?;
        return crate::services::embedded::client_config(state);
    }
    let saved = state
        .lock()
        .settings
        .connection(id)
        .cloned()
        .ok_or_else(|| AppError::invalid("There is no such connection any more."))?;
    crate::services::connections::saved_config(state, &saved).await
}

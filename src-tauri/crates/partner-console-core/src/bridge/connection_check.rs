//! "Check connection" (`partner_client::check_connection`) as the window shows it.

use serde::Serialize;
use ts_rs::TS;

/// One step of a connection check, as it ends.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckStepView {
    /// `address`, `proxy`, `tcp`, `tls`, `http`, `token`, `products`, `transactions`.
    pub name: String,
    /// `passed`, `failed`, `skipped` or `warning`.
    pub outcome: String,
    /// What was found.
    pub detail: String,
    /// What to do, when the step did not pass.
    pub advice: Option<String>,
    #[ts(type = "number")]
    pub elapsed_ms: u64,
}

/// A step of the check of connection `connection_id` that just ended (the `connection-check`
/// event), so the window shows the steps as they finish.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckStepEvent {
    pub connection_id: String,
    pub step: CheckStepView,
}

/// The whole check of a connection.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheckView {
    pub connection_id: String,
    pub base_url: String,
    pub client_id: String,
    pub steps: Vec<CheckStepView>,
    pub all_passed: bool,
    /// The report as text for a support ticket (no secret in it).
    pub text: String,
}

impl From<&partner_client::CheckStep> for CheckStepView {
    fn from(step: &partner_client::CheckStep) -> Self {
        let outcome = match step.outcome {
            partner_client::StepOutcome::Passed => "passed",
            partner_client::StepOutcome::Failed => "failed",
            partner_client::StepOutcome::Skipped => "skipped",
            partner_client::StepOutcome::Warning => "warning",
        };
        Self {
            name: step.name.clone(),
            outcome: outcome.to_string(),
            detail: step.detail.clone(),
            advice: step.advice.clone(),
            elapsed_ms: step.elapsed_ms,
        }
    }
}

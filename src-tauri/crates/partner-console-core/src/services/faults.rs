//! Faults on demand in the embedded sandbox, for the Demo screen: the next calls of an endpoint
//! answered 429 (with `Retry-After`), 500 or 503, slowed or dropped, so a presenter shows the
//! console waiting and retrying; every token revoked at once. Through the sandbox's own
//! controls (`partner_client::SandboxControl`), so the calls are in the Calls screen and the
//! rules are the sandbox's (`partner_sandbox::faults`), as for `partner trigger fault`.
use crate::bridge::{DemoOutcome, FaultForm, FaultView};
use crate::error::{AppError, Result};
use crate::services::embedded::{active_sandbox, lender, outcome};
use crate::state::AppState;
use partner_sandbox::faults::{Fault, FaultEndpoint, NewFault};

fn view(fault: &Fault) -> FaultView {
    FaultView {
        id: fault.id,
        description: fault.describe(),
        applied: fault.applied,
    }
}

/// The faults in force, oldest first.
pub async fn list(state: &AppState) -> Result<Vec<FaultView>> {
    let sandbox = active_sandbox(state)?;
    let faults: Vec<Fault> = lender(state, &sandbox, async |c| c.faults().await).await?;
    Ok(faults.iter().map(view).collect())
}

/// Adds a fault for the next `count` calls; the faults in force after it.
pub async fn add(state: &AppState, form: FaultForm) -> Result<Vec<FaultView>> {
    let sandbox = active_sandbox(state)?;
    let endpoint = FaultEndpoint::from_name(&form.endpoint)
        .map_err(|e| AppError::invalid(format!("{}.", crate::error::capitalised(&e))))?;
    let fault = NewFault {
        endpoint,
        status: form.status,
        retry_after_seconds: form.retry_after_seconds,
        latency_ms: form.latency_ms,
        drop: form.drop,
        count: form.count,
        share: None,
    };
    // The sandbox's rules, said before the call (the sandbox says the same if asked).
    if let Some(problem) = fault.problem() {
        return Err(AppError::invalid(format!(
            "{}.",
            crate::error::capitalised(&problem)
        )));
    }
    let body = serde_json::to_value(&fault).unwrap_or_default();
    let _: Fault = lender(state, &sandbox, async |c| c.add_fault(&body).await).await?;
    list(state).await
}

/// Ends every fault.
pub async fn clear(state: &AppState) -> Result<Vec<FaultView>> {
    let sandbox = active_sandbox(state)?;
    let _: serde_json::Value = lender(state, &sandbox, async |c| c.clear_faults().await).await?;
    list(state).await
}

/// Revokes every token of every client: the console's next call is refused once and it gets a
/// new token, as the Token screen then shows.
pub async fn revoke_tokens(state: &AppState) -> Result<DemoOutcome> {
    let sandbox = active_sandbox(state)?;
    let revoked: serde_json::Value =
        lender(state, &sandbox, async |c| c.revoke_all_tokens().await).await?;
    Ok(outcome(
        &sandbox,
        format!(
            "The sandbox revoked every token ({} live): the console's next call gets a new one.",
            revoked["cleared"]
        ),
        None,
    ))
}

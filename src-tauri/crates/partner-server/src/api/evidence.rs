//! `POST /api/v1/evidence`: a redacted evidence bundle of the workspace's captures, built by
//! the server with the keys and secrets only it holds ([`crate::evidence`]); support and up,
//! audited under the member's name.

use super::call::{ApiResult, Body, Caller, Workspace};
use crate::evidence::{self, EvidenceBundle, EvidenceRequest};
use crate::roles::Action;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use std::sync::Arc;

pub fn routes() -> Router<Arc<Workspace>> {
    Router::new().route("/api/v1/evidence", post(bundle))
}

async fn bundle(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<EvidenceRequest>,
) -> ApiResult<Json<EvidenceBundle>> {
    let target = match &request.event_id {
        Some(event_id) => format!("notification {event_id}"),
        None => format!(
            "captures {}",
            request
                .ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    caller.may(&ws, Action::ExportEvidence, &target).await?;
    let bundle = evidence::bundle(&ws.pool, &ws.keys, &ws.service, &request).await?;
    caller
        .done(
            &ws,
            Action::ExportEvidence,
            &target,
            &format!(
                "{} captures, {} secrets masked",
                bundle.captures, bundle.report.secrets_masked
            ),
        )
        .await?;
    Ok(Json(bundle))
}

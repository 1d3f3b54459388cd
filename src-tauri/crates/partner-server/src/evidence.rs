//! Evidence bundles of a workspace's captures, built by the server: the local console's own
//! bundle (`partner_listener::evidence`: HAR and Markdown, headers and chosen body fields
//! masked, every known secret searched for in every form and refused if one is left), over the
//! workspace's captures.
//!
//! Why on the server: the signature debugger's diagnosis needs the subscriptions' signing keys,
//! and redaction must know every secret to mask it; both are the server's and never leave it.
//! A console gets the finished, redacted text and writes the two files itself. The service's
//! client secret and the token it holds are searched for too.
//!
//! Which attempts make up "a notification" is the listener's rule
//! ([`partner_listener::evidence::one_notification`]); the server only finds the candidates by
//! their indexed eventId.

use crate::captures;
use crate::error::{Error, Result};
use crate::service::Service;
use crate::signing_keys::WorkspaceKeys;
use partner_listener::evidence::{self, Evidence, EvidenceOptions, FieldPath, RedactionReport};
use partner_listener::keys::KeySource;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::BTreeSet;

/// What to bundle: capture ids, or every attempt of one notification; and what to mask.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EvidenceRequest {
    pub ids: Vec<i64>,
    pub event_id: Option<String>,
    pub subscription_id: Option<String>,
    pub resource_type: Option<String>,
    /// Body fields to mask: JSON pointers or dotted paths.
    pub mask_fields: Vec<String>,
}

/// A finished bundle, redacted: the text of both files.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceBundle {
    pub har: String,
    pub summary: String,
    pub report: RedactionReport,
    pub captures: usize,
}

/// Builds the bundle `request` asks for.
pub async fn bundle(
    pool: &PgPool,
    keys: &WorkspaceKeys,
    service: &Service,
    request: &EvidenceRequest,
) -> Result<EvidenceBundle> {
    let invalid = |error: partner_listener::Error| Error::Invalid(error.to_string());
    let mask_body_fields = request
        .mask_fields
        .iter()
        .map(|path| FieldPath::parse(path))
        .collect::<partner_listener::Result<Vec<_>>>()
        .map_err(invalid)?;
    let captures =
        match (&request.event_id, request.ids.is_empty()) {
            (Some(event_id), true) => {
                let found = captures::of_event(
                    pool,
                    event_id,
                    request.subscription_id.as_deref(),
                    request.resource_type.as_deref(),
                )
                .await?;
                evidence::one_notification(
                    found,
                    event_id,
                    &request.subscription_id,
                    &request.resource_type,
                )
                .map_err(invalid)?
            }
            (None, false) => {
                let unique: BTreeSet<i64> = request.ids.iter().copied().collect();
                let mut found = Vec::with_capacity(unique.len());
                for id in unique {
                    found.push(
                        captures::get(pool, id)
                            .await?
                            .ok_or_else(|| Error::NotFound(format!("capture {id}")))?,
                    );
                }
                found
            }
            _ => return Err(Error::Invalid(
                "evidence needs a selection: capture ids, or one notification's eventId (not both)"
                    .into(),
            )),
        };
    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.mask_body_fields = mask_body_fields;
    options.keys = Some(keys as &dyn KeySource);
    // The service connection's secret and token, when one is set, are masked wherever found.
    if let Ok(client) = service.client().await {
        options.other_secrets = client.tokens().held_secrets().await;
    }
    let count = captures.len();
    let built = evidence::build(
        &Evidence {
            captures,
            // A server keeps no forward or replay records of its own (a replay's outcome is
            // in the audit log).
            outbound: Vec::new(),
        },
        &options,
    )
    .map_err(invalid)?;
    Ok(EvidenceBundle {
        har: built.har,
        summary: built.summary,
        report: built.report,
        captures: count,
    })
}

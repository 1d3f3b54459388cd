//! Captures imported into the workspace (`POST /api/v1/captures/import`; `partner listen import`
//! with a workspace in effect): what another listener exported, added to the team's captures so
//! the whole team sees it (an incident's captures from a laptop, a fixture set).
//!
//! Why the ids are the workspace's: its servers number its captures, and a file's ids are
//! another store's, which would collide with the team's. So "already there" cannot be told by
//! id, as the local import tells it. A capture is the same one when it arrived at the same
//! microsecond with the same method, path, headers and body; those are skipped, in the file and
//! against the workspace, so importing a file twice, or the workspace's own export, adds
//! nothing. (Two imports of one file at the same instant could both add it: a team does not
//! race itself on one file, and a second copy is visible and can be cleared.)
//!
//! The verdicts are kept as the file has them: the keys they were judged with are not the
//! workspace's to try again, and a file of forged notifications is worth seeing as such. The
//! attempts are counted again in the workspace's notifications, as its intake counts them,
//! in one commit with the rows, which the live feeds hear of ([`crate::capture_writer`]).

use crate::error::{Error, Result};
use partner_listener::{Capture, ImportReport};
use sqlx::PgPool;
use std::collections::HashSet;

/// The most captures one call imports (the CLI sends a file in parts of fewer).
pub const MAX_IMPORT: usize = 1000;
/// The most bytes one call's body may hold: a part of up to [`MAX_IMPORT`] captures, whose
/// bodies may be up to a megabyte each (the listener's own limit).
pub const MAX_IMPORT_BYTES: usize = 64 << 20;

/// What makes two captures the same arrival (see the module's notes).
fn identity(capture: &Capture) -> Result<Vec<u8>> {
    serde_json::to_vec(&(
        capture.received_at,
        &capture.method,
        &capture.path,
        &capture.headers,
        &capture.body,
    ))
    .map_err(|error| Error::Invalid(format!("a capture that does not write as JSON: {error}")))
}

/// Adds `captures` to the workspace, skipping those already there (see the module's notes);
/// how many were added and skipped.
pub async fn import(pool: &PgPool, captures: Vec<Capture>) -> Result<ImportReport> {
    if captures.len() > MAX_IMPORT {
        return Err(Error::Invalid(format!(
            "an import takes at most {MAX_IMPORT} captures a call ({} sent): send the file in parts",
            captures.len()
        )));
    }
    let times: Vec<chrono::DateTime<chrono::Utc>> =
        captures.iter().map(|capture| capture.received_at).collect();
    let present: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT record FROM captures WHERE received_at = ANY($1)")
            .bind(&times)
            .fetch_all(pool)
            .await?;
    let mut seen = HashSet::new();
    for record in &present {
        seen.insert(identity(&crate::captures::decode(record)?)?);
    }
    let mut fresh = Vec::with_capacity(captures.len());
    let mut skipped = 0;
    for capture in captures {
        if seen.insert(identity(&capture)?) {
            fresh.push(capture);
        } else {
            skipped += 1;
        }
    }
    if !fresh.is_empty() {
        crate::capture_writer::write(pool, &mut fresh).await?;
    }
    Ok(ImportReport {
        imported: fresh.len() as u64,
        skipped,
        cancelled: false,
    })
}

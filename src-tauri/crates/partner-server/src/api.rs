//! The workspace's HTTP API (`/api/v1`): what a console joined to the workspace calls instead
//! of its own store. Every call names its member by a bearer token; every call is checked
//! against the member's role ([`crate::roles`]) before it does anything; every write, and every
//! refusal, lands in the audit log under the member's name.
//!
//! The bodies are the local console's own types (`CaptureQuery`, `CapturePage`, `Capture`,
//! `CaptureFilter`), so the CLI and the app read a workspace's answers with the code they read
//! their own store's with. Errors are `{"error": code, "message": ...}`; a refusal adds the
//! member's `role` and the role the call `needs`.

mod call;
mod evidence;
mod missed;
mod products;
mod transactions;

pub use call::{ApiError, ApiResult, Body, Caller, Workspace};

use crate::audit;
use crate::capture_pages;
use crate::captures;
use crate::error::Error;
use crate::members::{self, Member};
use crate::notes::{self, TargetKind};
use crate::roles::{Action, Role};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::Stream;
use partner_listener::{Capture, CaptureFilter, CapturePage, CaptureQuery};
use partner_workspace::CaptureFacets;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The API's routes, under `/api/v1`.
pub fn router(workspace: Arc<Workspace>) -> Router {
    Router::new()
        .route("/api/v1/me", get(me))
        .route("/api/v1/members", get(list_members).post(add_member))
        .route("/api/v1/captures/page", post(page))
        .route("/api/v1/captures/clear", post(clear))
        .route(
            "/api/v1/captures/import",
            post(import).layer(DefaultBodyLimit::max(crate::import::MAX_IMPORT_BYTES)),
        )
        .route("/api/v1/captures/walk", post(walk))
        .route("/api/v1/captures/facets", post(facets))
        .route("/api/v1/captures/live", get(live))
        .route("/api/v1/captures/{id}", get(capture))
        .route("/api/v1/captures/{id}/attempts", get(attempts))
        .route("/api/v1/captures/{id}/replay", post(replay))
        .route("/api/v1/notes", get(list_notes).post(add_note))
        .route("/api/v1/audit", get(audit_log))
        .merge(transactions::routes())
        .merge(products::routes())
        .merge(evidence::routes())
        .merge(missed::routes())
        .with_state(workspace)
}

async fn me(Caller(member): Caller) -> Json<Member> {
    Json(member)
}

async fn list_members(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
) -> ApiResult<Json<Vec<Member>>> {
    caller.may(&ws, Action::Read, "members").await?;
    Ok(Json(members::list(&ws.pool).await?))
}

#[derive(Debug, Deserialize)]
struct NewMember {
    name: String,
    role: Role,
}

#[derive(Serialize)]
struct IssuedToken {
    name: String,
    role: Role,
    token: String,
}

async fn add_member(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(new): Body<NewMember>,
) -> ApiResult<impl IntoResponse> {
    let target = format!("member {}", new.name);
    caller.may(&ws, Action::ManageMembers, &target).await?;
    let token = members::add(&ws.pool, &new.name, new.role, Some(&caller.0.name)).await?;
    caller
        .done(
            &ws,
            Action::ManageMembers,
            &target,
            &format!("added as {}", new.role),
        )
        .await?;
    // The one answer that carries a secret: the new member's token, shown to the admin once.
    Ok((
        StatusCode::CREATED,
        Json(IssuedToken {
            name: new.name.trim().to_string(),
            role: new.role,
            token: token.expose().to_string(),
        }),
    ))
}

/// A page request: the local store's query, plus a keyset cursor.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageRequest {
    #[serde(flatten)]
    query: CaptureQuery,
    #[serde(default)]
    before: Option<i64>,
}

async fn page(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<PageRequest>,
) -> ApiResult<Json<CapturePage>> {
    caller.may(&ws, Action::Read, "captures").await?;
    Ok(Json(
        capture_pages::page(&ws.pool, &request.query, request.before).await?,
    ))
}

async fn capture(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Capture>> {
    caller.may(&ws, Action::Read, "captures").await?;
    captures::get(&ws.pool, id)
        .await?
        .map(Json)
        .ok_or_else(|| Error::NotFound(format!("capture {id}")).into())
}

/// Every attempt of the notification capture `id` belongs to, first first (the inspector's
/// folded rows and its detail's Attempts).
async fn attempts(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Vec<Capture>>> {
    caller.may(&ws, Action::Read, "captures").await?;
    captures::attempts_of(&ws.pool, id)
        .await?
        .map(Json)
        .ok_or_else(|| Error::NotFound(format!("capture {id}")).into())
}

#[derive(Debug, Deserialize)]
struct FacetsRequest {
    #[serde(default)]
    filter: CaptureFilter,
}

/// The inspector filter's choices and counts ([`captures::facets`]).
async fn facets(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<FacetsRequest>,
) -> ApiResult<Json<CaptureFacets>> {
    caller.may(&ws, Action::Read, "captures").await?;
    let (facets, stored) = captures::facets(&ws.pool, &request.filter).await?;
    Ok(Json(CaptureFacets { facets, stored }))
}

/// A walk request: a filter, the last id read, how many to read.
#[derive(Debug, Deserialize)]
struct WalkRequest {
    #[serde(default)]
    filter: CaptureFilter,
    #[serde(default)]
    after: i64,
    #[serde(default = "walk_limit")]
    limit: u64,
}

fn walk_limit() -> u64 {
    500
}

/// Captures oldest first after an id (an export reads the workspace this way, page by page).
async fn walk(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<WalkRequest>,
) -> ApiResult<Json<Vec<Capture>>> {
    caller.may(&ws, Action::Read, "captures").await?;
    Ok(Json(
        captures::walk(&ws.pool, &request.filter, request.after, request.limit).await?,
    ))
}

#[derive(Debug, Deserialize)]
struct ReplayRequest {
    /// Where to send the capture again: an absolute http(s) URL (the team's app, or this
    /// workspace's own `/webhooks`).
    to: String,
    /// An edited body, sent re-signed with the subscription's current key; none: unchanged.
    #[serde(default)]
    body: Option<String>,
}

/// Sends a capture again, exactly as it arrived (hop headers aside, `Svc-Replay: 1` added), as
/// the local listener's replay does, through the same code (`partner_listener::outbound`); the
/// answer is the outbound record (status, headers, body kept, time, or the error).
async fn replay(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<i64>,
    Body(request): Body<ReplayRequest>,
) -> ApiResult<Json<partner_listener::OutboundRecord>> {
    use partner_listener::outbound;
    let target = format!("capture {id}");
    caller.may(&ws, Action::Replay, &target).await?;
    let url = outbound::parse_target(request.to.trim())
        .map_err(|error| Error::Invalid(error.to_string()))?;
    let capture = captures::get(&ws.pool, id)
        .await?
        .ok_or_else(|| Error::NotFound(format!("capture {id}")))?;
    let (headers, body) = outbound::outbound_request(
        &capture,
        partner_listener::OutboundKind::Replay,
        request.body.map(String::into_bytes),
        &ws.keys,
    )
    .map_err(|error| Error::Invalid(error.to_string()))?;
    let record = outbound::send(
        &outbound::http_client(),
        id,
        partner_listener::OutboundKind::Replay,
        &url,
        headers,
        body,
    )
    .await;
    let outcome = match (record.status, &record.error) {
        (Some(status), _) => format!("to {url}: {status}"),
        (None, Some(error)) => format!("to {url}: {error}"),
        (None, None) => format!("to {url}"),
    };
    caller.done(&ws, Action::Replay, &target, &outcome).await?;
    Ok(Json(record))
}

#[derive(Debug, Deserialize)]
struct ClearRequest {
    #[serde(default)]
    filter: CaptureFilter,
}

#[derive(Serialize)]
struct Cleared {
    cleared: u64,
}

async fn clear(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<ClearRequest>,
) -> ApiResult<Json<Cleared>> {
    caller.may(&ws, Action::Clear, "captures").await?;
    let cleared = captures::clear(&ws.pool, &request.filter).await?;
    caller
        .done(
            &ws,
            Action::Clear,
            "captures",
            &format!("{cleared} cleared"),
        )
        .await?;
    Ok(Json(Cleared { cleared }))
}

#[derive(Debug, Deserialize)]
struct ImportRequest {
    captures: Vec<Capture>,
}

/// Adds a part of an exported file's captures to the workspace's (developer and up; see
/// [`crate::import`]): how many were added, and how many skipped as already there.
async fn import(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<ImportRequest>,
) -> ApiResult<Json<partner_listener::ImportReport>> {
    caller.may(&ws, Action::Import, "captures").await?;
    let report = crate::import::import(&ws.pool, request.captures).await?;
    caller
        .done(
            &ws,
            Action::Import,
            "captures",
            &format!(
                "{} imported, {} already there",
                report.imported, report.skipped
            ),
        )
        .await?;
    Ok(Json(report))
}

#[derive(Debug, Deserialize)]
struct LiveRequest {
    /// Send captures after this id (default: only those committed from now on).
    after: Option<i64>,
}

/// The live feed: every capture committed by any server of the workspace, as Server-Sent
/// Events (`event: capture`, `id:` the capture's id, the data its JSON), in id order, from
/// `after` (default: from now). Subscribed before the catch-up is read, so nothing falls
/// between the two; a feed that lags behind the server's buffer reads the gap from the
/// database.
async fn live(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Query(request): Query<LiveRequest>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    caller.may(&ws, Action::Read, "captures").await?;
    let heard = ws.live.subscribe();
    let last = match request.after {
        Some(after) => after,
        None => captures::newest_id(&ws.pool).await?,
    };
    let feed = Feed {
        pool: ws.pool.clone(),
        heard,
        last,
        queue: VecDeque::new(),
        shutdown: ws.shutdown.clone(),
        catching_up: request.after.is_some(),
    };
    let stream = futures::stream::unfold(feed, |mut feed| async move {
        let capture = feed.next().await?;
        let event = Event::default()
            .event("capture")
            .id(capture.id.to_string())
            .json_data(&*capture)
            .unwrap_or_else(|_| Event::default().comment("unreadable capture"));
        Some((Ok(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// One console's live feed: what the server hears, after what it has sent.
struct Feed {
    pool: PgPool,
    heard: tokio::sync::broadcast::Receiver<Arc<Capture>>,
    /// The id of the last capture sent.
    last: i64,
    queue: VecDeque<Arc<Capture>>,
    shutdown: tokio_util::sync::CancellationToken,
    /// Read from the database before listening (a start `after` an id, or a lag).
    catching_up: bool,
}

impl Feed {
    /// The next capture to send; `None` when the server stops.
    async fn next(&mut self) -> Option<Arc<Capture>> {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            if let Some(capture) = self.queue.pop_front() {
                self.last = capture.id;
                return Some(capture);
            }
            if self.catching_up {
                match captures::after(&self.pool, self.last, 500).await {
                    Ok(found) if !found.is_empty() => {
                        self.queue.extend(found.into_iter().map(Arc::new));
                        continue;
                    }
                    Ok(_) => self.catching_up = false,
                    Err(error) => {
                        tracing::warn!(%error, "a live feed's catch-up");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                }
            }
            tokio::select! {
                heard = self.heard.recv() => match heard {
                    Ok(capture) if capture.id > self.last => self.queue.push_back(capture),
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => self.catching_up = true,
                    Err(RecvError::Closed) => return None,
                },
                () = self.shutdown.cancelled() => return None,
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NoteTarget {
    target_kind: TargetKind,
    target_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewNote {
    target_kind: TargetKind,
    target_id: String,
    text: String,
}

async fn list_notes(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Query(target): Query<NoteTarget>,
) -> ApiResult<Json<Vec<notes::Note>>> {
    caller.may(&ws, Action::Read, "notes").await?;
    Ok(Json(
        notes::on(&ws.pool, target.target_kind, &target.target_id).await?,
    ))
}

async fn add_note(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(new): Body<NewNote>,
) -> ApiResult<impl IntoResponse> {
    let target = format!("{} {}", new.target_kind.as_str(), new.target_id.trim());
    caller.may(&ws, Action::WriteNote, &target).await?;
    let note = notes::add(
        &ws.pool,
        new.target_kind,
        &new.target_id,
        &caller.0.name,
        &new.text,
    )
    .await?;
    caller
        .done(
            &ws,
            Action::WriteNote,
            &target,
            &format!("note {}", note.id),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(note)))
}

#[derive(Debug, Deserialize)]
struct AuditRequest {
    limit: Option<i64>,
    before: Option<i64>,
}

async fn audit_log(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Query(request): Query<AuditRequest>,
) -> ApiResult<Json<Vec<audit::AuditEntry>>> {
    caller.may(&ws, Action::Read, "audit").await?;
    Ok(Json(
        audit::list(&ws.pool, request.limit.unwrap_or(100), request.before).await?,
    ))
}

//! The workspace's HTTP API (`/api/v1`): what a console joined to the workspace calls instead
//! of its own store. Every call names its member by a bearer token; every call is checked
//! against the member's role ([`crate::roles`]) before it does anything; every write, and every
//! refusal, lands in the audit log under the member's name.
//!
//! The bodies are the local console's own types (`CaptureQuery`, `CapturePage`, `Capture`,
//! `CaptureFilter`), so the CLI and the app read a workspace's answers with the code they read
//! their own store's with. Errors are `{"error": code, "message": ...}`; a refusal adds the
//! member's `role` and the role the call `needs`.

use crate::audit::{self, Outcome};
use crate::captures;
use crate::error::Error;
use crate::failed_logins::FailedLogins;
use crate::live::Live;
use crate::members::{self, Member};
use crate::notes::{self, TargetKind};
use crate::roles::{Action, Role};
use axum::extract::{ConnectInfo, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::Stream;
use partner_listener::{Capture, CaptureFilter, CapturePage, CaptureQuery};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgPool;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// What the API's handlers share.
#[derive(Debug)]
pub struct Workspace {
    pub pool: PgPool,
    pub live: Live,
    pub failed_logins: FailedLogins,
    /// The signing keys (a replay re-signs nothing, but sends through the listener's own
    /// outbound path, which asks for them).
    pub keys: crate::signing_keys::WorkspaceKeys,
    /// Cancelled when the server stops: live feeds end, so a graceful stop does not wait on
    /// them forever.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The API's routes, under `/api/v1`.
pub fn router(workspace: Arc<Workspace>) -> Router {
    Router::new()
        .route("/api/v1/me", get(me))
        .route("/api/v1/members", get(list_members).post(add_member))
        .route("/api/v1/captures/page", post(page))
        .route("/api/v1/captures/clear", post(clear))
        .route("/api/v1/captures/walk", post(walk))
        .route("/api/v1/captures/live", get(live))
        .route("/api/v1/captures/{id}", get(capture))
        .route("/api/v1/captures/{id}/replay", post(replay))
        .route("/api/v1/notes", get(list_notes).post(add_note))
        .route("/api/v1/audit", get(audit_log))
        .with_state(workspace)
}

/// The member a call is made by (from its `Authorization: Bearer` token).
#[derive(Debug, Clone)]
pub struct Caller(pub Member);

impl FromRequestParts<Arc<Workspace>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        workspace: &Arc<Workspace>,
    ) -> Result<Self, Self::Rejection> {
        let address = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        if let Some(wait) = address.and_then(|a| workspace.failed_logins.refused(a)) {
            return Err(Error::TooManyFailedLogins(wait).into());
        }
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        let member = match token {
            Some(token) => members::by_token(&workspace.pool, token).await?,
            None => None,
        };
        match member {
            Some(member) => Ok(Caller(member)),
            None => {
                if let Some(address) = address {
                    workspace.failed_logins.failed(address);
                }
                Err(Error::Unauthorized.into())
            }
        }
    }
}

impl Caller {
    /// Refuses, and records the refusal, unless the member's role allows `action`.
    async fn may(
        &self,
        workspace: &Workspace,
        action: Action,
        target: &str,
    ) -> Result<(), ApiError> {
        if self.0.role.may(action) {
            return Ok(());
        }
        audit::record(
            &workspace.pool,
            &self.0,
            action,
            target,
            Outcome::Refused,
            "",
        )
        .await?;
        Err(Error::Forbidden {
            role: self.0.role,
            action,
        }
        .into())
    }

    /// Records a write that was done.
    async fn done(
        &self,
        workspace: &Workspace,
        action: Action,
        target: &str,
        detail: &str,
    ) -> Result<(), ApiError> {
        audit::record(
            &workspace.pool,
            &self.0,
            action,
            target,
            Outcome::Done,
            detail,
        )
        .await?;
        Ok(())
    }
}

/// An [`Error`] as an HTTP answer.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = self.0.to_string();
        let (status, code, extra) = match &self.0 {
            Error::Forbidden { role, action } => (
                StatusCode::FORBIDDEN,
                "forbidden",
                json!({"role": role, "needs": action.least_role(), "action": action}),
            ),
            Error::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized", json!({})),
            Error::TooManyFailedLogins(_) => (
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-failed-logins",
                json!({}),
            ),
            Error::Invalid(_) => (StatusCode::BAD_REQUEST, "invalid", json!({})),
            Error::NotFound(_) => (StatusCode::NOT_FOUND, "not-found", json!({})),
            Error::Database(_) | Error::Migration(_) | Error::NotInitialised => {
                tracing::error!(%message, "a workspace call failed");
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable", json!({}))
            }
            Error::ServerKey(_) | Error::Io(_) => {
                tracing::error!(%message, "a workspace call failed");
                (StatusCode::INTERNAL_SERVER_ERROR, "server", json!({}))
            }
        };
        let mut body = json!({"error": code, "message": message});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let mut response = (status, Json(body)).into_response();
        if let Error::TooManyFailedLogins(wait) = self.0 {
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"partner workspace\""),
            );
        }
        response
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// A JSON body that did not read is the caller's mistake (400 with serde's words), not ours.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: serde::de::DeserializeOwned> axum::extract::FromRequest<Arc<Workspace>> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(
        request: axum::extract::Request,
        workspace: &Arc<Workspace>,
    ) -> Result<Self, Self::Rejection> {
        Json::<T>::from_request(request, workspace)
            .await
            .map(|Json(value)| Body(value))
            .map_err(|rejection| ApiError(Error::Invalid(rejection.body_text())))
    }
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
        captures::page(&ws.pool, &request.query, request.before).await?,
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
        None,
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

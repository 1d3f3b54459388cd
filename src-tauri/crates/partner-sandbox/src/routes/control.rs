//! `/sandbox/v1/`: the sandbox's own controls (not part of the partner API).
//!
//! On a loopback address they are open unless an admin token is configured; bound anywhere
//! else the sandbox refuses to start without an admin token, and every control then needs
//! `Authorization: Bearer <admin token>` (compared in constant time).

use crate::error::HttpError;
use crate::extract::{json_body, JSON};
use crate::state::SharedState;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeDelta, Utc};
use partner_api::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The largest simulated latency: one minute.
pub const MAX_LATENCY_MILLISECONDS: u64 = 60_000;

/// The most one call may move the clock: ten years.
pub const MAX_ADVANCE_SECONDS: u64 = 10 * 365 * 24 * 3600;

pub fn router(state: SharedState) -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(advance_clock))
        .routes(routes!(set_latency))
        .routes(routes!(super::lender::create_transaction))
        .routes(routes!(super::lender::update_transaction))
        .routes(routes!(super::lender::add_event))
        .routes(routes!(super::lender::list_deliveries))
        .routes(routes!(delivery_settings))
        .routes(routes!(list_faults, add_fault, clear_faults))
        .routes(routes!(revoke_all_tokens))
        .route_layer(middleware::from_fn_with_state(state, require_admin))
}

async fn require_admin(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let Some(expected) = &state.admin_token else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let presented = crate::state::bearer_token(&parts).ok();
    if presented.is_some_and(|token| expected.ct_eq(token)) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    HttpError::new(
        ErrorCode::Forbidden,
        "the sandbox controls need `Authorization: Bearer <admin token>`",
    )
    .into_response()
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockAdvance {
    /// Seconds to move the sandbox clock forward (1 to ten years).
    #[schema(minimum = 1, maximum = 315_360_000)]
    #[serde(deserialize_with = "partner_api::integer::exact")]
    pub seconds: u64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClockState {
    /// The sandbox's time after the move.
    pub now: DateTime<Utc>,
    /// How far the sandbox clock runs ahead of real time, in seconds.
    pub offset_seconds: u64,
}

/// The sandbox's delivery rules (`partner sandbox --retry-delay`, `--attempt-timeout`; the
/// spec's 20 s, 30 s and 3 attempts unless set): how long a notification may still be on its way, for a
/// missed-notification check that must not count one in flight as missed.
#[utoipa::path(
    get,
    path = "/sandbox/v1/delivery",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(),
    responses(
        (status = 200, description = "The delivery rules in force", body = partner_api::DeliverySettings),
        (status = 400, description = "A query parameter (this endpoint takes none)", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
    )
)]
async fn delivery_settings(
    State(state): State<SharedState>,
    uri: axum::http::Uri,
) -> Result<Response, HttpError> {
    crate::extract::query_pairs(uri.query(), &[])?;
    let config = state.dispatcher.config();
    Ok(super::json(
        StatusCode::OK,
        &partner_api::DeliverySettings::new(
            config.attempt_timeout,
            config.retry_delay,
            config.max_attempts,
        ),
    ))
}

/// Add a fault on demand: the next `count` calls (or a `share` of the calls) to `endpoint` get
/// a status (with `Retry-After`), a latency, or a dropped connection instead of the answer.
#[utoipa::path(
    post,
    path = "/sandbox/v1/faults",
    tag = "sandbox",
    security((), ("admin" = [])),
    request_body(content = crate::faults::NewFault, content_type = "application/json"),
    responses(
        (status = 201, description = "The fault, in force from the next call", body = crate::faults::Fault),
        (status = 400, description = "A fault that cannot be: each problem in words", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
async fn add_fault(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let wanted: crate::faults::NewFault = json_body(&headers, &body, &[JSON])?;
    let added = state.faults.add(wanted).map_err(HttpError::invalid)?;
    tracing::info!(fault = added.id, endpoint = ?added.fault.endpoint, "a fault on demand added");
    Ok(super::json(StatusCode::CREATED, &added))
}

/// The faults in force, oldest first, each with how many calls it has faulted.
#[utoipa::path(
    get,
    path = "/sandbox/v1/faults",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(),
    responses(
        (status = 200, description = "The faults in force", body = Vec<crate::faults::Fault>),
        (status = 400, description = "A query parameter (this endpoint takes none)", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
    )
)]
async fn list_faults(
    State(state): State<SharedState>,
    uri: axum::http::Uri,
) -> Result<Response, HttpError> {
    crate::extract::query_pairs(uri.query(), &[])?;
    Ok(super::json(StatusCode::OK, &state.faults.all()))
}

/// End every fault.
#[utoipa::path(
    delete,
    path = "/sandbox/v1/faults",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(),
    responses(
        (status = 200, description = "How many faults were ended", body = Cleared),
        (status = 400, description = "A query parameter (this endpoint takes none)", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
    )
)]
async fn clear_faults(
    State(state): State<SharedState>,
    uri: axum::http::Uri,
) -> Result<Response, HttpError> {
    crate::extract::query_pairs(uri.query(), &[])?;
    let cleared = state.faults.clear();
    tracing::info!(cleared, "faults on demand cleared");
    Ok(super::json(StatusCode::OK, &Cleared { cleared }))
}

/// How many of something a control ended.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Cleared {
    pub cleared: usize,
}

/// Revoke every token of every client now: each client's next call is refused and it must
/// get a new token, as after the service rotated its keys.
#[utoipa::path(
    post,
    path = "/sandbox/v1/tokens/revoke",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(),
    responses(
        (status = 200, description = "How many live tokens were revoked", body = Cleared),
        (status = 400, description = "A query parameter (this endpoint takes none)", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
    )
)]
async fn revoke_all_tokens(
    State(state): State<SharedState>,
    uri: axum::http::Uri,
) -> Result<Response, HttpError> {
    crate::extract::query_pairs(uri.query(), &[])?;
    let cleared = state.tokens.revoke_all();
    tracing::info!(revoked = cleared, "every token revoked on demand");
    Ok(super::json(StatusCode::OK, &Cleared { cleared }))
}

/// Move the sandbox clock forward: tokens expire and due delivery retries fire as if the
/// time had passed.
#[utoipa::path(
    post,
    path = "/sandbox/v1/clock/advance",
    tag = "sandbox",
    security((), ("admin" = [])),
    request_body(content = ClockAdvance, content_type = "application/json"),
    responses(
        (status = 200, description = "The clock after the move", body = ClockState),
        (status = 400, description = "seconds missing, not a positive integer, or too large", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
async fn advance_clock(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let advance: ClockAdvance = json_body(&headers, &body, &[JSON])?;
    if advance.seconds == 0 || advance.seconds > MAX_ADVANCE_SECONDS {
        return Err(HttpError::invalid(format!(
            "seconds must be between 1 and {MAX_ADVANCE_SECONDS}"
        )));
    }
    state.journal.check_writable()?;
    state.clock.advance(Duration::from_secs(advance.seconds));
    let offset_ms = state.clock.offset_ms();
    // The stored offset only grows (MAX in SQL), so concurrent advances cannot go back.
    state
        .journal
        .submit(|| Ok(vec![crate::data_file::Row::ClockOffset(offset_ms)]))
        .durable()
        .await?;
    tracing::info!(seconds = advance.seconds, "sandbox clock advanced");
    let now = state.clock.now();
    let offset = TimeDelta::from_std(state.clock.offset()).unwrap_or(TimeDelta::MAX);
    Ok(super::json(
        StatusCode::OK,
        &ClockState {
            now,
            offset_seconds: offset.num_seconds().max(0) as u64,
        },
    ))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatedLatency {
    /// Milliseconds every partner API request waits before it is handled (0 to 60,000; 0 is
    /// no delay).
    #[schema(minimum = 0, maximum = 60_000)]
    #[serde(deserialize_with = "partner_api::integer::exact")]
    pub milliseconds: u64,
}

/// Simulate a slow network: every partner API request (OAuth, products, transactions) waits
/// this long before it is handled, so progress, cancel and timeout paths of a client can be
/// watched. The `/sandbox/v1/` controls are never delayed.
#[utoipa::path(
    post,
    path = "/sandbox/v1/latency",
    tag = "sandbox",
    security((), ("admin" = [])),
    request_body(content = SimulatedLatency, content_type = "application/json"),
    responses(
        (status = 200, description = "The latency now in force", body = SimulatedLatency),
        (status = 400, description = "milliseconds missing, not a whole number, or over 60,000", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
async fn set_latency(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let wanted: SimulatedLatency = json_body(&headers, &body, &[JSON])?;
    if wanted.milliseconds > MAX_LATENCY_MILLISECONDS {
        return Err(HttpError::invalid(format!(
            "milliseconds must be between 0 and {MAX_LATENCY_MILLISECONDS}"
        )));
    }
    state
        .latency
        .set(Duration::from_millis(wanted.milliseconds));
    tracing::info!(milliseconds = wanted.milliseconds, "sandbox latency set");
    Ok(super::json(StatusCode::OK, &wanted))
}

//! The shared state every handler sees, and the router with its layers.
//!
//! Routes are registered through `utoipa-axum`, so a handler and its OpenAPI operation are
//! one declaration and the document cannot name a route the router lacks; a test still
//! compares them from the outside (paths, methods, statuses).

use crate::clock::Clock;
use crate::data_file::Journal;
use crate::dispatch::Dispatcher;
use crate::error::{normalise_errors, panic_response, HttpError};
use crate::routes;
use crate::store::{SortCache, Store};
use crate::tokens::{Caller, TokenRefusal, Tokens};
use axum::extract::{DefaultBodyLimit, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue};
use axum::middleware;
use axum::response::IntoResponse;
use axum::Router;
use partner_api::{ErrorCode, Secret};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub type SharedState = Arc<AppState>;

#[derive(Debug)]
pub struct AppState {
    pub clock: Clock,
    pub tokens: Tokens,
    store: RwLock<Store>,
    sort_cache: Mutex<SortCache>,
    /// Base URL of `resourceRef`s in notifications.
    pub public_url: String,
    pub allow_http_callbacks: bool,
    /// Required on `/sandbox/v1/` when set.
    pub admin_token: Option<Secret>,
    pub dispatcher: Dispatcher,
    /// The data file's write-through (a no-op in memory): every write is answered only once
    /// its ticket is durable.
    pub journal: Journal,
    /// The simulated network latency of the partner API (`POST /sandbox/v1/latency`).
    pub latency: Latency,
}

/// A delay added before every partner API request (OAuth, products, transactions), so a
/// client's progress, cancel and timeout paths can be watched against a local sandbox that
/// otherwise answers in microseconds. Zero (the default) adds nothing; `/sandbox/v1/` controls
/// and `/openapi.json` are never delayed.
#[derive(Debug, Default)]
pub struct Latency(AtomicU64);

impl Latency {
    pub fn get(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::Relaxed))
    }

    pub fn set(&self, latency: Duration) {
        let millis = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
        self.0.store(millis, Ordering::Relaxed);
    }
}

/// Waits the simulated latency, then passes the request on.
async fn simulated_latency(
    axum::extract::State(state): axum::extract::State<SharedState>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let latency = state.latency.get();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    next.run(request).await
}

impl AppState {
    pub fn new(
        clock: Clock,
        tokens: Tokens,
        store: Store,
        public_url: String,
        allow_http_callbacks: bool,
        admin_token: Option<Secret>,
        dispatcher: Dispatcher,
    ) -> Self {
        Self {
            clock,
            tokens,
            store: RwLock::new(store),
            sort_cache: Mutex::new(SortCache::default()),
            public_url,
            allow_http_callbacks,
            admin_token,
            dispatcher,
            journal: Journal::none(),
            latency: Latency::default(),
        }
    }

    /// Writes every change through `journal` (the persistent mode).
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    // Every write to the store is checked before it changes anything, so a panic (which the
    // server catches) cannot leave it half-written: a poisoned lock is still safe to read.
    pub fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn sort_cache(&self) -> MutexGuard<'_, SortCache> {
        self.sort_cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bearer-authenticated API call: the token is checked and its idle window restarted.
impl FromRequestParts<SharedState> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &SharedState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        state.tokens.use_token(token).map_err(|refusal| {
            tracing::debug!(?refusal, "bearer token refused");
            match refusal {
                TokenRefusal::Expired => {
                    HttpError::unauthorized("the access token has expired; request a new one")
                }
                TokenRefusal::Unknown => {
                    HttpError::unauthorized("the access token is not valid (unknown or revoked)")
                }
            }
        })
    }
}

pub fn bearer_token(parts: &Parts) -> Result<&str, HttpError> {
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return Err(HttpError::unauthorized(
            "this endpoint needs `Authorization: Bearer <access token>`",
        ));
    };
    let value = value
        .to_str()
        .map_err(|_| HttpError::unauthorized("the Authorization header is not readable text"))?;
    match value.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim())
        }
        _ => Err(HttpError::unauthorized(
            "the Authorization header must be `Bearer <access token>`",
        )),
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Partner API (sandbox)",
        description = "The partner API service of the spec, run locally, with the sandbox's lender side and controls under /sandbox/v1/."
    ),
    components(schemas(
        partner_api::ApiError,
        partner_api::WebhookSubscriptionInput,
        partner_api::CredentialDefinition
    )),
    modifiers(&SecuritySchemes),
)]
struct ApiDoc;

struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "basic",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Basic).build()),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "admin",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The documented routes and their OpenAPI document.
pub fn api(state: SharedState) -> (Router<SharedState>, utoipa::openapi::OpenApi) {
    let partner_api = OpenApiRouter::new()
        .merge(routes::oauth::router())
        .merge(routes::products::router())
        .merge(routes::transactions::router())
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            simulated_latency,
        ));
    let router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(partner_api)
        .merge(routes::control::router(state));
    router.split_for_parts()
}

/// The document as JSON. utoipa 5 writes a Link object's fields in snake case
/// (`operation_id`, `request_body`); OpenAPI names them `operationId`, `requestBody`, and tools
/// ignore links without them, so they are renamed here.
pub fn document_json(doc: &utoipa::openapi::OpenApi) -> String {
    let Ok(mut value) = serde_json::to_value(doc) else {
        return "{}".into();
    };
    rename_link_fields(&mut value);
    serde_json::to_string(&value).unwrap_or_else(|_| "{}".into())
}

fn rename_link_fields(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(links)) = map.get_mut("links") {
                for link in links.values_mut() {
                    let serde_json::Value::Object(link) = link else {
                        continue;
                    };
                    for (snake, camel) in [
                        ("operation_id", "operationId"),
                        ("operation_ref", "operationRef"),
                        ("request_body", "requestBody"),
                    ] {
                        if let Some(field) = link.remove(snake) {
                            link.insert(camel.into(), field);
                        }
                    }
                }
            }
            map.values_mut().for_each(rename_link_fields);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(rename_link_fields),
        _ => {}
    }
}

/// The whole service: documented routes, `/openapi.json`, and the layers every response
/// passes through (body limit and timeout, panic catcher, error normaliser, tracing).
pub fn router(state: SharedState, body_limit: usize, body_timeout: Duration) -> Router {
    let (api, doc) = api(state.clone());
    let body: Arc<str> = document_json(&doc).into();
    api.route(
        "/openapi.json",
        axum::routing::get(move || {
            let body = body.clone();
            async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    body.to_string(),
                )
                    .into_response()
            }
        }),
    )
    .fallback(|| async {
        HttpError::new(ErrorCode::NotFound, "no such endpoint")
            .with_details("see /openapi.json for the endpoints this service has")
    })
    .with_state(state)
    .layer(DefaultBodyLimit::max(body_limit))
    .layer(RequestBodyTimeoutLayer::new(body_timeout))
    .layer(middleware::map_response(normalise_errors))
    .layer(CatchPanicLayer::custom(panic_response))
    .layer(TraceLayer::new_for_http())
}

//! The router with its layers, and the OpenAPI document built from the same routes. (The
//! state every handler sees is in `state`, below the routes.)
//!
//! Routes are registered through `utoipa-axum`, so a handler and its OpenAPI operation are
//! one declaration and the document cannot name a route the router lacks; a test still
//! compares them from the outside (paths, methods, statuses).

use crate::error::{normalise_errors, panic_response, HttpError};
use crate::routes;
use crate::state::SharedState;
use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderValue};
use axum::middleware;
use axum::response::IntoResponse;
use axum::Router;
use partner_api::ErrorCode;
use std::sync::Arc;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// Waits the simulated latency, then applies a fault on demand if one bites (its latency, then
/// its status or a dropped connection), else passes the request on.
async fn simulated_latency(
    axum::extract::State(state): axum::extract::State<SharedState>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let latency = state.latency.get();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let Some(fault) = state.faults.take(request.uri().path()) else {
        return next.run(request).await;
    };
    tracing::info!(
        fault = fault.id,
        path = request.uri().path(),
        "a fault on demand"
    );
    if let Some(latency) = fault.latency {
        tokio::time::sleep(latency).await;
    }
    if fault.drop {
        return dropped_connection();
    }
    match fault.status {
        Some(status) => faulted(status, fault.retry_after_seconds),
        None => next.run(request).await,
    }
}

/// The answer of a fault with `status`: the service's error body, and `Retry-After` when set.
fn faulted(status: u16, retry_after_seconds: Option<u64>) -> axum::response::Response {
    let code = ErrorCode::from_status(status);
    let error = crate::error::HttpError::new(
        code,
        format!("a fault on demand of the sandbox answered {status}"),
    );
    let mut response = error.into_response();
    *response.status_mut() = axum::http::StatusCode::from_u16(status)
        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(seconds) = retry_after_seconds {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// A response whose body fails before its first byte: hyper closes the connection without an
/// answer, as a reset or a crashed gateway would.
fn dropped_connection() -> axum::response::Response {
    let failing = futures::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::other("a dropped connection on demand"))
    });
    axum::response::Response::new(axum::body::Body::from_stream(failing))
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

//! The sandbox's two kinds of failure: starting it ([`Error`]) and answering a request
//! ([`HttpError`], which is always a `partner_api::ApiError` body with its status).
//!
//! Every response that is not a success leaves the server as an `ApiError` body: handlers
//! return [`HttpError`], and [`normalise_errors`] rewrites whatever axum or tower produce on
//! their own (unknown route, wrong method, a body over the limit, a bad path segment) into the
//! same shape, so a client never has to parse two kinds of error.

use axum::body::{to_bytes, Body};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use partner_api::{ApiError, ErrorCode};

/// Why a sandbox could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not read the listener's address: {0}")]
    Listener(#[source] std::io::Error),
    #[error(
        "an admin token is required when the sandbox is bound to a non-loopback address ({0})"
    )]
    AdminTokenRequired(std::net::SocketAddr),
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The data file of the persistent mode cannot be used; it is left as it was.
    #[error("the sandbox data file {} cannot be used: {problem}", path.display())]
    DataFile {
        path: std::path::PathBuf,
        problem: String,
    },
    /// The data file does not open with the data key it was given (another key encrypted it,
    /// or it is not a sandbox data file); it is left as it was. Names the key by its
    /// fingerprint alone.
    #[error(
        "the sandbox data file {} does not open with the data key {fingerprint}: another key \
         encrypted it, or it is not a sandbox data file (corrupt, or some other kind of file); \
         it was left as it is",
        path.display()
    )]
    DataFileKey {
        path: std::path::PathBuf,
        fingerprint: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error answer: the field notes' body with the status its code stands for.
#[derive(Debug)]
pub struct HttpError(pub ApiError);

impl HttpError {
    pub fn new(code: ErrorCode, summary: impl Into<String>) -> Self {
        Self(ApiError::new(code, summary))
    }

    pub fn invalid(summary: impl Into<String>) -> Self {
        Self(ApiError::invalid(summary))
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn conflict(summary: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, summary)
    }

    pub fn unauthorized(summary: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, summary)
    }

    pub fn with_details(self, details: impl Into<String>) -> Self {
        Self(self.0.with_details(details))
    }
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        error_response(&self.0)
    }
}

pub(crate) fn error_response(error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(error).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::UNAUTHORIZED
        && !response.headers().contains_key(header::WWW_AUTHENTICATE)
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// Rewrites an error response that is not already JSON (axum's own rejections and fallbacks)
/// into an `ApiError` body, keeping the status and headers such as `Allow`.
pub(crate) async fn normalise_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = to_bytes(body, 16 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let code = ErrorCode::from_status(status.as_u16());
    let summary = match status {
        StatusCode::NOT_FOUND => "no such resource or endpoint",
        StatusCode::METHOD_NOT_ALLOWED => "this endpoint does not accept that method",
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "the request body has the wrong content type",
        _ if status.is_server_error() => "the sandbox failed to answer",
        _ => "the request could not be accepted",
    };
    let mut error = ApiError::new(code, summary);
    if !text.is_empty() && !status.is_server_error() {
        error = error.with_details(text);
    }
    let body = serde_json::to_vec(&error).unwrap_or_else(|_| b"{}".to_vec());
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The answer to a handler that panicked: a 500 body, never the panic's text.
pub(crate) fn panic_response(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    error_response(&ApiError::new(
        ErrorCode::Internal,
        "the sandbox failed to answer this request",
    ))
}

//! The HTTP handlers, one module per part of the service. Handlers are thin: they read the
//! request (with `extract`), call the store or the token table, and shape the answer.

pub mod control;
pub mod lender;
pub mod oauth;
pub mod products;
pub mod transactions;

use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Header of the list endpoints: how many items match in all.
pub const TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

/// A JSON answer from already-serialised bytes.
pub fn json_bytes(status: axum::http::StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// A JSON answer; serialising our own types cannot fail, but if it did the client gets a 500
/// body rather than a dropped connection.
pub fn json<T: Serialize>(status: axum::http::StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => json_bytes(status, body),
        Err(_) => crate::error::HttpError::new(
            partner_api::ErrorCode::Internal,
            "the answer could not be written",
        )
        .into_response(),
    }
}

/// A page of a list: the items as a JSON array and `X-Total-Count`.
pub fn page<T: Serialize>(items: &[T], total: usize) -> Response {
    let mut response = json(axum::http::StatusCode::OK, &items);
    response
        .headers_mut()
        .insert(TOTAL_COUNT, HeaderValue::from(total as u64));
    response
}

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

/// The query of a list endpoint over items of type `T`, as the document states it: the rules
/// come from partner-api (`start`, `limit` up to 50, `sort` over `T::SORT_KEYS`), and the
/// handlers parse the query with the same rules (`extract::ListQuery`).
pub struct ListParams<T>(std::marker::PhantomData<T>);

impl<T: partner_api::Sortable> utoipa::IntoParams for ListParams<T> {
    fn into_params(
        _parameter_in_provider: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use partner_api::openapi::{list_limit, list_sort, list_start};
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::Required;
        let query = |name: &str, description: &str, schema: utoipa::openapi::schema::Object| {
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(description))
                .schema(Some(schema))
                .build()
        };
        vec![
            query(
                "start",
                "Index of the first item; default 0; it may not exceed X-Total-Count (a 400 says so)",
                list_start(),
            ),
            query("limit", "Items per page; default 25; at most 50", list_limit()),
            query(
                "sort",
                "Comma-separated sortable keys, each at most once, `-` before a key for descending",
                list_sort(T::SORT_KEYS),
            ),
        ]
    }
}

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

/// A page of a list from items already serialised: `[a,b,…]` and `X-Total-Count`.
pub fn page_of_json<'a>(items: impl Iterator<Item = &'a [u8]>, total: usize) -> Response {
    let mut body = Vec::with_capacity(64 * 1024);
    body.push(b'[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.push(b']');
    let mut response = json_bytes(axum::http::StatusCode::OK, body);
    response
        .headers_mut()
        .insert(TOTAL_COUNT, HeaderValue::from(total as u64));
    response
}

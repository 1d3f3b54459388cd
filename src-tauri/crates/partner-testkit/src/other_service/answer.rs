//! How the other service answers: JSON in the dialect's encoding (compressed, chunked), API
//! errors in the dialect's shape, OAuth 2.0 errors on the token endpoints, and the request id
//! every answer carries.

use super::dialect::{Compression, ErrorShape};
use super::state::Shared;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::io::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A JSON answer in the dialect's encoding (compressed when the request accepts it, chunked
/// when asked).
pub(super) fn answer(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    content_type: &str,
    body: Vec<u8>,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let mut body = body;
    let mut builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type);
    if let Some(compression) = shared.dialect.compression {
        let accepted = request
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(',')
                    .any(|part| part.split(';').next().unwrap_or("").trim() == compression.token())
            });
        if accepted && !body.is_empty() {
            body = compress(compression, &body);
            builder = builder.header(header::CONTENT_ENCODING, compression.token());
        }
    }
    for (name, value) in extra {
        builder = builder.header(name, value);
    }
    let body = if shared.dialect.chunked && body.len() > 1 {
        let chunks: Vec<Result<Bytes, std::io::Error>> = body
            .chunks(97)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        Body::from_stream(futures::stream::iter(chunks))
    } else {
        Body::from(body)
    };
    builder.body(body).unwrap_or_else(|_| {
        let mut fallback = Response::new(Body::empty());
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

pub(super) fn compress(compression: Compression, body: &[u8]) -> Vec<u8> {
    let written = match compression {
        Compression::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(body).and_then(|_| encoder.finish())
        }
        Compression::Deflate => {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(body).and_then(|_| encoder.finish())
        }
        Compression::Brotli => {
            let mut out = Vec::new();
            {
                let mut encoder = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                let _ = encoder.write_all(body);
            }
            Ok(out)
        }
    };
    written.unwrap_or_default()
}

pub(super) fn json_answer(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    value: &Value,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    answer(shared, request, status, "application/json", body, extra)
}

/// An API error in the dialect's shape.
pub(super) fn api_error(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    title: &str,
    detail: &str,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let (content_type, body) = match shared.dialect.errors {
        ErrorShape::Problem => (
            "application/problem+json",
            serde_json::to_vec(&json!({
                "type": "about:blank",
                "title": title,
                "detail": detail,
                "status": status.as_u16(),
            }))
            .unwrap_or_default(),
        ),
        ErrorShape::Message => (
            "application/json",
            serde_json::to_vec(&json!({"message": format!("{title}: {detail}")}))
                .unwrap_or_default(),
        ),
        ErrorShape::Errors => (
            "application/json",
            serde_json::to_vec(&json!({"errors": [title, {"message": detail, "code": "E-1"}]}))
                .unwrap_or_default(),
        ),
        ErrorShape::PlainText => (
            "text/plain; charset=utf-8",
            format!("{title}: {detail}\n").into_bytes(),
        ),
        ErrorShape::Html => (
            "text/html",
            format!(
                "<!DOCTYPE html>\n<html><head><title>{} {title}</title>\n<style>body{{font-family:sans-serif}}</style></head>\n<body><h1>{title}</h1><p>{detail}</p><hr><address>other-gateway/2.4</address></body></html>",
                status.as_u16()
            )
            .into_bytes(),
        ),
        ErrorShape::Empty => ("application/json", Vec::new()),
    };
    answer(shared, request, status, content_type, body, extra)
}

/// An OAuth 2.0 error (RFC 6749 section 5.2), as token endpoints answer.
pub(super) fn oauth_error(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    error: &str,
    description: &str,
) -> Response {
    let extra = if status == StatusCode::UNAUTHORIZED {
        vec![(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"oauth2\"".to_string(),
        )]
    } else {
        vec![]
    };
    json_answer(
        shared,
        request,
        status,
        &json!({"error": error, "error_description": description}),
        &extra,
    )
}

pub(super) async fn not_found(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    api_error(
        &shared,
        &headers,
        StatusCode::NOT_FOUND,
        "Not Found",
        "no such resource",
        &[],
    )
}

pub(super) fn missing(shared: &Shared, headers: &HeaderMap, what: &str) -> Response {
    api_error(
        shared,
        headers,
        StatusCode::NOT_FOUND,
        "Not Found",
        &format!("no {what} with that id"),
        &[],
    )
}

/// The request id of every answer: `other-` and the answer's number.
pub(super) async fn with_request_id(
    State(shared): State<Arc<Shared>>,
    mut response: Response,
) -> Response {
    let n = shared.answers.fetch_add(1, Ordering::SeqCst) + 1;
    let name = if shared.dialect.extra {
        "request-id"
    } else {
        "x-request-id"
    };
    if let Ok(value) = header::HeaderValue::from_str(&format!("other-{n:06}")) {
        response.headers_mut().insert(name, value);
    }
    response
}

//! The token endpoints (issue, introspect, revoke), from the spec's words: Basic auth of the
//! client, `client_credentials` with the scope `pc pcapi`, and the dialect's token answers.

use super::answer::{json_answer, oauth_error};
use super::state::{IssuedToken, Shared, IDLE_MINUTES, MAX_MINUTES, PARTNER_ID};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use chrono::{Duration as TimeDelta, Utc};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

pub(super) fn basic_client(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some((id.to_owned(), secret.to_owned()))
}

pub(super) fn form(body: &Bytes) -> HashMap<String, String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .unwrap_or_default()
        .into_iter()
        .collect()
}

pub(super) fn authenticated_client(shared: &Shared, headers: &HeaderMap) -> bool {
    basic_client(headers)
        .is_some_and(|(id, secret)| id == shared.client_id && secret == shared.client_secret)
}

pub(super) async fn issue(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only client_credentials is supported",
        );
    }
    let scope_ok = form.get("scope").is_some_and(|s| {
        let mut words: Vec<&str> = s.split_whitespace().collect();
        words.sort_unstable();
        words.dedup();
        words == ["pc", "pcapi"]
    });
    if !scope_ok {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "The scope must be `pc pcapi`",
        );
    }
    let token = format!(
        "oth.{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let now = Utc::now();
    shared.lock().tokens.insert(
        token.clone(),
        IssuedToken {
            issued: now,
            last_used: now,
            revoked: false,
        },
    );
    let mut body = Map::new();
    body.insert("access_token".into(), json!(token));
    body.insert("token_type".into(), json!("Bearer"));
    if shared.dialect.extra {
        // Any value: here a string, and longer than the idle window.
        body.insert("expires_in".into(), json!("7200"));
        body.insert(
            "issued_token_type".into(),
            json!("urn:ietf:params:oauth:token-type:access_token"),
        );
    } else if !shared.dialect.minimal {
        body.insert("expires_in".into(), json!(3600));
    }
    json_answer(
        &shared,
        &headers,
        StatusCode::CREATED,
        &Value::Object(body),
        &[],
    )
}

pub(super) async fn introspect(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    let Some(token) = form.get("token") else {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The token parameter is missing",
        );
    };
    let now = Utc::now();
    let data = shared.lock();
    if !data.active(token, now) {
        drop(data);
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_token",
            "The token is not active",
        );
    }
    let exp = data
        .tokens
        .get(token)
        .map(|t| {
            (t.last_used + TimeDelta::minutes(IDLE_MINUTES))
                .min(t.issued + TimeDelta::minutes(MAX_MINUTES))
        })
        .unwrap_or(now);
    drop(data);
    let body = if shared.dialect.minimal {
        json!({"active": true, "client_id": shared.client_id})
    } else if shared.dialect.extra {
        json!({"active": true, "scope": "pc pcapi", "client_id": shared.client_id,
               "token_type": "Bearer", "exp": exp.timestamp().to_string(), "environment": "prod",
               "identity_type": "Partner", "encompass_client_id": PARTNER_ID,
               "iat": now.timestamp(), "sub": PARTNER_ID})
    } else {
        json!({"active": true, "scope": "pc pcapi", "client_id": shared.client_id,
               "token_type": "Bearer", "exp": exp.timestamp(), "environment": "sandbox",
               "identity_type": "Partner", "encompass_client_id": PARTNER_ID})
    };
    json_answer(&shared, &headers, StatusCode::OK, &body, &[])
}

pub(super) async fn revoke(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    let Some(token) = form.get("token") else {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The token parameter is missing",
        );
    };
    let mut data = shared.lock();
    match data.tokens.get_mut(token) {
        Some(issued) if !issued.revoked => {
            issued.revoked = true;
            drop(data);
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Body::empty())
                .unwrap_or_default()
        }
        _ => {
            drop(data);
            oauth_error(
                &shared,
                &headers,
                StatusCode::BAD_REQUEST,
                "invalid_token",
                "The token is not active",
            )
        }
    }
}

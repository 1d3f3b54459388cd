//! What every partner API call passes first: the dialect's rate limit (a 429 or 503 with
//! `Retry-After`), then an active bearer token, whose idle time it renews.

use super::answer::api_error;
use super::dialect::RetryAfter;
use super::state::Shared;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use chrono::{Duration as TimeDelta, Utc};
use std::sync::atomic::Ordering;

/// The checks every partner API call starts with: the rate limit, then the bearer token.
pub(super) fn admit(shared: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let call = shared.calls.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(limit) = shared.dialect.rate_limit {
        if limit.every > 0 && call.is_multiple_of(limit.every) {
            let after = match limit.retry_after {
                RetryAfter::Seconds(s) => s.to_string(),
                RetryAfter::HttpDate(s) => (Utc::now() + TimeDelta::seconds(s as i64))
                    .format("%a, %d %b %Y %H:%M:%S GMT")
                    .to_string(),
            };
            let status =
                StatusCode::from_u16(limit.status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
            return Err(api_error(
                shared,
                headers,
                status,
                "Too Many Requests",
                "rate limit of the partner environment exceeded",
                &[(header::RETRY_AFTER, after)],
            ));
        }
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let now = Utc::now();
    let mut data = shared.lock();
    match token {
        Some(token) if data.active(token, now) => {
            if let Some(issued) = data.tokens.get_mut(token) {
                issued.last_used = now;
            }
            Ok(())
        }
        _ => {
            drop(data);
            Err(api_error(
                shared,
                headers,
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                "the access token is missing, expired or revoked",
                &[(
                    header::WWW_AUTHENTICATE,
                    "Bearer error=\"invalid_token\"".into(),
                )],
            ))
        }
    }
}

//! The error body every endpoint answers with, and the one table from error kind to status.
//!
//! The spec leaves the body open; the field notes settle it as `{errorCode, summary, details}`.
//! Callers branch on [`ErrorCode`], never on message text, and no message ever holds a secret:
//! the constructors take only text the server wrote.

use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A parameter or body the service cannot accept (400).
    InvalidRequest,
    /// No, bad, expired or revoked token; bad client credentials (401).
    Unauthorized,
    /// A sandbox control called without the admin token (403).
    Forbidden,
    NotFound,
    MethodNotAllowed,
    /// A duplicate name, or a change to a locked transaction (409).
    Conflict,
    PayloadTooLarge,
    UnsupportedMediaType,
    RateLimited,
    /// The service failed; never the client's mistake (500).
    Internal,
}

impl ErrorCode {
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::InvalidRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::Conflict => 409,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::RateLimited => 429,
            ErrorCode::Internal => 500,
        }
    }

    /// The code a status stands for, for bodies that arrive without one.
    pub fn from_status(status: u16) -> Self {
        match status {
            401 => ErrorCode::Unauthorized,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            405 => ErrorCode::MethodNotAllowed,
            409 => ErrorCode::Conflict,
            413 => ErrorCode::PayloadTooLarge,
            415 => ErrorCode::UnsupportedMediaType,
            429 => ErrorCode::RateLimited,
            400..=499 => ErrorCode::InvalidRequest,
            _ => ErrorCode::Internal,
        }
    }
}

/// `{"errorCode": "...", "summary": "...", "details": "..."}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub error_code: ErrorCode,
    /// One line a person can act on.
    pub summary: String,
    /// What exactly was wrong (the parameter, the rule), or empty.
    #[serde(default)]
    pub details: String,
}

impl ApiError {
    pub fn new(error_code: ErrorCode, summary: impl Into<String>) -> Self {
        Self {
            error_code,
            summary: summary.into(),
            details: String::new(),
        }
    }

    pub fn with_details(mut self, details: impl Into<String>) -> Self {
        self.details = details.into();
        self
    }

    pub fn invalid(summary: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, summary)
    }

    pub fn status(&self) -> u16 {
        self.error_code.status()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.details.is_empty() {
            write!(f, "{}", self.summary)
        } else {
            write!(f, "{}: {}", self.summary, self.details)
        }
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_uses_the_field_notes_names() {
        let body = ApiError::invalid("limit is too large").with_details("limit must be at most 50");
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["errorCode"], "invalid_request");
        assert_eq!(json["summary"], "limit is too large");
        assert_eq!(json["details"], "limit must be at most 50");
        assert_eq!(body.status(), 400);
    }

    #[test]
    fn statuses_round_trip() {
        for code in [
            ErrorCode::InvalidRequest,
            ErrorCode::Unauthorized,
            ErrorCode::NotFound,
            ErrorCode::Conflict,
            ErrorCode::PayloadTooLarge,
            ErrorCode::UnsupportedMediaType,
            ErrorCode::RateLimited,
        ] {
            assert_eq!(ErrorCode::from_status(code.status()), code);
        }
    }
}

//! What a screen's form fields mean, the same on every screen: a blank field is no restriction,
//! and a time is an RFC 3339 instant or the user's mistake, said in words.
use crate::error::{AppError, Result};
use chrono::{DateTime, Utc};

/// The field trimmed, or none when it is blank.
pub fn trimmed(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The field as an instant, none when blank; `what` names the field in the error.
pub fn instant(value: &Option<String>, what: &str) -> Result<Option<DateTime<Utc>>> {
    match trimmed(value) {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(&text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| {
                AppError::invalid(format!(
                    "The {what} time {text:?} is not a date and time (RFC 3339, e.g. 2026-11-24T09:30:00Z)."
                ))
            }),
    }
}

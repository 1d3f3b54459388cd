//! Reading requests: JSON and form bodies, list queries, with every failure a 4xx in words.
//!
//! Handlers take the raw `Bytes` (so the body limit applies) and the headers, and call these
//! functions rather than axum's `Json`/`Form`/`Query` extractors: those answer in plain text
//! and can quote input back. Here a JSON body is first parsed as a value, and only then
//! decoded into its type, so an error message can be scrubbed of every signing key the body
//! carried before it is sent back.

use crate::error::HttpError;
use axum::http::{header, HeaderMap};
use partner_api::{ErrorCode, ListRuleError, PageParams, SortSpec};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub const JSON: &str = "application/json";
pub const MERGE_PATCH_JSON: &str = "application/merge-patch+json";
pub const FORM: &str = "application/x-www-form-urlencoded";

/// Field names whose values are secrets wherever they appear in a body.
const SECRET_FIELDS: &[&str] = &["signingkey", "client_secret", "token", "access_token"];

/// The media type of the body (`Content-Type` without parameters), lower case.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let raw = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let media = raw.split(';').next().unwrap_or_default().trim();
    Some(media.to_ascii_lowercase())
}

/// Requires one of the `accepted` content types.
pub fn require_content_type(headers: &HeaderMap, accepted: &[&str]) -> Result<(), HttpError> {
    match media_type(headers) {
        Some(media) if accepted.contains(&media.as_str()) => Ok(()),
        found => Err(HttpError::new(
            ErrorCode::UnsupportedMediaType,
            format!("the body must be sent as {}", accepted.join(" or ")),
        )
        .with_details(match found {
            Some(media) => format!("Content-Type was `{}`", printable(&media)),
            None => "Content-Type was missing".to_string(),
        })),
    }
}

/// Parses a JSON body of one of the `accepted` content types into a value.
pub fn json_value(headers: &HeaderMap, body: &[u8], accepted: &[&str]) -> Result<Value, HttpError> {
    require_content_type(headers, accepted)?;
    if body.is_empty() {
        return Err(HttpError::invalid("the request needs a JSON body"));
    }
    // serde_json's syntax errors name a line and column, never the text.
    serde_json::from_slice(body)
        .map_err(|e| HttpError::invalid("the body is not valid JSON").with_details(e.to_string()))
}

/// Decodes a JSON object into `T`; the error names the problem with every secret of the body
/// scrubbed from it. Every body of this API is an object: serde would also fill a struct from
/// an array of its fields in order (`[{}, {}]` as `{"loan": {}, "options": {}}`), which no
/// document allows, so anything but an object is refused first.
pub fn decode<T: DeserializeOwned>(value: Value) -> Result<T, HttpError> {
    if !value.is_object() {
        return Err(HttpError::invalid("the body must be a JSON object"));
    }
    let mut secrets = Vec::new();
    collect_secrets(&value, &mut secrets);
    serde_json::from_value(value).map_err(|e| {
        let mut message = e.to_string();
        for secret in &secrets {
            if !secret.is_empty() {
                message = message.replace(secret.as_str(), "[redacted]");
            }
        }
        HttpError::invalid("the body does not have the expected shape").with_details(message)
    })
}

/// Parses and decodes a JSON body in one step.
pub fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
    accepted: &[&str],
) -> Result<T, HttpError> {
    decode(json_value(headers, body, accepted)?)
}

fn collect_secrets(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if SECRET_FIELDS.contains(&key.to_ascii_lowercase().as_str()) {
                    if let Value::String(s) = value {
                        out.push(s.clone());
                    }
                }
                collect_secrets(value, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_secrets(v, out)),
        _ => {}
    }
}

/// The pairs of a form body (`application/x-www-form-urlencoded`). A parameter given twice is
/// an error (OAuth 2.0 forbids it).
pub fn form_body(headers: &HeaderMap, body: &[u8]) -> Result<Vec<(String, String)>, HttpError> {
    require_content_type(headers, &[FORM])?;
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
        .map_err(|_| HttpError::invalid("the form body is not valid URL-encoded text"))?;
    reject_repeats(&pairs)?;
    Ok(pairs)
}

/// The pairs of a query string, each name one of `allowed`, none repeated.
pub fn query_pairs(
    query: Option<&str>,
    allowed: &[&str],
) -> Result<Vec<(String, String)>, HttpError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or_default())
        .map_err(|_| HttpError::invalid("the query string is not valid URL-encoded text"))?;
    for (name, _) in &pairs {
        if !allowed.contains(&name.as_str()) {
            return Err(HttpError::invalid(format!(
                "unknown query parameter `{}`",
                printable(name)
            ))
            .with_details(format!("this endpoint accepts: {}", allowed.join(", "))));
        }
    }
    reject_repeats(&pairs)?;
    Ok(pairs)
}

fn reject_repeats(pairs: &[(String, String)]) -> Result<(), HttpError> {
    for (i, (name, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(n, _)| n == name) {
            return Err(HttpError::invalid(format!(
                "parameter `{}` is given more than once",
                printable(name)
            )));
        }
    }
    Ok(())
}

pub fn get<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A list endpoint's `start`, `limit` and `sort`, checked by partner-api's rules.
#[derive(Debug, Clone)]
pub struct ListQuery {
    pub page: PageParams,
    pub sort: SortSpec,
}

impl ListQuery {
    pub fn parse(query: Option<&str>, sort_keys: &[&str]) -> Result<Self, HttpError> {
        let pairs = query_pairs(query, &["start", "limit", "sort"])?;
        let page = PageParams::parse(get(&pairs, "start"), get(&pairs, "limit"))
            .map_err(list_rule_error)?;
        let sort = SortSpec::parse(get(&pairs, "sort").unwrap_or_default(), sort_keys)
            .map_err(list_rule_error)?;
        Ok(Self { page, sort })
    }
}

pub fn list_rule_error(error: ListRuleError) -> HttpError {
    HttpError::invalid(format!("invalid `{}` parameter", error.parameter()))
        .with_details(error.to_string())
}

/// A short, printable excerpt of client input for an error message.
pub fn printable(value: &str) -> String {
    let mut text: String = value.chars().filter(|c| !c.is_control()).take(64).collect();
    if value.chars().count() > 64 {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        resource: u32,
        signingkey: String,
    }

    #[test]
    fn decode_takes_only_objects() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Update {
            loan: Option<Value>,
            options: Option<Value>,
        }
        assert!(decode::<Update>(serde_json::json!({"loan": {}})).is_ok());
        let err = decode::<Update>(serde_json::json!([{}, {}])).unwrap_err();
        assert_eq!(err.0.summary, "the body must be a JSON object");
        assert!(decode::<Update>(serde_json::json!(null)).is_err());
    }

    #[test]
    fn decode_errors_never_quote_a_signing_key() {
        let key = "Abcdefghijklmnopqrstuvwxyz0123!@";
        let value = serde_json::json!({"resource": key, "signingkey": key});
        let err = decode::<Shape>(value).unwrap_err();
        let text = format!("{} {}", err.0.summary, err.0.details);
        assert!(!text.contains(key), "{text}");
        assert!(text.contains("[redacted]"));
    }

    #[test]
    fn queries_reject_unknown_and_repeated_names() {
        assert!(query_pairs(Some("start=1&limit=2"), &["start", "limit"]).is_ok());
        assert!(query_pairs(Some("offset=1"), &["start"]).is_err());
        assert!(query_pairs(Some("start=1&start=2"), &["start"]).is_err());
        let list =
            ListQuery::parse(Some("sort=status,-created&start=5"), &["status", "created"]).unwrap();
        assert_eq!(list.page.start, 5);
        assert_eq!(list.sort.to_string(), "status,-created");
        assert!(ListQuery::parse(Some("limit=51"), &[]).is_err());
    }
}

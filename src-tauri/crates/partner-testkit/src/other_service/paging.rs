//! A listing's page by the spec's rules, re-implemented: `start` and `limit` (at most 50,
//! `start` within the total), `sort=A,-B` over the keys the dialect sorts by (dates as
//! instants in any offset), and the total in `X-Total-Count`.

use super::answer::{api_error, json_answer};
use super::state::Shared;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use chrono::DateTime;
use serde_json::Value;
use std::collections::HashMap;

pub(super) fn query_pairs(raw: Option<&str>) -> HashMap<String, String> {
    raw.map(|q| {
        serde_urlencoded::from_str::<Vec<(String, String)>>(q)
            .unwrap_or_default()
            .into_iter()
            .collect()
    })
    .unwrap_or_default()
}

/// The sortable value of a field: instants for dates (any offset), numbers, text; absent last.
#[derive(Debug, PartialEq, PartialOrd)]
pub(super) enum Key {
    Instant(i64),
    Number(f64),
    Text(String),
}

pub(super) fn sort_key(item: &Value, field: &str) -> Option<Key> {
    let value = match field {
        "requestType" => item.pointer("/request/type"),
        _ => item.get(field),
    }?;
    match value {
        Value::String(s) => Some(
            DateTime::parse_from_rfc3339(s)
                .map(|d| Key::Instant(d.timestamp_millis()))
                .unwrap_or_else(|_| Key::Text(s.clone())),
        ),
        Value::Number(n) => n.as_f64().map(Key::Number),
        _ => None,
    }
}

/// `start`, `limit`, `sort` read by the spec's rules; `Err` is the refusal.
pub(super) fn page(
    shared: &Shared,
    headers: &HeaderMap,
    raw_query: Option<&str>,
    sortable: &[&str],
    mut items: Vec<Value>,
) -> Result<Response, Response> {
    let query = query_pairs(raw_query);
    let bad = |detail: String| {
        api_error(
            shared,
            headers,
            StatusCode::BAD_REQUEST,
            "Bad Request",
            &detail,
            &[],
        )
    };
    let number = |name: &str, default: u64| -> Result<u64, Response> {
        match query.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| bad(format!("{name} must be a non-negative integer"))),
        }
    };
    let start = number("start", 0)?;
    let limit = number("limit", 25)?;
    if limit > 50 {
        return Err(bad("limit may not exceed 50".into()));
    }
    let total = items.len() as u64;
    if start > total {
        return Err(bad(format!("start {start} exceeds the total of {total}")));
    }
    if let Some(sort) = query.get("sort").filter(|s| !s.is_empty()) {
        let mut keys = Vec::new();
        for raw in sort.split(',') {
            let (descending, field) = match raw.strip_prefix('-') {
                Some(field) => (true, field),
                None => (false, raw),
            };
            if !sortable.contains(&field) {
                return Err(bad(format!(
                    "sorting by '{field}' is not supported; sortable: {}",
                    sortable.join(", ")
                )));
            }
            keys.push((field.to_owned(), descending));
        }
        // Keys apply in order: a stable sort by each, last key first.
        for (field, descending) in keys.iter().rev() {
            items.sort_by(|a, b| match (sort_key(a, field), sort_key(b, field)) {
                (Some(x), Some(y)) => {
                    let ordering = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
                    if *descending {
                        ordering.reverse()
                    } else {
                        ordering
                    }
                }
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            });
        }
    }
    let shown: Vec<Value> = items
        .into_iter()
        .skip(start as usize)
        .take(limit as usize)
        .collect();
    Ok(json_answer(
        shared,
        headers,
        StatusCode::OK,
        &Value::Array(shown),
        &[(
            header::HeaderName::from_static("x-total-count"),
            total.to_string(),
        )],
    ))
}

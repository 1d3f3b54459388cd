//! The partner API's reads: products and transactions listed (through [`super::paging`]) and
//! shown one by one, and a transaction's events.

use super::admission::admit;
use super::answer::{json_answer, missing};
use super::paging::page;
use super::state::{Shared, StoredProduct};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;

pub(super) async fn list_products(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let items: Vec<Value> = shared.lock().products.iter().map(|p| p.shown()).collect();
    page(
        &shared,
        &headers,
        query.as_deref(),
        shared.dialect.product_sorts(),
        items,
    )
    .unwrap_or_else(|refused| refused)
}

pub(super) async fn list_transactions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let items = shared.lock().transactions.clone();
    page(
        &shared,
        &headers,
        query.as_deref(),
        shared.dialect.transaction_sorts(),
        items,
    )
    .unwrap_or_else(|refused| refused)
}

pub(super) async fn get_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared
        .lock()
        .products
        .iter()
        .find(|p| p.id() == id)
        .map(StoredProduct::shown);
    match found {
        Some(product) => json_answer(&shared, &headers, StatusCode::OK, &product, &[]),
        None => missing(&shared, &headers, "product"),
    }
}

pub(super) async fn get_transaction(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared
        .lock()
        .transactions
        .iter()
        .find(|t| t.get("id").and_then(Value::as_str) == Some(id.as_str()))
        .cloned();
    match found {
        Some(transaction) => json_answer(&shared, &headers, StatusCode::OK, &transaction, &[]),
        None => missing(&shared, &headers, "transaction"),
    }
}

pub(super) async fn list_events(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared.lock().events.get(&id).cloned();
    match found {
        Some(events) => json_answer(
            &shared,
            &headers,
            StatusCode::OK,
            &Value::Array(events),
            &[],
        ),
        None => missing(&shared, &headers, "transaction"),
    }
}

pub(super) async fn get_event(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path((id, event_id)): Path<(String, String)>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared.lock().events.get(&id).and_then(|events| {
        events
            .iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(event_id.as_str()))
            .cloned()
    });
    match found {
        Some(event) => json_answer(&shared, &headers, StatusCode::OK, &event, &[]),
        None => missing(&shared, &headers, "event"),
    }
}

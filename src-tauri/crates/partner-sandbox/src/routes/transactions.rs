//! `/partner/v2/transactions`: the list, one transaction, its events, and the partner's
//! response.
//!
//! The list is the hot path (100,000 transactions, p99 under 5 ms): the order for a
//! (partner, sort) is computed once per version of the partner's data and kept as a vector of
//! indexes in `SortCache`; a request then slices its page out of it and serialises only those
//! 50 items, under a read lock.

use crate::error::HttpError;
use crate::extract::{json_body, list_rule_error, ListQuery, JSON, MERGE_PATCH_JSON};
use crate::state::SharedState;
use crate::tokens::Caller;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use partner_api::{ApiError, Sortable, Transaction, TransactionEvent, TransactionResponse};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(list_transactions))
        .routes(routes!(get_transaction))
        .routes(routes!(respond))
        .routes(routes!(list_events))
        .routes(routes!(get_event))
}

/// List the transactions on the caller's products.
#[utoipa::path(
    get,
    path = "/partner/v2/transactions",
    tag = "transactions",
    security(("bearer" = [])),
    params(super::ListParams<Transaction>),
    responses(
        (status = 200, description = "A page of transactions", body = Vec<Transaction>,
            headers(("X-Total-Count" = u64, description = "Number of matching transactions"))),
        (status = 400, description = "A start, limit or sort the document's rules refuse, `start` past X-Total-Count, or an unknown or repeated query parameter", body = ApiError),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
    )
)]
async fn list_transactions(
    State(state): State<SharedState>,
    caller: Caller,
    uri: Uri,
) -> Result<Response, HttpError> {
    let query = ListQuery::parse(uri.query(), Transaction::SORT_KEYS)?;
    let store = state.read();
    let Some(listing) = store.listing(&caller.partner_id) else {
        query.page.check_start(0).map_err(list_rule_error)?;
        return Ok(super::page::<Transaction>(&[], 0));
    };
    let total = listing.order.len();
    query
        .page
        .check_start(total as u64)
        .map_err(list_rule_error)?;
    let range = query.page.range(total as u64);
    let records = store.transactions();
    let json = |&i: &u32| &*records[i as usize].json;
    if query.sort.is_empty() {
        return Ok(super::page_of_json(
            listing.order[range].iter().map(json),
            total,
        ));
    }
    let key = query.sort.to_string();
    let cached = state
        .sort_cache()
        .get(&caller.partner_id, &key, listing.version);
    let order = match cached {
        Some(order) => order,
        None => {
            let order = Arc::new(store.sorted_order(listing, &query.sort));
            state.sort_cache().put(
                &caller.partner_id,
                &query.sort,
                listing.version,
                order.clone(),
            );
            order
        }
    };
    Ok(super::page_of_json(order[range].iter().map(json), total))
}

/// Read one transaction on the caller's products.
#[utoipa::path(
    get,
    path = "/partner/v2/transactions/{id}",
    tag = "transactions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Transaction id")),
    responses(
        (status = 200, description = "The transaction", body = Transaction),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such transaction on this partner's products", body = ApiError),
    )
)]
async fn get_transaction(
    State(state): State<SharedState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let store = state.read();
    let record = store.own_transaction(&caller.partner_id, &id)?;
    Ok(super::json_bytes(StatusCode::OK, record.json.to_vec()))
}

/// Every event of a transaction, oldest first.
#[utoipa::path(
    get,
    path = "/partner/v2/transactions/{id}/events",
    tag = "transactions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Transaction id")),
    responses(
        (status = 200, description = "The transaction's events, oldest first", body = Vec<TransactionEvent>),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such transaction on this partner's products", body = ApiError),
    )
)]
async fn list_events(
    State(state): State<SharedState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let store = state.read();
    let record = store.own_transaction(&caller.partner_id, &id)?;
    Ok(super::json(StatusCode::OK, &record.events))
}

/// One event of a transaction (the `resourceRef` of event notifications).
#[utoipa::path(
    get,
    path = "/partner/v2/transactions/{id}/events/{event_id}",
    tag = "transactions",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "Transaction id"),
        ("event_id" = String, Path, description = "Event id"),
    ),
    responses(
        (status = 200, description = "The event", body = TransactionEvent),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such transaction or event", body = ApiError),
    )
)]
async fn get_event(
    State(state): State<SharedState>,
    caller: Caller,
    Path((id, event_id)): Path<(String, String)>,
) -> Result<Response, HttpError> {
    let store = state.read();
    let record = store.own_transaction(&caller.partner_id, &id)?;
    let event = record
        .events
        .iter()
        .find(|e| e.id == event_id)
        .ok_or_else(|| HttpError::not_found("event"))?;
    Ok(super::json(StatusCode::OK, event))
}

/// The partner answers a transaction. Fields left out keep their values; `status` is
/// required. `completed`, `failed` and `canceled` are final and lock the transaction. Fires
/// the transaction's `updated` and the `created` of two events, `response:updated` and
/// `response:processed`.
#[utoipa::path(
    patch,
    path = "/partner/v2/transactions/{id}/response",
    tag = "transactions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Transaction id")),
    request_body(content(
        (TransactionResponse = "application/json"),
        (TransactionResponse = "application/merge-patch+json"),
    )),
    responses(
        (status = 200, description = "The transaction with its new response", body = Transaction),
        (status = 400, description = "A missing or invalid field", body = ApiError),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such transaction on this partner's products", body = ApiError),
        (status = 409, description = "The transaction is completed and locked", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json or application/merge-patch+json", body = ApiError),
    )
)]
async fn respond(
    State(state): State<SharedState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    // Existence first: another partner's transaction is a 404 whatever the body.
    state.read().own_transaction(&caller.partner_id, &id)?;
    let response: TransactionResponse = json_body(&headers, &body, &[JSON, MERGE_PATCH_JSON])?;
    let now = state.clock.now();
    let transaction =
        super::lender::write(&state, |store| store.respond(&caller, &id, response, now)).await?;
    tracing::info!(transaction_id = %transaction.id, status = %transaction.status, "partner responded");
    Ok(super::json(StatusCode::OK, &transaction))
}

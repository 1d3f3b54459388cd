//! `/sandbox/v1/transactions…` and `/sandbox/v1/deliveries`: the lender the sandbox plays,
//! and what became of the notifications. Each write fires its notifications (see the crate's
//! table) after the store's lock is released; `enqueue` never blocks.

use crate::dispatch::DeliveryRecord;
use crate::error::HttpError;
use crate::extract::{get, json_body, query_pairs, JSON, MERGE_PATCH_JSON};
use crate::notify;
use crate::state::SharedState;
use crate::store::Change;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use partner_api::{
    ApiError, NewEvent, NewTransaction, Transaction, TransactionEvent, TransactionUpdate,
};

/// Sends what a change fires, once `change` (its durability) allows.
pub fn fire(
    state: &SharedState,
    outgoing: Vec<crate::dispatch::Outgoing>,
    change: &crate::data_file::Ticket,
) {
    for one in outgoing {
        state.dispatcher.enqueue_after(one, change.clone());
    }
}

/// Runs a write against the store and collects the notifications it fires, under one lock;
/// answers once the change (and the delivery records it made) is durable in the data file.
pub async fn write<T>(
    state: &SharedState,
    change: impl FnOnce(&mut crate::store::Store) -> Result<(T, Change), ApiError>,
) -> Result<T, HttpError> {
    state.journal.check_writable()?;
    let (value, outgoing, ticket) = {
        let mut store = state.write();
        let (value, change) = change(&mut store)?;
        if change.transaction_notice.is_some() {
            state.sort_cache().apply_change(&store, &change);
        }
        let ticket = state
            .journal
            .submit(|| crate::data_file::change_rows(&store, &change));
        let outgoing = notify::outgoing(&store, &change, &state.public_url);
        (value, outgoing, ticket)
    };
    if outgoing.is_empty() {
        ticket.durable().await?;
    } else {
        fire(state, outgoing, &ticket);
        state.journal.sync_point().durable().await?;
    }
    Ok(value)
}

/// The lender starts a transaction on a product (any partner's): fires the transaction's
/// `created` and the `request:created` event's `created`.
#[utoipa::path(
    post,
    path = "/sandbox/v1/transactions",
    tag = "sandbox",
    security((), ("admin" = [])),
    request_body(content = NewTransaction, content_type = "application/json"),
    responses(
        (status = 201, description = "The new transaction", body = Transaction,
            links(
                ("GetTransaction" = (operation_id = "get_transaction", parameters(("id" = "$response.body#/id")))),
                ("ListEvents" = (operation_id = "list_events", parameters(("id" = "$response.body#/id")))),
                ("Respond" = (operation_id = "respond", parameters(("id" = "$response.body#/id")))),
                ("UpdateTransaction" = (operation_id = "update_transaction", parameters(("id" = "$response.body#/id")))),
                ("AddEvent" = (operation_id = "add_event", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 400, description = "A missing or invalid field, or a request type the product does not take", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 404, description = "No such product", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
pub async fn create_transaction(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let new: NewTransaction = json_body(&headers, &body, &[JSON])?;
    let now = state.clock.now();
    let transaction = write(&state, |store| store.create_transaction(new, now)).await?;
    tracing::info!(transaction_id = %transaction.id, "lender created a transaction");
    Ok(super::json(StatusCode::CREATED, &transaction))
}

/// The lender updates a transaction's request (`loan`, `options`): fires the transaction's
/// `updated` and the `request:updated` event's `created`.
#[utoipa::path(
    patch,
    path = "/sandbox/v1/transactions/{id}",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(("id" = String, Path, description = "Transaction id")),
    request_body(content = TransactionUpdate, content_type = "application/json"),
    responses(
        (status = 200, description = "The updated transaction", body = Transaction),
        (status = 400, description = "Nothing to update, or an invalid field", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 404, description = "No such transaction", body = ApiError),
        (status = 409, description = "The transaction is completed and locked", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json or application/merge-patch+json", body = ApiError),
    )
)]
pub async fn update_transaction(
    State(state): State<SharedState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let update: TransactionUpdate = json_body(&headers, &body, &[JSON, MERGE_PATCH_JSON])?;
    let now = state.clock.now();
    let transaction = write(&state, |store| store.update_transaction(&id, update, now)).await?;
    tracing::info!(transaction_id = %transaction.id, "lender updated a transaction");
    Ok(super::json(StatusCode::OK, &transaction))
}

/// The lender adds a custom event to a transaction (allowed even once it is completed):
/// fires the event's `created`.
#[utoipa::path(
    post,
    path = "/sandbox/v1/transactions/{id}/events",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(("id" = String, Path, description = "Transaction id")),
    request_body(content = NewEvent, content_type = "application/json"),
    responses(
        (status = 201, description = "The new event", body = TransactionEvent,
            links(
                ("GetEvent" = (operation_id = "get_event",
                    parameters(("id" = "$request.path.id"), ("event_id" = "$response.body#/id")))),
            )),
        (status = 400, description = "A missing or invalid field, or a type reserved to the system", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
        (status = 404, description = "No such transaction", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
pub async fn add_event(
    State(state): State<SharedState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let new: NewEvent = json_body(&headers, &body, &[JSON])?;
    let now = state.clock.now();
    let event = write(&state, |store| store.add_event(&id, new, now)).await?;
    tracing::info!(transaction_id = %id, event_id = %event.id, "lender added an event");
    Ok(super::json(StatusCode::CREATED, &event))
}

/// Every notification the sandbox queued (the newest 10,000), optionally only those of one
/// `eventId`: subscription, URL, state and each attempt.
#[utoipa::path(
    get,
    path = "/sandbox/v1/deliveries",
    tag = "sandbox",
    security((), ("admin" = [])),
    params(("eventId" = Option<String>, Query, description = "Only the notifications of this event")),
    responses(
        (status = 200, description = "Deliveries, oldest first", body = Vec<DeliveryRecord>),
        (status = 400, description = "An unknown or repeated query parameter", body = ApiError),
        (status = 403, description = "The admin token is required and was not given", body = ApiError),
    )
)]
pub async fn list_deliveries(
    State(state): State<SharedState>,
    uri: Uri,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query(), &["eventId"])?;
    let records = state.dispatcher.deliveries(get(&pairs, "eventId"));
    Ok(super::json(StatusCode::OK, &records))
}

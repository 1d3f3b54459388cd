//! `/partner/v2/products`: list, create, get, merge-patch.
//!
//! A partner's products are few, so the list sorts them on each request (the transaction list
//! is the one that needs a cache). Signing keys go in and never come out: responses are
//! `partner_api::Product`, whose subscriptions have no key field.

use crate::error::HttpError;
use crate::extract::{json_value, list_rule_error, ListQuery, JSON, MERGE_PATCH_JSON};
use crate::state::SharedState;
use crate::tokens::Caller;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use partner_api::{ApiError, NewProduct, Product, ProductPatch, Sortable};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The data file's rows of a product just written (nothing in memory mode).
fn product_rows(
    store: &crate::store::Store,
    id: &str,
) -> Result<Vec<crate::data_file::Row>, String> {
    let record = store
        .product(id)
        .ok_or_else(|| format!("product `{id}` vanished"))?;
    crate::data_file::product_rows(record)
}

pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(list_products, create_product))
        .routes(routes!(get_product, patch_product))
}

/// List the caller's products.
#[utoipa::path(
    get,
    path = "/partner/v2/products",
    tag = "products",
    security(("bearer" = [])),
    params(super::ListParams<Product>),
    responses(
        (status = 200, description = "A page of products", body = Vec<Product>,
            headers(("X-Total-Count" = u64, description = "Number of matching products"))),
        (status = 400, description = "A start, limit or sort the document's rules refuse, `start` past X-Total-Count, or an unknown or repeated query parameter", body = ApiError),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
    )
)]
async fn list_products(
    State(state): State<SharedState>,
    caller: Caller,
    uri: Uri,
) -> Result<Response, HttpError> {
    let query = ListQuery::parse(uri.query(), Product::SORT_KEYS)?;
    let store = state.read();
    let mut products = store.products_of(&caller.partner_id);
    let total = products.len();
    query
        .page
        .check_start(total as u64)
        .map_err(list_rule_error)?;
    if !query.sort.is_empty() {
        products.sort_by(|a, b| query.sort.compare(*a, *b));
    }
    Ok(super::page(
        &products[query.page.range(total as u64)],
        total,
    ))
}

/// Register a product configuration.
#[utoipa::path(
    post,
    path = "/partner/v2/products",
    tag = "products",
    security(("bearer" = [])),
    request_body(content = NewProduct, content_type = "application/json"),
    responses(
        (status = 201, description = "The new product (signing keys are never returned)", body = Product,
            links(
                ("GetProduct" = (operation_id = "get_product", parameters(("id" = "$response.body#/id")))),
                ("PatchProduct" = (operation_id = "patch_product", parameters(("id" = "$response.body#/id")))),
                ("StartTransaction" = (operation_id = "create_transaction",
                    request_body = json!({"productId": "$response.body#/id", "requestType": "$response.body#/requestTypes/0"}))),
            )),
        (status = 400, description = "A missing or invalid field, a read-only field, or a signing key that breaks the rule", body = ApiError),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 409, description = "The partner already has a product of that name", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/json", body = ApiError),
    )
)]
async fn create_product(
    State(state): State<SharedState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    let value = json_value(&headers, &body, &[JSON])?;
    let now = state.clock.now();
    state.journal.check_writable()?;
    let (product, ticket) = {
        let mut store = state.write();
        let product = store.create_product(&caller, value, now, state.allow_http_callbacks)?;
        let ticket = state.journal.submit(|| product_rows(&store, &product.id));
        (product, ticket)
    };
    ticket.durable().await?;
    tracing::info!(product_id = %product.id, partner_id = %caller.partner_id, "product created");
    Ok(super::json(StatusCode::CREATED, &product))
}

/// Read one of the caller's products.
#[utoipa::path(
    get,
    path = "/partner/v2/products/{id}",
    tag = "products",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Product id")),
    responses(
        (status = 200, description = "The product", body = Product),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such product of this partner", body = ApiError),
    )
)]
async fn get_product(
    State(state): State<SharedState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let store = state.read();
    let record = store.own_product(&caller.partner_id, &id)?;
    Ok(super::json(StatusCode::OK, &record.product))
}

/// Change a product with a JSON merge patch (RFC 7396). `webhooks`, when present, is the
/// whole new list: an entry with `subscriptionId` updates that subscription (leave out
/// `signingkey` to keep the key, send one to rotate it), an entry without one creates a
/// subscription, a subscription left out is deleted.
#[utoipa::path(
    patch,
    path = "/partner/v2/products/{id}",
    tag = "products",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "Product id")),
    request_body(content = ProductPatch, content_type = "application/merge-patch+json",
        description = "Fields of NewProduct to change; `null` removes an optional field"),
    responses(
        (status = 200, description = "The changed product", body = Product),
        (status = 400, description = "An invalid field, a change to a read-only field, an unknown subscriptionId, or a signing key that breaks the rule", body = ApiError),
        (status = 401, description = "No, bad, expired or revoked token", body = ApiError),
        (status = 404, description = "No such product of this partner", body = ApiError),
        (status = 413, description = "Body too large", body = ApiError),
        (status = 415, description = "Not application/merge-patch+json", body = ApiError),
    )
)]
async fn patch_product(
    State(state): State<SharedState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, HttpError> {
    // Existence first: a PATCH to someone else's product is a 404 whatever its body.
    state.read().own_product(&caller.partner_id, &id)?;
    let patch = json_value(&headers, &body, &[MERGE_PATCH_JSON])?;
    let now = state.clock.now();
    state.journal.check_writable()?;
    let (product, ticket) = {
        let mut store = state.write();
        let product = store.patch_product(&caller, &id, patch, now, state.allow_http_callbacks)?;
        let ticket = state.journal.submit(|| product_rows(&store, &product.id));
        (product, ticket)
    };
    ticket.durable().await?;
    tracing::info!(product_id = %product.id, "product changed");
    Ok(super::json(StatusCode::OK, &product))
}

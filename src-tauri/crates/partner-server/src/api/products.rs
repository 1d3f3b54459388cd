//! The products' calls (`/api/v1/products...`): the service's products, and subscribing or
//! rotating a key through the team's service connection ([`crate::products`]), the key kept by
//! the servers and never in an answer.

use super::call::{ApiResult, Body, Caller, Workspace};
use crate::products::{self, KeyedSubscription};
use crate::roles::Action;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use partner_api::read::{self, Document, SubscriptionView};
use partner_api::{EventType, ResourceType};
use partner_client::{NewSubscription, Page, SubscriptionChange};
use serde::Deserialize;
use std::sync::Arc;

pub fn routes() -> Router<Arc<Workspace>> {
    Router::new()
        .route("/api/v1/products", get(list))
        .route("/api/v1/products/{id}", get(product))
        .route("/api/v1/products/{id}/subscriptions", post(subscribe))
        .route("/api/v1/products/{id}/subscriptions/rotate", post(rotate))
        .route("/api/v1/products/{id}/subscriptions/update", post(update))
        .route("/api/v1/products/{id}/subscriptions/delete", post(delete))
}

#[derive(Debug, Deserialize)]
struct ListRequest {
    #[serde(default)]
    start: u64,
    #[serde(default = "list_limit")]
    limit: u64,
    #[serde(default)]
    sort: String,
}

fn list_limit() -> u64 {
    25
}

async fn list(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Query(request): Query<ListRequest>,
) -> ApiResult<Json<Page<Document<read::ProductView>>>> {
    caller.may(&ws, Action::Read, "products").await?;
    Ok(Json(
        products::list(&ws.service, request.start, request.limit, &request.sort).await?,
    ))
}

async fn product(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Document<read::ProductView>>> {
    caller.may(&ws, Action::Read, "products").await?;
    Ok(Json(products::get(&ws.service, &id).await?))
}

#[derive(Debug, Deserialize)]
struct SubscribeRequest {
    url: String,
    resource: ResourceType,
    /// Default: every event.
    #[serde(default)]
    events: Vec<EventType>,
}

async fn subscribe(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
    Body(request): Body<SubscribeRequest>,
) -> ApiResult<(StatusCode, Json<KeyedSubscription>)> {
    let target = format!("product {id}");
    caller.may(&ws, Action::Subscribe, &target).await?;
    let events = if request.events.is_empty() {
        EventType::ALL.to_vec()
    } else {
        request.events
    };
    let subscription = NewSubscription {
        url: request.url,
        events,
        resource: request.resource,
    };
    let subscribed =
        products::subscribe(&ws.service, &ws.pool, &id, &subscription, &caller.0.name).await?;
    keys_changed(&ws).await;
    caller
        .done(
            &ws,
            Action::Subscribe,
            &target,
            &format!("subscription {}", subscribed.subscription),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(subscribed)))
}

/// A subscription of the product: for a rotation or a delete.
#[derive(Debug, Deserialize)]
struct RotateRequest {
    /// The subscription's id, or `RESOURCE=URL` where the service shows none.
    subscription: String,
}

async fn rotate(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
    Body(request): Body<RotateRequest>,
) -> ApiResult<Json<KeyedSubscription>> {
    let target = format!("product {id}, subscription {}", request.subscription.trim());
    caller.may(&ws, Action::Rotate, &target).await?;
    let rotated = products::rotate(
        &ws.service,
        &ws.pool,
        &id,
        &request.subscription,
        &caller.0.name,
    )
    .await?;
    keys_changed(&ws).await;
    caller
        .done(
            &ws,
            Action::Rotate,
            &target,
            &format!("subscription {}: key rotated", rotated.subscription),
        )
        .await?;
    Ok(Json(rotated))
}

#[derive(Debug, Deserialize)]
struct UpdateRequest {
    /// The subscription's id, or `RESOURCE=URL` where the service shows none.
    subscription: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    events: Option<Vec<EventType>>,
    #[serde(default)]
    resource: Option<ResourceType>,
}

/// Changes a subscription's url, events or resource, its key kept (developer, as subscribing).
async fn update(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
    Body(request): Body<UpdateRequest>,
) -> ApiResult<Json<SubscriptionView>> {
    let target = format!("product {id}, subscription {}", request.subscription.trim());
    caller.may(&ws, Action::Subscribe, &target).await?;
    let change = SubscriptionChange {
        url: request.url,
        events: request.events,
        resource: request.resource,
    };
    let updated =
        products::update(&ws.service, &ws.pool, &id, &request.subscription, &change).await?;
    keys_changed(&ws).await;
    caller
        .done(&ws, Action::Subscribe, &target, "subscription changed")
        .await?;
    Ok(Json(updated))
}

/// Deletes a subscription, then the keys the servers keep for it (developer, as subscribing).
async fn delete(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
    Body(request): Body<RotateRequest>,
) -> ApiResult<Json<Document<read::ProductView>>> {
    let target = format!("product {id}, subscription {}", request.subscription.trim());
    caller.may(&ws, Action::Subscribe, &target).await?;
    let patched = products::delete(&ws.service, &ws.pool, &id, &request.subscription).await?;
    keys_changed(&ws).await;
    caller
        .done(
            &ws,
            Action::Subscribe,
            &target,
            "subscription deleted, its keys forgotten",
        )
        .await?;
    Ok(Json(patched))
}

/// This server verifies with the new key at once (the others when they hear of it).
async fn keys_changed(ws: &Workspace) {
    if let Err(error) = ws.keys.reload().await {
        tracing::warn!(%error, "reloading the signing keys");
    }
}

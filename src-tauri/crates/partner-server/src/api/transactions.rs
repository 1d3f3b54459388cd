//! The support desk's calls (`/api/v1/service`, `/api/v1/transactions/...`): the service
//! connection the servers call with, the support index they keep for everyone, a
//! transaction's events (asked of the service: the index does not keep them), and the answers
//! a member sends a transaction through the workspace.
//!
//! The bodies are `partner-index`'s own types ([`Filter`], [`Found`], [`Counts`],
//! [`SyncReport`]), so the CLI and the app read the workspace's answers as they read their own
//! index's. The service connection's secret goes in (an admin's `PUT`) and never comes out.

use super::call::{ApiResult, Body, Caller, Workspace};
use crate::error::Error;
use crate::roles::Action;
use crate::service::{self, ConnectionInfo, NewConnection};
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use partner_api::read::{self, Document};
use partner_api::{Secret, TransactionResponse};
use partner_index::{Counts, Filter, Found, IndexState, SyncReport, SyncStore};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub fn routes() -> Router<Arc<Workspace>> {
    Router::new()
        .route("/api/v1/service", get(connection).put(set_connection))
        .route("/api/v1/transactions/state", get(state))
        .route("/api/v1/transactions/sync", post(sync))
        .route("/api/v1/transactions/find", post(find))
        .route("/api/v1/transactions/counts", post(counts))
        .route("/api/v1/transactions/{id}", get(transaction))
        .route("/api/v1/transactions/{id}/events", get(events))
        .route("/api/v1/transactions/{id}/respond", post(respond))
}

#[derive(Serialize)]
struct Connection {
    connection: Option<ConnectionInfo>,
}

async fn connection(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
) -> ApiResult<Json<Connection>> {
    caller.may(&ws, Action::Read, "service connection").await?;
    Ok(Json(Connection {
        connection: service::info(&ws.pool).await?,
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetConnection {
    base_url: String,
    client_id: String,
    client_secret: Secret,
}

async fn set_connection(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(set): Body<SetConnection>,
) -> ApiResult<Json<ConnectionInfo>> {
    let target = "service connection";
    caller.may(&ws, Action::ManageConnection, target).await?;
    let info = service::set(
        &ws.pool,
        ws.service.server_key(),
        &NewConnection {
            base_url: set.base_url,
            client_id: set.client_id,
            client_secret: set.client_secret,
        },
        &caller.0.name,
    )
    .await?;
    caller
        .done(
            &ws,
            Action::ManageConnection,
            target,
            &format!("{} as {}", info.base_url, info.client_id),
        )
        .await?;
    Ok(Json(info))
}

async fn state(State(ws): State<Arc<Workspace>>, caller: Caller) -> ApiResult<Json<IndexState>> {
    caller.may(&ws, Action::Read, "transactions").await?;
    Ok(Json(ws.index.state().await.map_err(Error::from)?))
}

/// Brings the support index up to date now, for everyone (a sync running on another server is
/// waited for, then this one is a short refresh).
async fn sync(State(ws): State<Arc<Workspace>>, caller: Caller) -> ApiResult<Json<SyncReport>> {
    let target = "support index";
    caller.may(&ws, Action::SyncIndex, target).await?;
    let report = crate::index_sync::sync_now(&ws.service, &ws.index, &ws.shutdown).await?;
    caller
        .done(
            &ws,
            Action::SyncIndex,
            target,
            &format!(
                "{} transactions, {} stored now, {} changed",
                report.state.transactions,
                report.filled,
                report.changes.len()
            ),
        )
        .await?;
    Ok(Json(report))
}

/// A question: a filter, and which page of the answers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FindRequest {
    #[serde(default)]
    filter: Filter,
    #[serde(default = "find_limit")]
    limit: u64,
    #[serde(default)]
    offset: u64,
}

fn find_limit() -> u64 {
    50
}

async fn find(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<FindRequest>,
) -> ApiResult<Json<Found>> {
    caller.may(&ws, Action::Read, "transactions").await?;
    Ok(Json(
        ws.index
            .find(&request.filter, request.limit, request.offset)
            .await
            .map_err(Error::from)?,
    ))
}

#[derive(Debug, Deserialize)]
struct CountsRequest {
    #[serde(default)]
    filter: Filter,
}

async fn counts(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Body(request): Body<CountsRequest>,
) -> ApiResult<Json<Counts>> {
    caller.may(&ws, Action::Read, "transactions").await?;
    Ok(Json(
        ws.index
            .counts(&request.filter)
            .await
            .map_err(Error::from)?,
    ))
}

/// One transaction as the index holds it.
async fn transaction(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Document<read::TransactionView>>> {
    caller.may(&ws, Action::Read, "transactions").await?;
    ws.index
        .transaction(&id)
        .await
        .map_err(Error::from)?
        .map(Json)
        .ok_or_else(|| Error::NotFound(format!("transaction {id}")).into())
}

/// A transaction's events, oldest first, as the service answers the workspace's client now
/// (the index keeps transactions, not their events): each event as the service sent it, every
/// field kept, so a console reads an event type it does not know as it would locally.
async fn events(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<Document<serde_json::Value>>>> {
    caller.may(&ws, Action::Read, "transactions").await?;
    let client = ws.service.client().await?;
    Ok(Json(
        client
            .list_events_as::<serde_json::Value>(&id)
            .await
            .map_err(Error::from)?,
    ))
}

/// Answers a transaction through the service as the workspace's client, under the member's
/// name in the audit log; the index then holds the transaction as the service has it now.
async fn respond(
    State(ws): State<Arc<Workspace>>,
    caller: Caller,
    Path(id): Path<String>,
    Body(response): Body<serde_json::Value>,
) -> ApiResult<Json<Document<serde_json::Value>>> {
    let target = format!("transaction {id}");
    caller.may(&ws, Action::Respond, &target).await?;
    let response = TransactionResponse::from_json(&response.to_string())
        .map_err(|why| Error::Invalid(format!("the response was not sent: {why}")))?;
    let client = ws.service.client().await?;
    let answered = client
        .respond_to_transaction_as::<serde_json::Value>(&id, &response)
        .await
        .map_err(Error::from)?;
    caller
        .done(
            &ws,
            Action::Respond,
            &target,
            &format!("status {}", response.status),
        )
        .await?;
    if let Err(error) = partner_index::refresh_one(&client, &ws.index, &id).await {
        tracing::warn!(transaction = %id, %error, "the answered transaction was not refreshed in the index");
    }
    Ok(Json(answered))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_body_keeps_its_secret_out_of_debug() {
        let set: SetConnection = serde_json::from_str(
            r#"{"baseUrl":"http://127.0.0.1:1","clientId":"c","clientSecret":"s3cr3t-value"}"#,
        )
        .unwrap();
        assert!(!format!("{:?}", set.client_secret).contains("s3cr3t"));
    }
}

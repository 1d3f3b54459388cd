//! The service connection the workspace's servers call for everyone: the team's client id and
//! secret, kept in the database with the secret sealed by the server key, and the one
//! [`PartnerClient`] each server makes of it (which holds the OAuth token and replaces it before
//! either of the service's deadlines).
//!
//! Why here and not on the consoles: the secret never leaves the servers (no answer carries
//! it), so a member's laptop holds only their personal token; and the support index is synced
//! once, under the team's rate limits, instead of once per laptop.
//!
//! A connection is checked before it is kept: a token is asked for with it, so a wrong secret
//! or URL is refused when it is set, not found later by a sync. Every server notices a new
//! connection at its next call (the row's `set_at` is compared) and makes a new client.

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use partner_api::Secret;
use partner_client::{ConnectionConfig, PartnerClient};
use partner_seal::DataKey;
use serde::Serialize;
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::Mutex;

/// What the sealed secret is bound to: opened with another URL or client id, it does not open.
fn context(base_url: &str, client_id: &str) -> Vec<u8> {
    format!("partner-server service secret\0{base_url}\0{client_id}").into_bytes()
}

/// The connection as a member may see it: never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    pub base_url: String,
    pub client_id: String,
    pub set_by: String,
    pub set_at: DateTime<Utc>,
}

/// The connection as set: its URL, client id and secret.
#[derive(Debug, Clone)]
pub struct NewConnection {
    pub base_url: String,
    pub client_id: String,
    pub client_secret: Secret,
}

impl NewConnection {
    fn config(&self) -> Result<ConnectionConfig> {
        ConnectionConfig::new(
            &self.base_url,
            self.client_id.trim(),
            self.client_secret.clone(),
        )
        .map_err(|error| Error::Invalid(error.to_string()))
    }
}

/// Checks `connection` (a token is issued with it) and keeps it for every server, the secret
/// sealed with `server_key`.
pub async fn set(
    pool: &PgPool,
    server_key: &DataKey,
    connection: &NewConnection,
    by: &str,
) -> Result<ConnectionInfo> {
    let config = connection.config()?;
    let client =
        PartnerClient::new(config.clone()).map_err(|error| Error::Invalid(error.to_string()))?;
    client.tokens().ensure_fresh().await.map_err(|error| {
        Error::Invalid(format!(
            "the service at {} did not issue a token to {}: {error}",
            config.base_url, config.client_id
        ))
    })?;
    let base_url = config.base_url.as_str().trim_end_matches('/').to_string();
    let sealed = partner_seal::seal(
        server_key,
        &context(&base_url, &config.client_id),
        connection.client_secret.expose().as_bytes(),
    );
    let info: (String, String, String, DateTime<Utc>) = sqlx::query_as(
        "INSERT INTO service_connection (base_url, client_id, sealed_secret, set_by) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (singleton) DO UPDATE SET base_url = excluded.base_url, \
            client_id = excluded.client_id, sealed_secret = excluded.sealed_secret, \
            set_by = excluded.set_by, set_at = now() \
         RETURNING base_url, client_id, set_by, set_at",
    )
    .bind(&base_url)
    .bind(&config.client_id)
    .bind(&sealed)
    .bind(by)
    .fetch_one(pool)
    .await?;
    Ok(ConnectionInfo {
        base_url: info.0,
        client_id: info.1,
        set_by: info.2,
        set_at: info.3,
    })
}

/// The connection as set, without its secret; `None` when none is.
pub async fn info(pool: &PgPool) -> Result<Option<ConnectionInfo>> {
    let row: Option<(String, String, String, DateTime<Utc>)> =
        sqlx::query_as("SELECT base_url, client_id, set_by, set_at FROM service_connection")
            .fetch_optional(pool)
            .await?;
    Ok(
        row.map(|(base_url, client_id, set_by, set_at)| ConnectionInfo {
            base_url,
            client_id,
            set_by,
            set_at,
        }),
    )
}

/// A client made for the connection as set at a time (`set_at`).
type MadeClient = (DateTime<Utc>, PartnerClient);

/// The service client a server calls with, made again when the connection changes.
#[derive(Debug, Clone)]
pub struct Service {
    pool: PgPool,
    server_key: Arc<DataKey>,
    current: Arc<Mutex<Option<MadeClient>>>,
}

impl Service {
    pub fn new(pool: PgPool, server_key: Arc<DataKey>) -> Self {
        Self {
            pool,
            server_key,
            current: Arc::new(Mutex::new(None)),
        }
    }

    /// The key the connection's secret is sealed with.
    pub fn server_key(&self) -> &DataKey {
        &self.server_key
    }

    /// The client for the connection as set now: the one made before while the connection is
    /// unchanged (its token kept), a new one when an admin set another.
    pub async fn client(&self) -> Result<PartnerClient> {
        let row: Option<(String, String, Vec<u8>, DateTime<Utc>)> = sqlx::query_as(
            "SELECT base_url, client_id, sealed_secret, set_at FROM service_connection",
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some((base_url, client_id, sealed, set_at)) = row else {
            return Err(Error::NoService);
        };
        let mut current = self.current.lock().await;
        if let Some((at, client)) = current.as_ref() {
            if *at == set_at {
                return Ok(client.clone());
            }
        }
        let secret = partner_seal::open(&self.server_key, &context(&base_url, &client_id), &sealed)
            .map_err(|_| {
                Error::ServerKey(
                    "the service connection's secret does not open with this server key".into(),
                )
            })?;
        let secret = String::from_utf8(secret)
            .map_err(|_| Error::ServerKey("the service connection's secret is not text".into()))?;
        let config = ConnectionConfig::new(&base_url, client_id, Secret::new(secret))
            .map_err(|error| Error::Invalid(error.to_string()))?;
        let client =
            PartnerClient::new(config).map_err(|error| Error::Invalid(error.to_string()))?;
        *current = Some((set_at, client.clone()));
        Ok(client)
    }
}

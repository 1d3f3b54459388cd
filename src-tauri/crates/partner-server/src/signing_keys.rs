//! The subscriptions' signing keys, kept by the server (sealed with the server key), and the
//! listener's [`KeySource`] over them.
//!
//! Why a cache: the verdict asks for a subscription's keys on every request, and a database
//! round trip per notification would halve what a server takes. Every server of the workspace
//! holds the keys in memory, loaded at start and again whenever any server sets one
//! (`NOTIFY partner_keys`, [`crate::live`]), and every minute besides, in case a notification
//! was lost with a dropped connection.
//!
//! Setting a key that differs from the current one keeps the current as the previous key,
//! replaced now: notifications signed before the rotation (and their retries) still verify for
//! the listener's grace period, as on the desktop.

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use partner_api::Secret;
use partner_listener::keys::{PreviousKey, SubscriptionKeys};
use partner_listener::{KeySource, MemoryKeys};
use partner_seal::DataKey;
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The channel a server notifies on when it sets a key.
pub const KEYS_CHANNEL: &str = "partner_keys";

/// What a signing key is sealed with: the subscription it belongs to is authenticated with it,
/// so a sealed key copied to another subscription's row does not open.
fn context(subscription_id: &str) -> Vec<u8> {
    format!("partner-server signing key\0{subscription_id}").into_bytes()
}

/// Sets a subscription's current signing key (the one before it kept as previous, replaced
/// now, when it differs).
pub async fn set(
    pool: &PgPool,
    server_key: &DataKey,
    subscription_id: &str,
    key: &Secret,
) -> Result<()> {
    let subscription_id = subscription_id.trim();
    if subscription_id.is_empty() || key.expose().trim().is_empty() {
        return Err(Error::Invalid(
            "a signing key needs a subscription id and a key that is not blank".into(),
        ));
    }
    let mut tx = pool.begin().await?;
    let existing: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT sealed_current FROM signing_keys WHERE subscription_id = $1 FOR UPDATE",
    )
    .bind(subscription_id)
    .fetch_optional(&mut *tx)
    .await?;
    let sealed = partner_seal::seal(
        server_key,
        &context(subscription_id),
        key.expose().as_bytes(),
    );
    match existing {
        None => {
            sqlx::query(
                "INSERT INTO signing_keys (subscription_id, sealed_current) VALUES ($1, $2)",
            )
            .bind(subscription_id)
            .bind(&sealed)
            .execute(&mut *tx)
            .await?;
        }
        Some(current) => {
            let same = open(server_key, subscription_id, &current)?.ct_eq(key.expose());
            if !same {
                sqlx::query(
                    "UPDATE signing_keys SET sealed_previous = sealed_current, \
                     replaced_at = now(), sealed_current = $2, updated_at = now() \
                     WHERE subscription_id = $1",
                )
                .bind(subscription_id)
                .bind(&sealed)
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(KEYS_CHANNEL)
        .bind(subscription_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Every subscription's keys, opened.
pub async fn load_all(
    pool: &PgPool,
    server_key: &DataKey,
) -> Result<BTreeMap<String, SubscriptionKeys>> {
    type Row = (String, Vec<u8>, Option<Vec<u8>>, Option<DateTime<Utc>>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT subscription_id, sealed_current, sealed_previous, replaced_at FROM signing_keys",
    )
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|(id, current, previous, replaced_at)| {
            let previous = match (previous, replaced_at) {
                (Some(sealed), Some(replaced_at)) => Some(PreviousKey {
                    key: open(server_key, &id, &sealed)?,
                    replaced_at,
                }),
                _ => None,
            };
            let keys = SubscriptionKeys {
                current: open(server_key, &id, &current)?,
                previous,
            };
            Ok((id, keys))
        })
        .collect()
}

fn open(server_key: &DataKey, subscription_id: &str, sealed: &[u8]) -> Result<Secret> {
    let bytes =
        partner_seal::open(server_key, &context(subscription_id), sealed).map_err(|_| {
            Error::ServerKey(format!(
                "the signing key of subscription {subscription_id} does not open with this key"
            ))
        })?;
    String::from_utf8(bytes)
        .map(Secret::new)
        .map_err(|_| Error::ServerKey(format!("the signing key of {subscription_id} is not text")))
}

/// The keys every server verifies with: a copy of the table in memory (see the module's
/// notes), held by the listener's own [`MemoryKeys`].
#[derive(Debug, Clone)]
pub struct WorkspaceKeys {
    pool: PgPool,
    server_key: Arc<DataKey>,
    keys: Arc<MemoryKeys>,
}

impl WorkspaceKeys {
    /// Loads every key once.
    pub async fn load(pool: PgPool, server_key: Arc<DataKey>) -> Result<Self> {
        let keys = MemoryKeys::new();
        keys.replace_all(load_all(&pool, &server_key).await?);
        Ok(Self {
            pool,
            server_key,
            keys: Arc::new(keys),
        })
    }

    /// Reads the table again (after a server set a key).
    pub async fn reload(&self) -> Result<()> {
        self.keys
            .replace_all(load_all(&self.pool, &self.server_key).await?);
        Ok(())
    }
}

impl KeySource for WorkspaceKeys {
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys> {
        self.keys.keys(subscription_id)
    }

    fn all(&self) -> Vec<(String, SubscriptionKeys)> {
        self.keys.all()
    }
}

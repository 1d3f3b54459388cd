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
//!
//! A subscription a service shows without an id (partner-client's [`SubscriptionElement`]:
//! product, `url`, `resource`) has its key kept by the element (`element_signing_keys`) and
//! offered to the verdict as unbound ([`KeySource::unbound`]); the first notification for its URL
//! that verifies with it binds the id it names ([`KeySource::bind`]): the binding is kept in the
//! database and every server told, so the id's keys are then found directly, on every server and
//! after a restart. A key about to be sent to the service is first kept as pending
//! ([`keep_pending`]), so the service never holds a key the servers have lost.

use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use partner_api::Secret;
use partner_client::SubscriptionElement;
use partner_listener::keys::{PreviousKey, SubscriptionKeys, UnboundSubscription};
use partner_listener::{KeySource, MemoryKeys};
use partner_seal::DataKey;
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

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

/// What an element's key is sealed with: the element (product, resource, url) authenticated.
fn element_context(element: &SubscriptionElement) -> Vec<u8> {
    format!(
        "partner-server element signing key\0{}\0{}\0{}",
        element.product_id, element.resource, element.url
    )
    .into_bytes()
}

/// Sets the key of a subscription the service shows without an id. A new subscription
/// (`new`) starts afresh: no previous key, no binding (the service made another subscription,
/// whatever was bound to an element of the same product, url and resource before). A rotation
/// keeps the binding and, when the key differs, the current key as the previous, replaced now.
pub async fn set_element(
    pool: &PgPool,
    server_key: &DataKey,
    element: &SubscriptionElement,
    key: &Secret,
    new: bool,
) -> Result<()> {
    if key.expose().trim().is_empty() {
        return Err(Error::Invalid("a signing key must not be blank".into()));
    }
    let context = element_context(element);
    let sealed = partner_seal::seal(server_key, &context, key.expose().as_bytes());
    let mut tx = pool.begin().await?;
    let existing: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT sealed_current FROM element_signing_keys \
         WHERE product_id = $1 AND url = $2 AND resource = $3 FOR UPDATE",
    )
    .bind(&element.product_id)
    .bind(&element.url)
    .bind(&element.resource)
    .fetch_optional(&mut *tx)
    .await?;
    match existing {
        Some(current) if !new => {
            let same =
                open_with(server_key, &context, &current, &element.describe())?.ct_eq(key.expose());
            if !same {
                sqlx::query(
                    "UPDATE element_signing_keys SET sealed_previous = sealed_current, \
                     replaced_at = now(), sealed_current = $4, updated_at = now() \
                     WHERE product_id = $1 AND url = $2 AND resource = $3",
                )
                .bind(&element.product_id)
                .bind(&element.url)
                .bind(&element.resource)
                .bind(&sealed)
                .execute(&mut *tx)
                .await?;
            }
        }
        _ => {
            sqlx::query(
                "INSERT INTO element_signing_keys (product_id, url, resource, sealed_current) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (product_id, url, resource) DO UPDATE SET \
                    sealed_current = excluded.sealed_current, sealed_previous = NULL, \
                    replaced_at = NULL, bound_id = NULL, bound_at = NULL, updated_at = now()",
            )
            .bind(&element.product_id)
            .bind(&element.url)
            .bind(&element.resource)
            .bind(&sealed)
            .execute(&mut *tx)
            .await?;
        }
    }
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(KEYS_CHANNEL)
        .bind(&element.product_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Binds `subscription_id` to an element whose key verified a notification naming it, for
/// every server (kept, and told on [`KEYS_CHANNEL`]). An element bound already keeps its id;
/// whether this bound it.
pub async fn bind_element(
    pool: &PgPool,
    element: &SubscriptionElement,
    subscription_id: &str,
) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let bound = sqlx::query(
        "UPDATE element_signing_keys SET bound_id = $4, bound_at = now() \
         WHERE product_id = $1 AND url = $2 AND resource = $3 AND bound_id IS NULL",
    )
    .bind(&element.product_id)
    .bind(&element.url)
    .bind(&element.resource)
    .bind(subscription_id)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        > 0;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(KEYS_CHANNEL)
        .bind(subscription_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(bound)
}

/// The elements' keys: those bound, by their id; those not bound yet, for the verdict to try.
pub async fn load_elements(
    pool: &PgPool,
    server_key: &DataKey,
) -> Result<(BTreeMap<String, SubscriptionKeys>, Vec<UnboundSubscription>)> {
    type Row = (
        String,
        String,
        String,
        Vec<u8>,
        Option<Vec<u8>>,
        Option<DateTime<Utc>>,
        Option<String>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT product_id, url, resource, sealed_current, sealed_previous, replaced_at, \
         bound_id FROM element_signing_keys ORDER BY product_id, url, resource",
    )
    .fetch_all(pool)
    .await?;
    let mut bound = BTreeMap::new();
    let mut unbound = Vec::new();
    for (product_id, url, resource, current, previous, replaced_at, bound_id) in rows {
        let element = SubscriptionElement {
            product_id,
            url,
            resource,
        };
        let context = element_context(&element);
        let named = element.describe();
        let previous = match (previous, replaced_at) {
            (Some(sealed), Some(replaced_at)) => Some(PreviousKey {
                key: open_with(server_key, &context, &sealed, &named)?,
                replaced_at,
            }),
            _ => None,
        };
        let keys = SubscriptionKeys {
            current: open_with(server_key, &context, &current, &named)?,
            previous,
        };
        match bound_id {
            Some(id) => {
                bound.insert(id, keys);
            }
            None => unbound.push(UnboundSubscription {
                element: serde_json::to_string(&element).unwrap_or_default(),
                url: element.url.clone(),
                resource: element.resource.clone(),
                keys,
            }),
        }
    }
    Ok((bound, unbound))
}

fn open_with(server_key: &DataKey, context: &[u8], sealed: &[u8], named: &str) -> Result<Secret> {
    let bytes = partner_seal::open(server_key, context, sealed).map_err(|_| {
        Error::ServerKey(format!(
            "the signing key of {named} does not open with this key"
        ))
    })?;
    String::from_utf8(bytes)
        .map(Secret::new)
        .map_err(|_| Error::ServerKey(format!("the signing key of {named} is not text")))
}

/// The current key of an element, if the servers keep one.
pub async fn element_key(
    pool: &PgPool,
    server_key: &DataKey,
    element: &SubscriptionElement,
) -> Result<Option<Secret>> {
    let sealed: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT sealed_current FROM element_signing_keys \
         WHERE product_id = $1 AND url = $2 AND resource = $3",
    )
    .bind(&element.product_id)
    .bind(&element.url)
    .bind(&element.resource)
    .fetch_optional(pool)
    .await?;
    sealed
        .map(|sealed| {
            open_with(
                server_key,
                &element_context(element),
                &sealed,
                &element.describe(),
            )
        })
        .transpose()
}

/// Forgets a deleted subscription's keys, current and previous (every server told).
pub async fn forget(pool: &PgPool, subscription_id: &str) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM signing_keys WHERE subscription_id = $1")
        .bind(subscription_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(KEYS_CHANNEL)
        .bind(subscription_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Forgets everything kept for a deleted (or moved) element: its keys and its binding.
pub async fn forget_element(pool: &PgPool, element: &SubscriptionElement) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "DELETE FROM element_signing_keys WHERE product_id = $1 AND url = $2 AND resource = $3",
    )
    .bind(&element.product_id)
    .bind(&element.url)
    .bind(&element.resource)
    .execute(&mut *tx)
    .await?;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(KEYS_CHANNEL)
        .bind(&element.product_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

fn pending_context(attempt: &str) -> Vec<u8> {
    format!("partner-server pending signing key\0{attempt}").into_bytes()
}

/// Keeps `key` sealed before the service is sent it for product `product_id` (by `by`); the
/// attempt's name, for [`forget_pending`] once the key is kept where it belongs or was refused.
pub async fn keep_pending(
    pool: &PgPool,
    server_key: &DataKey,
    product_id: &str,
    key: &Secret,
    by: &str,
) -> Result<String> {
    use rand::Rng as _;
    let attempt = format!(
        "{}-{:016x}",
        Utc::now().timestamp_millis(),
        rand::rng().random::<u64>()
    );
    let sealed = partner_seal::seal(
        server_key,
        &pending_context(&attempt),
        key.expose().as_bytes(),
    );
    sqlx::query(
        "INSERT INTO pending_signing_keys (attempt, product_id, sealed_key, created_by) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(&attempt)
    .bind(product_id)
    .bind(&sealed)
    .bind(by)
    .execute(pool)
    .await?;
    Ok(attempt)
}

/// Removes a pending key (kept where it belongs now, or refused by the service).
pub async fn forget_pending(pool: &PgPool, attempt: &str) -> Result<()> {
    sqlx::query("DELETE FROM pending_signing_keys WHERE attempt = $1")
        .bind(attempt)
        .execute(pool)
        .await?;
    Ok(())
}

/// The keys every server verifies with: a copy of the tables in memory (see the module's
/// notes), held by the listener's own [`MemoryKeys`], and the elements not bound yet.
#[derive(Debug, Clone)]
pub struct WorkspaceKeys {
    pool: PgPool,
    server_key: Arc<DataKey>,
    keys: Arc<MemoryKeys>,
    unbound: Arc<RwLock<Vec<UnboundSubscription>>>,
}

impl WorkspaceKeys {
    /// Loads every key once.
    pub async fn load(pool: PgPool, server_key: Arc<DataKey>) -> Result<Self> {
        let keys = Self {
            pool,
            server_key,
            keys: Arc::new(MemoryKeys::new()),
            unbound: Arc::default(),
        };
        keys.reload().await?;
        Ok(keys)
    }

    /// Reads the tables again (after a server set a key or bound one).
    pub async fn reload(&self) -> Result<()> {
        let (bound, unbound) = load_elements(&self.pool, &self.server_key).await?;
        let mut all = load_all(&self.pool, &self.server_key).await?;
        for (id, keys) in bound {
            // A key set by id (`key set`) is the one the id's notifications are signed with.
            all.entry(id).or_insert(keys);
        }
        self.keys.replace_all(all);
        *self
            .unbound
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = unbound;
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

    fn unbound(&self) -> Vec<UnboundSubscription> {
        self.unbound
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Binds at once in this server's memory, and in the database (every server told) on a
    /// task of its own: the verdict that asked does not wait on a round trip.
    fn bind(&self, subscription_id: &str, subscription: &UnboundSubscription) {
        self.unbound
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .retain(|u| u.element != subscription.element);
        self.keys.bind(subscription_id, subscription);
        let Ok(element) = serde_json::from_str::<SubscriptionElement>(&subscription.element) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (pool, id) = (self.pool.clone(), subscription_id.to_string());
        runtime.spawn(async move {
            match bind_element(&pool, &element, &id).await {
                Ok(_) => tracing::info!(subscription = %id, element = %element.describe(), "subscription id bound to its element"),
                Err(error) => tracing::warn!(%error, subscription = %id, "the binding of a subscription id was not kept"),
            }
        });
    }
}

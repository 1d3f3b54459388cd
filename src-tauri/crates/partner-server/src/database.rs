//! The workspace's PostgreSQL: connecting, the schema's migrations, and `init`.
//!
//! Why sqlx: it is the PostgreSQL driver most of the Rust ecosystem's servers use, pure Rust
//! (no libpq to build or ship on Windows and macOS), async on tokio as the rest of the console,
//! with a connection pool, LISTEN/NOTIFY and migrations in the same crate. Its migrations are
//! plain SQL files (`migrations/`), embedded in the binary, applied in order under an advisory
//! lock (two servers starting at once do not both migrate) and checksummed (an applied file
//! that was changed later is refused rather than silently diverging).

use crate::error::{Error, Result};
use crate::members;
use crate::roles::Role;
use crate::tokens::MemberToken;
use partner_seal::DataKey;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use std::str::FromStr as _;
use std::time::Duration;

/// The schema's migrations, embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The workspace's connection pool.
pub type Pool = PgPool;

/// The name of the first admin `init` creates.
pub const FIRST_ADMIN: &str = "admin";

/// Connects a pool to `url` (`postgres://user:password@host:port/database?sslmode=...`).
///
/// Every statement is planned for its own values (`plan_cache_mode = force_custom_plan`): sqlx
/// prepares each statement once per connection, and from its sixth run PostgreSQL may keep a
/// generic plan that knows no value. A search's plan depends on its words (a word in every
/// capture is counted by reading the table from its start, 14 ms; a rare one from the
/// full-text index), and a generic plan took the index for both: 87 ms for the common word at
/// a million captures (BENCHMARKS.md, the team workspace). Planning each time costs a
/// millisecond or two.
pub async fn connect(url: &str, max_connections: u32) -> Result<PgPool> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|error| {
            // sqlx's parse error quotes no part of the URL; the URL itself may hold a password.
            Error::Invalid(format!("the database URL is not usable: {error}"))
        })?
        .options([("plan_cache_mode", "force_custom_plan")]);
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(Error::from)
}

/// What `init` did.
#[derive(Debug)]
pub struct InitReport {
    /// Versions of the migrations applied now (none when the schema was up to date).
    pub applied: Vec<i64>,
    /// The first admin's token, when this run created the first admin.
    pub admin_token: Option<MemberToken>,
}

/// Creates or migrates the schema and, once, the workspace's first admin. Run again it changes
/// nothing: no migration is applied twice, and a workspace with an admin gets no second one.
/// The workspace remembers the server key's fingerprint; `init` with another key is refused.
pub async fn init(pool: &PgPool, server_key: &DataKey) -> Result<InitReport> {
    let before: Vec<i64> = applied_versions(pool).await?;
    MIGRATOR.run(pool).await?;
    let applied = applied_versions(pool)
        .await?
        .into_iter()
        .filter(|version| !before.contains(version))
        .collect();
    let mut tx = pool.begin().await?;
    // One init at a time past this point, whichever server runs it.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('partner-server init'))")
        .execute(&mut *tx)
        .await?;
    let fingerprint = server_key.fingerprint();
    let known: Option<String> = sqlx::query_scalar("SELECT server_key_fingerprint FROM workspace")
        .fetch_optional(&mut *tx)
        .await?;
    match known {
        Some(known) if known != fingerprint => return Err(wrong_key(&known, &fingerprint)),
        Some(_) => {}
        None => {
            sqlx::query("INSERT INTO workspace (server_key_fingerprint) VALUES ($1)")
                .bind(&fingerprint)
                .execute(&mut *tx)
                .await?;
        }
    }
    let has_admin: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM members WHERE role = 'admin')")
            .fetch_one(&mut *tx)
            .await?;
    let admin_token = if has_admin {
        None
    } else {
        Some(members::insert(&mut tx, FIRST_ADMIN, Role::Admin, None).await?)
    };
    tx.commit().await?;
    Ok(InitReport {
        applied,
        admin_token,
    })
}

/// Checks that the database holds an initialised workspace of this server key and that its
/// schema is current (a server does not migrate on its own: `init` does, once, on purpose).
pub async fn check(pool: &PgPool, server_key: &DataKey) -> Result<()> {
    let applied = applied_versions(pool).await?;
    let latest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or_default();
    if applied.is_empty() {
        return Err(Error::NotInitialised);
    }
    if !applied.contains(&latest) {
        return Err(Error::Migration(format!(
            "the database's schema is older than this server's (migration {latest} not applied): \
             run `partner server init --database URL` to migrate it"
        )));
    }
    let known: Option<String> = sqlx::query_scalar("SELECT server_key_fingerprint FROM workspace")
        .fetch_optional(pool)
        .await?;
    match known {
        None => Err(Error::NotInitialised),
        Some(known) if known != server_key.fingerprint() => {
            Err(wrong_key(&known, &server_key.fingerprint()))
        }
        Some(_) => Ok(()),
    }
}

fn wrong_key(known: &str, given: &str) -> Error {
    Error::ServerKey(format!(
        "this key (fingerprint {given}) is not the workspace's ({known}): start every server \
         with the key file `partner server init` made, or its ${}",
        crate::server_key::KEY_ENV
    ))
}

/// The migrations applied so far (none before the first `init`).
async fn applied_versions(pool: &PgPool) -> Result<Vec<i64>> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await?;
    if !exists {
        return Ok(Vec::new());
    }
    Ok(
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(pool)
            .await?,
    )
}

//! The workspace's members: adding one (its token printed once), and finding who a presented
//! token belongs to.

use crate::error::{Error, Result};
use crate::roles::Role;
use crate::tokens::{self, MemberToken};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Postgres, Transaction};

/// A member as the server knows them (never their token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    pub role: Role,
}

/// Adds a member with a new token. A name already taken is refused (names are what the audit
/// log is read by).
pub async fn add(pool: &PgPool, name: &str, role: Role, by: Option<&str>) -> Result<MemberToken> {
    let mut tx = pool.begin().await?;
    let token = insert(&mut tx, name, role, by).await?;
    tx.commit().await?;
    Ok(token)
}

pub(crate) async fn insert(
    tx: &mut Transaction<'_, Postgres>,
    name: &str,
    role: Role,
    by: Option<&str>,
) -> Result<MemberToken> {
    let name = valid_name(name)?;
    let token = MemberToken::generate();
    let inserted = sqlx::query(
        "INSERT INTO members (name, role, token_sha256, created_by) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(role.as_str())
    .bind(token.digest().as_slice())
    .bind(by)
    .execute(&mut **tx)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(Error::Invalid(format!(
            "the workspace already has a member named {name:?}"
        )));
    }
    Ok(token)
}

/// The member a token belongs to, if any.
pub async fn by_token(pool: &PgPool, token: &str) -> Result<Option<Member>> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT name, role FROM members WHERE token_sha256 = $1")
            .bind(tokens::digest(token).as_slice())
            .fetch_optional(pool)
            .await?;
    row.map(|(name, role)| {
        let role = role.parse().map_err(Error::Database)?;
        Ok(Member { name, role })
    })
    .transpose()
}

/// Every member, by name.
pub async fn list(pool: &PgPool) -> Result<Vec<Member>> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT name, role FROM members ORDER BY name")
            .fetch_all(pool)
            .await?;
    rows.into_iter()
        .map(|(name, role)| {
            Ok(Member {
                name,
                role: role.parse().map_err(Error::Database)?,
            })
        })
        .collect()
}

/// A member's name: printable, 1-100 characters, trimmed.
fn valid_name(name: &str) -> Result<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(Error::Invalid(format!(
            "{name:?} is not a member name: 1 to 100 printable characters"
        )));
    }
    Ok(name)
}

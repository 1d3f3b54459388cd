//! What can go wrong on a team server, as the CLI and the workspace's HTTP answers tell it.
//!
//! No variant carries a secret: a database error is told by what sqlx says of it, which names
//! neither the connection URL's password nor a query's parameters; a member's token, the server
//! key and the signing keys never reach an error.

use crate::roles::{Action, Role};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// PostgreSQL could not be reached or refused a statement.
    #[error("the workspace's database: {0}")]
    Database(String),
    /// The schema could not be brought up to date.
    #[error("the workspace's schema could not be migrated: {0}")]
    Migration(String),
    /// Something the caller gave is not usable (a name, a role, a filter); said as it was given.
    #[error("{0}")]
    Invalid(String),
    /// A member tried what their role does not allow.
    #[error("{}", refusal_text(*role, *action))]
    Forbidden { role: Role, action: Action },
    /// No member has the token given (or none was given).
    #[error("the workspace knows no member with this token")]
    Unauthorized,
    /// Too many failed logins from one address: it waits this many seconds.
    #[error("too many failed logins from this address; try again in {0} s")]
    TooManyFailedLogins(u64),
    #[error("{0} was not found")]
    NotFound(String),
    /// The server key (what the signing keys are sealed with) is missing, unreadable or not the
    /// workspace's.
    #[error("the server key: {0}")]
    ServerKey(String),
    /// `partner server init` has not been run on this database.
    #[error(
        "this database holds no workspace yet: run `partner server init --database URL` first"
    )]
    NotInitialised,
    #[error("{0}")]
    Io(String),
    /// No service connection is set: nothing can be synced or asked of the service.
    #[error("the workspace has no service connection yet: an admin sets it with `partner server service set`")]
    NoService,
    /// The service refused or failed a call made for the workspace; its own words.
    #[error("the service: {message}")]
    Service {
        message: String,
        status: Option<u16>,
    },
    /// The support index failed (its own words, which quote no transaction).
    #[error("the support index: {0}")]
    Index(String),
}

/// "a viewer may not clear captures: it takes the developer role".
fn refusal_text(role: Role, action: Action) -> String {
    format!(
        "{} {role} may not {}: it takes the {} role",
        role.article(),
        action.describe(),
        action.least_role()
    )
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        match error {
            // The server's own words (its message, code and detail), not the statement's values.
            sqlx::Error::Database(db) => Error::Database(match db.code() {
                Some(code) => format!("{} (SQLSTATE {code})", db.message()),
                None => db.message().to_string(),
            }),
            other => Error::Database(other.to_string()),
        }
    }
}

impl From<partner_client::ClientError> for Error {
    fn from(error: partner_client::ClientError) -> Self {
        use partner_client::ClientError as C;
        let status = match &error {
            C::Unauthorized { .. } => Some(401),
            C::InvalidRequest { status, .. } | C::Server { status, .. } => Some(*status),
            C::NotFound { .. } => Some(404),
            C::Conflict { .. } => Some(409),
            C::RateLimited { .. } => Some(429),
            _ => None,
        };
        Error::Service {
            status,
            message: error.to_string(),
        }
    }
}

impl From<partner_index::Error> for Error {
    fn from(error: partner_index::Error) -> Self {
        match error {
            partner_index::Error::Invalid(message) => Error::Invalid(message),
            partner_index::Error::Client(client) => client.into(),
            other => Error::Index(other.to_string()),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        Error::Migration(error.to_string())
    }
}

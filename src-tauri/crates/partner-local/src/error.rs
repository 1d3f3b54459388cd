//! Errors of the local state: each says what failed and on which file, never a secret.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Client(#[from] partner_client::ClientError),
    #[error(transparent)]
    Store(#[from] partner_listener::Error),
    /// Another record of arrivals than this machine's store (a team workspace's database)
    /// could not be read; its own words ([`crate::missed::ArrivalLog`]).
    #[error("what arrived could not be read: {0}")]
    Arrivals(String),
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

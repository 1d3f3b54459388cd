//! The index's errors. Each names a path, an id or a count, never a value read from a
//! transaction (borrower data stays out of messages and logs) and never the key.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file exists but does not open with the key the keychain holds for it (another
    /// key, or not an index at all). It is left as it is.
    #[error("the local index {} does not open with its key from the keychain (it may have been made with another key, or be damaged); it was left untouched: forget this connection's data and sync again", path.display())]
    WrongKey { path: PathBuf },
    /// The file exists but the keychain has no key for it.
    #[error("the local index {} exists but its key is not in the keychain, so it cannot be read; it was left untouched: forget this connection's data and sync again", path.display())]
    KeyMissing { path: PathBuf },
    /// The keychain could not be read or written.
    #[error(transparent)]
    Client(#[from] partner_client::ClientError),
    #[error("the local index {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed; the message is SQLite's (it never quotes a bound value).
    #[error("the local index failed: {0}")]
    Sqlite(String),
    /// Another store a sync writes to failed (a team workspace's database); the message is
    /// the store's own, in words that quote no transaction.
    #[error("{0}")]
    Store(String),
    /// A question the index cannot take (a bad filter, an id that cannot name a file).
    #[error("{0}")]
    Invalid(String),
    /// A stored row is not a transaction any more (a damaged or foreign file).
    #[error("the local index holds a row that is not a transaction ({0})")]
    Corrupt(String),
    #[error("{what} is not in the local index")]
    NotFound { what: String },
}

impl Error {
    /// A JSON failure in words that quote nothing of the data: serde's own message can quote
    /// the value it choked on, which may be a borrower's.
    pub(crate) fn json(error: serde_json::Error) -> Self {
        Error::Corrupt(format!(
            "{:?} JSON at line {} column {}",
            error.classify(),
            error.line(),
            error.column()
        ))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Sqlite(error.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_failures_quote_nothing_of_the_data() {
        let serde = serde_json::from_str::<u32>("\"Zelda Quuxington\"").unwrap_err();
        assert!(
            serde.to_string().contains("Zelda"),
            "serde's own message quotes it"
        );
        let ours = Error::json(serde).to_string();
        assert!(!ours.contains("Zelda"), "{ours}");
        assert!(ours.contains("line 1"), "{ours}");
    }
}

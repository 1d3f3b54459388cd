//! The CLI's errors: each says what failed in words a user can act on, never a secret.

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("could not listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] partner_sandbox::Error),
    #[error(transparent)]
    Listener(#[from] partner_listener::Error),
    #[error("could not write to stdout: {0}")]
    Output(#[source] std::io::Error),
    #[error(transparent)]
    Client(#[from] partner_client::ClientError),
    /// A missing or unusable argument, said in words.
    #[error("{0}")]
    Usage(String),
    #[error("could not wait for a stop signal: {0}")]
    Signal(#[source] std::io::Error),
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

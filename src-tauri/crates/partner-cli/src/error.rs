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
    #[error(transparent)]
    Local(#[from] partner_local::Error),
    #[error(transparent)]
    Index(#[from] partner_index::Error),
    /// `partner server`: the workspace's database, members, keys or server.
    #[error(transparent)]
    Server(#[from] partner_server::Error),
    /// A call to the team workspace (`PARTNER_WORKSPACE`) refused or failed; the message is the
    /// workspace's own (a role's refusal names the role).
    #[error("the workspace: {message}")]
    Workspace { message: String, status: u8 },
    /// Stopped by Ctrl-C or SIGTERM before the end; what was found so far was printed.
    #[error("interrupted")]
    Cancelled,
    /// A missing or unusable argument, said in words.
    #[error("{0}")]
    Usage(String),
    #[error("could not wait for a stop signal: {0}")]
    Signal(#[source] std::io::Error),
    /// `check-receiver`: the receiver breaks these rules (the report is on stdout).
    #[error("the receiver fails: {0}")]
    CheckFailed(String),
    /// `doctor`: a step of the connection check did not pass (the report is on stdout).
    #[error("the connection check: {0}")]
    DoctorFailed(String),
    /// `listen recover` and `listen replay`: some sends were not taken as expected (each is on
    /// stdout).
    #[error("{0}")]
    SendsFailed(String),
    /// The app's services (`partner demo`): what failed, and what to do about it.
    #[error("{} {}", .0.message, .0.hint)]
    App(#[from] partner_console_core::AppError),
    /// `check-receiver`: the check could not run, and why.
    #[error("the check could not run: {0}")]
    CheckNotRun(String),
    /// `version --check`: the manifest could not be fetched (`unreachable`) or read.
    #[error("{message}")]
    VersionCheck { message: String, unreachable: bool },
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// The exit statuses of `partner`, one table (shown in `--help`).
pub const EXIT_STATUSES: &str = "\
Exit status:
  0  done
  1  the service refused or failed the request (4xx, 5xx)
  2  bad usage: a missing or wrong argument, a rule of the spec broken, or a write on a
     read-only connection (nothing was sent)
  3  the service could not be reached, or did not answer in time
  4  a local failure: the keychain, a file, a port, a store in use
130  interrupted (Ctrl-C, SIGTERM) before the end: what was found so far was printed
`partner check-receiver` has its own: 0 every rule passes, 1 a rule fails, 2 it could not run.
`partner doctor`: 0 every step passed, 1 a step failed (the report says which and what to do).
`partner version --check`: 0 whether or not a newer version exists (the output says), 3 the
release page unreachable, 1 its answer not an update manifest.";

impl CliError {
    fn client_status(error: &partner_client::ClientError) -> u8 {
        use partner_client::ErrorKind;
        match error.kind() {
            ErrorKind::Rule | ErrorKind::ReadOnly => 2,
            ErrorKind::Network | ErrorKind::Timeout => 3,
            ErrorKind::Keychain => 4,
            _ => 1,
        }
    }

    /// Whether this is stdout closed under a command still writing (`partner … | head`): the
    /// reader has what it wanted, so `main` ends without a message, as `cat` or `grep` would.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, CliError::Output(error) if error.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// This error's exit status (see [`EXIT_STATUSES`]).
    pub fn exit_status(&self) -> u8 {
        match self {
            CliError::Usage(_) | CliError::CheckNotRun(_) => 2,
            CliError::CheckFailed(_) | CliError::DoctorFailed(_) | CliError::SendsFailed(_) => 1,
            CliError::VersionCheck { unreachable, .. } => {
                if *unreachable {
                    3
                } else {
                    1
                }
            }
            CliError::Client(error) => Self::client_status(error),
            CliError::App(error) => {
                use partner_console_core::ErrorKind;
                match error.kind {
                    ErrorKind::InvalidInput | ErrorKind::ReadOnly => 2,
                    // A team workspace's refusal for the member's role: the service's-refusal status.
                    ErrorKind::Server | ErrorKind::Refused => 1,
                    ErrorKind::Network | ErrorKind::NotConnected => 3,
                    ErrorKind::Cancelled => 130,
                    ErrorKind::Keychain
                    | ErrorKind::Io
                    | ErrorKind::Listener
                    | ErrorKind::Internal => 4,
                }
            }
            CliError::Listener(partner_listener::Error::InvalidInput(_)) => 2,
            CliError::Local(error) => match error {
                partner_local::Error::Client(error) => CliError::client_status(error),
                partner_local::Error::Invalid(_) => 2,
                partner_local::Error::Store(partner_listener::Error::InvalidInput(_)) => 2,
                partner_local::Error::Store(_)
                | partner_local::Error::Io { .. }
                | partner_local::Error::Arrivals(_) => 4,
            },
            CliError::Index(error) => match error {
                partner_index::Error::Client(error) => CliError::client_status(error),
                partner_index::Error::Invalid(_) => 2,
                partner_index::Error::NotFound { .. } => 1,
                partner_index::Error::WrongKey { .. }
                | partner_index::Error::KeyMissing { .. }
                | partner_index::Error::Io { .. }
                | partner_index::Error::Sqlite(_)
                | partner_index::Error::Store(_)
                | partner_index::Error::Corrupt(_) => 4,
            },
            CliError::Server(error) => {
                use partner_server::Error;
                match error {
                    Error::Forbidden { .. }
                    | Error::Unauthorized
                    | Error::TooManyFailedLogins(_)
                    | Error::NotFound(_)
                    | Error::Service { .. } => 1,
                    Error::Invalid(_) | Error::NotInitialised | Error::NoService => 2,
                    Error::Database(_) => 3,
                    Error::Migration(_) | Error::ServerKey(_) | Error::Io(_) | Error::Index(_) => 4,
                }
            }
            CliError::Workspace { status, .. } => *status,
            CliError::Cancelled => 130,
            CliError::Bind { .. }
            | CliError::Sandbox(_)
            | CliError::Listener(_)
            | CliError::Output(_)
            | CliError::Signal(_) => 4,
        }
    }
}

//! The one error type every command returns.
//!
//! Errors cross the bridge as data (`{kind, message, hint}`), never as bare strings, so the UI
//! branches on `kind` and shows `message` plus `hint` (what to do) instead of a blank screen.
//! Messages come from the libraries' own errors, which never carry a secret.

use serde::Serialize;
use ts_rs::TS;

/// What sort of failure it was: the UI picks wording and actions by this, never by message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// No connection is active yet (first run still starting, or it failed).
    NotConnected,
    /// The input was rejected before anything was sent.
    InvalidInput,
    /// The server answered with an error body.
    Server,
    /// The server could not be reached.
    Network,
    /// The OS keychain refused or is unavailable.
    Keychain,
    /// A file could not be read or written.
    Io,
    /// The user cancelled.
    Cancelled,
    /// The webhook listener failed.
    Listener,
    /// Something in the app itself went wrong.
    Internal,
    /// A write on a read-only connection: refused, nothing was sent.
    ReadOnly,
    /// The member's role in the team workspace does not allow it: refused, nothing was done.
    Refused,
}

/// An error as the UI receives it.
#[derive(Debug, Clone, Serialize, TS, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct AppError {
    pub kind: ErrorKind,
    /// What failed, in words.
    pub message: String,
    /// What the user can do about it.
    pub hint: String,
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
    /// The server's `errorCode`, when it sent one.
    pub error_code: Option<String>,
}

impl AppError {
    pub fn new(kind: ErrorKind, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            hint: hint.into(),
            status: None,
            error_code: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::InvalidInput,
            message,
            "Correct the highlighted value and try again.",
        )
    }

    pub fn not_connected() -> Self {
        Self::new(
            ErrorKind::NotConnected,
            "No connection is active.",
            "Open Connections and pick or add one; the embedded sandbox starts on its own at first run.",
        )
    }

    pub fn io(what: &str, error: &std::io::Error) -> Self {
        Self::new(
            ErrorKind::Io,
            format!("Could not {what}: {error}."),
            "Check that the folder exists and is writable, or choose another path.",
        )
    }
}

/// What every command returns.
pub type Result<T, E = AppError> = std::result::Result<T, E>;

impl From<partner_client::ClientError> for AppError {
    fn from(error: partner_client::ClientError) -> Self {
        use partner_client::{ClientError as E, ErrorKind as K};
        let message = error.to_string();
        let status = match &error {
            E::InvalidRequest { status, .. } | E::Server { status, .. } => Some(*status),
            E::Unauthorized { .. } => Some(401),
            E::NotFound { .. } => Some(404),
            E::Conflict { .. } => Some(409),
            E::RateLimited { .. } => Some(429),
            _ => None,
        };
        let (kind, hint) = match error.kind() {
            K::Unauthorized => (
                ErrorKind::Server,
                "Check the connection's client id and secret in Connections, or refresh the token.",
            ),
            K::InvalidRequest => (
                ErrorKind::Server,
                "Change what the server named and send again.",
            ),
            K::NotFound => (
                ErrorKind::Server,
                "It may have been deleted, or belong to another partner: reload the list.",
            ),
            K::Conflict => (
                ErrorKind::Server,
                "Reload to see the current state; a completed transaction is locked.",
            ),
            K::RateLimited => (ErrorKind::Server, "Wait a moment, then try again."),
            K::Network | K::Timeout => (
                ErrorKind::Network,
                "Check the base URL and that the service is running, then try again.",
            ),
            K::Server => (
                ErrorKind::Server,
                "The service failed; try again, and check its logs if it persists.",
            ),
            K::Rule => (
                ErrorKind::InvalidInput,
                "Correct the value as described; nothing was sent.",
            ),
            K::Keychain => (
                ErrorKind::Keychain,
                "Unlock the OS keychain (Secret Service) and try again.",
            ),
            K::ReadOnly => (
                ErrorKind::ReadOnly,
                "Nothing was sent. To change anything, turn off \"Read-only\" for this connection in Connections.",
            ),
        };
        let mut app = AppError::new(kind, message, hint);
        app.status = status;
        app
    }
}

impl AppError {
    /// A refusal by the member's role in the team workspace, in the sentence that names the
    /// role and the least role that may (`partner_workspace::roles::Role::why_not`).
    pub fn refused_by_role(why: String) -> Self {
        let mut error = Self::new(
            ErrorKind::Refused,
            why,
            "Nothing was sent to the workspace.",
        );
        error.status = Some(403);
        error
    }

    /// A workspace call's failure, in the workspace's words (which never carry the token).
    pub fn from_workspace(error: &partner_workspace::Error) -> Self {
        use partner_workspace::Error as E;
        let message = sentence(&error.to_string());
        let (kind, status, hint) = match error {
            E::Refused { needs, .. } => (
                ErrorKind::Refused,
                Some(403),
                match needs {
                    Some(needs) => format!(
                        "Ask an admin of the workspace for the {needs} role; nothing was done."
                    ),
                    None => "Ask an admin of the workspace; nothing was done.".to_string(),
                },
            ),
            E::Invalid(_) => (
                ErrorKind::InvalidInput,
                Some(400),
                "Correct what the workspace named and try again.".to_string(),
            ),
            E::Unauthorized(_) => (
                ErrorKind::Server,
                Some(401),
                "The workspace does not know this token (revoked, or mistyped): ask an admin for a new one (`partner server member add`) and join again in Connections."
                    .to_string(),
            ),
            E::RateLimited {
                retry_after_secs, ..
            } => (
                ErrorKind::Server,
                Some(429),
                match retry_after_secs {
                    Some(secs) => format!("Wait {secs} s, then try again."),
                    None => "Wait a moment, then try again.".to_string(),
                },
            ),
            E::Failed { status: 404, .. } => (
                ErrorKind::Server,
                Some(404),
                "The workspace does not hold it (yet): sync its index, or reload.".to_string(),
            ),
            E::Failed { status, .. } => (
                ErrorKind::Server,
                Some(*status),
                "The workspace's server failed; try again, and check its logs if it persists."
                    .to_string(),
            ),
            E::Unreachable(_) => (
                ErrorKind::Network,
                None,
                "Check that the workspace's server runs and that its URL is right; to work on this machine's own store meanwhile, leave the workspace in Connections."
                    .to_string(),
            ),
            E::Unreadable(_) => (
                ErrorKind::Server,
                None,
                "The workspace's server and this console may be of different versions: update the older one."
                    .to_string(),
            ),
            E::Usage(_) => (
                ErrorKind::InvalidInput,
                None,
                "Correct the workspace's URL or token and try again.".to_string(),
            ),
            E::SavedLogin(_) => (
                ErrorKind::Io,
                None,
                "Check the data folder and the OS's secret store, then join the workspace again in Connections."
                    .to_string(),
            ),
        };
        let mut app = AppError::new(kind, message, hint);
        app.status = status;
        app
    }
}

impl From<partner_workspace::Error> for AppError {
    fn from(error: partner_workspace::Error) -> Self {
        AppError::from_workspace(&error)
    }
}

impl From<partner_listener::Error> for AppError {
    fn from(error: partner_listener::Error) -> Self {
        use partner_listener::Error as E;
        let hint = match &error {
            E::InvalidInput(_) => "Correct the value and try again.",
            E::NoSuchCapture(_) => "The capture was pruned or cleared; reload the inspector.",
            E::Io(_) => "Another program may hold the port: choose another port or stop it.",
            E::Outbound { .. } => "Check that the target is running and reachable.",
            // The store refused the change rather than make it on part of its captures: they
            // are safe, and clearing the store (the catch-all's advice) would be refused too.
            E::TablesBehind { .. } => {
                "Nothing was lost: free space on the capture store's disk, or stop the program \
                 holding it, then try again."
            }
            _ => "Restart the listener; if it keeps failing, clear the capture store.",
        };
        let kind = match &error {
            E::InvalidInput(_) => ErrorKind::InvalidInput,
            _ => ErrorKind::Listener,
        };
        AppError::new(kind, error.to_string(), hint)
    }
}

impl From<partner_index::Error> for AppError {
    fn from(error: partner_index::Error) -> Self {
        use partner_index::Error as E;
        match error {
            E::Client(client) => client.into(),
            E::Invalid(_) => AppError::new(
                ErrorKind::InvalidInput,
                format!("{error}."),
                "Correct the filter and try again.",
            ),
            E::NotFound { .. } => AppError::new(
                ErrorKind::InvalidInput,
                format!("{}.", capitalised(&error.to_string())),
                "Sync the local copy, or look it up on the service.",
            ),
            E::WrongKey { .. } | E::KeyMissing { .. } => AppError::new(
                ErrorKind::Keychain,
                format!("{}.", capitalised(&error.to_string())),
                "Use \"Forget this connection's data\" on the Support screen, then make a new copy.",
            ),
            E::Io { .. } | E::Sqlite(_) | E::Store(_) | E::Corrupt(_) => AppError::new(
                ErrorKind::Io,
                format!("{}.", capitalised(&error.to_string())),
                "Check the data folder's free space and permissions; if it keeps failing, forget this connection's data and sync again.",
            ),
        }
    }
}

/// `text` as a sentence: capitalised, ending in a full stop (library errors start lower-case
/// and end without one).
pub fn sentence(text: &str) -> String {
    let text = text.trim();
    // A URL at the start stays as written ("http://…", not "Http://…").
    let text = if text.starts_with("http://") || text.starts_with("https://") {
        text.to_string()
    } else {
        capitalised(text)
    };
    if text.ends_with(['.', '!', '?']) {
        text
    } else {
        format!("{text}.")
    }
}

/// `text` with its first letter upper-cased (library errors start lower-case).
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_refusal_keeps_its_words_and_names_the_role_it_takes() {
        let error = AppError::from(partner_workspace::Error::Refused {
            message: "a viewer may not clear captures: it takes the developer role".into(),
            role: Some("viewer".into()),
            needs: Some("developer".into()),
        });
        assert_eq!(error.kind, ErrorKind::Refused);
        assert_eq!(error.status, Some(403));
        assert_eq!(
            error.message,
            "A viewer may not clear captures: it takes the developer role."
        );
        assert!(error.hint.contains("developer role"), "{}", error.hint);
        let unreachable = AppError::from(partner_workspace::Error::Unreachable(
            "http://127.0.0.1:9 could not be reached: connection refused".into(),
        ));
        assert_eq!(unreachable.kind, ErrorKind::Network);
        assert!(
            unreachable.hint.contains("leave the workspace"),
            "{}",
            unreachable.hint
        );
    }

    #[test]
    fn a_change_the_capture_store_refused_is_told_as_such_not_to_clear_the_store() {
        let error = AppError::from(partner_listener::Error::TablesBehind {
            waiting: 3,
            reason: "database or disk is full".into(),
        });
        assert_eq!(error.kind, ErrorKind::Listener);
        assert!(
            error.message.contains("database or disk is full"),
            "{}",
            error.message
        );
        assert!(error.hint.contains("free space"), "{}", error.hint);
        assert!(!error.hint.contains("clear"), "{}", error.hint);
        assert!(
            !error.hint.contains("  "),
            "one sentence, no run of spaces: {:?}",
            error.hint
        );
    }
}

//! What a call to a workspace, or its saved login, can end in. Messages are the server's own
//! (a refusal names the member's role and the role the call takes); none carries the token.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 403: the member's role does not allow the call (`role`, and the role it `needs`).
    #[error("{message}")]
    Refused {
        message: String,
        role: Option<String>,
        needs: Option<String>,
    },
    /// 400: the call's body or parameters are not usable.
    #[error("{0}")]
    Invalid(String),
    /// 401: the workspace knows no member with this token.
    #[error("{0}")]
    Unauthorized(String),
    /// 429: too many failed logins from this address; the server says how long to wait.
    #[error("{message}")]
    RateLimited {
        message: String,
        retry_after_secs: Option<u64>,
    },
    /// Any other answer that is not a success (404, 5xx): its status and the server's words.
    #[error("{message}")]
    Failed { status: u16, message: String },
    /// The workspace could not be reached, or its answer did not arrive whole.
    #[error("{0}")]
    Unreachable(String),
    /// An answer this version cannot read.
    #[error("{0}")]
    Unreadable(String),
    /// A workspace named wrongly (not a URL, a URL without a token), said before anything is
    /// sent.
    #[error("{0}")]
    Usage(String),
    /// The saved login could not be read, written or removed (its file, or the secret store).
    #[error("{0}")]
    SavedLogin(String),
}

impl Error {
    /// The error an answer with `status` and `body` (not a success) stands for: the server's
    /// `{error, message, role, needs}`, or `HTTP {status}` when the body says nothing.
    pub fn from_answer(status: u16, body: &[u8], retry_after_secs: Option<u64>) -> Self {
        let json = serde_json::from_slice::<serde_json::Value>(body).ok();
        let field = |name: &str| {
            json.as_ref()
                .and_then(|body| body.get(name)?.as_str().map(str::to_string))
        };
        let message = field("message").unwrap_or_else(|| match status_text(status) {
            Some(text) => format!("HTTP {status} {text}"),
            None => format!("HTTP {status}"),
        });
        match status {
            400 => Error::Invalid(message),
            401 => Error::Unauthorized(message),
            403 => Error::Refused {
                message,
                role: field("role"),
                needs: field("needs"),
            },
            429 => Error::RateLimited {
                message,
                retry_after_secs,
            },
            status => Error::Failed { status, message },
        }
    }
}

fn status_text(status: u16) -> Option<&'static str> {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_the_servers_words_and_the_roles() {
        let body = br#"{"error":"forbidden","message":"a viewer may not clear captures: it takes the developer role","role":"viewer","needs":"developer","action":"clear"}"#;
        match Error::from_answer(403, body, None) {
            Error::Refused {
                message,
                role,
                needs,
            } => {
                assert_eq!(
                    message,
                    "a viewer may not clear captures: it takes the developer role"
                );
                assert_eq!(role.as_deref(), Some("viewer"));
                assert_eq!(needs.as_deref(), Some("developer"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_status_is_its_own_error() {
        let said = |m: &str| format!(r#"{{"error":"x","message":"{m}"}}"#).into_bytes();
        assert!(
            matches!(Error::from_answer(400, &said("bad filter"), None), Error::Invalid(m) if m == "bad filter")
        );
        assert!(
            matches!(Error::from_answer(401, &said("no member"), None), Error::Unauthorized(m) if m == "no member")
        );
        assert!(matches!(
            Error::from_answer(429, &said("wait"), Some(30)),
            Error::RateLimited { message, retry_after_secs: Some(30) } if message == "wait"
        ));
        assert!(matches!(
            Error::from_answer(404, &said("capture 9 was not found"), None),
            Error::Failed { status: 404, message } if message == "capture 9 was not found"
        ));
    }

    #[test]
    fn a_body_without_words_is_named_by_its_status() {
        assert_eq!(
            Error::from_answer(502, b"<html>bad gateway</html>", None).to_string(),
            "HTTP 502 Bad Gateway"
        );
        assert_eq!(
            Error::from_answer(403, b"", None).to_string(),
            "HTTP 403 Forbidden"
        );
    }
}

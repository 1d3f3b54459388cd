//! One error type for every caller of the client, with a machine-readable [`ErrorKind`].
//!
//! The UI and the CLI branch on [`ClientError::kind`], never on message text. Messages are built
//! only from text the server wrote (its error body in whatever shape: [`describe_error_body`];
//! another service than our sandbox answers in its own), from the rules of `partner-api`
//! (which never quote a key) and from transport errors (which name the URL, and the client never
//! puts a secret in a URL), so no message can hold a client secret, a token or a signing key.
//! A response that could not be parsed keeps its raw body for debugging, except the answers of the
//! token endpoints: a malformed token response may still carry a token, so its body is withheld.

use partner_api::{ApiError, ErrorCode, ListRuleError, SigningKeyProblems};
use serde::Serialize;
use std::time::Duration;
use thiserror::Error;

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// Longest raw body kept in an error, in bytes.
pub const RAW_BODY_LIMIT: usize = 4096;

/// What went wrong, for callers that react to it (retry, sign in again, fix the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Bad client credentials, or a token the service no longer accepts even after a fresh one.
    Unauthorized,
    /// The service refused a parameter or body (400, 405, 413, 415); it said why.
    InvalidRequest,
    NotFound,
    /// A duplicate name, or a change to a locked transaction.
    Conflict,
    RateLimited,
    /// The service could not be reached (connection refused, DNS, reset).
    Network,
    /// The service did not answer in time.
    Timeout,
    /// The service failed (5xx) or answered something that is not the contract.
    Server,
    /// A rule of the spec that the client checked before sending: nothing was sent.
    Rule,
    /// The OS keychain could not store or read a secret.
    Keychain,
    /// A write on a connection marked read-only: nothing was sent.
    ReadOnly,
}

/// A rule of the spec broken by the caller's input, found before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error(transparent)]
    List(#[from] ListRuleError),
    #[error(transparent)]
    SigningKey(#[from] SigningKeyProblems),
    /// Any other input rule (a product name, a base URL, an unknown subscription), in words.
    #[error("{0}")]
    Input(String),
}

#[derive(Debug, Error)]
pub enum ClientError {
    #[error("not authorised: {message}")]
    Unauthorized { message: String },
    #[error("the service refused the request ({status}): {message}")]
    InvalidRequest { status: u16, message: String },
    #[error("not found: {message}")]
    NotFound { message: String },
    #[error("conflict: {message}")]
    Conflict { message: String },
    #[error("rate limited: {message}")]
    RateLimited {
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("cannot reach the service: {message}")]
    Network { message: String },
    #[error("the service did not answer in time: {message}")]
    Timeout { message: String },
    /// A 5xx, or a body that is not what the contract says. `raw_body` is what arrived (cut to
    /// [`RAW_BODY_LIMIT`]), or `None` where it was withheld or empty.
    #[error("the service failed ({status}): {message}")]
    Server {
        status: u16,
        message: String,
        raw_body: Option<String>,
    },
    /// A success status whose body could not be read (not JSON, or without what the spec
    /// requires, such as an `id`). The service did not fail; its answer is not the contract.
    /// `raw_body` as for [`ClientError::Server`].
    #[error("the answer to {call} ({status}) could not be read: {message}")]
    Unreadable {
        status: u16,
        call: String,
        message: String,
        raw_body: Option<String>,
    },
    #[error("{0}")]
    Rule(#[from] RuleError),
    #[error("keychain: {message}")]
    Keychain { message: String },
    /// A write refused before sending because the connection is read-only.
    #[error("this connection is read-only: \"{action}\" ({target}) was not sent")]
    ReadOnly { action: String, target: String },
    /// A subscription the service has deleted, whose signing keys could not then be removed from
    /// the keychain. The delete is done and must not be repeated; the keys are only clutter.
    #[error("subscription {subscription_id} of product {product_id} is deleted, but its signing keys could not be removed from the keychain (entries signing-key:{subscription_id}:current and :previous): {message}")]
    KeysLeftBehind {
        product_id: String,
        subscription_id: String,
        message: String,
    },
}

impl ClientError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            ClientError::Unauthorized { .. } => ErrorKind::Unauthorized,
            ClientError::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            ClientError::NotFound { .. } => ErrorKind::NotFound,
            ClientError::Conflict { .. } => ErrorKind::Conflict,
            ClientError::RateLimited { .. } => ErrorKind::RateLimited,
            ClientError::Network { .. } => ErrorKind::Network,
            ClientError::Timeout { .. } => ErrorKind::Timeout,
            ClientError::Server { .. } | ClientError::Unreadable { .. } => ErrorKind::Server,
            ClientError::Rule(_) => ErrorKind::Rule,
            ClientError::ReadOnly { .. } => ErrorKind::ReadOnly,
            ClientError::Keychain { .. } | ClientError::KeysLeftBehind { .. } => {
                ErrorKind::Keychain
            }
        }
    }

    /// The server's own words, where it sent an error body.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            ClientError::Unauthorized { message }
            | ClientError::InvalidRequest { message, .. }
            | ClientError::NotFound { message }
            | ClientError::Conflict { message }
            | ClientError::RateLimited { message, .. } => Some(message),
            ClientError::Server { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Whether trying the same call again later may succeed (for idempotent calls only).
    pub fn is_transient(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Network | ErrorKind::Timeout | ErrorKind::RateLimited
        ) || matches!(self, ClientError::Server { status, .. } if matches!(status, 500 | 502 | 503 | 504))
    }

    pub(crate) fn input(message: impl Into<String>) -> Self {
        ClientError::Rule(RuleError::Input(message.into()))
    }

    pub(crate) fn keychain(error: impl std::fmt::Display) -> Self {
        ClientError::Keychain {
            message: error.to_string(),
        }
    }

    /// Maps a transport failure. reqwest's message names the URL, which never holds a secret.
    pub(crate) fn from_transport(error: reqwest::Error) -> Self {
        let message = describe_transport(&error);
        if error.is_timeout() {
            ClientError::Timeout { message }
        } else if error.is_decode() || error.is_body() {
            ClientError::Server {
                status: error.status().map_or(0, |s| s.as_u16()),
                message,
                raw_body: None,
            }
        } else {
            ClientError::Network { message }
        }
    }

    /// Maps an error status and its body, in the service's own words whatever the body's
    /// shape (see [`describe_error_body`]). `keep_body` is false for the token endpoints: their
    /// raw bodies are not kept, but an error body carries no token, so its words are shown.
    pub(crate) fn from_status(
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
        keep_body: bool,
    ) -> Self {
        let parsed = serde_json::from_slice::<ApiError>(body).ok();
        let message = match &parsed {
            Some(api) => api.to_string(),
            None => describe_error_body(body),
        };
        let code = parsed
            .as_ref()
            .map_or_else(|| ErrorCode::from_status(status), |api| api.error_code);
        match (status, code) {
            (401, _) | (_, ErrorCode::Unauthorized) => ClientError::Unauthorized { message },
            (404, _) | (_, ErrorCode::NotFound) => ClientError::NotFound { message },
            (409, _) | (_, ErrorCode::Conflict) => ClientError::Conflict { message },
            (429, _) | (_, ErrorCode::RateLimited) => ClientError::RateLimited {
                message,
                retry_after,
            },
            (400..=499, _) => ClientError::InvalidRequest { status, message },
            _ => ClientError::Server {
                status,
                message,
                raw_body: if parsed.is_none() && keep_body {
                    raw_excerpt(body)
                } else {
                    None
                },
            },
        }
    }

    /// A success status whose body is JSON but not what `what` must hold.
    pub(crate) fn unparseable(
        status: u16,
        call: &str,
        what: &str,
        error: impl std::fmt::Display,
        body: &[u8],
        keep_body: bool,
    ) -> Self {
        ClientError::Unreadable {
            status,
            call: call.to_owned(),
            message: format!("the {what} in the response could not be read ({error})"),
            raw_body: if keep_body { raw_excerpt(body) } else { None },
        }
    }

    /// A success status whose body is not JSON at all: names the content type and, unless
    /// withheld (a token endpoint's answer may hold a token), the first bytes.
    pub(crate) fn not_json(
        status: u16,
        call: &str,
        content_type: &str,
        error: impl std::fmt::Display,
        body: &[u8],
        keep_body: bool,
    ) -> Self {
        let content_type: String = content_type.chars().take(80).collect();
        let message = if body.is_empty() {
            format!("expected JSON, got an empty body ({content_type})")
        } else if keep_body {
            format!(
                "expected JSON, got {content_type} ({error}), starting: {}",
                first_bytes(body, 120)
            )
        } else {
            format!(
                "expected JSON, got {content_type} ({error}); {} bytes, not shown",
                body.len()
            )
        };
        ClientError::Unreadable {
            status,
            call: call.to_owned(),
            message,
            raw_body: if keep_body { raw_excerpt(body) } else { None },
        }
    }
}

/// The most characters of the service's words an error message carries.
const WORDS_LIMIT: usize = 300;

/// An error body in the service's own words, whatever its shape: OAuth 2.0
/// (`error`, `error_description`), RFC 7807 (`title`, `detail`), the sandbox's
/// (`errorCode`, `summary`, `details`), `{message}`, `{error: {message}}`, `{errors: [...]}`
/// (strings or objects with a message), plain text, an HTML page (its title and first text),
/// or an empty body. JSON of another shape is shown compactly, cut to a few hundred characters.
pub fn describe_error_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "empty body".into();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        return cut(&json_words(&value).unwrap_or_else(|| value.to_string()));
    }
    if looks_like_html(trimmed) {
        return cut(&html_words(trimmed));
    }
    cut(&collapse_space(trimmed))
}

fn json_words(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let both = |first: Option<String>, second: Option<String>| match (first, second) {
        (Some(a), Some(b)) if a != b => Some(format!("{a}: {b}")),
        (Some(a), _) => Some(a),
        (None, b) => b,
    };
    if let Value::String(s) = value {
        return Some(s.clone());
    }
    // The sandbox's shape.
    if let Some(words) = both(text("summary"), text("details")) {
        return Some(words);
    }
    // OAuth 2.0 (RFC 6749 section 5.2).
    if value.get("error").is_some_and(Value::is_string) {
        return both(text("error"), text("error_description"));
    }
    // RFC 7807 problem details.
    if let Some(words) = both(text("title"), text("detail")) {
        return Some(words);
    }
    if let Some(message) = text("message").or_else(|| text("error_message")) {
        return Some(message);
    }
    if let Some(inner) = value.get("error").filter(|e| e.is_object()) {
        return json_words(inner);
    }
    if let Some(errors) = value.get("errors").and_then(Value::as_array) {
        let words: Vec<String> = errors
            .iter()
            .filter_map(|e| match e {
                Value::String(s) => Some(s.clone()),
                other => json_words(other).or_else(|| Some(other.to_string())),
            })
            .collect();
        if !words.is_empty() {
            return Some(words.join("; "));
        }
    }
    None
}

fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(200)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html")
        || head.contains("<html")
        || head.starts_with("<head")
        || head.starts_with("<body")
        || head.starts_with("<h1")
}

/// An HTML page's title and the first of its text, tags, scripts and styles left out.
fn html_words(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let title = lower.find("<title").and_then(|start| {
        let open_end = start + lower[start..].find('>')? + 1;
        let close = open_end + lower[open_end..].find("</title")?;
        Some(collapse_space(&html[open_end..close]))
    });
    let body_start = lower.find("<body").unwrap_or(0);
    let mut text = String::new();
    let mut rest = &html[body_start..];
    let mut skipping: Option<&str> = None;
    while let Some(open) = rest.find('<') {
        if skipping.is_none() {
            text.push_str(&rest[..open]);
            text.push(' ');
        }
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = rest[open + 1..open + close].to_ascii_lowercase();
        match skipping {
            Some(name) if tag.starts_with(&format!("/{name}")) => skipping = None,
            None if tag.starts_with("script") => skipping = Some("script"),
            None if tag.starts_with("style") => skipping = Some("style"),
            None if tag.starts_with("title") => skipping = Some("title"),
            _ => {}
        }
        rest = &rest[open + close + 1..];
    }
    if skipping.is_none() {
        text.push_str(rest);
    }
    let text = collapse_space(&decode_entities(&text));
    let title = title.map(|t| decode_entities(&t));
    match title {
        Some(title) if !title.is_empty() && !text.starts_with(&title) => {
            format!("HTML page \"{title}\": {text}")
        }
        _ => format!("HTML page: {text}"),
    }
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

fn collapse_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str) -> String {
    if text.chars().count() <= WORDS_LIMIT {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(WORDS_LIMIT).collect();
        short.push('…');
        short
    }
}

/// The first bytes of a body as text, control characters escaped, cut to `limit` characters.
fn first_bytes(body: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(limit * 4)]);
    let shown: String = text
        .chars()
        .take(limit)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if text.chars().count() > limit || body.len() > limit * 4 {
        format!("{shown}…")
    } else {
        shown
    }
}

fn describe_transport(error: &reqwest::Error) -> String {
    // The whole source chain says why (refused, reset, DNS); the top level alone often does not.
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if let Some(hint) = transport_hint(&message) {
        message.push_str(hint);
    }
    message
}

/// What to do about a transport failure, from its words: a proxy that wants credentials
/// (hyper-util's "proxy authorization required" for a CONNECT answered 407), or a certificate
/// this machine does not trust. Words, not digits: a URL's port may hold "407".
fn transport_hint(message: &str) -> Option<&'static str> {
    let lower = message.to_lowercase();
    if lower.contains("proxy auth") {
        Some(
            " (the proxy refused the proxy user and password: check them; this is the proxy's \
             answer, the service was not reached)",
        )
    } else if lower.contains("unknownissuer") || lower.contains("unknown issuer") {
        Some(
            " (the service's certificate is not issued by a certificate authority this machine \
             trusts: give the connection its CA certificate, or add it to the system's trust \
             store or SSL_CERT_FILE; `partner doctor` or Check in the app's Connections names \
             who issued it)",
        )
    } else {
        None
    }
}

fn raw_excerpt(body: &[u8]) -> Option<String> {
    if body.is_empty() {
        return None;
    }
    let cut = &body[..body.len().min(RAW_BODY_LIMIT)];
    Some(String::from_utf8_lossy(cut).into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_port_with_407_in_it_is_not_a_proxy_asking_for_credentials() {
        let untrusted = "error sending request for url (https://127.0.0.1:40771/oauth2/v1/token): \
                         client error (Connect): invalid peer certificate: UnknownIssuer";
        let hint = super::transport_hint(untrusted).unwrap();
        assert!(hint.contains("certificate authority"), "{hint}");
        let proxy = "error sending request for url (https://svc.example/oauth2/v1/token): client \
                     error (Connect): proxy authorization required";
        assert!(super::transport_hint(proxy)
            .unwrap()
            .contains("proxy refused"));
        assert_eq!(
            super::transport_hint("connection refused on port 4070"),
            None
        );
    }

    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let body = br#"{"errorCode":"invalid_request","summary":"limit is too large","details":"at most 50"}"#;
        let err = ClientError::from_status(400, body, None, true);
        assert_eq!(err.kind(), ErrorKind::InvalidRequest);
        assert_eq!(err.server_message(), Some("limit is too large: at most 50"));
        assert_eq!(
            ClientError::from_status(401, b"", None, true).kind(),
            ErrorKind::Unauthorized
        );
        assert_eq!(
            ClientError::from_status(404, b"", None, true).kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            ClientError::from_status(409, b"", None, true).kind(),
            ErrorKind::Conflict
        );
        assert_eq!(
            ClientError::from_status(429, b"", None, true).kind(),
            ErrorKind::RateLimited
        );
        assert_eq!(
            ClientError::from_status(415, b"", None, true).kind(),
            ErrorKind::InvalidRequest
        );
        assert!(ClientError::from_status(503, b"", None, true).is_transient());
        assert!(!ClientError::from_status(400, b"", None, true).is_transient());
    }

    /// One body per shape a service may answer an error with, and the words that must show.
    #[test]
    fn every_error_shape_is_shown_in_the_service_s_words() {
        let cases: [(&[u8], &str); 12] = [
            (
                br#"{"errorCode":"not_found","summary":"no such product","details":"p-1"}"#,
                "no such product: p-1",
            ),
            (
                br#"{"error":"invalid_client","error_description":"Client authentication failed"}"#,
                "invalid_client: Client authentication failed",
            ),
            (br#"{"error":"invalid_grant"}"#, "invalid_grant"),
            (
                br#"{"type":"about:blank","title":"Bad Request","detail":"limit may not exceed 50","status":400}"#,
                "Bad Request: limit may not exceed 50",
            ),
            (br#"{"title":"Forbidden"}"#, "Forbidden"),
            (br#"{"message":"product name taken"}"#, "product name taken"),
            (
                br#"{"error":{"code":409,"message":"already exists"}}"#,
                "already exists",
            ),
            (
                br#"{"errors":["name is required",{"message":"limit too large","code":"E2"}]}"#,
                "name is required; limit too large",
            ),
            (b"upstream connect error\n  or disconnect\n", "upstream connect error or disconnect"),
            (
                b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>p{}</style></head><body><h1>Bad Gateway</h1><p>The proxy got an invalid response.</p><script>x()</script></body></html>",
                "HTML page \"502 Bad Gateway\": Bad Gateway The proxy got an invalid response.",
            ),
            (b"", "empty body"),
            (br#"{"code":7,"reason":"odd"}"#, r#"{"code":7,"reason":"odd"}"#),
        ];
        for (body, words) in cases {
            let error = ClientError::from_status(400, body, None, true);
            let message = error.to_string();
            assert!(
                message.contains(words),
                "{}: {message}",
                String::from_utf8_lossy(body)
            );
            assert!(!message.contains("understands"), "{message}");
        }
        // A token endpoint's error body holds no token: its words show, its raw body is not kept.
        let withheld = ClientError::from_status(
            500,
            br#"{"error":"server_error","error_description":"try later"}"#,
            None,
            false,
        );
        assert!(withheld.to_string().contains("server_error: try later"));
        assert!(matches!(
            withheld,
            ClientError::Server { raw_body: None, .. }
        ));
        // A long page is cut.
        let long = format!("<html><body>{}</body></html>", "word ".repeat(500));
        let message = ClientError::from_status(503, long.as_bytes(), None, true).to_string();
        assert!(message.chars().count() < 400, "{message}");
    }

    #[test]
    fn a_success_that_is_not_json_names_the_call_and_what_came() {
        let error = ClientError::not_json(
            200,
            "GET /partner/v2/products",
            "text/html; charset=utf-8",
            "expected value at line 1 column 1",
            b"<html><body>Login required</body></html>",
            true,
        );
        let message = error.to_string();
        for part in [
            "GET /partner/v2/products",
            "(200)",
            "text/html",
            "<html><body>Login required",
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(
            !message.contains("failed"),
            "a 2xx is not a failure: {message}"
        );
        let withheld = ClientError::not_json(
            201,
            "POST /oauth2/v1/token",
            "text/plain",
            "expected value",
            b"access_token=abc",
            false,
        );
        assert!(!withheld.to_string().contains("abc"), "{withheld}");
        assert!(!format!("{withheld:?}").contains("abc"));
    }

    #[test]
    fn unparseable_bodies_are_kept_except_where_withheld() {
        let err = ClientError::from_status(502, b"<html>bad gateway</html>", None, true);
        match &err {
            ClientError::Server { raw_body, .. } => {
                assert_eq!(raw_body.as_deref(), Some("<html>bad gateway</html>"))
            }
            other => panic!("unexpected {other:?}"),
        }
        let withheld = ClientError::unparseable(
            201,
            "POST /oauth2/v1/token",
            "token",
            "eof",
            b"{\"access_token\":\"t",
            false,
        );
        assert!(!format!("{withheld:?}").contains("access_token"));
    }
}

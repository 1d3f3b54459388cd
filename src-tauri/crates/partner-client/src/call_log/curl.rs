//! A call as a `curl` command that never holds a secret: what the [`CallLog`](super::CallLog)
//! keeps of a request ([`RedactedRequest`]: its method, path and query, and its curl form), made
//! redacted before anything is kept. Its own file because redacting secrets and quoting words
//! for a shell are a concern of their own, apart from the ring that keeps the calls.
//!
//! The bearer token, the client id and secret, form fields other than `grant_type`/`scope`, and
//! JSON values under a key such as `signingKey` are replaced by shell variables
//! (`$PARTNER_TOKEN`, `$PARTNER_CLIENT_ID`/`$PARTNER_CLIENT_SECRET`, `$SIGNING_KEY`), and any
//! value a secret held is scrubbed from the rest, so no secret sits in the log's memory, in a
//! line printed from it or in a curl command copied from it.

use base64::Engine as _;
use reqwest::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE};

/// The variable the bearer token is in, in a copied curl command.
pub const TOKEN_VARIABLE: &str = "PARTNER_TOKEN";
/// The variables the client id and secret are in, in a copied curl command.
pub const CLIENT_ID_VARIABLE: &str = "PARTNER_CLIENT_ID";
pub const CLIENT_SECRET_VARIABLE: &str = "PARTNER_CLIENT_SECRET";

/// Form fields of the token endpoints that are no secret and are kept as sent.
const PLAIN_FORM_FIELDS: &[&str] = &["grant_type", "scope", "token_type_hint"];
/// Headers a curl command repeats (others, like `Authorization`, are replaced or left out).
const KEPT_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "if-match",
    "if-none-match",
    "idempotency-key",
    "prefer",
];
/// Longest request body kept for a curl command.
const MAX_KEPT_BODY: usize = 64 * 1024;
/// Shortest value scrubbed as a secret (shorter ones would match ordinary text).
const MIN_SCRUBBED: usize = 4;

/// What is kept of a request: its method, path and query, and its curl form, all redacted.
pub(super) struct RedactedRequest {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) query: Option<String>,
    pub(super) curl: CurlCall,
}

impl RedactedRequest {
    pub(super) fn of(request: &reqwest::Request) -> Self {
        let mut secrets = Secrets::default();
        let auth = Auth::of(request.headers(), &mut secrets);
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let body = request
            .body()
            .map(|body| Body::of(body.as_bytes(), &content_type, &mut secrets));
        let url = request.url();
        let query = url.query().map(|_| redacted_query(url, &mut secrets));
        let mut target = url.clone();
        target.set_query(query.as_deref());
        let headers = request
            .headers()
            .iter()
            .filter(|(name, _)| KEPT_HEADERS.contains(&name.as_str()))
            .filter_map(|(name, value)| Some(format!("{name}: {}", value.to_str().ok()?)))
            .collect();
        let mut curl = CurlCall {
            method: request.method().as_str().to_owned(),
            url: target.to_string(),
            auth,
            headers,
            body,
        };
        curl.scrub(&secrets);
        Self {
            method: request.method().as_str().to_owned(),
            path: secrets.scrubbed(url.path()),
            query: query.map(|q| secrets.scrubbed(&q)),
            curl,
        }
    }
}

/// The secret values seen while redacting a request, to scrub from everything else kept.
#[derive(Default)]
struct Secrets {
    values: Vec<(String, String)>,
}

impl Secrets {
    fn note(&mut self, value: &str, variable: &str) {
        if value.len() >= MIN_SCRUBBED {
            self.values.push((value.to_owned(), variable.to_owned()));
        }
    }

    fn scrubbed(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (secret, variable) in &self.values {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), &format!("${variable}"));
            }
        }
        text
    }
}

/// How the call proved who it was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Auth {
    None,
    /// `Authorization: Bearer $PARTNER_TOKEN`.
    Bearer,
    /// `-u "$PARTNER_CLIENT_ID:$PARTNER_CLIENT_SECRET"` (the token endpoints).
    Client,
    /// Some other scheme: left out, and said so.
    Other,
}

impl Auth {
    fn of(headers: &HeaderMap, secrets: &mut Secrets) -> Self {
        let Some(value) = headers.get(AUTHORIZATION) else {
            return Auth::None;
        };
        let Ok(value) = value.to_str() else {
            return Auth::Other;
        };
        let (scheme, credentials) = value.split_once(' ').unwrap_or((value, ""));
        let credentials = credentials.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            secrets.note(credentials, TOKEN_VARIABLE);
            Auth::Bearer
        } else if scheme.eq_ignore_ascii_case("basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credentials)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok());
            // The client id is no secret, but the command takes it from its variable too.
            if let Some((_, secret)) = decoded.as_deref().and_then(|d| d.split_once(':')) {
                secrets.note(secret, CLIENT_SECRET_VARIABLE);
            }
            secrets.note(credentials, CLIENT_SECRET_VARIABLE);
            Auth::Client
        } else {
            secrets.note(credentials, "PARTNER_AUTHORIZATION");
            Auth::Other
        }
    }
}

/// Whether a parameter or field name names a secret: its value is never kept.
fn secret_named(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace(['_', '-'], "");
    [
        "key",
        "secret",
        "password",
        "token",
        "signature",
        "credential",
    ]
    .iter()
    .any(|word| name.ends_with(word))
        || name == "code"
}

/// The variable a secret-named field's value goes into: `signingKey` and `key` become
/// `SIGNING_KEY`, any other `fooBar` becomes `FOO_BAR`; the second of a name gets `_2`.
fn variable_for(name: &str, used: &mut Vec<String>) -> String {
    let lower = name.to_ascii_lowercase();
    let base = if lower.replace(['_', '-'], "").ends_with("key") {
        // `signingKey`, `key`, `previousSigningKey` (the spec's keys are signing keys).
        // The wire spells it `signingkey` as often as `signingKey`.
        let mut snake = upper_snake(name).replace("SIGNINGKEY", "SIGNING_KEY");
        if !snake.contains("SIGNING") {
            snake = if snake == "KEY" {
                "SIGNING_KEY".into()
            } else {
                format!("SIGNING_{snake}")
            };
        }
        snake
    } else if lower == "token" {
        TOKEN_VARIABLE.to_owned()
    } else {
        format!("PARTNER_{}", upper_snake(name))
    };
    let seen = used.iter().filter(|u| **u == base).count();
    used.push(base.clone());
    if seen == 0 {
        base
    } else {
        format!("{base}_{}", seen + 1)
    }
}

fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_uppercase());
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    let out = out.trim_matches('_').to_owned();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("VALUE_{out}")
    } else {
        out
    }
}

/// The query with the values of secret-named parameters replaced by `[redacted]`.
fn redacted_query(url: &url::Url, secrets: &mut Secrets) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in url.query_pairs() {
        if secret_named(&name) {
            secrets.note(&value, "PARTNER_QUERY_SECRET");
            out.append_pair(&name, "[redacted]");
        } else {
            out.append_pair(&name, &value);
        }
    }
    out.finish()
}

/// One piece of a shell word: text as it is, or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(String),
}

/// A shell word made of pieces, quoted when rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word(Vec<Piece>);

impl Word {
    fn text(text: impl Into<String>) -> Self {
        Word(vec![Piece::Text(text.into())])
    }

    fn scrub(&mut self, secrets: &Secrets) {
        let mut pieces = Vec::new();
        for piece in self.0.drain(..) {
            match piece {
                Piece::Text(text) => split_secrets(&text, secrets, &mut pieces),
                var => pieces.push(var),
            }
        }
        self.0 = pieces;
    }

    /// The word as a POSIX shell reads it back: text single-quoted, variables double-quoted;
    /// the whole word in double quotes when its text needs no escaping there (no `"`, `\`,
    /// `$`, `` ` `` or `!`, which an interactive bash expands even inside double quotes).
    fn quoted(&self) -> String {
        let has_var = self.0.iter().any(|p| matches!(p, Piece::Var(_)));
        if !has_var {
            let text: String = self
                .0
                .iter()
                .map(|p| match p {
                    Piece::Text(t) => t.as_str(),
                    Piece::Var(_) => "",
                })
                .collect();
            return quote_text(&text);
        }
        let plain_in_double = self.0.iter().all(|p| match p {
            Piece::Text(t) => !t.contains(['"', '\\', '$', '`', '!']),
            Piece::Var(_) => true,
        });
        if plain_in_double {
            let mut out = String::from("\"");
            for piece in &self.0 {
                match piece {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Var(v) => out.push_str(&format!("${{{v}}}")),
                }
            }
            out.push('"');
            return out;
        }
        self.0
            .iter()
            .map(|piece| match piece {
                Piece::Text(t) if t.is_empty() => String::new(),
                Piece::Text(t) => single_quoted(t),
                Piece::Var(v) => format!("\"${{{v}}}\""),
            })
            .collect()
    }
}

/// Splits `text` where it holds a secret's value, the value becoming its variable.
fn split_secrets(text: &str, secrets: &Secrets, out: &mut Vec<Piece>) {
    let found = secrets
        .values
        .iter()
        .filter_map(|(secret, var)| text.find(secret.as_str()).map(|at| (at, secret, var)))
        .min_by_key(|(at, secret, _)| (*at, usize::MAX - secret.len()));
    match found {
        Some((at, secret, var)) => {
            if at > 0 {
                out.push(Piece::Text(text[..at].to_owned()));
            }
            out.push(Piece::Var(var.clone()));
            split_secrets(&text[at + secret.len()..], secrets, out);
        }
        None if !text.is_empty() => out.push(Piece::Text(text.to_owned())),
        None => {}
    }
}

/// Text as one shell word: bare when it is made only of characters no shell treats specially.
pub fn quote_text(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c))
        && !text.starts_with('=');
    if bare {
        text.to_owned()
    } else {
        single_quoted(text)
    }
}

/// `'text'`, each `'` written as `'\''`.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A request body in a curl command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    /// `--data-binary WORD`: JSON (secret values as variables) or other UTF-8 text.
    Data(Word),
    /// `--data-urlencode name=value` for each field of a form.
    Form(Vec<Word>),
    /// Not shown: too long, not text, or not readable as its type says.
    Withheld { bytes: usize, why: &'static str },
}

impl Body {
    fn of(bytes: Option<&[u8]>, content_type: &str, secrets: &mut Secrets) -> Self {
        let Some(bytes) = bytes else {
            return Body::Withheld {
                bytes: 0,
                why: "a stream",
            };
        };
        if bytes.len() > MAX_KEPT_BODY {
            return Body::Withheld {
                bytes: bytes.len(),
                why: "too long to keep",
            };
        }
        if content_type.starts_with("application/x-www-form-urlencoded") {
            return Body::form(bytes, secrets);
        }
        if content_type.contains("json") {
            return match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(value) => Body::json(value, secrets),
                Err(_) => Body::Withheld {
                    bytes: bytes.len(),
                    why: "not the JSON its type says",
                },
            };
        }
        Body::Withheld {
            bytes: bytes.len(),
            why: "not JSON or a form",
        }
    }

    fn form(bytes: &[u8], secrets: &mut Secrets) -> Self {
        let mut used = Vec::new();
        let fields = url::form_urlencoded::parse(bytes)
            .map(|(name, value)| {
                if PLAIN_FORM_FIELDS.contains(&name.as_ref()) && !secret_named(&name) {
                    Word::text(format!("{name}={value}"))
                } else {
                    let variable = variable_for(&name, &mut used);
                    secrets.note(&value, &variable);
                    Word(vec![
                        Piece::Text(format!("{}=", form_name(&name))),
                        Piece::Var(variable),
                    ])
                }
            })
            .collect();
        Body::Form(fields)
    }

    fn json(mut value: serde_json::Value, secrets: &mut Secrets) -> Self {
        let mut used = Vec::new();
        let mut replaced = Vec::new();
        redact_json(&mut value, &mut used, &mut replaced);
        for (secret, variable) in &replaced {
            secrets.note(secret, variable);
        }
        let text = value.to_string();
        if text.contains(MARK) && replaced.is_empty() {
            return Body::Withheld {
                bytes: text.len(),
                why: "it holds the log's own marker",
            };
        }
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(MARK) {
            let after = &rest[at + MARK.len()..];
            let Some(end) = after.find(MARK_END) else {
                break;
            };
            if at > 0 {
                pieces.push(Piece::Text(rest[..at].to_owned()));
            }
            pieces.push(Piece::Var(after[..end].to_owned()));
            rest = &after[end + MARK_END.len()..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Body::Data(Word(pieces))
    }
}

/// A form field's name as curl's `--data-urlencode name=value` takes it (already encoded).
fn form_name(name: &str) -> String {
    url::form_urlencoded::byte_serialize(name.as_bytes()).collect()
}

/// Where a secret JSON value was, marked in the serialised text to become a variable.
const MARK: &str = "@@partner-call-log:";
const MARK_END: &str = "@@";

/// Replaces the values under secret-named keys with markers, noting each value.
fn redact_json(
    value: &mut serde_json::Value,
    used: &mut Vec<String>,
    replaced: &mut Vec<(String, String)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if secret_named(key) && !inner.is_null() {
                    let variable = variable_for(key, used);
                    collect_strings(inner, &variable, replaced);
                    *inner = serde_json::Value::String(format!("{MARK}{variable}{MARK_END}"));
                } else {
                    redact_json(inner, used, replaced);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                redact_json(item, used, replaced);
            }
        }
        _ => {}
    }
}

fn collect_strings(value: &serde_json::Value, variable: &str, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::String(s) => out.push((s.clone(), variable.to_owned())),
        serde_json::Value::Array(items) => {
            for item in items {
                collect_strings(item, variable, out);
            }
        }
        serde_json::Value::Object(map) => {
            for item in map.values() {
                collect_strings(item, variable, out);
            }
        }
        _ => {}
    }
}

/// A call as a curl command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CurlCall {
    method: String,
    url: String,
    auth: Auth,
    headers: Vec<String>,
    body: Option<Body>,
}

impl CurlCall {
    fn scrub(&mut self, secrets: &Secrets) {
        self.url = secrets.scrubbed(&self.url);
        for header in &mut self.headers {
            *header = secrets.scrubbed(header);
        }
        match &mut self.body {
            Some(Body::Data(word)) => word.scrub(secrets),
            Some(Body::Form(fields)) => fields.iter_mut().for_each(|w| w.scrub(secrets)),
            Some(Body::Withheld { .. }) | None => {}
        }
    }

    fn words(&self) -> Vec<Word> {
        let mut words = vec![Word::text("curl"), Word::text("-sS")];
        let has_body = matches!(self.body, Some(Body::Data(_) | Body::Form(_)));
        // curl sends GET, or POST with a body; any other pairing is said outright.
        let implied = if has_body { "POST" } else { "GET" };
        if self.method != implied {
            words.push(Word::text("-X"));
            words.push(Word::text(&self.method));
        }
        words.push(Word::text(&self.url));
        match self.auth {
            Auth::Bearer => {
                words.push(Word::text("-H"));
                words.push(Word(vec![
                    Piece::Text("Authorization: Bearer ".into()),
                    Piece::Var(TOKEN_VARIABLE.into()),
                ]));
            }
            Auth::Client => {
                words.push(Word::text("-u"));
                words.push(Word(vec![
                    Piece::Var(CLIENT_ID_VARIABLE.into()),
                    Piece::Text(":".into()),
                    Piece::Var(CLIENT_SECRET_VARIABLE.into()),
                ]));
            }
            Auth::None | Auth::Other => {}
        }
        for header in &self.headers {
            words.push(Word::text("-H"));
            words.push(Word::text(header));
        }
        match &self.body {
            Some(Body::Data(word)) => {
                words.push(Word::text("--data-binary"));
                words.push(word.clone());
            }
            Some(Body::Form(fields)) => {
                for field in fields {
                    words.push(Word::text("--data-urlencode"));
                    words.push(field.clone());
                }
            }
            Some(Body::Withheld { .. }) | None => {}
        }
        words
    }

    pub(super) fn render(&self) -> String {
        let mut line = self
            .words()
            .iter()
            .map(Word::quoted)
            .collect::<Vec<_>>()
            .join(" ");
        if self.auth == Auth::Other {
            line.push_str(" # its Authorization header (not a bearer token) is left out");
        }
        if let Some(Body::Withheld { bytes, why }) = &self.body {
            if *bytes > 0 {
                line.push_str(&format!(" # its body ({bytes} bytes) is left out: {why}"));
            }
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        method: reqwest::Method,
        url: &str,
        build: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> reqwest::Request {
        build(reqwest::Client::new().request(method, url))
            .build()
            .unwrap()
    }

    /// Runs `command` (a rendered curl line) through `sh` with `curl` replaced by a function
    /// printing its arguments one per line: what the shell would hand curl.
    fn shell_words(command: &str, env: &[(&str, &str)]) -> Vec<String> {
        let script =
            format!("curl() {{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }}\n{command}\n");
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(output.status.success(), "{:?}", output);
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn text_is_quoted_so_a_shell_reads_it_back_unchanged() {
        for text in [
            "plain",
            "with space",
            "it's",
            "'",
            "$HOME",
            "`date`",
            "a\"b",
            "back\\slash",
            "bang!",
            "*",
            "",
            "=x",
            "a\nb",
            "ünïcode",
        ] {
            let quoted = quote_text(text);
            let words = shell_words(&format!("curl {quoted}"), &[]);
            let expected: Vec<String> = text.split('\n').map(str::to_owned).collect();
            assert_eq!(words, expected, "{text:?} quoted as {quoted}");
        }
        assert_eq!(quote_text("-sS"), "-sS");
        assert_eq!(quote_text("it's"), r"'it'\''s'");
    }

    #[test]
    fn words_with_variables_expand_the_variable_and_keep_the_text() {
        let env = [("SIGNING_KEY", "k$`'\"!y")];
        let word = Word(vec![
            Piece::Text("{\"a\":\"it's $x!\",\"k\":\"".into()),
            Piece::Var("SIGNING_KEY".into()),
            Piece::Text("\"}".into()),
        ]);
        let words = shell_words(&format!("curl {}", word.quoted()), &env);
        assert_eq!(words, ["{\"a\":\"it's $x!\",\"k\":\"k$`'\"!y\"}"]);
        let simple = Word(vec![
            Piece::Text("Authorization: Bearer ".into()),
            Piece::Var("PARTNER_TOKEN".into()),
        ]);
        assert_eq!(
            simple.quoted(),
            "\"Authorization: Bearer ${PARTNER_TOKEN}\""
        );
    }

    #[test]
    fn a_bearer_call_renders_the_token_as_a_variable() {
        let token = "tok-0123456789abcdef";
        let req = request(
            reqwest::Method::GET,
            "http://127.0.0.1:7001/partner/v2/products?start=0&limit=50&sort=-updated",
            |b| b.bearer_auth(token),
        );
        let redacted = RedactedRequest::of(&req);
        assert_eq!(redacted.path, "/partner/v2/products");
        assert_eq!(
            redacted.query.as_deref(),
            Some("start=0&limit=50&sort=-updated")
        );
        let curl = redacted.curl.render();
        assert!(!curl.contains(token), "{curl}");
        let words = shell_words(&curl, &[("PARTNER_TOKEN", "T")]);
        assert_eq!(
            words,
            [
                "-sS",
                "http://127.0.0.1:7001/partner/v2/products?start=0&limit=50&sort=-updated",
                "-H",
                "Authorization: Bearer T",
            ]
        );
    }

    #[test]
    fn the_token_endpoint_takes_the_client_from_variables() {
        let secret = "client-secret-value-42";
        let req = request(
            reqwest::Method::POST,
            "http://127.0.0.1:7001/oauth2/v1/token/introspection",
            |b| {
                b.basic_auth("client-a", Some(secret))
                    .form(&[("token", "the-token-itself"), ("grant_type", "x y")])
            },
        );
        let curl = RedactedRequest::of(&req).curl.render();
        for leaked in [secret, "the-token-itself"] {
            assert!(!curl.contains(leaked), "{curl}");
        }
        let words = shell_words(
            &curl,
            &[
                ("PARTNER_CLIENT_ID", "id"),
                ("PARTNER_CLIENT_SECRET", "pw"),
                ("PARTNER_TOKEN", "T"),
            ],
        );
        assert_eq!(
            words,
            [
                "-sS",
                "http://127.0.0.1:7001/oauth2/v1/token/introspection",
                "-u",
                "id:pw",
                "-H",
                "content-type: application/x-www-form-urlencoded",
                "--data-urlencode",
                "token=T",
                "--data-urlencode",
                "grant_type=x y",
            ]
        );
    }

    #[test]
    fn signing_keys_in_a_json_body_become_variables() {
        let body = serde_json::json!({
            "name": "Shop's \"best\" $product",
            "webhooks": [
                {"url": "https://example.com/hook", "signingKey": "Key-One-0123456789ab!"},
                {"url": "https://example.com/two", "signingKey": "Key-Two-0123456789ab!"},
            ],
            "note": "contains Key-One-0123456789ab! again",
        });
        let req = request(
            reqwest::Method::PATCH,
            "http://h/partner/v2/products/p1",
            |b| {
                b.bearer_auth("tok-abcdef")
                    .header(CONTENT_TYPE, "application/merge-patch+json")
                    .body(body.to_string())
            },
        );
        let curl = RedactedRequest::of(&req).curl.render();
        assert!(!curl.contains("Key-One"), "{curl}");
        assert!(!curl.contains("Key-Two"), "{curl}");
        let words = shell_words(
            &curl,
            &[
                ("PARTNER_TOKEN", "T"),
                ("SIGNING_KEY", "first"),
                ("SIGNING_KEY_2", "second"),
            ],
        );
        assert_eq!(
            words[..4],
            ["-sS", "-X", "PATCH", "http://h/partner/v2/products/p1"]
        );
        let sent: serde_json::Value = serde_json::from_str(words.last().unwrap()).unwrap();
        assert_eq!(sent["webhooks"][0]["signingKey"], "first");
        assert_eq!(sent["webhooks"][1]["signingKey"], "second");
        assert_eq!(sent["name"], "Shop's \"best\" $product");
        assert_eq!(sent["note"], "contains first again");
    }

    #[test]
    fn a_json_body_without_secrets_is_kept_as_sent() {
        let body = serde_json::json!({"status": "APPROVED", "comment": "ok"});
        let req = request(
            reqwest::Method::PATCH,
            "http://h/partner/v2/transactions/t1/response",
            |b| b.bearer_auth("tok-abcdef").json(&body),
        );
        let curl = RedactedRequest::of(&req).curl.render();
        let words = shell_words(&curl, &[("PARTNER_TOKEN", "T")]);
        let sent: serde_json::Value = serde_json::from_str(words.last().unwrap()).unwrap();
        assert_eq!(sent, body);
    }

    #[test]
    fn secret_named_query_values_are_not_kept() {
        let req = request(
            reqwest::Method::GET,
            "http://h/x?limit=5&access_token=abcd1234&apiKey=zzzz9999",
            |b| b,
        );
        let redacted = RedactedRequest::of(&req);
        let query = redacted.query.unwrap();
        assert_eq!(
            query,
            "limit=5&access_token=%5Bredacted%5D&apiKey=%5Bredacted%5D"
        );
        let curl = redacted.curl.render();
        assert!(
            !curl.contains("abcd1234") && !curl.contains("zzzz9999"),
            "{curl}"
        );
    }

    #[test]
    fn secret_names_and_their_variables() {
        for name in [
            "signingKey",
            "key",
            "client_secret",
            "token",
            "password",
            "previousSigningKey",
        ] {
            assert!(secret_named(name), "{name}");
        }
        for name in [
            "start",
            "limit",
            "sort",
            "name",
            "keyId",
            "status",
            "listingName",
        ] {
            assert!(!secret_named(name), "{name}");
        }
        let mut used = Vec::new();
        assert_eq!(variable_for("signingKey", &mut used), "SIGNING_KEY");
        assert_eq!(variable_for("signingkey", &mut used), "SIGNING_KEY_2");
        used.pop();
        assert_eq!(variable_for("key", &mut used), "SIGNING_KEY_2");
        assert_eq!(
            variable_for("previousSigningKey", &mut used),
            "PREVIOUS_SIGNING_KEY"
        );
        assert_eq!(
            variable_for("client_secret", &mut used),
            "PARTNER_CLIENT_SECRET"
        );
        assert_eq!(variable_for("token", &mut used), "PARTNER_TOKEN");
    }
}

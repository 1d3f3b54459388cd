//! [`WorkspaceClient`]: one member's calls to one workspace (`/api/v1`), each with the member's
//! bearer token, each answer read as the server's own type or as an [`Error`].

use crate::error::{Error, Result};
use crate::roles::Role;
use chrono::{DateTime, Utc};
use partner_api::Secret;
use partner_listener::{Capture, CaptureFilter, CapturePage, CaptureQuery, ImportReport};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use url::Url;

/// No query string.
const NO_QUERY: &[(&str, &str)] = &[];

/// How long one call may take before it is given up as unreachable.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A member as the workspace knows them (`GET /api/v1/me`, `GET /api/v1/members`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// viewer, support, developer or admin.
    pub role: Role,
}

/// What a note is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Capture,
    Transaction,
}

/// One note: a member's words on a capture or a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub id: i64,
    pub target_kind: String,
    pub target_id: String,
    pub author: String,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// One line of the workspace's audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub member: String,
    pub role: String,
    pub action: String,
    pub target: String,
    /// done, refused or failed.
    pub outcome: String,
    pub detail: String,
}

/// What an evidence bundle is of (`POST /api/v1/evidence`): capture ids, or every attempt of
/// one notification (its eventId, narrowed by subscription and resource type); and the body
/// fields to mask.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EvidenceRequest {
    pub ids: Vec<i64>,
    pub event_id: Option<String>,
    pub subscription_id: Option<String>,
    pub resource_type: Option<String>,
    pub mask_fields: Vec<String>,
}

/// A finished, redacted bundle: the text of its two files (HAR and Markdown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceBundle {
    pub har: String,
    pub summary: String,
    pub report: partner_listener::evidence::RedactionReport,
    pub captures: usize,
}

/// One member's connection to one workspace. `Debug` shows where, never the token.
#[derive(Clone)]
pub struct WorkspaceClient {
    base: Url,
    token: Secret,
    http: reqwest::Client,
}

impl std::fmt::Debug for WorkspaceClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceClient")
            .field("base", &self.base.as_str())
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// A workspace URL as the client keeps it: parsed, http or https.
pub fn parse_url(text: &str) -> Result<Url> {
    let url = Url::parse(text.trim())
        .map_err(|error| Error::Usage(format!("{} is not a URL: {error}", text.trim())))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Usage(format!(
            "{} is not an http(s) URL",
            text.trim()
        )));
    }
    Ok(url)
}

impl WorkspaceClient {
    /// A client for the workspace at `base` (its root, e.g. `https://team.example`), calling
    /// as the member whose token is `token`.
    pub fn new(base: Url, token: Secret) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .build()
            .map_err(|error| Error::Usage(format!("no HTTP client: {error}")))?;
        Ok(Self { base, token, http })
    }

    /// The workspace's URL.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The member's token (for the secret store, at a login).
    pub fn token(&self) -> &Secret {
        &self.token
    }

    /// Where the workspace is, for messages (its URL without a trailing `/`).
    pub fn describe(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    /// Who the token belongs to (`GET /api/v1/me`): the check a login makes.
    pub async fn me(&self) -> Result<Member> {
        self.get("/api/v1/me", NO_QUERY).await
    }

    /// The workspace's members.
    pub async fn members(&self) -> Result<Vec<Member>> {
        self.get("/api/v1/members", NO_QUERY).await
    }

    /// A page of captures, newest first, as the local store's `page` answers it; `before` is
    /// a keyset cursor (the last id of the page before).
    pub async fn captures_page(
        &self,
        query: &CaptureQuery,
        before: Option<i64>,
    ) -> Result<CapturePage> {
        #[derive(Serialize)]
        struct PageRequest<'a> {
            #[serde(flatten)]
            query: &'a CaptureQuery,
            #[serde(skip_serializing_if = "Option::is_none")]
            before: Option<i64>,
        }
        self.post("/api/v1/captures/page", &PageRequest { query, before })
            .await
    }

    /// Up to `limit` captures oldest first after the id `after` (an export reads so, page by
    /// page, until a page is empty).
    pub async fn captures_walk(
        &self,
        filter: &CaptureFilter,
        after: i64,
        limit: u64,
    ) -> Result<Vec<Capture>> {
        self.post(
            "/api/v1/captures/walk",
            &serde_json::json!({ "filter": filter, "after": after, "limit": limit }),
        )
        .await
    }

    /// One capture.
    pub async fn capture(&self, id: i64) -> Result<Capture> {
        self.get(&format!("/api/v1/captures/{id}"), NO_QUERY).await
    }

    /// Adds `captures` (a part of an exported file: a thousand at most) to the workspace's;
    /// how many were added, and skipped as already there (developer and up).
    pub async fn captures_import(&self, captures: &[Capture]) -> Result<ImportReport> {
        self.post(
            "/api/v1/captures/import",
            &serde_json::json!({ "captures": captures }),
        )
        .await
    }

    /// Deletes the captures `filter` selects; how many were deleted.
    pub async fn captures_clear(&self, filter: &CaptureFilter) -> Result<u64> {
        #[derive(Deserialize)]
        struct Cleared {
            cleared: u64,
        }
        let cleared: Cleared = self
            .post(
                "/api/v1/captures/clear",
                &serde_json::json!({ "filter": filter }),
            )
            .await?;
        Ok(cleared.cleared)
    }

    /// The notes on a capture or a transaction, oldest first.
    pub async fn notes(&self, kind: TargetKind, target_id: &str) -> Result<Vec<Note>> {
        self.get(
            "/api/v1/notes",
            &[("targetKind", kind_text(kind)), ("targetId", target_id)],
        )
        .await
    }

    /// Writes a note as the member.
    pub async fn add_note(&self, kind: TargetKind, target_id: &str, text: &str) -> Result<Note> {
        self.post(
            "/api/v1/notes",
            &serde_json::json!({ "targetKind": kind, "targetId": target_id, "text": text }),
        )
        .await
    }

    /// The audit log, newest first: up to `limit` lines (the server's default 100), before
    /// the line `before`.
    pub async fn audit(&self, limit: Option<i64>, before: Option<i64>) -> Result<Vec<AuditEntry>> {
        #[derive(Serialize)]
        struct AuditQuery {
            #[serde(skip_serializing_if = "Option::is_none")]
            limit: Option<i64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            before: Option<i64>,
        }
        self.get("/api/v1/audit", &AuditQuery { limit, before })
            .await
    }

    /// A redacted evidence bundle of the workspace's captures, built by the server with the
    /// keys and secrets only it holds (support and up).
    pub async fn evidence(&self, request: &EvidenceRequest) -> Result<EvidenceBundle> {
        self.post("/api/v1/evidence", request).await
    }

    /// GETs `path` (under the workspace's URL) with `query` as its query string, and reads the
    /// answer as `T`. For calls without a method of their own.
    pub async fn get<Q: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        query: &Q,
    ) -> Result<T> {
        let url = self.url(path)?;
        let sent = self
            .http
            .get(url)
            .query(query)
            .bearer_auth(self.token.expose())
            .send()
            .await;
        self.read(sent).await
    }

    /// POSTs `body` as JSON to `path` (under the workspace's URL) and reads the answer as `T`.
    pub async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T> {
        self.post_waiting(path, body, CALL_TIMEOUT).await
    }

    /// [`Self::post`] for a call that may take longer than [`CALL_TIMEOUT`] (the server walks
    /// the service for it): given up after `timeout` instead.
    pub async fn post_waiting<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
        timeout: Duration,
    ) -> Result<T> {
        let url = self.url(path)?;
        let sent = self
            .http
            .post(url)
            .timeout(timeout)
            .bearer_auth(self.token.expose())
            .json(body)
            .send()
            .await;
        self.read(sent).await
    }

    fn url(&self, path: &str) -> Result<Url> {
        let base = self.describe();
        Url::parse(&format!("{base}{path}"))
            .map_err(|error| Error::Usage(format!("{base}{path} is not a URL: {error}")))
    }

    async fn read<T: DeserializeOwned>(
        &self,
        sent: reqwest::Result<reqwest::Response>,
    ) -> Result<T> {
        let response = sent.map_err(|error| {
            Error::Unreachable(format!("{} could not be reached: {error}", self.describe()))
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok());
        let bytes = response.bytes().await.map_err(|error| {
            Error::Unreachable(format!("the answer did not arrive whole: {error}"))
        })?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|error| {
                Error::Unreadable(format!(
                    "the answer is not what this version reads: {error}"
                ))
            });
        }
        Err(Error::from_answer(status.as_u16(), &bytes, retry_after))
    }
}

fn kind_text(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Capture => "capture",
        TargetKind::Transaction => "transaction",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_where_never_the_token() {
        let client = WorkspaceClient::new(
            parse_url("https://team.example/").expect("url"),
            Secret::new("pcw_very-secret-token"),
        )
        .expect("client");
        let shown = format!("{client:?}");
        assert!(shown.contains("https://team.example/"), "{shown}");
        assert!(!shown.contains("pcw_very-secret-token"), "{shown}");
    }

    #[test]
    fn only_http_urls_name_a_workspace() {
        assert!(parse_url(" https://team.example ").is_ok());
        assert!(matches!(parse_url("team.example"), Err(Error::Usage(_))));
        assert!(matches!(
            parse_url("ftp://team.example"),
            Err(Error::Usage(_))
        ));
    }

    #[tokio::test]
    async fn a_workspace_nobody_listens_on_is_unreachable() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        let client = WorkspaceClient::new(
            parse_url(&format!("http://127.0.0.1:{port}")).expect("url"),
            Secret::new("pcw_x"),
        )
        .expect("client");
        match client.me().await {
            Err(Error::Unreachable(message)) => {
                assert!(message.contains("could not be reached"), "{message}");
                assert!(!message.contains("pcw_x"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}

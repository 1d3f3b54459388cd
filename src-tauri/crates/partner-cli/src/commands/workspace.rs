//! The team workspace a command acts on instead of this machine's store, when
//! `PARTNER_WORKSPACE` (the server's URL) and `PARTNER_WORKSPACE_TOKEN` (the member's personal
//! token) are set: `listen captures`, `listen clear` ask the workspace's API (partner-server),
//! which answers in the local store's own types, so the output is the same.
//!
//! A refusal is the workspace's (the member's role, and the role the call takes, in its words)
//! and exits 1, as the service's refusals do; a workspace that cannot be reached exits 3.

use crate::error::{CliError, Result};
use partner_api::Secret;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The workspace's URL.
pub const WORKSPACE_ENV: &str = "PARTNER_WORKSPACE";
/// The member's token.
pub const TOKEN_ENV: &str = "PARTNER_WORKSPACE_TOKEN";

/// A workspace to call, as the environment names it.
#[derive(Debug)]
pub struct Workspace {
    base: url::Url,
    token: Secret,
    http: reqwest::Client,
}

impl Workspace {
    /// The workspace the environment names, if any; a URL without a token, or one that is not
    /// a URL, is a usage error.
    pub fn from_env() -> Result<Option<Self>> {
        let Some(url) = std::env::var(WORKSPACE_ENV)
            .ok()
            .filter(|u| !u.trim().is_empty())
        else {
            return Ok(None);
        };
        let base = url::Url::parse(url.trim()).map_err(|error| {
            CliError::Usage(format!("${WORKSPACE_ENV} ({url}) is not a URL: {error}"))
        })?;
        let token = std::env::var(TOKEN_ENV)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "${WORKSPACE_ENV} is set but ${TOKEN_ENV} is not: set it to your personal \
                     token (an admin makes one with `partner server member add`)"
                ))
            })?;
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .map_err(|error| CliError::Usage(format!("no HTTP client: {error}")))?;
        Ok(Some(Self {
            base,
            token: Secret::new(token.trim()),
            http,
        }))
    }

    /// Where the workspace is, for messages.
    pub fn describe(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    /// POSTs `body` as JSON to `path` (under the workspace's URL) and reads the answer.
    pub async fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T> {
        let url = self.url(path)?;
        let sent = self
            .http
            .post(url)
            .bearer_auth(self.token.expose())
            .json(body)
            .send()
            .await;
        self.read(sent).await
    }

    fn url(&self, path: &str) -> Result<url::Url> {
        let base = self.describe();
        url::Url::parse(&format!("{base}{path}"))
            .map_err(|error| CliError::Usage(format!("${WORKSPACE_ENV}: {error}")))
    }

    async fn read<T: DeserializeOwned>(
        &self,
        sent: reqwest::Result<reqwest::Response>,
    ) -> Result<T> {
        let response = sent.map_err(|error| CliError::Workspace {
            message: format!("{} could not be reached: {error}", self.describe()),
            status: 3,
        })?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| CliError::Workspace {
                message: format!("the answer did not arrive whole: {error}"),
                status: 3,
            })?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|error| CliError::Workspace {
                message: format!("the answer is not what this version reads: {error}"),
                status: 1,
            });
        }
        let message = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|body| body.get("message")?.as_str().map(str::to_string))
            .unwrap_or_else(|| format!("HTTP {status}"));
        Err(CliError::Workspace {
            message,
            status: if status == reqwest::StatusCode::BAD_REQUEST {
                2
            } else {
                1
            },
        })
    }
}

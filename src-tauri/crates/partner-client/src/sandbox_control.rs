//! The one client of a Partner Console sandbox's own endpoints (`/sandbox/v1/…`, not part of
//! the partner API): the lender's side (start a transaction, update it, add an event), the
//! service's delivery records and rules, and its faults on demand. `partner trigger`, `partner listen export --deliveries-from` and
//! the app (its Demo screen and "What the service sent") all call through it, so the paths,
//! the admin token and the error wording live once.
//!
//! A sandbox bound beyond loopback guards these endpoints with an admin token, sent as a
//! bearer token; it is a [`Secret`], so it never shows in a `Debug` print or an error. Errors
//! are worded as the partner client words any service's errors ([`ClientError::from_status`]).
//!
//! Its calls are calls to a service too, so each is kept in a [`CallLog`] as the partner
//! client's are (redacted: the admin token is a `$PARTNER_TOKEN` variable in the curl text):
//! its own log, or the log of the connection it serves ([`SandboxControl::with_call_log`]), so
//! the app's Calls panel and `partner --verbose` see them beside the partner API's.

use crate::call_log::{CallLog, CallTrace};
use crate::error::{ClientError, Result};
use partner_api::{DeliveryRecord, NewEvent, NewTransaction, Secret, TransactionUpdate};
use serde::Serialize;
use std::time::Duration;
use url::Url;

/// How long one call may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A sandbox's own endpoints.
#[derive(Debug, Clone)]
pub struct SandboxControl {
    http: reqwest::Client,
    base_url: Url,
    admin_token: Option<Secret>,
    calls: CallLog,
}

impl SandboxControl {
    /// The sandbox at `base_url`; `admin_token` when it guards its controls with one.
    pub fn new(base_url: &str, admin_token: Option<Secret>) -> Result<Self> {
        // The same trust as every other call of this crate: the system's store (network.rs).
        let http = crate::network::configure(reqwest::Client::builder(), &Default::default())?
            .build()
            .map_err(ClientError::from_transport)?;
        Ok(Self {
            http,
            base_url: crate::parse_base_url(base_url)?,
            admin_token,
            calls: CallLog::default(),
        })
    }

    /// Keeps this control's calls in `log` (a connection's client's, `PartnerClient::calls`).
    pub fn with_call_log(mut self, log: &CallLog) -> Self {
        self.calls = log.clone();
        self
    }

    /// The calls made through this control.
    pub fn calls(&self) -> &CallLog {
        &self.calls
    }

    /// The lender starts a transaction; the sandbox's answer (the transaction) as it sent it.
    pub async fn create_transaction(&self, body: &NewTransaction) -> Result<serde_json::Value> {
        self.call(reqwest::Method::POST, &["transactions"], None, Some(body))
            .await
    }

    /// The lender updates a transaction's request; the transaction as the sandbox answers it.
    pub async fn update_transaction(
        &self,
        transaction_id: &str,
        body: &TransactionUpdate,
    ) -> Result<serde_json::Value> {
        self.call(
            reqwest::Method::PATCH,
            &["transactions", transaction_id],
            None,
            Some(body),
        )
        .await
    }

    /// The lender adds a custom event to a transaction; the event as the sandbox answers it.
    pub async fn add_event(
        &self,
        transaction_id: &str,
        body: &NewEvent,
    ) -> Result<serde_json::Value> {
        self.call(
            reqwest::Method::POST,
            &["transactions", transaction_id, "events"],
            None,
            Some(body),
        )
        .await
    }

    /// The sandbox's delivery records, every one or those of one eventId.
    pub async fn deliveries(&self, event_id: Option<&str>) -> Result<Vec<DeliveryRecord>> {
        let query = event_id.map(|id| ("eventId", id));
        let records = self
            .call(reqwest::Method::GET, &["deliveries"], query, None::<&()>)
            .await?;
        serde_json::from_value(records).map_err(|e| ClientError::Server {
            status: 200,
            message: format!("the sandbox's delivery records are not as expected: {e}"),
            raw_body: None,
        })
    }

    /// The sandbox's delivery rules (`GET /sandbox/v1/delivery`): how long one of its
    /// notifications may still be on its way.
    pub async fn delivery_settings(&self) -> Result<partner_api::DeliverySettings> {
        let settings = self
            .call(reqwest::Method::GET, &["delivery"], None, None::<&()>)
            .await?;
        serde_json::from_value(settings).map_err(|e| ClientError::Server {
            status: 200,
            message: format!("the sandbox's delivery rules are not as expected: {e}"),
            raw_body: None,
        })
    }

    /// Adds a fault on demand (`POST /sandbox/v1/faults`, a `NewFault` of the sandbox); the
    /// fault in force, as the sandbox answers it.
    pub async fn add_fault(&self, fault: &serde_json::Value) -> Result<serde_json::Value> {
        self.call(reqwest::Method::POST, &["faults"], None, Some(fault))
            .await
    }

    /// The faults in force, each with how many calls it has faulted.
    pub async fn faults(&self) -> Result<serde_json::Value> {
        self.call(reqwest::Method::GET, &["faults"], None, None::<&()>)
            .await
    }

    /// Ends every fault; the sandbox's `{"cleared": n}`.
    pub async fn clear_faults(&self) -> Result<serde_json::Value> {
        self.call(reqwest::Method::DELETE, &["faults"], None, None::<&()>)
            .await
    }

    /// Revokes every token of every client now; the sandbox's `{"cleared": n}`.
    pub async fn revoke_all_tokens(&self) -> Result<serde_json::Value> {
        self.call(
            reqwest::Method::POST,
            &["tokens", "revoke"],
            None,
            None::<&()>,
        )
        .await
    }

    fn url(&self, segments: &[&str], query: Option<(&str, &str)>) -> Url {
        let mut url = self.base_url.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty()
                .push("sandbox")
                .push("v1")
                .extend(segments);
        }
        if let Some((name, value)) = query {
            url.query_pairs_mut().append_pair(name, value);
        }
        url
    }

    async fn call(
        &self,
        method: reqwest::Method,
        segments: &[&str],
        query: Option<(&str, &str)>,
        body: Option<&impl Serialize>,
    ) -> Result<serde_json::Value> {
        let url = self.url(segments, query);
        let mut request = self.http.request(method, url).timeout(TIMEOUT);
        if let Some(token) = &self.admin_token {
            request = request.bearer_auth(token.expose());
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let mut trace = CallTrace::start(&self.calls);
        let result = self.send(request, &mut trace).await;
        trace.end(&result);
        result
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        trace: &mut CallTrace,
    ) -> Result<serde_json::Value> {
        let request = request.build().map_err(ClientError::from_transport)?;
        trace.attempt(&request);
        let response = self.http.execute(request).await.map_err(|e| {
            let message = format!("the sandbox at {} did not answer: {e}", self.base_url);
            if e.is_timeout() {
                ClientError::Timeout { message }
            } else {
                ClientError::Network { message }
            }
        })?;
        let status = response.status().as_u16();
        trace.answered(status, response.headers());
        let bytes = response.bytes().await.map_err(|e| ClientError::Network {
            message: format!("the sandbox's answer broke off: {e}"),
        })?;
        trace.body_read(bytes.len());
        if !(200..300).contains(&status) {
            return Err(ClientError::from_status(status, &bytes, None, true));
        }
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Server {
            status,
            message: format!("the sandbox answered something that is not JSON: {e}"),
            raw_body: None,
        })
    }
}

//! [`PartnerClient`]: the calls of the partner API, each with a token that is fresh when sent.
//!
//! Every call goes through [`PartnerClient::authorized`]: take a fresh token, send, record the
//! use on success, and on a 401 get one new token and try once more. Whether a failed call is
//! retried on a network error depends on the method: reads are, writes are not.
//! Input that breaks a rule of the spec is refused here, before anything is sent.

use crate::clock::{Clock, SystemClock};
use crate::config::ConnectionConfig;
use crate::error::{ClientError, ErrorKind, Result, RuleError};
use crate::http::{BodyPolicy, RawResponse, Repeat, Transport};
use crate::page::{total_from, Listed, Page, PageRequest};
use crate::token::TokenManager;
use crate::writes::{Write, WriteAction, WriteGuard, WriteJournal, WriteOutcome, WriteRecord};
use partner_api::product::{
    check_callback_url, check_listing_name, check_name, check_request_types,
};
use partner_api::read::{self, Document};
use partner_api::{signing_key, NewProduct, TransactionResponse};
use reqwest::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use url::Url;

/// The media type of a JSON merge patch (RFC 7396), which product PATCH requires.
pub const MERGE_PATCH: &str = "application/merge-patch+json";
const JSON: &str = "application/json";

/// A connection to one service as one API client. Cheap to clone: clones share the HTTP
/// connection pool and the token.
#[derive(Debug, Clone)]
pub struct PartnerClient {
    transport: Transport,
    tokens: TokenManager,
    clock: Arc<dyn Clock>,
    writes: WriteGuard,
}

impl PartnerClient {
    pub fn new(config: ConnectionConfig) -> Result<Self> {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A client whose token deadlines follow `clock` (tests move it with the sandbox's clock).
    pub fn with_clock(config: ConnectionConfig, clock: Arc<dyn Clock>) -> Result<Self> {
        let transport = Transport::new(&config)?;
        let tokens = TokenManager::with_transport(transport.clone(), &config, clock.clone());
        Ok(Self {
            transport,
            tokens,
            clock,
            writes: WriteGuard::new(config.read_only),
        })
    }

    /// Whether every write of this connection is refused before sending.
    pub fn is_read_only(&self) -> bool {
        self.writes.is_read_only()
    }

    /// Marks this connection (this client and its clones) read-only, or not, from now on.
    pub fn set_read_only(&self, read_only: bool) {
        self.writes.set_read_only(read_only);
    }

    /// Where this client's writes (sent and refused) are recorded from now on: the console's
    /// audit log. `None` stops recording.
    pub fn journal_writes(&self, journal: Option<Arc<dyn WriteJournal>>) {
        self.writes.set_journal(journal);
    }

    pub fn tokens(&self) -> &TokenManager {
        &self.tokens
    }

    pub fn base_url(&self) -> &Url {
        self.transport.base_url()
    }

    /// The wait in progress when the service asked the client to come back later (a read
    /// waits and is sent again; see `RetryPolicy::max_told_waits`), for a progress line:
    /// "waiting 2 s: rate limited". `None` while nothing waits.
    pub fn waiting(&self) -> tokio::sync::watch::Receiver<Option<crate::Waiting>> {
        self.transport.waiting()
    }

    /// Every call this client (and its clones, and its token manager) made in this run.
    pub fn calls(&self) -> &crate::CallLog {
        self.transport.calls()
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Revokes the token: on sign-out, and before a connection is removed.
    pub async fn sign_out(&self) -> Result<()> {
        self.tokens.revoke().await
    }

    /// Removes this connection: revokes the token, then forgets the client secret in `store`.
    pub async fn remove_connection(&self, store: &dyn crate::secrets::SecretStore) -> Result<()> {
        self.tokens.revoke().await?;
        crate::secrets::forget_client_secret(store, self.base_url(), self.tokens.client_id())
    }

    /// One page of a listing; the request is checked against the spec's rules first. Each item
    /// is kept as the service sent it, with the view `T` read from it.
    pub async fn list<T: Listed>(&self, request: &PageRequest) -> Result<Page<Document<T>>> {
        request.check::<T>().map_err(RuleError::from)?;
        let url = self.transport.url(&["partner", "v2", T::PATH]);
        let query = request.query();
        let response = self
            .authorized(Repeat::Safe, &|http| http.get(url.clone()).query(&query))
            .await?;
        let total = total_from(&response.headers, response.status)?;
        let items = response.documents::<T>(T::PATH)?;
        Ok(Page {
            items,
            total,
            start: request.page.start,
            limit: request.page.limit,
        })
    }

    pub async fn list_products(
        &self,
        request: &PageRequest,
    ) -> Result<Page<Document<read::ProductView>>> {
        self.list(request).await
    }

    pub async fn list_transactions(
        &self,
        request: &PageRequest,
    ) -> Result<Page<Document<read::TransactionView>>> {
        self.list(request).await
    }

    pub async fn get_product(&self, id: &str) -> Result<Document<read::ProductView>> {
        self.get_product_as(id).await
    }

    /// A product read into the view `T` (the app's shell still reads the sandbox's strict
    /// record; everything else reads [`read::ProductView`]).
    pub async fn get_product_as<T: DeserializeOwned>(&self, id: &str) -> Result<Document<T>> {
        let id = non_empty("product id", id)?;
        let url = self.transport.url(&["partner", "v2", "products", id]);
        self.authorized(Repeat::Safe, &|http| http.get(url.clone()))
            .await?
            .document("product")
    }

    /// Creates a product. Its names, request types, callback URLs and any signing keys are
    /// checked first; the signing keys are not stored (see `rotation::create_product_storing_keys`).
    pub async fn create_product(
        &self,
        product: &NewProduct,
    ) -> Result<Document<read::ProductView>> {
        check_new_product(product)?;
        let url = self.transport.url(&["partner", "v2", "products"]);
        // Sent as the struct serialises (its fields in order); recorded as a value, redacted.
        let unencodable = |e| ClientError::input(format!("the product cannot be encoded ({e})"));
        let body = serde_json::to_vec(product).map_err(unencodable)?;
        let sent = serde_json::to_value(product).map_err(unencodable)?;
        let write = Write::new(
            WriteAction::CreateProduct,
            format!("product \"{}\"", product.name),
            &sent,
        );
        self.write(write, reqwest::Method::POST, &url, &body, JSON)
            .await?
            .document("product")
    }

    /// Sends a JSON merge patch to a product. The body is built by the caller; see
    /// `rotation::rotate_signing_key` for the patch that changes one signing key.
    pub async fn patch_product(
        &self,
        id: &str,
        patch: &serde_json::Value,
    ) -> Result<Document<read::ProductView>> {
        let target = format!("product {id}");
        self.patch_product_as(id, patch, WriteAction::ChangeProduct, target)
            .await
    }

    /// A product patch recorded as `action` on `target` (a subscription's change, a rotation).
    pub(crate) async fn patch_product_as(
        &self,
        id: &str,
        patch: &serde_json::Value,
        action: WriteAction,
        target: String,
    ) -> Result<Document<read::ProductView>> {
        let id = non_empty("product id", id)?;
        let url = self.transport.url(&["partner", "v2", "products", id]);
        let body = serde_json::to_vec(patch)
            .map_err(|e| ClientError::input(format!("the patch cannot be encoded ({e})")))?;
        let write = Write::new(action, target, patch);
        self.write(write, reqwest::Method::PATCH, &url, &body, MERGE_PATCH)
            .await?
            .document("product")
    }

    pub async fn get_transaction(&self, id: &str) -> Result<Document<read::TransactionView>> {
        self.get_transaction_as(id).await
    }

    /// A transaction read into the view `T` (see [`Self::get_product_as`]).
    pub async fn get_transaction_as<T: DeserializeOwned>(&self, id: &str) -> Result<Document<T>> {
        let id = non_empty("transaction id", id)?;
        let url = self.transport.url(&["partner", "v2", "transactions", id]);
        self.authorized(Repeat::Safe, &|http| http.get(url.clone()))
            .await?
            .document("transaction")
    }

    /// Every event of a transaction, oldest first.
    pub async fn list_events(
        &self,
        transaction_id: &str,
    ) -> Result<Vec<Document<read::EventView>>> {
        self.list_events_as(transaction_id).await
    }

    /// The events read into the view `T` (see [`Self::get_product_as`]).
    pub async fn list_events_as<T: DeserializeOwned>(
        &self,
        transaction_id: &str,
    ) -> Result<Vec<Document<T>>> {
        let id = non_empty("transaction id", transaction_id)?;
        let url = self
            .transport
            .url(&["partner", "v2", "transactions", id, "events"]);
        self.authorized(Repeat::Safe, &|http| http.get(url.clone()))
            .await?
            .documents("events")
    }

    pub async fn get_event(
        &self,
        transaction_id: &str,
        event_id: &str,
    ) -> Result<Document<read::EventView>> {
        let id = non_empty("transaction id", transaction_id)?;
        let event_id = non_empty("event id", event_id)?;
        let url = self
            .transport
            .url(&["partner", "v2", "transactions", id, "events", event_id]);
        self.authorized(Repeat::Safe, &|http| http.get(url.clone()))
            .await?
            .document("event")
    }

    /// The partner's answer: `PATCH /partner/v2/transactions/{id}/response`. A final status
    /// locks the transaction; answering a locked one is a conflict.
    pub async fn respond_to_transaction(
        &self,
        transaction_id: &str,
        response: &TransactionResponse,
    ) -> Result<Document<read::TransactionView>> {
        self.respond_to_transaction_as(transaction_id, response)
            .await
    }

    /// The answer, the transaction read back into the view `T` (see [`Self::get_product_as`]).
    pub async fn respond_to_transaction_as<T: DeserializeOwned>(
        &self,
        transaction_id: &str,
        response: &TransactionResponse,
    ) -> Result<Document<T>> {
        let id = non_empty("transaction id", transaction_id)?;
        let url = self
            .transport
            .url(&["partner", "v2", "transactions", id, "response"]);
        let unencodable = |e| ClientError::input(format!("the response cannot be encoded ({e})"));
        let body = serde_json::to_vec(response).map_err(unencodable)?;
        let sent = serde_json::to_value(response).map_err(unencodable)?;
        let write = Write::new(
            WriteAction::Respond,
            crate::writes::transaction_target(id),
            &sent,
        );
        self.write(write, reqwest::Method::PATCH, &url, &body, JSON)
            .await?
            .document("transaction")
    }

    /// Refuses `action` on `target` (recorded as refused) when the connection is read-only:
    /// for writes that touch the keychain before they send.
    pub(crate) fn writable(&self, action: WriteAction, target: &str) -> Result<()> {
        let write = Write::new(action, target, &serde_json::Value::Null);
        match self.refused(&write, String::new()) {
            None => Ok(()),
            Some(refusal) => Err(refusal),
        }
    }

    /// The journal's record of `write`, sent as `call`, ended as `outcome`.
    fn record_of(&self, write: &Write, call: String, outcome: WriteOutcome) -> WriteRecord {
        WriteRecord {
            at: chrono::Utc::now(),
            base_url: self.base_url().to_string(),
            client_id: self.tokens.client_id().to_owned(),
            action: write.action,
            target: write.target.clone(),
            call,
            sent: write.sent.clone(),
            outcome,
        }
    }

    /// The refusal of `write` on a read-only connection, recorded; `None` when it may be sent.
    fn refused(&self, write: &Write, call: String) -> Option<ClientError> {
        let refusal = self.writes.refusal(write)?;
        let reason = "the connection is read-only".to_owned();
        self.writes
            .record(self.record_of(write, call, WriteOutcome::Refused { reason }));
        Some(refusal)
    }

    /// Sends a write: refused before anything is sent (no token taken) on a read-only
    /// connection, never repeated after an unknown outcome, and recorded in the journal with
    /// the status and request id the call log saw.
    async fn write(
        &self,
        write: Write,
        method: reqwest::Method,
        url: &Url,
        body: &[u8],
        content_type: &'static str,
    ) -> Result<RawResponse> {
        let path = url.path().to_owned();
        let call = format!("{method} {path}");
        if let Some(refusal) = self.refused(&write, call.clone()) {
            return Err(refusal);
        }
        let before = self.calls().last_seq();
        let result = self
            .authorized(Repeat::Once, &|http| {
                http.request(method.clone(), url.clone())
                    .header(CONTENT_TYPE, content_type)
                    .body(body.to_vec())
            })
            .await;
        let logged = self
            .calls()
            .since(before)
            .into_iter()
            .rev()
            .find(|c| c.method == method.as_str() && c.path == path);
        let outcome = crate::writes::outcome(&result, logged.as_deref());
        self.writes.record(self.record_of(&write, call, outcome));
        result
    }

    /// Sends with a fresh token; a 401 gets one new token and one more try, never more.
    async fn authorized(
        &self,
        repeat: Repeat,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
    ) -> Result<RawResponse> {
        let mut token = self.tokens.access_token().await?;
        let mut retried = false;
        loop {
            let sent_at = self.tokens.now();
            let bearer = token.token.clone();
            let outcome = self
                .transport
                .send(repeat, BodyPolicy::Keep, &|http| {
                    build(http).bearer_auth(bearer.expose())
                })
                .await;
            match outcome {
                Ok(response) => {
                    self.tokens.touch(token.generation, sent_at);
                    return Ok(response);
                }
                Err(error) if error.kind() == ErrorKind::Unauthorized && !retried => {
                    tracing::info!("the service refused the token; retrying once with a new one");
                    retried = true;
                    token = self.tokens.after_rejection(token.generation).await?;
                }
                Err(error) => return Err(error),
            }
        }
    }
}

fn non_empty<'a>(what: &str, value: &'a str) -> Result<&'a str> {
    if value.trim().is_empty() {
        Err(ClientError::input(format!("the {what} is empty")))
    } else {
        Ok(value)
    }
}

/// The create rules of the field notes, checked before sending.
fn check_new_product(product: &NewProduct) -> Result<()> {
    check_name(&product.name).map_err(ClientError::input)?;
    check_listing_name(&product.listing_name).map_err(ClientError::input)?;
    check_request_types(&product.request_types).map_err(ClientError::input)?;
    for (i, webhook) in product.webhooks.iter().enumerate() {
        let n = i + 1;
        if webhook.subscription_id.is_some() {
            return Err(ClientError::input(format!(
                "webhook {n}: subscriptionId is set by the service; leave it out when creating"
            )));
        }
        let url = webhook
            .url
            .as_deref()
            .ok_or_else(|| ClientError::input(format!("webhook {n}: url is required")))?;
        // The service decides whether http:// to a loopback address is allowed (a sandbox may).
        check_callback_url(url, true)
            .map_err(|e| ClientError::input(format!("webhook {n}: {e}")))?;
        if webhook.events.as_ref().is_none_or(|e| e.is_empty()) {
            return Err(ClientError::input(format!(
                "webhook {n}: events needs at least one of created, updated"
            )));
        }
        if webhook.resource.is_none() {
            return Err(ClientError::input(format!(
                "webhook {n}: resource is required"
            )));
        }
        let key = webhook
            .signing_key
            .as_ref()
            .ok_or_else(|| ClientError::input(format!("webhook {n}: signingkey is required")))?;
        signing_key::check(key.expose()).map_err(RuleError::from)?;
    }
    Ok(())
}

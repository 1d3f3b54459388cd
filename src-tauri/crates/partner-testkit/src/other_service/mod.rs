//! A second, independent implementation of the partner API, written from the spec alone.
//!
//! Why it exists: the sandbox is ours, and a client that only ever meets it learns the
//! sandbox's choices (its extra fields, its few enum values, its error body) as if the spec
//! had made them. Issue #23 was exactly that: a spec-faithful service left out `created`, and
//! `partner products list` failed. This service answers every endpoint the client calls, but it
//! differs from the sandbox wherever the spec leaves a choice open, and a [`Dialect`] picks how:
//! fields left out, unknown fields and values, other date and number spellings, other error
//! bodies, another sort set, rate limits, compressed and chunked bodies.
//!
//! It shares no code with `partner-sandbox` and no wire type with `partner-api`: every body is
//! a hand-built `serde_json::Value`, every rule is re-implemented here from the spec's words
//! (Basic auth on the token endpoints, the 15/120-minute token lifetimes, `start`/`limit`
//! bounds, `sort=A,-B`, the signing-key complexity rule, the webhook merge of a product PATCH).
//! Where the two implementations agree, they agree because the spec says so.
//!
//! The `no_subscription_ids` dialect shows no `subscriptionId` on a product's `webhooks` (the
//! spec's subscription has no id field): its PATCH matches an element by `url` and `resource`,
//! and a subscription's id is said only in `Svc-SubscriptionId` on the notifications it sends
//! ([`OtherService::notify`], in `other_service/notify.rs`).
//!
//! Every answer carries a request id, as gateways in front of real services add one: the
//! `X-Request-Id` header, or `Request-Id` in the `extra` dialect (the spec names neither).
//!
//! One file per concern: [`Dialect`] (`dialect.rs`) and the starting data (`seed.rs`), what the
//! service holds (`state.rs`), how it answers (`answer.rs`), the token endpoints (`tokens.rs`),
//! the rate limit and bearer check every API call passes (`admission.rs`), listings' pages
//! (`paging.rs`), the reads (`reads.rs`), product writes (`product_writes.rs`) and their
//! webhook merge (`webhooks.rs`), notifications (`notify.rs`), and a private CA's TLS
//! (`private_ca.rs`). This file starts the service and is what a test holds.

// Handlers refuse with a whole `Response` (`Result<_, Response>`): this is a test server, and
// building the refusal where the rule is checked keeps each rule in one place.
#![allow(clippy::result_large_err)]

mod admission;
mod answer;
mod dialect;
mod notify;
mod paging;
mod private_ca;
mod product_writes;
mod reads;
mod seed;
mod state;
mod tokens;
mod webhooks;

pub use dialect::{Compression, Dialect, ErrorShape, RateLimit, RetryAfter};
pub use notify::Sent;
pub use private_ca::PrivateCaService;
pub use seed::Seed;

use axum::routing::{get, post};
use axum::Router;
use chrono::Utc;
use serde_json::Value;
use state::Shared;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The other implementation, running on 127.0.0.1 port 0 until dropped or stopped.
#[derive(Debug)]
pub struct OtherService {
    addr: SocketAddr,
    client_id: String,
    client_secret: partner_api::Secret,
    state: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    scheme: &'static str,
}

/// TLS for the other service: its certificate, and optionally the CA whose client
/// certificates it requires (mutual TLS).
#[derive(Debug, Clone)]
pub struct ServiceTls {
    pub certificate: crate::ServerCert,
    /// PEM of the CA that must have issued the client's certificate; `None` asks for none.
    pub client_ca_pem: Option<String>,
}

impl OtherService {
    /// The service in `dialect` with the default seed.
    pub async fn start(dialect: Dialect) -> Self {
        Self::start_with(dialect, Seed::default()).await
    }

    pub async fn start_with(dialect: Dialect, seed: Seed) -> Self {
        Self::start_serving(dialect, seed, None).await
    }

    /// The service in `dialect` over HTTPS (TLS 1.2/1.3) with `tls`'s certificate; its base
    /// URL is `https://127.0.0.1:PORT`.
    pub async fn start_tls(dialect: Dialect, tls: ServiceTls) -> Self {
        Self::start_serving(dialect, Seed::default(), Some(tls)).await
    }

    async fn start_serving(dialect: Dialect, seed: Seed, tls: Option<ServiceTls>) -> Self {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for the other service");
        let addr = listener.local_addr().expect("the other service's address");
        let client_id = "other-client".to_string();
        let client_secret = "other-secret-0123456789".to_string();
        let state = Arc::new(Shared {
            dialect,
            answers: AtomicU64::new(0),
            base_url: format!("{scheme}://{addr}"),
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            calls: AtomicU64::new(0),
            data: Mutex::new(seed::data(dialect, seed)),
        });
        let app = Router::new()
            .route("/oauth2/v1/token", post(tokens::issue))
            .route("/oauth2/v1/token/introspection", post(tokens::introspect))
            .route("/oauth2/v1/token/revocation", post(tokens::revoke))
            .route(
                "/partner/v2/products",
                get(reads::list_products).post(product_writes::create_product),
            )
            .route(
                "/partner/v2/products/{id}",
                get(reads::get_product).patch(product_writes::patch_product),
            )
            .route("/partner/v2/transactions", get(reads::list_transactions))
            .route("/partner/v2/transactions/{id}", get(reads::get_transaction))
            .route(
                "/partner/v2/transactions/{id}/events",
                get(reads::list_events),
            )
            .route(
                "/partner/v2/transactions/{id}/events/{event_id}",
                get(reads::get_event),
            )
            .fallback(answer::not_found)
            .layer(axum::middleware::map_response_with_state(
                state.clone(),
                answer::with_request_id,
            ))
            .with_state(state.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        match tls {
            None => {
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = stopped.await;
                        })
                        .await;
                });
            }
            Some(tls) => {
                let acceptor = crate::webhook_receiver::tls_acceptor_with(
                    &tls.certificate,
                    tls.client_ca_pem.as_deref(),
                )
                .expect("a TLS acceptor for the other service");
                let cancel = tokio_util::sync::CancellationToken::new();
                let on_stop = cancel.clone();
                tokio::spawn(async move {
                    let _ = stopped.await;
                    on_stop.cancel();
                });
                tokio::spawn(crate::webhook_receiver::serve_tls(
                    listener, acceptor, app, cancel,
                ));
            }
        }
        Self {
            addr,
            client_id,
            client_secret: partner_api::Secret::new(client_secret),
            state,
            stop: Some(stop),
            scheme,
        }
    }

    /// `http://127.0.0.1:PORT` (`https://` when started with TLS), no trailing slash.
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    pub fn client_secret(&self) -> &partner_api::Secret {
        &self.client_secret
    }

    pub fn dialect(&self) -> Dialect {
        self.state.dialect
    }

    /// How many calls reached the partner API (not the token endpoints), refused ones too.
    pub fn api_calls(&self) -> u64 {
        self.state.calls.load(Ordering::SeqCst)
    }

    /// Every product as this service would show it, in creation order.
    pub fn products(&self) -> Vec<Value> {
        let data = self.state.lock();
        data.products.iter().map(|p| p.shown()).collect()
    }

    /// The ids of every transaction, in creation order.
    pub fn transaction_ids(&self) -> Vec<String> {
        let data = self.state.lock();
        data.transactions
            .iter()
            .filter_map(|t| t.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }

    /// The signing key this service holds for a subscription (the service's own secret; a test
    /// compares it with what the client kept).
    pub fn signing_key(&self, subscription_id: &str) -> Option<String> {
        let data = self.state.lock();
        data.products
            .iter()
            .flat_map(|p| p.webhooks.iter())
            .find(|w| w.id == subscription_id)
            .map(|w| w.signing_key.clone())
    }

    /// The service's own id of the subscription of product `product_id` with this `url` and
    /// `resource` (in the `no_subscription_ids` dialect it is shown only in notifications), and
    /// the key it signs with.
    pub fn subscription_at(
        &self,
        product_id: &str,
        url: &str,
        resource: &str,
    ) -> Option<(String, String)> {
        let data = self.state.lock();
        data.products
            .iter()
            .filter(|p| p.id() == product_id)
            .flat_map(|p| p.webhooks.iter())
            .find(|w| {
                w.shown.get("url").and_then(Value::as_str) == Some(url)
                    && w.shown.get("resource").and_then(Value::as_str) == Some(resource)
            })
            .map(|w| (w.id.clone(), w.signing_key.clone()))
    }

    /// Whether a token is active now (issued, not revoked, within both lifetimes).
    pub fn token_is_active(&self, token: &str) -> bool {
        self.state.lock().active(token, Utc::now())
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for OtherService {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

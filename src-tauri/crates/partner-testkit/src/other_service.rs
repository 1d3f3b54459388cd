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

// Handlers refuse with a whole `Response` (`Result<_, Response>`): this is a test server, and
// building the refusal where the rule is checked keeps each rule in one place.
#![allow(clippy::result_large_err)]

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use base64::Engine as _;
use chrono::{DateTime, Duration as TimeDelta, SecondsFormat, TimeZone, Utc};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

mod notify;
pub use notify::Sent;

/// How an API error body looks (the spec does not show one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorShape {
    /// RFC 7807 `application/problem+json`: `{type, title, detail, status}`.
    #[default]
    Problem,
    /// `{"message": "..."}`.
    Message,
    /// `{"errors": ["...", {"message": "..."}]}`.
    Errors,
    /// `text/plain`.
    PlainText,
    /// An HTML page, as a gateway in front of the service answers.
    Html,
    /// No body at all.
    Empty,
}

/// How a rate-limited answer says when to come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    Seconds(u64),
    /// An HTTP date this many seconds ahead.
    HttpDate(u64),
}

/// Every `every`-th call of the partner API is refused with `status` (429 or 503) and a
/// `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub every: u64,
    pub status: u16,
    pub retry_after: RetryAfter,
}

/// A `Content-Encoding` the service uses when the request accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Brotli,
    Deflate,
}

impl Compression {
    fn token(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Brotli => "br",
            Compression::Deflate => "deflate",
        }
    }
}

/// What this implementation chose where the spec is silent. The switches combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dialect {
    /// Only the spec's product-table fields (no `created`, `createdBy`, `updated`,
    /// `updatedBy`), optional fields left out, transactions with `id` and a few fields.
    pub minimal: bool,
    /// Unknown fields and enum values everywhere, dates with offsets and fractions, numbers
    /// as strings, `null` for absent values.
    pub extra: bool,
    /// The shape of API error bodies (token endpoints always answer as OAuth 2.0 does).
    pub errors: ErrorShape,
    /// Sorting by `listingName` only on products and `created` only on transactions.
    pub narrow_sorts: bool,
    /// Neither `listingName` on products nor `created` on transactions is a sort key (the
    /// console's default sorts, `listingName` and `-created`): a `sort` naming one is a 400 in
    /// the dialect's error shape, as any key this service does not sort by. The field notes say
    /// the real service sorts products by `listingName`; nothing says every deployment does.
    pub refuses_default_sorts: bool,
    pub rate_limit: Option<RateLimit>,
    pub compression: Option<Compression>,
    /// Bodies sent in small chunks (`Transfer-Encoding: chunked`, no `Content-Length`).
    pub chunked: bool,
    /// No `subscriptionId` on a product's `webhooks` (the spec shows none): a PATCH entry is
    /// matched to a subscription by `url` and `resource` (a new pair is a new subscription, a
    /// `subscriptionId` in it is refused), rotating keeps the subscription's id, and the id is
    /// sent only in `Svc-SubscriptionId` on its notifications.
    pub no_subscription_ids: bool,
}

impl Dialect {
    pub fn minimal() -> Self {
        Self {
            minimal: true,
            ..Self::default()
        }
    }

    pub fn extra() -> Self {
        Self {
            extra: true,
            ..Self::default()
        }
    }

    pub fn errors(shape: ErrorShape) -> Self {
        Self {
            errors: shape,
            ..Self::default()
        }
    }

    pub fn narrow_sorts() -> Self {
        Self {
            narrow_sorts: true,
            ..Self::default()
        }
    }

    pub fn without_subscription_ids() -> Self {
        Self {
            no_subscription_ids: true,
            ..Self::default()
        }
    }

    pub fn refusing_default_sorts() -> Self {
        Self {
            refuses_default_sorts: true,
            ..Self::default()
        }
    }

    pub fn rate_limited(every: u64, status: u16, retry_after: RetryAfter) -> Self {
        Self {
            rate_limit: Some(RateLimit {
                every,
                status,
                retry_after,
            }),
            ..Self::default()
        }
    }

    pub fn compressed(compression: Compression) -> Self {
        Self {
            compression: Some(compression),
            chunked: true,
            ..Self::default()
        }
    }

    /// Everything a service may do that makes a client work harder, at once: only one sort
    /// key per listing, RFC 7807 problem details for errors, a 429 with `Retry-After: 1` on
    /// every 7th call, and gzip bodies sent in chunks.
    pub fn demanding() -> Self {
        Self {
            errors: ErrorShape::Problem,
            narrow_sorts: true,
            rate_limit: Some(RateLimit {
                every: 7,
                status: 429,
                retry_after: RetryAfter::Seconds(1),
            }),
            compression: Some(Compression::Gzip),
            chunked: true,
            ..Self::default()
        }
    }

    fn product_sorts(&self) -> &'static [&'static str] {
        match (self.narrow_sorts, self.refuses_default_sorts) {
            (true, false) => &["listingName"],
            (false, false) => &["listingName", "name", "status"],
            (true, true) => &["name"],
            (false, true) => &["name", "status"],
        }
    }

    fn transaction_sorts(&self) -> &'static [&'static str] {
        match (self.narrow_sorts, self.refuses_default_sorts) {
            (true, false) => &["created"],
            (false, false) => &["id", "created", "updated", "status"],
            (true, true) => &["updated"],
            (false, true) => &["id", "updated", "status"],
        }
    }
}

/// How many items the service starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed {
    pub products: usize,
    pub transactions: usize,
}

impl Default for Seed {
    fn default() -> Self {
        Self {
            products: 3,
            transactions: 30,
        }
    }
}

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

/// The other service over TLS with a certificate from a private CA of its own (one no machine
/// trusts), and that CA's PEM written to a file, as a user would hand it to the console. With
/// `client_certificates`, the service also requires a client certificate from that CA, and
/// [`PrivateCaService::client_certificate`] writes one.
#[derive(Debug)]
pub struct PrivateCaService {
    pub service: OtherService,
    pub ca: crate::TestCa,
    /// The CA's certificate (PEM), in a folder kept as long as this value.
    pub ca_file: std::path::PathBuf,
    files: tempfile::TempDir,
}

impl PrivateCaService {
    pub async fn start(dialect: Dialect, client_certificates: bool) -> Self {
        let ca = crate::TestCa::new();
        let service = OtherService::start_tls(
            dialect,
            ServiceTls {
                certificate: ca.issue(),
                client_ca_pem: client_certificates.then(|| ca.pem()),
            },
        )
        .await;
        let files = tempfile::tempdir().expect("a folder for the certificates");
        let ca_file = files.path().join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).expect("write the CA file");
        Self {
            service,
            ca,
            ca_file,
            files,
        }
    }

    /// A client certificate issued by the CA: the paths of its certificate and its private
    /// key (both PEM).
    pub fn client_certificate(
        &self,
        common_name: &str,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let issued = self.ca.issue_client(common_name);
        let cert = self.files.path().join("client.pem");
        let key = self.files.path().join("client-key.pem");
        std::fs::write(&cert, &issued.cert_pem).expect("write the client certificate");
        std::fs::write(&key, &issued.key_pem).expect("write the client key");
        (cert, key)
    }
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
            data: Mutex::new(Data::seeded(dialect, seed)),
        });
        let app = Router::new()
            .route("/oauth2/v1/token", post(issue))
            .route("/oauth2/v1/token/introspection", post(introspect))
            .route("/oauth2/v1/token/revocation", post(revoke))
            .route(
                "/partner/v2/products",
                get(list_products).post(create_product),
            )
            .route(
                "/partner/v2/products/{id}",
                get(get_product).patch(patch_product),
            )
            .route("/partner/v2/transactions", get(list_transactions))
            .route("/partner/v2/transactions/{id}", get(get_transaction))
            .route("/partner/v2/transactions/{id}/events", get(list_events))
            .route(
                "/partner/v2/transactions/{id}/events/{event_id}",
                get(get_event),
            )
            .fallback(not_found)
            .layer(axum::middleware::map_response_with_state(
                state.clone(),
                with_request_id,
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

#[derive(Debug)]
struct Shared {
    dialect: Dialect,
    /// Answers so far, for each answer's request id.
    answers: AtomicU64,
    base_url: String,
    client_id: String,
    client_secret: String,
    calls: AtomicU64,
    data: Mutex<Data>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Data> {
        // A panic while holding the lock is a bug in a test; the data is still usable.
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Debug)]
struct IssuedToken {
    issued: DateTime<Utc>,
    last_used: DateTime<Utc>,
    revoked: bool,
}

#[derive(Debug, Clone)]
struct Webhook {
    id: String,
    /// Every field but the key, as shown.
    shown: Map<String, Value>,
    signing_key: String,
}

#[derive(Debug, Clone)]
struct StoredProduct {
    fields: Map<String, Value>,
    webhooks: Vec<Webhook>,
}

impl StoredProduct {
    fn shown(&self) -> Value {
        let mut fields = self.fields.clone();
        fields.insert(
            "webhooks".into(),
            Value::Array(
                self.webhooks
                    .iter()
                    .map(|w| Value::Object(w.shown.clone()))
                    .collect(),
            ),
        );
        Value::Object(fields)
    }

    fn id(&self) -> &str {
        self.fields.get("id").and_then(Value::as_str).unwrap_or("")
    }
}

#[derive(Debug)]
struct Data {
    tokens: HashMap<String, IssuedToken>,
    products: Vec<StoredProduct>,
    transactions: Vec<Value>,
    events: HashMap<String, Vec<Value>>,
    next_id: u64,
}

const PARTNER_ID: &str = "partner-7f3a";
const IDLE_MINUTES: i64 = 15;
const MAX_MINUTES: i64 = 120;

impl Data {
    fn active(&self, token: &str, now: DateTime<Utc>) -> bool {
        self.tokens.get(token).is_some_and(|t| {
            !t.revoked
                && now - t.last_used < TimeDelta::minutes(IDLE_MINUTES)
                && now - t.issued < TimeDelta::minutes(MAX_MINUTES)
        })
    }

    fn fresh_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!(
            "{prefix}-{:08x}-{}",
            self.next_id,
            uuid::Uuid::new_v4().simple()
        )
    }

    fn seeded(dialect: Dialect, seed: Seed) -> Self {
        let mut data = Data {
            tokens: HashMap::new(),
            products: Vec::new(),
            transactions: Vec::new(),
            events: HashMap::new(),
            next_id: 0,
        };
        let base = Utc
            .with_ymd_and_hms(2026, 11, 2, 9, 0, 0)
            .single()
            .unwrap_or_else(Utc::now);
        for i in 0..seed.products {
            let product = seeded_product(dialect, i, base + TimeDelta::hours(i as i64));
            data.products.push(product);
        }
        for i in 0..seed.transactions {
            let id = format!("{:08x}-0000-4000-8000-{:012x}", 0x7a00 + i, i);
            let at = base + TimeDelta::minutes(37 * i as i64);
            data.transactions
                .push(seeded_transaction(dialect, i, &id, at));
            data.events
                .insert(id.clone(), seeded_events(dialect, i, &id, at));
        }
        data
    }
}

/// A date as this dialect writes it: UTC with `Z`, or (extra) an offset and a fraction.
fn date(dialect: Dialect, at: DateTime<Utc>) -> Value {
    if dialect.extra {
        let plus_one = chrono::FixedOffset::east_opt(3600).expect("a one-hour offset");
        Value::String(
            at.with_timezone(&plus_one)
                .to_rfc3339_opts(SecondsFormat::Millis, false),
        )
    } else {
        Value::String(at.to_rfc3339_opts(SecondsFormat::Secs, true))
    }
}

fn seeded_product(dialect: Dialect, i: usize, created: DateTime<Utc>) -> StoredProduct {
    let id = format!("{:08x}-1111-4111-8111-{:012x}", 0x9000 + i, i);
    let name = format!("other-product-{i}");
    let listing = ["Zephyr Appraisals", "Acme Flood Check", "Mid Title"][i % 3].to_string();
    let mut fields = Map::new();
    fields.insert("id".into(), json!(id));
    fields.insert("name".into(), json!(name));
    fields.insert("listingName".into(), json!(format!("{listing} {i}")));
    if dialect.minimal {
        // The spec's fields only, and of those only some: optional ones left out.
        if i.is_multiple_of(2) {
            fields.insert("requestTypes".into(), json!(["NEW_REQUEST"]));
            fields.insert("status".into(), json!("development"));
        }
        if i % 3 == 1 {
            fields.insert("environment".into(), json!("sandbox"));
            fields.insert("partnerId".into(), json!(PARTNER_ID));
        }
    } else {
        fields.insert("partnerId".into(), json!(PARTNER_ID));
        fields.insert("requestTypes".into(), json!(["NEW_REQUEST"]));
        fields.insert("environment".into(), json!("sandbox"));
        fields.insert("status".into(), json!("development"));
        fields.insert("integrationType".into(), json!("ASYNC"));
        fields.insert(
            "interfaceUrl".into(),
            json!(format!("https://order.example/{i}")),
        );
        fields.insert(
            "adminInterfaceUrl".into(),
            json!(format!("https://admin.example/{i}")),
        );
        fields.insert(
            "credentials".into(),
            json!([{"id": "apiKey", "type": "string", "title": "API key", "minimum": 8,
                    "maximum": 64, "secret": true, "scope": "company", "required": true}]),
        );
        fields.insert(
            "tags".into(),
            json!({"workflows": ["ordering"], "categories": ["appraisal"], "applications": []}),
        );
        fields.insert("extensionLimit".into(), json!(0));
        fields.insert("created".into(), date(dialect, created));
        fields.insert("createdBy".into(), json!("admin@other.example"));
        fields.insert(
            "updated".into(),
            date(dialect, created + TimeDelta::days(1)),
        );
        fields.insert("updatedBy".into(), json!("admin@other.example"));
    }
    if dialect.extra {
        fields.insert(
            "status".into(),
            json!(["approved-pending", "development", "retired"][i % 3]),
        );
        fields.insert(
            "environment".into(),
            json!(["prod", "sandbox", "uat"][i % 3]),
        );
        fields.insert(
            "requestTypes".into(),
            json!(["NEW_REQUEST", "REISSUE_REQUEST"]),
        );
        fields.insert("integrationType".into(), json!("SYNC_POLL"));
        fields.insert("extensionLimit".into(), json!("0"));
        fields.insert("interfaceUrl".into(), Value::Null);
        fields.insert(
            "credentials".into(),
            json!([{"id": "apiKey", "type": "secret-string", "title": "API key",
                    "minimum": "8", "maximum": "64", "secret": true, "scope": "lender",
                    "required": true, "hint": "from your admin page"}]),
        );
        fields.insert("region".into(), json!("eu-west"));
        fields.insert(
            "_links".into(),
            json!({"self": {"href": format!("/partner/v2/products/{id}")}}),
        );
        fields.insert("createdBy".into(), Value::Null);
    }
    let mut webhooks = Vec::new();
    if i == 0 {
        let mut shown = Map::new();
        let sub_id = format!("sub-{i}-transactions");
        if !dialect.no_subscription_ids {
            shown.insert("subscriptionId".into(), json!(sub_id));
        }
        shown.insert("url".into(), json!("https://hooks.other.example/tx"));
        shown.insert("events".into(), json!(["created", "updated"]));
        shown.insert("resource".into(), json!("urn:svc:partner:transaction"));
        if dialect.extra {
            shown.insert("events".into(), json!(["created", "updated", "archived"]));
            shown.insert("status".into(), json!("active"));
        }
        webhooks.push(Webhook {
            id: sub_id,
            shown,
            signing_key: "Seeded-Key-0123456789abcdefGHIJ#$!".into(),
        });
        if dialect.extra {
            let mut shown = Map::new();
            shown.insert("subscriptionId".into(), json!("sub-0-documents"));
            shown.insert("url".into(), json!("https://hooks.other.example/docs"));
            shown.insert("events".into(), json!(["created"]));
            shown.insert("resource".into(), json!("urn:svc:partner:document"));
            webhooks.push(Webhook {
                id: "sub-0-documents".into(),
                shown,
                signing_key: "Seeded-Key-0123456789abcdefGHIJ#$?".replace('?', "!"),
            });
        }
    }
    StoredProduct { fields, webhooks }
}

fn seeded_transaction(dialect: Dialect, i: usize, id: &str, at: DateTime<Utc>) -> Value {
    let mut t = Map::new();
    t.insert("id".into(), json!(id));
    if dialect.minimal {
        // `id` always; a few fields on some.
        if !i.is_multiple_of(3) {
            t.insert(
                "status".into(),
                json!(["created", "processing", "completed"][i % 3]),
            );
        }
        if i.is_multiple_of(2) {
            t.insert("created".into(), date(dialect, at));
            t.insert("request".into(), json!({"type": "NEW_REQUEST"}));
        }
        return Value::Object(t);
    }
    let statuses = if dialect.extra {
        ["created", "on-hold", "completed", "escalated"]
    } else {
        ["created", "processing", "completed", "processing"]
    };
    t.insert("status".into(), json!(statuses[i % 4]));
    t.insert("clientId".into(), json!("lender-client-1"));
    t.insert("environment".into(), json!("sandbox"));
    t.insert("created".into(), date(dialect, at));
    t.insert("createdBy".into(), json!("lender@bank.example"));
    t.insert("updated".into(), date(dialect, at + TimeDelta::minutes(5)));
    t.insert("updatedBy".into(), json!("lender@bank.example"));
    t.insert(
        "product".into(),
        json!({"id": format!("{:08x}-1111-4111-8111-{:012x}", 0x9000, 0), "partnerId": PARTNER_ID, "name": "other-product-0"}),
    );
    t.insert(
        "entityRef".into(),
        json!({"entityId": format!("loan-{i}"), "entityType": "urn:svc:loan"}),
    );
    t.insert(
        "request".into(),
        json!({"type": "NEW_REQUEST", "options": {}, "loan": {"loanNumber": format!("L-{i}"), "amount": 250000 + i}}),
    );
    if i % 4 == 2 {
        let response_status = if dialect.extra && i % 8 == 2 {
            "partiallyCompleted"
        } else {
            "completed"
        };
        t.insert(
            "response".into(),
            json!({"status": response_status, "partnerStatus": "Delivered", "referenceNumber": format!("R-{i}")}),
        );
    }
    if dialect.extra {
        t.insert("priority".into(), json!(i % 3));
        // A field of the service's own, with words found nowhere else.
        t.insert("assignedDesk".into(), json!(format!("kestrel desk {i}")));
        t.insert("environment".into(), json!("prod"));
        t.insert("createdBy".into(), Value::Null);
        if i.is_multiple_of(4) {
            t.insert(
                "request".into(),
                json!({"type": "REISSUE_REQUEST", "options": {}, "loan": {}, "channel": "api"}),
            );
        }
        if i % 4 == 3 {
            t.insert(
                "response".into(),
                json!({"status": "awaitingLender", "partnerStatus": null}),
            );
        }
    }
    Value::Object(t)
}

fn seeded_events(
    dialect: Dialect,
    i: usize,
    transaction_id: &str,
    at: DateTime<Utc>,
) -> Vec<Value> {
    let mut events = vec![json!({
        "id": format!("ev-{i}-1"),
        "type": "urn:svc:partner:transaction:request:created",
        "text": "Request created",
        "from": "System",
        "sent": date(dialect, at),
    })];
    if dialect.minimal {
        events.push(json!({"id": format!("ev-{i}-2")}));
    } else if dialect.extra {
        events.push(json!({
            "id": format!("ev-{i}-2"),
            "type": "urn:vendor:escalation:opened",
            "text": "Escalated",
            "from": "Lender desk",
            "sent": date(dialect, at + TimeDelta::minutes(3)),
            "comments": null,
            "severity": "high",
            "details": {"transactionId": transaction_id, "status": "escalated", "ticket": 4411},
        }));
    } else {
        events.push(json!({
            "id": format!("ev-{i}-2"),
            "type": "urn:lender:note",
            "text": "Called the borrower",
            "from": "Lender desk",
            "sent": date(dialect, at + TimeDelta::minutes(3)),
            "comments": "left a message",
        }));
    }
    events
}

// ---- answering ----------------------------------------------------------------------------

/// A JSON answer in the dialect's encoding (compressed when the request accepts it, chunked
/// when asked).
fn answer(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    content_type: &str,
    body: Vec<u8>,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let mut body = body;
    let mut builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type);
    if let Some(compression) = shared.dialect.compression {
        let accepted = request
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(',')
                    .any(|part| part.split(';').next().unwrap_or("").trim() == compression.token())
            });
        if accepted && !body.is_empty() {
            body = compress(compression, &body);
            builder = builder.header(header::CONTENT_ENCODING, compression.token());
        }
    }
    for (name, value) in extra {
        builder = builder.header(name, value);
    }
    let body = if shared.dialect.chunked && body.len() > 1 {
        let chunks: Vec<Result<Bytes, std::io::Error>> = body
            .chunks(97)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        Body::from_stream(futures::stream::iter(chunks))
    } else {
        Body::from(body)
    };
    builder.body(body).unwrap_or_else(|_| {
        let mut fallback = Response::new(Body::empty());
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

fn compress(compression: Compression, body: &[u8]) -> Vec<u8> {
    let written = match compression {
        Compression::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(body).and_then(|_| encoder.finish())
        }
        Compression::Deflate => {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(body).and_then(|_| encoder.finish())
        }
        Compression::Brotli => {
            let mut out = Vec::new();
            {
                let mut encoder = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                let _ = encoder.write_all(body);
            }
            Ok(out)
        }
    };
    written.unwrap_or_default()
}

fn json_answer(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    value: &Value,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    answer(shared, request, status, "application/json", body, extra)
}

/// An API error in the dialect's shape.
fn api_error(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    title: &str,
    detail: &str,
    extra: &[(header::HeaderName, String)],
) -> Response {
    let (content_type, body) = match shared.dialect.errors {
        ErrorShape::Problem => (
            "application/problem+json",
            serde_json::to_vec(&json!({
                "type": "about:blank",
                "title": title,
                "detail": detail,
                "status": status.as_u16(),
            }))
            .unwrap_or_default(),
        ),
        ErrorShape::Message => (
            "application/json",
            serde_json::to_vec(&json!({"message": format!("{title}: {detail}")}))
                .unwrap_or_default(),
        ),
        ErrorShape::Errors => (
            "application/json",
            serde_json::to_vec(&json!({"errors": [title, {"message": detail, "code": "E-1"}]}))
                .unwrap_or_default(),
        ),
        ErrorShape::PlainText => (
            "text/plain; charset=utf-8",
            format!("{title}: {detail}\n").into_bytes(),
        ),
        ErrorShape::Html => (
            "text/html",
            format!(
                "<!DOCTYPE html>\n<html><head><title>{} {title}</title>\n<style>body{{font-family:sans-serif}}</style></head>\n<body><h1>{title}</h1><p>{detail}</p><hr><address>other-gateway/2.4</address></body></html>",
                status.as_u16()
            )
            .into_bytes(),
        ),
        ErrorShape::Empty => ("application/json", Vec::new()),
    };
    answer(shared, request, status, content_type, body, extra)
}

/// An OAuth 2.0 error (RFC 6749 section 5.2), as token endpoints answer.
fn oauth_error(
    shared: &Shared,
    request: &HeaderMap,
    status: StatusCode,
    error: &str,
    description: &str,
) -> Response {
    let extra = if status == StatusCode::UNAUTHORIZED {
        vec![(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"oauth2\"".to_string(),
        )]
    } else {
        vec![]
    };
    json_answer(
        shared,
        request,
        status,
        &json!({"error": error, "error_description": description}),
        &extra,
    )
}

async fn not_found(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    api_error(
        &shared,
        &headers,
        StatusCode::NOT_FOUND,
        "Not Found",
        "no such resource",
        &[],
    )
}

// ---- tokens -------------------------------------------------------------------------------

fn basic_client(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some((id.to_owned(), secret.to_owned()))
}

fn form(body: &Bytes) -> HashMap<String, String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .unwrap_or_default()
        .into_iter()
        .collect()
}

fn authenticated_client(shared: &Shared, headers: &HeaderMap) -> bool {
    basic_client(headers)
        .is_some_and(|(id, secret)| id == shared.client_id && secret == shared.client_secret)
}

async fn issue(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only client_credentials is supported",
        );
    }
    let scope_ok = form.get("scope").is_some_and(|s| {
        let mut words: Vec<&str> = s.split_whitespace().collect();
        words.sort_unstable();
        words.dedup();
        words == ["pc", "pcapi"]
    });
    if !scope_ok {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "The scope must be `pc pcapi`",
        );
    }
    let token = format!(
        "oth.{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let now = Utc::now();
    shared.lock().tokens.insert(
        token.clone(),
        IssuedToken {
            issued: now,
            last_used: now,
            revoked: false,
        },
    );
    let mut body = Map::new();
    body.insert("access_token".into(), json!(token));
    body.insert("token_type".into(), json!("Bearer"));
    if shared.dialect.extra {
        // Any value: here a string, and longer than the idle window.
        body.insert("expires_in".into(), json!("7200"));
        body.insert(
            "issued_token_type".into(),
            json!("urn:ietf:params:oauth:token-type:access_token"),
        );
    } else if !shared.dialect.minimal {
        body.insert("expires_in".into(), json!(3600));
    }
    json_answer(
        &shared,
        &headers,
        StatusCode::CREATED,
        &Value::Object(body),
        &[],
    )
}

async fn introspect(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    let Some(token) = form.get("token") else {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The token parameter is missing",
        );
    };
    let now = Utc::now();
    let data = shared.lock();
    if !data.active(token, now) {
        drop(data);
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_token",
            "The token is not active",
        );
    }
    let exp = data
        .tokens
        .get(token)
        .map(|t| {
            (t.last_used + TimeDelta::minutes(IDLE_MINUTES))
                .min(t.issued + TimeDelta::minutes(MAX_MINUTES))
        })
        .unwrap_or(now);
    drop(data);
    let body = if shared.dialect.minimal {
        json!({"active": true, "client_id": shared.client_id})
    } else if shared.dialect.extra {
        json!({"active": true, "scope": "pc pcapi", "client_id": shared.client_id,
               "token_type": "Bearer", "exp": exp.timestamp().to_string(), "environment": "prod",
               "identity_type": "Partner", "encompass_client_id": PARTNER_ID,
               "iat": now.timestamp(), "sub": PARTNER_ID})
    } else {
        json!({"active": true, "scope": "pc pcapi", "client_id": shared.client_id,
               "token_type": "Bearer", "exp": exp.timestamp(), "environment": "sandbox",
               "identity_type": "Partner", "encompass_client_id": PARTNER_ID})
    };
    json_answer(&shared, &headers, StatusCode::OK, &body, &[])
}

async fn revoke(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !authenticated_client(&shared, &headers) {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    }
    let form = form(&body);
    let Some(token) = form.get("token") else {
        return oauth_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The token parameter is missing",
        );
    };
    let mut data = shared.lock();
    match data.tokens.get_mut(token) {
        Some(issued) if !issued.revoked => {
            issued.revoked = true;
            drop(data);
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Body::empty())
                .unwrap_or_default()
        }
        _ => {
            drop(data);
            oauth_error(
                &shared,
                &headers,
                StatusCode::BAD_REQUEST,
                "invalid_token",
                "The token is not active",
            )
        }
    }
}

// ---- the partner API ----------------------------------------------------------------------

/// The request id of every answer: `other-` and the answer's number.
async fn with_request_id(State(shared): State<Arc<Shared>>, mut response: Response) -> Response {
    let n = shared.answers.fetch_add(1, Ordering::SeqCst) + 1;
    let name = if shared.dialect.extra {
        "request-id"
    } else {
        "x-request-id"
    };
    if let Ok(value) = header::HeaderValue::from_str(&format!("other-{n:06}")) {
        response.headers_mut().insert(name, value);
    }
    response
}

/// The checks every partner API call starts with: the rate limit, then the bearer token.
fn admit(shared: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let call = shared.calls.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(limit) = shared.dialect.rate_limit {
        if limit.every > 0 && call.is_multiple_of(limit.every) {
            let after = match limit.retry_after {
                RetryAfter::Seconds(s) => s.to_string(),
                RetryAfter::HttpDate(s) => (Utc::now() + TimeDelta::seconds(s as i64))
                    .format("%a, %d %b %Y %H:%M:%S GMT")
                    .to_string(),
            };
            let status =
                StatusCode::from_u16(limit.status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
            return Err(api_error(
                shared,
                headers,
                status,
                "Too Many Requests",
                "rate limit of the partner environment exceeded",
                &[(header::RETRY_AFTER, after)],
            ));
        }
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let now = Utc::now();
    let mut data = shared.lock();
    match token {
        Some(token) if data.active(token, now) => {
            if let Some(issued) = data.tokens.get_mut(token) {
                issued.last_used = now;
            }
            Ok(())
        }
        _ => {
            drop(data);
            Err(api_error(
                shared,
                headers,
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                "the access token is missing, expired or revoked",
                &[(
                    header::WWW_AUTHENTICATE,
                    "Bearer error=\"invalid_token\"".into(),
                )],
            ))
        }
    }
}

fn query_pairs(raw: Option<&str>) -> HashMap<String, String> {
    raw.map(|q| {
        serde_urlencoded::from_str::<Vec<(String, String)>>(q)
            .unwrap_or_default()
            .into_iter()
            .collect()
    })
    .unwrap_or_default()
}

/// The sortable value of a field: instants for dates (any offset), numbers, text; absent last.
#[derive(Debug, PartialEq, PartialOrd)]
enum Key {
    Instant(i64),
    Number(f64),
    Text(String),
}

fn sort_key(item: &Value, field: &str) -> Option<Key> {
    let value = match field {
        "requestType" => item.pointer("/request/type"),
        _ => item.get(field),
    }?;
    match value {
        Value::String(s) => Some(
            DateTime::parse_from_rfc3339(s)
                .map(|d| Key::Instant(d.timestamp_millis()))
                .unwrap_or_else(|_| Key::Text(s.clone())),
        ),
        Value::Number(n) => n.as_f64().map(Key::Number),
        _ => None,
    }
}

/// `start`, `limit`, `sort` read by the spec's rules; `Err` is the refusal.
fn page(
    shared: &Shared,
    headers: &HeaderMap,
    raw_query: Option<&str>,
    sortable: &[&str],
    mut items: Vec<Value>,
) -> Result<Response, Response> {
    let query = query_pairs(raw_query);
    let bad = |detail: String| {
        api_error(
            shared,
            headers,
            StatusCode::BAD_REQUEST,
            "Bad Request",
            &detail,
            &[],
        )
    };
    let number = |name: &str, default: u64| -> Result<u64, Response> {
        match query.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| bad(format!("{name} must be a non-negative integer"))),
        }
    };
    let start = number("start", 0)?;
    let limit = number("limit", 25)?;
    if limit > 50 {
        return Err(bad("limit may not exceed 50".into()));
    }
    let total = items.len() as u64;
    if start > total {
        return Err(bad(format!("start {start} exceeds the total of {total}")));
    }
    if let Some(sort) = query.get("sort").filter(|s| !s.is_empty()) {
        let mut keys = Vec::new();
        for raw in sort.split(',') {
            let (descending, field) = match raw.strip_prefix('-') {
                Some(field) => (true, field),
                None => (false, raw),
            };
            if !sortable.contains(&field) {
                return Err(bad(format!(
                    "sorting by '{field}' is not supported; sortable: {}",
                    sortable.join(", ")
                )));
            }
            keys.push((field.to_owned(), descending));
        }
        // Keys apply in order: a stable sort by each, last key first.
        for (field, descending) in keys.iter().rev() {
            items.sort_by(|a, b| match (sort_key(a, field), sort_key(b, field)) {
                (Some(x), Some(y)) => {
                    let ordering = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
                    if *descending {
                        ordering.reverse()
                    } else {
                        ordering
                    }
                }
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            });
        }
    }
    let shown: Vec<Value> = items
        .into_iter()
        .skip(start as usize)
        .take(limit as usize)
        .collect();
    Ok(json_answer(
        shared,
        headers,
        StatusCode::OK,
        &Value::Array(shown),
        &[(
            header::HeaderName::from_static("x-total-count"),
            total.to_string(),
        )],
    ))
}

async fn list_products(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let items: Vec<Value> = shared.lock().products.iter().map(|p| p.shown()).collect();
    page(
        &shared,
        &headers,
        query.as_deref(),
        shared.dialect.product_sorts(),
        items,
    )
    .unwrap_or_else(|refused| refused)
}

async fn list_transactions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let items = shared.lock().transactions.clone();
    page(
        &shared,
        &headers,
        query.as_deref(),
        shared.dialect.transaction_sorts(),
        items,
    )
    .unwrap_or_else(|refused| refused)
}

fn missing(shared: &Shared, headers: &HeaderMap, what: &str) -> Response {
    api_error(
        shared,
        headers,
        StatusCode::NOT_FOUND,
        "Not Found",
        &format!("no {what} with that id"),
        &[],
    )
}

async fn get_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared
        .lock()
        .products
        .iter()
        .find(|p| p.id() == id)
        .map(StoredProduct::shown);
    match found {
        Some(product) => json_answer(&shared, &headers, StatusCode::OK, &product, &[]),
        None => missing(&shared, &headers, "product"),
    }
}

async fn get_transaction(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared
        .lock()
        .transactions
        .iter()
        .find(|t| t.get("id").and_then(Value::as_str) == Some(id.as_str()))
        .cloned();
    match found {
        Some(transaction) => json_answer(&shared, &headers, StatusCode::OK, &transaction, &[]),
        None => missing(&shared, &headers, "transaction"),
    }
}

async fn list_events(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared.lock().events.get(&id).cloned();
    match found {
        Some(events) => json_answer(
            &shared,
            &headers,
            StatusCode::OK,
            &Value::Array(events),
            &[],
        ),
        None => missing(&shared, &headers, "transaction"),
    }
}

async fn get_event(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path((id, event_id)): Path<(String, String)>,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let found = shared.lock().events.get(&id).and_then(|events| {
        events
            .iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(event_id.as_str()))
            .cloned()
    });
    match found {
        Some(event) => json_answer(&shared, &headers, StatusCode::OK, &event, &[]),
        None => missing(&shared, &headers, "event"),
    }
}

/// The spec's signing-key rule, read from its words: 32 to 64 of letters, digits and
/// `!@#$^&*`, with at least one lowercase, uppercase, digit and special.
fn signing_key_ok(key: &str) -> bool {
    const SPECIALS: &str = "!@#$^&*";
    let length = key.chars().count();
    (32..=64).contains(&length)
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || SPECIALS.contains(c))
        && key.chars().any(|c| c.is_ascii_lowercase())
        && key.chars().any(|c| c.is_ascii_uppercase())
        && key.chars().any(|c| c.is_ascii_digit())
        && key.chars().any(|c| SPECIALS.contains(c))
}

const RESOURCES: [&str; 2] = [
    "urn:svc:partner:transaction",
    "urn:svc:partner:transaction:event",
];

/// Reads one webhook entry's `url`, `events`, `resource` into `shown`; `Err` names the problem.
fn apply_webhook_fields(
    entry: &Map<String, Value>,
    shown: &mut Map<String, Value>,
) -> Result<(), String> {
    if let Some(url) = entry.get("url").filter(|v| !v.is_null()) {
        let url = url.as_str().ok_or("url must be a string")?;
        if !url.starts_with("https://") && !url.starts_with("http://127.0.0.1") {
            return Err("url must be an HTTPS address".into());
        }
        shown.insert("url".into(), json!(url));
    }
    if let Some(events) = entry.get("events").filter(|v| !v.is_null()) {
        let events = events.as_array().ok_or("events must be an array")?;
        if events.is_empty()
            || !events
                .iter()
                .all(|e| matches!(e.as_str(), Some("created" | "updated")))
        {
            return Err("events must be created and/or updated".into());
        }
        shown.insert("events".into(), Value::Array(events.clone()));
    }
    if let Some(resource) = entry.get("resource").filter(|v| !v.is_null()) {
        if !resource.as_str().is_some_and(|r| RESOURCES.contains(&r)) {
            return Err("resource is not a known resource".into());
        }
        shown.insert("resource".into(), resource.clone());
    }
    Ok(())
}

/// The webhook merge of a create or PATCH: an entry with `subscriptionId` updates that
/// subscription (an omitted key keeps the current one), one without creates a subscription,
/// and a subscription left out is deleted.
fn merge_webhooks(
    dialect: Dialect,
    data: &mut Data,
    current: &[Webhook],
    entries: &[Value],
) -> Result<Vec<Webhook>, String> {
    if dialect.no_subscription_ids {
        return merge_webhooks_by_element(data, current, entries);
    }
    let mut merged = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let n = n + 1;
        let entry = entry
            .as_object()
            .ok_or_else(|| format!("webhooks[{n}] must be an object"))?;
        let key = match entry.get("signingkey").filter(|v| !v.is_null()) {
            None => None,
            Some(Value::String(key)) if signing_key_ok(key) => Some(key.clone()),
            Some(_) => {
                return Err(format!(
                    "webhooks[{n}].signingkey does not meet the complexity rule"
                ))
            }
        };
        match entry.get("subscriptionId").and_then(Value::as_str) {
            Some(id) => {
                let mut webhook =
                    current
                        .iter()
                        .find(|w| w.id == id)
                        .cloned()
                        .ok_or_else(|| {
                            format!("webhooks[{n}]: no subscription {id} on this product")
                        })?;
                apply_webhook_fields(entry, &mut webhook.shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                if let Some(key) = key {
                    webhook.signing_key = key;
                }
                merged.push(webhook);
            }
            None => {
                let mut shown = Map::new();
                apply_webhook_fields(entry, &mut shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                for field in ["url", "events", "resource"] {
                    if !shown.contains_key(field) {
                        return Err(format!("webhooks[{n}].{field} is required"));
                    }
                }
                let key = key.ok_or_else(|| format!("webhooks[{n}].signingkey is required"))?;
                let id = data.fresh_id("whs");
                shown.insert("subscriptionId".into(), json!(id));
                merged.push(Webhook {
                    id,
                    shown,
                    signing_key: key,
                });
            }
        }
    }
    Ok(merged)
}

/// The webhook merge of the `no_subscription_ids` dialect: an entry is the subscription with the
/// same `url` and `resource` (its other fields change it, an omitted `signingkey` or `events`
/// keeps it), or a new subscription where none has them; a subscription left out is deleted.
/// The service's own id of each is kept, and never shown.
fn merge_webhooks_by_element(
    data: &mut Data,
    current: &[Webhook],
    entries: &[Value],
) -> Result<Vec<Webhook>, String> {
    let mut merged: Vec<Webhook> = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let n = n + 1;
        let entry = entry
            .as_object()
            .ok_or_else(|| format!("webhooks[{n}] must be an object"))?;
        if entry.contains_key("subscriptionId") {
            return Err(format!(
                "webhooks[{n}].subscriptionId is not a field of a subscription"
            ));
        }
        let key = match entry.get("signingkey").filter(|v| !v.is_null()) {
            None => None,
            Some(Value::String(key)) if signing_key_ok(key) => Some(key.clone()),
            Some(_) => {
                return Err(format!(
                    "webhooks[{n}].signingkey does not meet the complexity rule"
                ))
            }
        };
        let mut shown = Map::new();
        apply_webhook_fields(entry, &mut shown).map_err(|e| format!("webhooks[{n}]: {e}"))?;
        let (Some(url), Some(resource)) = (shown.get("url"), shown.get("resource")) else {
            return Err(format!(
                "webhooks[{n}]: url and resource name a subscription and are required"
            ));
        };
        let same = |w: &Webhook| {
            w.shown.get("url") == Some(url) && w.shown.get("resource") == Some(resource)
        };
        if merged.iter().any(same) {
            return Err(format!(
                "webhooks[{n}] names a subscription another entry names (same url and resource)"
            ));
        }
        match current.iter().find(|w| same(w)).cloned() {
            Some(mut webhook) => {
                apply_webhook_fields(entry, &mut webhook.shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                if let Some(key) = key {
                    webhook.signing_key = key;
                }
                merged.push(webhook);
            }
            None => {
                if !shown.contains_key("events") {
                    return Err(format!("webhooks[{n}].events is required"));
                }
                let key = key.ok_or_else(|| format!("webhooks[{n}].signingkey is required"))?;
                merged.push(Webhook {
                    id: data.fresh_id("whs"),
                    shown,
                    signing_key: key,
                });
            }
        }
    }
    Ok(merged)
}

fn read_object(body: &Bytes) -> Result<Map<String, Value>, String> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("the body must be a JSON object".into()),
        Err(e) => Err(format!("the body is not JSON ({e})")),
    }
}

async fn create_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let bad = |status: StatusCode, detail: &str| {
        let title = if status == StatusCode::CONFLICT {
            "Conflict"
        } else {
            "Bad Request"
        };
        api_error(&shared, &headers, status, title, detail, &[])
    };
    let object = match read_object(&body) {
        Ok(object) => object,
        Err(e) => return bad(StatusCode::BAD_REQUEST, &e),
    };
    for field in ["name", "listingName"] {
        if object
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
        {
            return bad(StatusCode::BAD_REQUEST, &format!("{field} is required"));
        }
    }
    if object
        .get("requestTypes")
        .and_then(Value::as_array)
        .is_none_or(|a| a.is_empty())
    {
        return bad(StatusCode::BAD_REQUEST, "requestTypes is required");
    }
    let mut data = shared.lock();
    let name = object.get("name").cloned().unwrap_or(Value::Null);
    if data
        .products
        .iter()
        .any(|p| p.fields.get("name") == Some(&name))
    {
        drop(data);
        return bad(StatusCode::CONFLICT, "a product with this name exists");
    }
    let entries = match object.get("webhooks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(entries)) => entries.clone(),
        Some(_) => {
            drop(data);
            return bad(StatusCode::BAD_REQUEST, "webhooks must be an array");
        }
    };
    if entries.iter().any(|e| e.get("subscriptionId").is_some()) {
        drop(data);
        return bad(
            StatusCode::BAD_REQUEST,
            "subscriptionId is assigned by the service",
        );
    }
    let webhooks = match merge_webhooks(shared.dialect, &mut data, &[], &entries) {
        Ok(webhooks) => webhooks,
        Err(e) => {
            drop(data);
            return bad(StatusCode::BAD_REQUEST, &e);
        }
    };
    let mut fields = object;
    fields.remove("webhooks");
    let id = uuid::Uuid::new_v4().to_string();
    fields.insert("id".into(), json!(id));
    fields.insert("partnerId".into(), json!(PARTNER_ID));
    fields.insert(
        "status".into(),
        json!(if shared.dialect.extra {
            "approved-pending"
        } else {
            "development"
        }),
    );
    fields.insert(
        "environment".into(),
        json!(if shared.dialect.extra {
            "prod"
        } else {
            "sandbox"
        }),
    );
    let product = StoredProduct { fields, webhooks };
    let shown = product.shown();
    data.products.push(product);
    drop(data);
    let location = format!("{}/partner/v2/products/{id}", shared.base_url);
    json_answer(
        &shared,
        &headers,
        StatusCode::CREATED,
        &shown,
        &[(header::LOCATION, location)],
    )
}

async fn patch_product(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if let Err(refused) = admit(&shared, &headers) {
        return refused;
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type.starts_with("application/merge-patch+json")
        && !content_type.starts_with("application/json")
    {
        return api_error(
            &shared,
            &headers,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type",
            "send application/merge-patch+json",
            &[],
        );
    }
    let bad = |detail: &str| {
        api_error(
            &shared,
            &headers,
            StatusCode::BAD_REQUEST,
            "Bad Request",
            detail,
            &[],
        )
    };
    let patch = match read_object(&body) {
        Ok(patch) => patch,
        Err(e) => return bad(&e),
    };
    let mut data = shared.lock();
    let Some(index) = data.products.iter().position(|p| p.id() == id) else {
        drop(data);
        return missing(&shared, &headers, "product");
    };
    for read_only in ["id", "partnerId", "name", "environment", "status"] {
        if let Some(value) = patch.get(read_only) {
            if data.products[index].fields.get(read_only) != Some(value) {
                drop(data);
                return bad(&format!("{read_only} is read-only"));
            }
        }
    }
    let mut product = data.products[index].clone();
    if let Some(entries) = patch.get("webhooks") {
        let Some(entries) = entries.as_array() else {
            drop(data);
            return bad("webhooks must be an array");
        };
        let current = product.webhooks.clone();
        match merge_webhooks(shared.dialect, &mut data, &current, entries) {
            Ok(webhooks) => product.webhooks = webhooks,
            Err(e) => {
                drop(data);
                return bad(&e);
            }
        }
    }
    for (field, value) in &patch {
        if field == "webhooks" {
            continue;
        }
        if value.is_null() {
            product.fields.remove(field);
        } else {
            product.fields.insert(field.clone(), value.clone());
        }
    }
    if !shared.dialect.minimal {
        product
            .fields
            .insert("updated".into(), date(shared.dialect, Utc::now()));
    }
    let shown = product.shown();
    data.products[index] = product;
    drop(data);
    json_answer(&shared, &headers, StatusCode::OK, &shown, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_key_rule_follows_the_spec() {
        assert!(signing_key_ok(
            "Seeded-Key-0123456789abcdefGHIJ#$!"
                .replace('-', "x")
                .as_str()
        ));
        assert!(!signing_key_ok("short1A!"));
        assert!(!signing_key_ok(&"a".repeat(40)));
        assert!(!signing_key_ok("Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!-"));
    }

    #[test]
    fn dates_in_the_extra_dialect_carry_an_offset_and_a_fraction() {
        let at = Utc
            .with_ymd_and_hms(2026, 11, 26, 9, 0, 0)
            .single()
            .expect("a date");
        assert_eq!(
            date(Dialect::extra(), at),
            json!("2026-11-26T10:00:00.000+01:00")
        );
        assert_eq!(date(Dialect::default(), at), json!("2026-11-26T09:00:00Z"));
    }
}

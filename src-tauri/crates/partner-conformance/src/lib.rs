//! Checks a partner's webhook receiver against the spec's "Webhook signing" and "Webhook
//! endpoint requirements", the way the service would meet it: the library behind
//! `partner check-receiver` and, later, the app's check of a subscription.
//!
//! [`check_receiver`] sends a small, bounded set of notifications (nine, never more than
//! [`MAX_REQUESTS`]), each marked as a check (`meta.instanceId` = [`CHECK_INSTANCE_ID`]) and
//! carrying made-up ids, never a real transaction, and returns a [`Report`] with one
//! [`RuleResult`] per [`RuleId`]: pass, fail, warn or skipped, with what was sent, what came
//! back and how long it took. Signing, the notification's shape and headers, the 200-399 rule
//! and the 30 s timeout all come from `partner-api`; nothing of the spec is restated here.
//!
//! The report never holds the signing key: it is used to sign and to recognise a leak, and
//! every response excerpt is masked before it is kept ([`secrets`]).

mod check;
pub mod probe;
pub mod report;
pub mod secrets;
pub mod tls;

pub use check::check_receiver;
pub use report::{Exchange, Outcome, Report, RuleId, RuleResult};
pub use rustls::pki_types::CertificateDer;

use partner_api::{ResourceType, Secret};
use std::time::Duration;

/// `meta.instanceId` of every notification a check sends, so a receiver can tell a check from
/// a product's real traffic (and acknowledge it without acting on it).
pub const CHECK_INSTANCE_ID: &str = "conformance-check";

/// The most HTTP requests one check sends.
pub const MAX_REQUESTS: usize = 20;

/// What to check, and how.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    /// The receiver's URL (the subscription's callback).
    pub url: String,
    /// Sent as `Svc-SubscriptionId`.
    pub subscription_id: String,
    /// The subscription's signing key. Never in the report, a log line or an error.
    pub signing_key: Secret,
    /// The resource type of the notifications (the subscription's `resource`).
    pub resource: ResourceType,
    /// How long the receiver has to acknowledge (the service's 30 s unless changed).
    pub timeout: Duration,
    /// Check a plain `http://` URL with a warning instead of a failure (loopback development).
    pub allow_http: bool,
    /// Trusted roots besides Mozilla's (a company's private CA).
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// The service base URL the notifications' `resourceRef` points into.
    pub resource_base_url: String,
    /// Headers sent with every probe besides the service's: how a receiver that knows it is
    /// being checked (the console's own listener) tells the probes from notifications.
    pub marker_headers: Vec<(String, String)>,
}

impl CheckConfig {
    /// A check of `url` for transaction notifications with the service's timeout.
    pub fn new(
        url: impl Into<String>,
        subscription_id: impl Into<String>,
        signing_key: Secret,
    ) -> Self {
        Self {
            url: url.into(),
            subscription_id: subscription_id.into(),
            signing_key,
            resource: ResourceType::Transaction,
            timeout: partner_api::delivery::ATTEMPT_TIMEOUT,
            allow_http: false,
            extra_roots: Vec::new(),
            resource_base_url: DEFAULT_RESOURCE_BASE_URL.to_owned(),
            marker_headers: Vec::new(),
        }
    }
}

/// Where `resourceRef` points when no base URL is given (a made-up host: a check's ids exist
/// nowhere, so a receiver that fetches them must not reach a real service).
pub const DEFAULT_RESOURCE_BASE_URL: &str = "https://conformance-check.invalid";

/// Why a check could not run (no report).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A bad URL, id, key, timeout or CA file.
    #[error("{0}")]
    InvalidInput(String),
    /// No connection could be made to the receiver at all.
    #[error("the receiver could not be reached: {0}")]
    Unreachable(String),
    /// The HTTP or TLS client could not be set up.
    #[error("{0}")]
    Setup(String),
    #[error("the check was cancelled")]
    Cancelled,
}

/// The certificates of a PEM file (`--ca-cert`), as trusted roots for [`CheckConfig`].
pub fn ca_certificates(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, CheckError> {
    let pem = std::fs::read(path)
        .map_err(|e| CheckError::InvalidInput(format!("{}: {e}", path.display())))?;
    tls::certificates_from_pem(&pem)
        .map_err(|e| CheckError::InvalidInput(format!("{}: {e}", path.display())))
}

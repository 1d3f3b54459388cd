//! The shapes that cross the Tauri bridge and are not already wire types of `partner-api`.
//!
//! Every type here derives `ts_rs::TS`; `ui/src/bindings/` is generated from them (and from the
//! `partner-api` resources they contain) by `cargo test -p partner-console bindings`, which also
//! fails when the committed files drift from the Rust. No secret value is ever a field here except
//! [`ShownOnceKey::key`], the one showing of a signing key the user just set.

use partner_api::{EventType, ResourceType};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Sandbox or production: shown as a colour everywhere (kept in the settings file).
pub use partner_local::Environment;

/// A saved connection as the UI sees it: the client secret stays in the keychain.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionView {
    pub id: String,
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    pub environment: Environment,
    /// The in-process sandbox started at first run.
    pub embedded: bool,
}

impl ConnectionView {
    /// The embedded sandbox's row (always in the list; no base URL until it has started).
    pub fn embedded(base_url: Option<&str>) -> Self {
        Self {
            id: partner_local::settings::EMBEDDED_CONNECTION_ID.into(),
            label: EMBEDDED_LABEL.into(),
            base_url: base_url.unwrap_or_default().to_string(),
            client_id: EMBEDDED_CLIENT_ID.into(),
            environment: Environment::Sandbox,
            embedded: true,
        }
    }
}

impl From<&partner_local::SavedConnection> for ConnectionView {
    fn from(saved: &partner_local::SavedConnection) -> Self {
        Self {
            id: saved.id.clone(),
            label: saved.label.clone(),
            base_url: saved.base_url.clone(),
            client_id: saved.client_id.clone(),
            environment: saved.environment,
            embedded: false,
        }
    }
}

/// The embedded sandbox's own client.
pub const EMBEDDED_CLIENT_ID: &str = "console-embedded";
/// The embedded sandbox's label in the connections list.
pub const EMBEDDED_LABEL: &str = "Embedded sandbox";

/// The form of a new connection. The secret goes straight to the keychain.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewConnection {
    pub label: String,
    pub base_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub environment: Environment,
}

/// Where the app is in its start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum StartupPhase {
    Starting,
    Ready,
    Failed,
}

/// Where a step that runs after start-up (in the background) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum StepPhase {
    Running,
    Done,
    Failed,
}

/// The first run's subscription of a demo product to the listener: it runs after the listings
/// are usable, so the UI shows its progress and outcome instead of waiting for it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DemoSubscription {
    pub phase: StepPhase,
    /// The product subscribed (once known).
    pub product_name: Option<String>,
    pub error: Option<crate::error::AppError>,
}

/// Everything the shell needs to draw its frame.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    pub phase: StartupPhase,
    pub startup_error: Option<crate::error::AppError>,
    pub active: Option<ConnectionView>,
    pub connections: Vec<ConnectionView>,
    /// Base URL of the embedded sandbox when it runs.
    pub embedded_sandbox: Option<String>,
    /// The embedded sandbox's demo subscription, when the first run makes one.
    pub demo_subscription: Option<DemoSubscription>,
    /// Whether the OS keychain answers: the banner with "Try again" when it does not.
    pub keychain: KeychainView,
    /// Things the user must be told once (a corrupt settings file kept aside, a connection
    /// from the environment that could not be opened).
    pub notices: Vec<String>,
    /// The webhook listener in brief, for the top bar.
    pub listener: ListenerBrief,
    /// The background tunnel check of the active connection's tunnel URL, for the top bar.
    pub tunnel: Option<TunnelStatus>,
    /// Grows with every change; of two statuses, the one with the higher version is newer.
    #[ts(type = "number")]
    pub version: u64,
}

/// Whether the OS keychain answered when last asked.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct KeychainView {
    pub available: bool,
    /// What the keychain said, when it is not available.
    pub message: Option<String>,
}

/// The listener for the top bar: where it listens, or why it does not.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListenerBrief {
    pub running: bool,
    /// The loopback URL notifications are posted to.
    pub url: Option<String>,
    /// Why it is not running (a port already taken, say).
    pub problem: Option<crate::error::AppError>,
    /// A free address to offer when the configured one is taken.
    pub suggested_address: Option<String>,
}

/// The tunnel check run in the background at start (and after the tunnel URL changes).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelStatus {
    pub url: String,
    pub phase: StepPhase,
    pub check: Option<TunnelCheck>,
}

/// The token's state, without the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TokenPhase {
    None,
    Active,
    Expired,
    Revoked,
    Failed,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenHistoryEntry {
    /// ISO 8601 UTC.
    pub at: String,
    /// `issued`, `refreshed`, `used`, `expired`, `revoked`, `failed`.
    pub kind: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    pub phase: TokenPhase,
    pub issued_at: Option<String>,
    /// When the token lapses if it is not used again (15 minutes after last use).
    pub idle_expires_at: Option<String>,
    /// When it lapses however much it is used (120 minutes after issue).
    pub max_expires_at: Option<String>,
    /// The clock the countdowns run on (the sandbox clock for the embedded sandbox).
    pub now: String,
    pub last_error: Option<String>,
    pub history: Vec<TokenHistoryEntry>,
}

/// Which listing a paged command reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ListingKind {
    Products,
    Transactions,
}

/// One page request: `start`, `limit` (≤ 50) and the sort string `A,-B,C`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageQuery {
    #[ts(type = "number")]
    pub start: u64,
    pub limit: u32,
    pub sort: String,
}

/// One page of a listing and the total from `X-Total-Count`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageView<T: TS> {
    pub items: Vec<T>,
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub start: u64,
    pub limit: u32,
    pub sort: String,
}

/// The sortable keys of both listings, from `partner-api`'s `Sortable` impls.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SortKeys {
    pub products: Vec<String>,
    pub transactions: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    /// Chosen by the UI; progress events and cancel name it.
    pub search_id: String,
    pub kind: ListingKind,
    pub sort: String,
    pub text: String,
}

/// Progress of a search walking every page (event `search-progress`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchProgress {
    pub search_id: String,
    #[ts(type = "number")]
    pub scanned: u64,
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub matched: u64,
}

/// What a finished (or cancelled) search found.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub search_id: String,
    pub cancelled: bool,
    #[ts(type = "number")]
    pub scanned: u64,
    #[ts(type = "Array<Record<string, unknown>>")]
    pub items: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    /// The id progress events carry and `cancel_job` names.
    pub job_id: String,
    pub kind: ListingKind,
    pub format: ExportFormat,
    pub sort: String,
}

/// The create-product form.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewProductForm {
    pub name: String,
    pub listing_name: String,
    pub request_types: Vec<String>,
    pub interface_url: Option<String>,
}

/// Add a subscription to a product; no key means the app generates a compliant one.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewSubscriptionForm {
    pub product_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub resource: ResourceType,
    pub signing_key: Option<String>,
}

/// Rotate a subscription's key: a pasted key, or none to generate one.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RotateKeyForm {
    pub product_id: String,
    pub subscription_id: String,
    pub signing_key: Option<String>,
}

/// A signing key the user just set, shown once; the app keeps it in the keychain.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShownOnceKey {
    pub subscription_id: String,
    pub key: String,
    /// Whether the previous key still verifies until the user retires it.
    pub previous_still_verifies: bool,
}

/// The keys the listener verifies a subscription's notifications with (never their values).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionKeys {
    pub subscription_id: String,
    pub has_current: bool,
    pub has_previous: bool,
}

/// The partner's response form for a transaction.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RespondForm {
    pub transaction_id: String,
    pub status: partner_api::ResponseStatus,
    pub partner_status: Option<String>,
    pub reference_number: Option<String>,
}

/// Test mode of the listener, as `partner listen` has it: answer with this status after this
/// delay, and fail (with `failure_status`) a share of requests at random and the first N
/// attempts of each notification, to drive the service's retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TestMode {
    pub enabled: bool,
    pub status: u16,
    #[ts(type = "number")]
    pub delay_ms: u64,
    /// The share of requests that fail, 0 to 1.
    #[serde(default)]
    pub fail_rate: f64,
    /// Every notification's first N attempts fail.
    #[serde(default)]
    pub fail_first_attempts: u32,
    /// The status a failure answers.
    #[serde(default = "default_failure_status")]
    pub failure_status: u16,
}

fn default_failure_status() -> u16 {
    500
}

impl Default for TestMode {
    fn default() -> Self {
        Self {
            enabled: false,
            status: 200,
            delay_ms: 0,
            fail_rate: 0.0,
            fail_first_attempts: 0,
            failure_status: default_failure_status(),
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListenerView {
    pub running: bool,
    /// The IP it listens on (while running).
    pub address: Option<String>,
    pub port: Option<u16>,
    /// The path notifications are posted to.
    pub path: String,
    /// The address in the settings (`IP:PORT`): where it listens at every start.
    pub configured_address: String,
    /// Set when `PARTNER_LISTENER_ADDR` chose this run's address instead of the settings.
    pub address_from_environment: bool,
    /// The URL subscriptions point at: the tunnel URL when set, else the loopback address.
    pub callback_url: Option<String>,
    /// The active connection's tunnel URL.
    pub tunnel_url: Option<String>,
    pub test_mode: TestMode,
    /// Why it is not running (a port already taken, say).
    pub problem: Option<crate::error::AppError>,
    /// A free address to offer when the configured one is taken.
    pub suggested_address: Option<String>,
    pub retention: RetentionForm,
    /// The capture store's file, shared with `partner listen`.
    pub store_path: String,
    /// Where valid notifications are forwarded, first matching rule first.
    pub forward_rules: Vec<ForwardRuleView>,
}

/// Where the listener listens (saved in the settings).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListenerAddressForm {
    /// `IP:PORT`.
    pub address: String,
    pub path: String,
}

/// How many captures are kept, and for how long (none: no limit).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RetentionForm {
    #[ts(type = "number | null")]
    pub max_captures: Option<u64>,
    pub max_age_days: Option<u32>,
}

/// Which subscription's receiver to check against the spec's webhook rules.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReceiverCheckForm {
    pub product_id: String,
    pub subscription_id: String,
    /// Check a plain `http://` URL (loopback development) with a warning, not a failure.
    pub allow_http: bool,
}

/// What to look for among the notifications that never arrived.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissedForm {
    /// Only this subscription (none: every one the store has captured something of).
    pub subscription_id: Option<String>,
    /// From this time for every subscription (none: each one's default, the listener's last
    /// down time or its first capture).
    #[ts(type = "string | null")]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Also the last two minutes' notifications, which the service may still be retrying.
    pub include_recent: bool,
    /// Also subscriptions this store never captured anything of.
    pub all_subscriptions: bool,
}

/// Where a missed-notification check is, for its progress bar.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissedProgressView {
    /// What it is doing, in words.
    pub stage: String,
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

impl From<&partner_local::missed::MissedProgress> for MissedProgressView {
    fn from(progress: &partner_local::missed::MissedProgress) -> Self {
        use partner_local::missed::MissedProgress;
        match progress {
            MissedProgress::Subscriptions => Self {
                stage: "Reading the products and their subscriptions".into(),
                done: 0,
                total: None,
            },
            MissedProgress::Walking(walk) => Self {
                stage: "Walking the transactions changed since then".into(),
                done: walk.yielded,
                total: None,
            },
            MissedProgress::Events { done, total } => Self {
                stage: "Reading their events".into(),
                done: *done,
                total: Some(*total),
            },
        }
    }
}

/// Which captures go into an evidence bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum EvidenceScope {
    /// The capture shown.
    Capture,
    /// Every attempt of its notification.
    Notification,
    /// The captures the inspector's filter shows.
    Shown,
}

/// The most captures an evidence bundle of "the captures shown" holds: a ticket needs the few
/// that tell the story, not the store.
pub const EVIDENCE_MOST_SHOWN: u64 = 1000;

/// An evidence bundle to write: a redacted HAR 1.2 file and a Markdown summary.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceForm {
    #[ts(type = "number")]
    pub capture_id: i64,
    pub scope: EvidenceScope,
    /// With `Shown`: the inspector's filter (at most [`EVIDENCE_MOST_SHOWN`] captures).
    pub shown: Option<InspectorFilter>,
    /// Body fields to mask (`borrower.name` or `/borrower/name`).
    pub mask_fields: Vec<String>,
    /// The files' base path (`.har` and `.md` are added); none: the export folder.
    pub path: Option<String>,
}

/// What an evidence bundle holds, and where it went.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceResult {
    pub har_path: String,
    pub summary_path: String,
    #[ts(type = "number")]
    pub captures: u64,
    #[ts(type = "number")]
    pub headers_masked: u64,
    #[ts(type = "number")]
    pub fields_masked: u64,
    #[ts(type = "number")]
    pub secrets_masked: u64,
    #[ts(type = "number")]
    pub bodies_withheld: u64,
    /// The service's delivery records are in the summary (a sandbox connection).
    pub with_deliveries: bool,
}

/// One notification as a sandbox delivered it (`GET /sandbox/v1/deliveries`), with the
/// captures the listener kept of it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    pub event_id: String,
    pub subscription_id: String,
    pub url: String,
    pub resource_type: String,
    pub resource_id: String,
    pub event_type: String,
    /// `pending`, `delivered` or `discarded`.
    pub state: String,
    #[ts(type = "string")]
    pub enqueued_at: chrono::DateTime<chrono::Utc>,
    pub attempts: Vec<DeliveryAttemptView>,
    #[serde(default)]
    #[ts(type = "string | null")]
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(default)]
    pub not_sent_because: Option<String>,
    /// The listener's captures of this notification (subscription, resource type, eventId).
    #[serde(default)]
    #[ts(type = "Array<number>")]
    pub capture_ids: Vec<i64>,
}

/// One attempt of a sandbox's delivery.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttemptView {
    pub number: u32,
    #[ts(type = "string")]
    pub started_at: chrono::DateTime<chrono::Utc>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub error: Option<String>,
}

/// How a subscription reaches the console's own listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ListenerRoute {
    /// Through the connection's tunnel URL, as the service reaches it.
    Tunnel,
    /// At the listener's own address (a sandbox on this machine).
    Direct,
}

/// A subscription whose callback is the console's own listener.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListenerSubscription {
    pub product_id: String,
    pub product_name: String,
    pub subscription: partner_api::WebhookSubscription,
    pub via: ListenerRoute,
}

/// The captures to delete: those the inspector's filter shows, or all (no filter).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClearCapturesForm {
    pub filter: Option<InspectorFilter>,
    /// Only captures up to this id: what was there when the user was asked, not what arrived
    /// while they read the confirmation.
    #[ts(type = "number")]
    pub up_to_id: i64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClearResult {
    #[ts(type = "number")]
    pub cleared: u64,
}

/// The tunnel URL saved; when it replaced another, the subscriptions still pointing at the old
/// one, offered for re-pointing.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelSaved {
    pub listener: ListenerView,
    pub repoint: Option<RepointOffer>,
}

/// Subscriptions of the active connection under an old base URL, and where they would go.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointOffer {
    pub from: String,
    pub to: String,
    pub subscriptions: Vec<RepointedSubscription>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointedSubscription {
    pub product_id: String,
    pub subscription_id: String,
    pub url: String,
    pub new_url: String,
}

/// What a re-pointing did.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointResult {
    pub changed: Vec<RepointedSubscription>,
    /// One sentence per product that could not be changed.
    pub failures: Vec<String>,
}

/// A subscription's new URL, events or resource (each left as it is when none).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionChangeForm {
    pub product_id: String,
    pub subscription_id: String,
    pub url: Option<String>,
    pub events: Option<Vec<EventType>>,
    pub resource: Option<ResourceType>,
}

/// What a tunnel check found wrong: one per class of `partner_listener::TunnelFailure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TunnelFailureKind {
    /// The tunnel URL is not a URL.
    InvalidUrl,
    /// The tunnel URL is not `https://`.
    NotHttps,
    /// Its host name did not resolve.
    Dns,
    /// The TLS handshake failed.
    Tls,
    /// Nothing accepted the connection.
    Refused,
    /// Another connection error.
    Connect,
    /// No answer in time.
    Timeout,
    /// An answer outside 200-399.
    Status,
    /// The probe reached the listener on another path.
    WrongPath,
    /// Something answered, but the probe never reached this listener.
    NotArrived,
}

/// The outcome of the tunnel check, as the Webhooks screen shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelCheck {
    pub ok: bool,
    /// The tunnel URL that was checked.
    pub url: String,
    /// What happened, in words.
    pub message: String,
    /// What to do about it; none when the check passed.
    pub hint: Option<String>,
    /// What failed; none when the check passed.
    pub failure: Option<TunnelFailureKind>,
    /// The listener recorded the probe.
    pub arrived: bool,
    /// From sending the probe to its answer; none when nothing answered.
    #[ts(type = "number | null")]
    pub round_trip_ms: Option<u64>,
    /// The status that came back through the tunnel.
    pub status: Option<u16>,
    /// The probe's capture in the inspector, when it arrived.
    #[ts(type = "number | null")]
    pub capture_id: Option<i64>,
}

/// The listener's verdict on a notification: the library's own type, one home for its words.
pub use partner_listener::Verdict;

/// One row of the inspector.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureSummary {
    #[ts(type = "number")]
    pub id: i64,
    pub received_at: String,
    pub verdict: Verdict,
    pub event_type: String,
    pub resource_type: String,
    pub resource_id: String,
    pub instance_id: String,
    pub event_id: String,
    pub subscription_id: String,
    /// How many times this notification (subscription, resource type, eventId) has arrived.
    pub attempts: u32,
    /// Whether it was replayed from the console rather than delivered.
    pub replayed: bool,
    /// In the inspector's grouped view, how many of its notification's attempts the filter
    /// selects (this row is the newest of them); 1 in the view of every attempt.
    pub group_attempts: u32,
}

/// What the inspector shows: every field empty shows every capture.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct InspectorFilter {
    pub verdict: Option<Verdict>,
    pub event_type: Option<String>,
    pub resource_type: Option<String>,
    pub subscription_id: Option<String>,
    /// Received at or after (RFC 3339).
    pub since: Option<String>,
    /// Received before (RFC 3339).
    pub until: Option<String>,
    /// Words of the body or headers, or part of an id.
    pub text: Option<String>,
}

/// One window of the inspector's list, read from the capture store.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorQuery {
    pub filter: InspectorFilter,
    /// One row per notification (its attempts folded under it) instead of one per attempt.
    pub grouped: bool,
    #[ts(type = "number")]
    pub offset: u64,
    pub limit: u32,
    /// A search's count goes on past the page (up to the store's cap). False when the caller
    /// takes the count from [`InspectorFacets::total`], read beside the page anyway: the page
    /// then counts only through itself and one hit more (the count would walk the same hits
    /// twice).
    pub count_past_page: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorPage {
    #[ts(type = "number")]
    pub offset: u64,
    pub items: Vec<CaptureSummary>,
    /// Rows (or notifications, grouped) the filter selects; at least that many when capped.
    #[ts(type = "number")]
    pub total: u64,
    /// A search or grouped count stopped counting (the store walks those hits): "N+".
    pub total_capped: bool,
}

/// The filter's choices and counts, from the store.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InspectorFacets {
    /// Captures per verdict under the rest of the filter.
    #[ts(as = "std::collections::BTreeMap<Verdict, u32>")]
    pub verdicts: std::collections::BTreeMap<Verdict, u64>,
    pub event_types: Vec<String>,
    pub resource_types: Vec<String>,
    pub subscriptions: Vec<String>,
    /// Captures in the store.
    #[ts(type = "number")]
    pub stored: u64,
    /// Captures matching the whole filter (a lower bound when `capped`).
    #[ts(type = "number")]
    pub total: u64,
    /// A search's counts stopped counting: lower bounds.
    pub capped: bool,
}

/// How far a long file job is (event `job-progress`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    pub job_id: String,
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

/// The file formats captures are exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CaptureFileFormat {
    /// One capture per line, lossless: imported back as it was.
    Jsonl,
    /// HAR 1.2, for browser dev tools and HTTP tools.
    Har,
}

/// Export the chosen captures, or those the filter shows.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureExportForm {
    pub job_id: String,
    pub format: CaptureFileFormat,
    pub filter: InspectorFilter,
    /// Only these (the selection); none exports what the filter shows.
    #[ts(type = "Array<number> | null")]
    pub ids: Option<Vec<i64>>,
}

/// What a save-dialog export did: nothing when the dialog was closed.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileJobResult {
    /// The file written or read; none when the user closed the dialog.
    pub path: Option<String>,
    /// Items written or imported.
    #[ts(type = "number")]
    pub count: u64,
    /// Items an import skipped because the store already held them.
    #[ts(type = "number")]
    pub skipped: u64,
    /// Stopped by the user: an export leaves no file, an import keeps what it added.
    pub cancelled: bool,
}

/// A forward or replay the console sent for a capture, with what came back.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OutboundView {
    /// `forward` or `replay`.
    pub kind: String,
    pub url: String,
    pub sent_at: String,
    pub status: Option<u16>,
    pub response_headers: Vec<(String, String)>,
    pub response_body: Option<String>,
    #[ts(type = "number")]
    pub elapsed_ms: u64,
    pub error: Option<String>,
}

/// Where "Open" takes the user from a capture, or why it is not offered.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum OpenResource {
    Transaction {
        #[serde(rename = "transactionId")]
        transaction_id: String,
    },
    Event {
        #[serde(rename = "transactionId")]
        transaction_id: String,
        #[serde(rename = "eventId")]
        event_id: String,
    },
    /// Not offered, and why.
    Refused { reason: String },
}

/// A forward rule as the settings keep it and the UI edits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ForwardRuleView {
    /// `transaction`, `transaction:event`, … or none for any.
    pub resource_type: Option<String>,
    /// `created`, `updated`, … or none for any.
    pub event_type: Option<String>,
    pub url: String,
}

/// New captures, batched (event `captures`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureBatch {
    pub captures: Vec<CaptureSummary>,
    /// Captures the live feed dropped because the UI fell behind: reload from the store.
    #[ts(type = "number")]
    pub missed: u64,
}

/// A capture with everything the detail pane shows.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaptureDetail {
    pub summary: CaptureSummary,
    pub headers: Vec<(String, String)>,
    pub raw_body: String,
    pub pretty_body: Option<String>,
    pub resource_ref: Option<String>,
    pub attempts: Vec<CaptureSummary>,
    /// The status the listener answered with.
    pub answered_status: u16,
    /// Forwards and replays of it, oldest first.
    pub outbound: Vec<OutboundView>,
    /// What "Open" shows: the event within its transaction, or the transaction.
    pub open: OpenResource,
}

/// The signature debugger: what arrived against what each known key gives.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignatureReport {
    pub received: Option<String>,
    pub body_bytes: u32,
    pub body_sha256: String,
    pub checks: Vec<SignatureCheck>,
    /// The verdict in words, with what to do.
    pub explanation: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignatureCheck {
    /// `current key`, `previous key`, `pasted key`.
    pub key_label: String,
    pub expected: String,
    pub matches: bool,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplayForm {
    #[ts(type = "number")]
    pub capture_id: i64,
    /// An edited body; none replays the bytes unchanged.
    pub body: Option<String>,
    /// Where to send it; none sends it to this listener.
    pub target: Option<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplayResult {
    /// What the target answered, or why nothing came back.
    pub answer: OutboundView,
    /// The listener's verdict, when the replay went to this listener.
    pub verdict: Option<Verdict>,
}

/// What the demo buttons did, in words.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DemoOutcome {
    pub message: String,
    pub transaction_id: Option<String>,
    pub sandbox_now: String,
}

/// A loan field to match in the support index: `request.loan.<field>` equal to `value`.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LoanFieldFilter {
    pub field: String,
    pub value: String,
}

/// A question to the connection's local index: every field set must hold; empty ones are
/// ignored. Times are RFC 3339.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SupportFilter {
    pub status: Option<partner_api::TransactionStatus>,
    /// A product's id or name.
    pub product: Option<String>,
    pub request_type: Option<String>,
    pub response_status: Option<partner_api::ResponseStatus>,
    pub created_since: Option<String>,
    pub created_before: Option<String>,
    pub updated_since: Option<String>,
    pub updated_before: Option<String>,
    pub partner_status: Option<String>,
    pub reference_number: Option<String>,
    /// Part of the requesting party's name.
    pub requesting_party: Option<String>,
    pub loan: Vec<LoanFieldFilter>,
    /// Words of the request or the response (word prefixes, all of them).
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportQuery {
    pub filter: SupportFilter,
    #[ts(type = "number")]
    pub offset: u64,
    pub limit: u32,
}

/// What the local index holds, for the active connection.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportIndexView {
    /// Whether this connection has a local index at all.
    pub exists: bool,
    /// When it was last brought up to date (answers are "as of" it).
    pub as_of: Option<String>,
    /// Whether the first fill went through the whole listing (else the next sync resumes it).
    pub filled: bool,
    #[ts(type = "number")]
    pub fill_position: u64,
    #[ts(type = "number | null")]
    pub fill_total: Option<u64>,
    #[ts(type = "number")]
    pub transactions: u64,
    #[ts(type = "number")]
    pub products: u64,
    /// A production connection: the user is asked before a local copy is made.
    pub production: bool,
    pub connection_label: String,
    /// The index file (encrypted; its key is in the keychain).
    pub path: String,
}

/// How far a sync is (event `support-sync-progress`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportSyncProgress {
    pub job_id: String,
    /// `products`, `fill` or `refresh`.
    pub phase: String,
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportSyncForm {
    pub job_id: String,
    /// The user agreed to a local copy of a production connection's data.
    pub allow_production: bool,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportSyncResult {
    /// Stopped by the user: what was stored stays, the next sync continues from there.
    pub cancelled: bool,
    #[ts(type = "number")]
    pub filled: u64,
    #[ts(type = "number")]
    pub created: u64,
    #[ts(type = "number")]
    pub updated: u64,
    pub index: SupportIndexView,
}

/// One page of the index's answers, newest first.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportPage {
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub offset: u64,
    pub items: Vec<partner_api::Transaction>,
    pub as_of: Option<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportCount {
    /// A status, or a product's id.
    pub key: String,
    /// What to show: the status, or the product's name.
    pub label: String,
    #[ts(type = "number")]
    pub count: u64,
}

/// How many transactions the filter selects, per status and per product.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportCounts {
    #[ts(type = "number")]
    pub total: u64,
    pub by_status: Vec<SupportCount>,
    pub by_product: Vec<SupportCount>,
    pub as_of: Option<String>,
}

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SupportExportForm {
    pub job_id: String,
    pub format: ExportFormat,
    pub filter: SupportFilter,
}

/// Where "Go to" takes the user, or why nowhere.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum GoToTarget {
    Transaction {
        #[serde(rename = "transactionId")]
        transaction_id: String,
        /// The event within it, when an event id (or its notification) was given.
        #[serde(rename = "eventId")]
        event_id: Option<String>,
    },
    Product {
        #[serde(rename = "productId")]
        product_id: String,
    },
    /// Not found on the active connection: what was looked for, in words.
    NotFound { message: String },
}

//! The partner API client: the one way the console and the `partner` command talk to the service.
//!
//! - [`PartnerClient`]: every call of the API, each sent with a token that is fresh when sent;
//!   input that breaks a rule of the spec is refused before sending (rules from `partner-api`).
//! - [`TokenManager`]: issues, keeps and replaces the token before either deadline, single
//!   flight, one retry on a 401; publishes [`TokenState`] for live countdowns.
//! - [`PageRequest`] / [`Page`] and [`PartnerClient::pager`], a stream over a whole listing.
//! - [`PartnerClient::add_subscription`] and [`PartnerClient::rotate_signing_key`], with the keys kept in a [`SecretStore`]
//!   ([`KeyringStore`] for the OS keychain, [`MemoryStore`] for tests), and [`signing_keys`] for
//!   the listener.
//! - [`PartnerClient::update_subscription`], [`PartnerClient::delete_subscription`] (its keys
//!   leave the keychain after the service let it go), and [`PartnerClient::repoint_subscriptions`]
//!   with its dry run [`PartnerClient::subscriptions_under`], for a tunnel's new address.
//! - [`PartnerClient::walk_updated_since`]: the items changed since a point in time, newest
//!   first, stopping at older ones (the missed-notification check; a local index).
//! - [`listing_export`]: a listing as CSV and the text search within it, for the app and the CLI.
//! - [`writes`]: every write named, refused on a read-only connection, and handed to the
//!   connection's [`WriteJournal`] (the console's audit log) with the service's answer.
//! - [`CallLog`]: every call this run made to the service (status, time, retries, waits, the
//!   service's request id), live, with each as a curl command whose secrets are variables.
//! - [`ClientError`] with a machine-readable [`ErrorKind`] and messages that never hold a secret.
//!
//! No Tauri here: the desktop app and the CLI are thin layers over this crate.

pub mod call_log;
pub mod client;
pub mod clock;
pub mod config;
pub mod connection_check;
pub mod elements;
pub mod error;
mod http;
pub mod listing_export;
pub mod network;
pub mod page;
pub mod pager;
pub mod rotation;
pub mod sandbox_control;
pub mod secrets;
pub mod subscriptions;
pub mod token;
pub mod updated_since;
pub mod writes;

pub use call_log::{CallLog, CallLogSnapshot, CallOutcome, CallRecord, RequestId};
pub use client::{PartnerClient, MERGE_PATCH};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{parse_base_url, ConnectionConfig, RetryPolicy, DEFAULT_BASE_URL};
pub use connection_check::{check_connection, CheckStep, ConnectionReport, StepOutcome};
pub use error::{describe_error_body, ClientError, ErrorKind, Result, RuleError};
pub use network::{ClientCertificate, NetworkOptions, ProxyOptions};

/// The sandbox's strict record (`partner_api::Product`, `WebhookSubscription`, …) of something
/// read with a tolerant view, for callers not yet moved to the views (the app's shell). Fails,
/// naming `what` and the missing field, where the service left out what the record requires:
/// the strictness the views exist to avoid, kept only where a caller still asks for it.
pub fn to_record<R: serde::de::DeserializeOwned>(
    what: &str,
    read: &impl serde::Serialize,
) -> Result<R> {
    let unreadable = |e: serde_json::Error| ClientError::Unreadable {
        status: 200,
        call: what.to_owned(),
        message: format!("it lacks what the app still requires ({e})"),
        raw_body: None,
    };
    serde_json::to_value(read)
        .and_then(serde_json::from_value)
        .map_err(unreadable)
}
pub use elements::SubscriptionElement;
pub use http::Waiting;
pub use page::{Listed, Page, PageRequest};
pub use pager::PagerOptions;
pub use rotation::{NewSubscription, Rotation, Subscribed};
pub use sandbox_control::SandboxControl;
pub use secrets::{
    client_secret, forget_client_secret, forget_signing_keys, probe_secret_store,
    save_client_secret, signing_keys, store_signing_key, KeyringStore, MemoryStore, PreviousKey,
    SecretSlot, SecretStore, SigningKeys, KEYCHAIN_SERVICE, STORE_NAME,
};
pub use subscriptions::{
    CallbackBase, KeyHome, RepointFailure, Repointed, Repointing, SubscriptionAt,
    SubscriptionChange, SubscriptionRef,
};
pub use token::{TokenManager, TokenState};
pub use updated_since::{Updated, WalkEnd, WalkProgress, WalkSummary, WALK_PAGER};
pub use writes::{transaction_target, Write, WriteAction, WriteJournal, WriteOutcome, WriteRecord};

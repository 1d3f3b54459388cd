//! The receiver check: which subscriptions reach the console's own listener, and the form that checks one.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which subscription's receiver to check against the spec's webhook rules.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReceiverCheckForm {
    pub product_id: String,
    pub subscription_id: String,
    /// Check a plain `http://` URL (loopback development) with a warning, not a failure.
    pub allow_http: bool,
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

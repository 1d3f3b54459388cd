//! The listener: its view, address, retention, test mode, forward rules, and replays with their answers.

use partner_listener::Verdict;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

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
    /// While it runs: what junk was counted rather than stored, and what the retention holds
    /// and pruned per class (the inspector's line under the retention settings).
    pub junk: Option<JunkView>,
    /// The capture store's file, shared with `partner listen`.
    pub store_path: String,
    /// Where the key the store is encrypted with lives ("the OS's secret store", "the key file
    /// …", "the PARTNER_DATA_KEY variable"), once the store is open: a key file made because
    /// the keychain was not available is said, not silently used.
    pub data_key_home: Option<String>,
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

/// How many captures are kept, how many bytes of them, for how long (none: no limit), and how
/// much junk a second is stored before a flood of it is only counted.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RetentionForm {
    #[ts(type = "number | null")]
    pub max_captures: Option<u64>,
    /// Bytes of bodies and headers.
    #[serde(default)]
    #[ts(type = "number | null")]
    pub max_bytes: Option<u64>,
    pub max_age_days: Option<u32>,
    /// Junk stored in full per second before a flood of it is only counted (none: every
    /// request stored). Absent: the listener's default.
    #[serde(default = "partner_local::settings::default_junk_rate")]
    pub junk_rate: Option<u32>,
}

/// Junk the running listener counted rather than stored (a flood past its rate), and the
/// store's captures per retention class with what the retention pruned of each.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JunkView {
    pub flood: partner_listener::FloodSummary,
    pub sizes: partner_listener::RetentionSizes,
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

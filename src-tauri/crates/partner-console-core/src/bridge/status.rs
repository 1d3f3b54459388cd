//! The app's status: start-up, the active connection, the keychain, the listener and the tunnel in one snapshot of one version (`AppState::announce`).

use super::connections::ConnectionView;
use super::tunnel::TunnelCheck;
use serde::Serialize;
use ts_rs::TS;

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

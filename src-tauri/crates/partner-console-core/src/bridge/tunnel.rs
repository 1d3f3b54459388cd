//! The tunnel check and a saved tunnel URL.

use super::listener::ListenerView;
use super::products::RepointOffer;
use serde::Serialize;
use ts_rs::TS;

/// The tunnel URL saved; when it replaced another, the subscriptions still pointing at the old
/// one, offered for re-pointing.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TunnelSaved {
    pub listener: ListenerView,
    pub repoint: Option<RepointOffer>,
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

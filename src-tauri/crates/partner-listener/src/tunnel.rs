//! The tunnel check: does a notification sent to the public tunnel URL reach this listener?
//!
//! It sends a real signed notification to the URL the user gave and watches the listener's own
//! live feed for it, so "arrived" means the listener recorded it — not merely that something
//! answered 200 (a tunnel pointing at another port answers too). The probe is signed with a
//! one-time key registered with the listener for the duration of the check, so it verifies
//! without the user's keys and never touches them. What failed is classified from the error
//! chain: DNS, TLS, refused or unreachable, timeout, a status, or arrival on another path.

use crate::capture::Capture;
use crate::live::LiveEvent;
use crate::server::{Listener, PROBE_HEADER};
use crate::verdict::Verdict;
use chrono::Utc;
use partner_api::signature::{
    self, ENVIRONMENT, ENVIRONMENT_HEADER, SIGNATURE_HEADER, SUBSCRIPTION_HEADER,
};
use partner_api::{signing_key, EventType, Notification, NotificationMeta, ResourceType};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The subscription id a probe carries.
pub const PROBE_SUBSCRIPTION: &str = "tunnel-check";
/// How long the check waits for an answer by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a check failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "failure", rename_all = "camelCase")]
pub enum TunnelFailure {
    /// The URL is not a URL.
    InvalidUrl { reason: String },
    /// The URL is not `https://` (the service only calls HTTPS endpoints).
    NotHttps { scheme: String },
    /// The host name did not resolve.
    Dns { detail: String },
    /// The TLS handshake failed (untrusted or wrong certificate, protocol).
    Tls { detail: String },
    /// Nothing accepted the connection.
    Refused { detail: String },
    /// Another connection error.
    Connect { detail: String },
    /// No answer within the time limit.
    Timeout { after_ms: u64 },
    /// An answer outside 200-399. `arrived`: the listener did record the probe.
    #[serde(rename_all = "camelCase")]
    Status { status: u16, arrived: bool },
    /// The listener recorded the probe on another path than its own.
    ArrivedAtOtherPath { path: String, expected: String },
    /// Something answered 2xx, but the probe never reached this listener.
    NotArrived { status: u16 },
}

impl std::fmt::Display for TunnelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TunnelFailure::InvalidUrl { reason } => write!(f, "the tunnel URL is not a URL: {reason}"),
            TunnelFailure::NotHttps { scheme } => write!(
                f,
                "the tunnel URL must start with https:// (the service only calls HTTPS endpoints), not {scheme}://"
            ),
            TunnelFailure::Dns { detail } => write!(f, "the tunnel's host name did not resolve (DNS): {detail}"),
            TunnelFailure::Tls { detail } => write!(f, "the TLS handshake with the tunnel failed: {detail}"),
            TunnelFailure::Refused { detail } => write!(f, "the tunnel refused the connection: {detail}"),
            TunnelFailure::Connect { detail } => write!(f, "could not connect to the tunnel: {detail}"),
            TunnelFailure::Timeout { after_ms } => write!(f, "no answer from the tunnel within {after_ms} ms"),
            TunnelFailure::Status { status, arrived: true } => {
                write!(f, "the probe reached the listener, but the answer through the tunnel was {status}")
            }
            TunnelFailure::Status { status, arrived: false } => {
                write!(f, "the tunnel answered {status} and the probe never reached the listener")
            }
            TunnelFailure::ArrivedAtOtherPath { path, expected } => write!(
                f,
                "the probe reached the listener at {path}, not at {expected}: fix the path of the tunnel URL"
            ),
            TunnelFailure::NotArrived { status } => write!(
                f,
                "something answered {status}, but the probe never reached this listener (does the tunnel point at its port?)"
            ),
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TunnelReport {
    pub url: String,
    pub ok: bool,
    /// The listener recorded the probe.
    pub arrived: bool,
    /// From sending the probe to its answer.
    pub round_trip_ms: Option<u64>,
    pub status: Option<u16>,
    /// The probe's capture, when it arrived.
    pub capture_id: Option<i64>,
    pub failure: Option<TunnelFailure>,
}

/// A client for checks: the system's trusted roots, `timeout` for the whole request.
pub fn tunnel_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// Sends a signed probe to `url` and reports whether `listener` received it.
pub async fn check_tunnel(
    listener: &Listener,
    url: &str,
    client: &reqwest::Client,
    timeout: Duration,
) -> TunnelReport {
    let mut report = TunnelReport {
        url: url.to_string(),
        ok: false,
        arrived: false,
        round_trip_ms: None,
        status: None,
        capture_id: None,
        failure: None,
    };
    let parsed = match url::Url::parse(url.trim()) {
        Ok(parsed) => parsed,
        Err(e) => {
            report.failure = Some(TunnelFailure::InvalidUrl {
                reason: e.to_string(),
            });
            return report;
        }
    };
    if parsed.scheme() != "https" {
        report.failure = Some(TunnelFailure::NotHttps {
            scheme: parsed.scheme().to_string(),
        });
        return report;
    }

    let nonce = uuid::Uuid::new_v4().to_string();
    let key = signing_key::generate();
    let _probe = listener.register_probe(&nonce, key.clone());
    let mut feed = listener.subscribe();
    let body = probe_body(&nonce, &parsed);
    let signed = signature::sign(key.expose().as_bytes(), &body);
    let started = Instant::now();
    let sent = client
        .post(parsed.clone())
        .timeout(timeout)
        .header(SUBSCRIPTION_HEADER, PROBE_SUBSCRIPTION)
        .header(SIGNATURE_HEADER, signed)
        .header(ENVIRONMENT_HEADER, ENVIRONMENT)
        .header(PROBE_HEADER, &nonce)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let status = match sent {
        Ok(response) => response.status().as_u16(),
        Err(error) => {
            report.failure = Some(classify(&error, elapsed_ms));
            report.arrived = find_probe(&mut feed, &nonce, Duration::ZERO)
                .await
                .is_some();
            return report;
        }
    };
    report.round_trip_ms = Some(elapsed_ms);
    report.status = Some(status);
    // The listener broadcasts before it answers, so the capture is normally there already; a
    // short grace covers a tunnel that answers before the listener does.
    let capture = find_probe(&mut feed, &nonce, Duration::from_millis(500)).await;
    report.arrived = capture.is_some();
    report.capture_id = capture.as_ref().map(|c| c.id);
    let delivered = (200..400).contains(&status);
    report.failure = match capture {
        Some(c) if c.verdict == Verdict::WrongPath => Some(TunnelFailure::ArrivedAtOtherPath {
            path: c.path.clone(),
            expected: listener.config().path.clone(),
        }),
        Some(_) if !delivered => Some(TunnelFailure::Status {
            status,
            arrived: true,
        }),
        Some(_) => None,
        None if delivered => Some(TunnelFailure::NotArrived { status }),
        None => Some(TunnelFailure::Status {
            status,
            arrived: false,
        }),
    };
    report.ok = report.failure.is_none();
    report
}

fn probe_body(nonce: &str, url: &url::Url) -> Vec<u8> {
    let event_id = format!("tunnel-check-{nonce}");
    let notification = Notification {
        event_id: event_id.clone(),
        event_time: Utc::now(),
        event_type: EventType::Created,
        meta: NotificationMeta {
            instance_id: PROBE_SUBSCRIPTION.into(),
            resource_id: event_id,
            resource_type: ResourceType::Transaction,
            resource_ref: url.to_string(),
        },
    };
    serde_json::to_vec(&notification).unwrap_or_default()
}

async fn find_probe(
    feed: &mut tokio::sync::broadcast::Receiver<LiveEvent>,
    nonce: &str,
    wait: Duration,
) -> Option<Arc<Capture>> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let event = match feed.try_recv() {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::TryRecvError::Closed) => return None,
            Err(tokio::sync::broadcast::error::TryRecvError::Empty) => {
                match tokio::time::timeout_at(deadline, feed.recv()).await {
                    Ok(Ok(event)) => event,
                    Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                    _ => return None,
                }
            }
        };
        if let LiveEvent::Captured(capture) = event {
            if capture.header(PROBE_HEADER).map(str::trim) == Some(nonce) {
                return Some(capture);
            }
        }
    }
}

fn classify(error: &reqwest::Error, elapsed_ms: u64) -> TunnelFailure {
    // The class is read from the whole chain of causes; the user is shown only its innermost
    // one ("Connection refused (os error 111)"), not reqwest's wrapping of it, which repeats the
    // URL they typed.
    let lower = crate::outbound::describe_reqwest_error(error).to_ascii_lowercase();
    let detail = innermost_cause(error);
    if error.is_timeout() {
        return TunnelFailure::Timeout {
            after_ms: elapsed_ms,
        };
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return TunnelFailure::Refused { detail };
            }
            if io.kind() == std::io::ErrorKind::TimedOut {
                return TunnelFailure::Timeout {
                    after_ms: elapsed_ms,
                };
            }
        }
        source = cause.source();
    }
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        TunnelFailure::Dns { detail }
    } else if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("invalid peer")
    {
        TunnelFailure::Tls { detail }
    } else if lower.contains("connection refused") {
        TunnelFailure::Refused { detail }
    } else {
        TunnelFailure::Connect { detail }
    }
}

/// The message of the last error in `error`'s chain of sources.
fn innermost_cause(error: &reqwest::Error) -> String {
    let mut innermost: &(dyn std::error::Error + 'static) = error;
    while let Some(cause) = innermost.source() {
        innermost = cause;
    }
    innermost.to_string()
}

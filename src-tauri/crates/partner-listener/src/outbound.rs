//! Requests the console sends for a capture: forwards to the user's own app and replays.
//!
//! Both pass the capture on unchanged (same headers, same body bytes) apart from the headers
//! that belong to one hop of HTTP, so the user's app verifies exactly what the service sent. An
//! edited replay is re-signed with the subscription's current key and, like every replay, carries
//! `Svc-Replay: 1` so no one mistakes it for a delivery of the service: a listener stores it
//! with `replay = true`, never forwards it, and does not count it as an attempt of its
//! notification. Where a forward goes is decided by the forward rules ([`crate::forward`]);
//! the record of a forward names the URL it went to, which is the rule's (or `forward_to`'s).

use crate::capture::{Capture, Header, OutboundKind, OutboundRecord};
use crate::keys::KeySource;
use crate::{Error, Result};
use chrono::Utc;
use partner_api::signature::{self, SIGNATURE_HEADER};
use std::time::{Duration, Instant};

/// The header that marks a replay.
pub const REPLAY_HEADER: &str = "Svc-Replay";
/// [`REPLAY_HEADER`]'s value on a notification the console rebuilt and sent because the
/// service's never arrived (`partner_local::recover`); a replay of a capture carries `1`.
pub const RECOVERY: &str = "recovery";

/// Whether a [`REPLAY_HEADER`] value marks a replay: `1`, or [`RECOVERY`].
pub fn marks_replay(value: &str) -> bool {
    let value = value.trim();
    value == "1" || value.eq_ignore_ascii_case(RECOVERY)
}
/// The header a forward adds, so a listener never forwards what a listener forwarded (a
/// `--forward-to` pointing back at a listener would otherwise loop forever).
pub const FORWARDED_HEADER: &str = "X-Partner-Listener-Forwarded";
/// The one-time nonce a replay to this listener itself carries, so the listener can tell the
/// replay which capture it became (see [`crate::Listener::replay`]). Only sent to this
/// listener, never to another target.
pub const REPLAY_ID_HEADER: &str = "X-Partner-Listener-Replay-Id";
/// How long an outbound request may take.
pub const OUTBOUND_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of an answer's body is kept.
pub const KEPT_RESPONSE_BYTES: usize = 64 * 1024;

/// Whether a captured header belongs to the connection it arrived on (`Host`, the framing,
/// `Connection` and the headers it names, `Expect`), so a request sending the capture again
/// leaves it out and lets its own client set what its connection needs: the one list for every
/// re-send (forwards, replays, the Demo's proxy).
pub fn is_hop_header(name: &str) -> bool {
    HOP_HEADERS.iter().any(|hop| name.eq_ignore_ascii_case(hop))
}

const HOP_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "expect",
    "proxy-connection",
];

/// What [`crate::Listener::replay`] did: the record of the request and its answer (also
/// stored, see [`crate::StoreReader::outbound_of`]), and the id of the capture the replay
/// became when it was sent to this listener itself.
///
/// It dereferences to its [`OutboundRecord`], so `outcome.status` and the like read the
/// record's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayOutcome {
    pub record: OutboundRecord,
    /// The capture this listener stored for the replay; `None` when the target was elsewhere
    /// (or this listener under another name), or the replay never got stored.
    pub capture_id: Option<i64>,
}

impl std::ops::Deref for ReplayOutcome {
    type Target = OutboundRecord;

    fn deref(&self) -> &OutboundRecord {
        &self.record
    }
}

/// A client for forwards and replays (plain defaults, a 30 s timeout, no redirects followed).
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(OUTBOUND_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// Checks a forward or replay target: an absolute http(s) URL.
pub fn parse_target(url: &str) -> Result<url::Url> {
    let parsed = url::Url::parse(url)
        .map_err(|e| Error::InvalidInput(format!("the target URL is not a URL: {e}")))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(Error::InvalidInput(format!(
            "the target URL must be http:// or https://, not {other}://"
        ))),
    }
}

/// The headers and body a forward or replay sends for `capture`.
pub fn outbound_request(
    capture: &Capture,
    kind: OutboundKind,
    edited_body: Option<Vec<u8>>,
    keys: &dyn KeySource,
) -> Result<(Vec<Header>, Vec<u8>)> {
    let mut headers: Vec<Header> = capture
        .headers
        .iter()
        .filter(|h| {
            !is_hop_header(&h.name)
                && !h.name.eq_ignore_ascii_case(REPLAY_HEADER)
                && !h.name.eq_ignore_ascii_case(FORWARDED_HEADER)
                && !h.name.eq_ignore_ascii_case(REPLAY_ID_HEADER)
        })
        .cloned()
        .collect();
    let body = match (edited_body, &capture.body) {
        (Some(edited), _) => {
            let subscription = capture.subscription_id.as_deref().ok_or_else(|| {
                Error::InvalidInput(
                    "the capture names no subscription to sign an edited body with".into(),
                )
            })?;
            let sub_keys = keys.keys(subscription).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "no signing key is known for subscription {subscription}"
                ))
            })?;
            let signed = signature::sign(sub_keys.current.expose().as_bytes(), &edited);
            headers.retain(|h| !h.name.eq_ignore_ascii_case(SIGNATURE_HEADER));
            headers.push(Header::new(SIGNATURE_HEADER, signed));
            edited
        }
        (None, Some(body)) => body.clone(),
        (None, None) => {
            return Err(Error::InvalidInput(
                "the capture kept no body (it was over the limit or incomplete)".into(),
            ))
        }
    };
    if kind == OutboundKind::Forward {
        headers.push(Header::new(FORWARDED_HEADER, "1"));
    } else {
        headers.push(Header::new(REPLAY_HEADER, "1"));
    }
    Ok((headers, body))
}

/// Sends one outbound request and records what happened (an unreachable target is a record with
/// an error, not an `Err`).
pub async fn send(
    http: &reqwest::Client,
    capture_id: i64,
    kind: OutboundKind,
    url: &url::Url,
    headers: Vec<Header>,
    body: Vec<u8>,
) -> OutboundRecord {
    let sent_at = Utc::now();
    let started = Instant::now();
    let mut request = http.post(url.clone()).body(body.clone());
    for header in &headers {
        request = request.header(header.name.as_str(), header.value.as_str());
    }
    let mut record = OutboundRecord {
        id: 0,
        capture_id,
        kind,
        url: url.to_string(),
        sent_at,
        request_headers: headers,
        request_body: Some(body),
        status: None,
        response_headers: Vec::new(),
        response_body: None,
        elapsed_ms: 0,
        error: None,
    };
    match request.send().await {
        Ok(response) => {
            record.status = Some(response.status().as_u16());
            record.response_headers = response
                .headers()
                .iter()
                .map(|(n, v)| Header::new(n.as_str(), String::from_utf8_lossy(v.as_bytes())))
                .collect();
            match response.bytes().await {
                Ok(bytes) => {
                    let kept = &bytes[..bytes.len().min(KEPT_RESPONSE_BYTES)];
                    record.response_body = Some(String::from_utf8_lossy(kept).into_owned());
                }
                Err(e) => record.error = Some(format!("reading the answer failed: {e}")),
            }
        }
        Err(e) => record.error = Some(describe_reqwest_error(&e)),
    }
    record.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    record
}

/// A reqwest error with its causes, on one line.
pub fn describe_reqwest_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_headers_are_left_out_whatever_their_case_and_the_rest_kept() {
        for name in [
            "Host",
            "content-length",
            "TRANSFER-ENCODING",
            "Expect",
            "Proxy-Connection",
            "te",
        ] {
            assert!(is_hop_header(name), "{name}");
        }
        for name in ["Svc-Signature", "Content-Type", "Via", "X-Trace", "Tex"] {
            assert!(!is_hop_header(name), "{name}");
        }
    }
}

//! What a check found: one [`RuleResult`] per rule of the spec, each with its evidence.
//!
//! The report is what the CLI prints and what the app will show, so it is plain data (serde
//! `Serialize`) and holds no secret: response excerpts are masked before they get here
//! ([`crate::secrets`]), and the request side is described, never the signature or the key.

use serde::Serialize;
use std::fmt;

/// The rules a check reports on, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RuleId {
    /// Endpoint requirements: an `https://` endpoint whose certificate a certificate authority
    /// signed (self-signed ones are not supported).
    #[serde(rename = "https-trusted-certificate")]
    HttpsTrustedCertificate,
    /// Endpoint requirements: TLS 1.2 or above.
    #[serde(rename = "tls-1.2-or-above")]
    Tls12OrAbove,
    /// Delivery: a correctly signed notification is acknowledged (200-399) within the timeout.
    #[serde(rename = "acknowledged-in-time")]
    AcknowledgedInTime,
    /// Signing: only a notification whose signature matches its raw body is acknowledged.
    #[serde(rename = "signature-verified")]
    SignatureVerified,
    /// Delivery: a redelivery (same eventId and body) is acknowledged again.
    #[serde(rename = "redelivery-acknowledged")]
    RedeliveryAcknowledged,
    /// Endpoint requirements: no response carries the signing key (or a stack trace).
    #[serde(rename = "no-sensitive-data")]
    NoSensitiveData,
}

impl RuleId {
    pub const ALL: [RuleId; 6] = [
        RuleId::HttpsTrustedCertificate,
        RuleId::Tls12OrAbove,
        RuleId::AcknowledgedInTime,
        RuleId::SignatureVerified,
        RuleId::RedeliveryAcknowledged,
        RuleId::NoSensitiveData,
    ];

    /// The id as it appears in JSON (`tls-1.2-or-above`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::HttpsTrustedCertificate => "https-trusted-certificate",
            RuleId::Tls12OrAbove => "tls-1.2-or-above",
            RuleId::AcknowledgedInTime => "acknowledged-in-time",
            RuleId::SignatureVerified => "signature-verified",
            RuleId::RedeliveryAcknowledged => "redelivery-acknowledged",
            RuleId::NoSensitiveData => "no-sensitive-data",
        }
    }

    /// The rule in a sentence, as the spec puts it.
    pub fn title(self) -> &'static str {
        match self {
            RuleId::HttpsTrustedCertificate => {
                "HTTPS endpoint with a certificate signed by a certificate authority"
            }
            RuleId::Tls12OrAbove => "TLS 1.2 or above",
            RuleId::AcknowledgedInTime => {
                "A correctly signed notification is acknowledged (200-399) within the timeout"
            }
            RuleId::SignatureVerified => {
                "Only notifications whose signature matches the raw body are acknowledged"
            }
            RuleId::RedeliveryAcknowledged => {
                "A redelivery (same eventId and body) is acknowledged again"
            }
            RuleId::NoSensitiveData => "No response carries the signing key or a stack trace",
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    /// Not broken, but worth a look (plain HTTP allowed for development, a slow answer).
    Warn,
    /// Could not be checked (say, no TLS version in common); `summary` says why.
    Skipped,
}

/// One request the check sent, what came back, and how long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    /// What was sent, in words ("a correctly signed notification").
    pub sent: String,
    /// The made-up `eventId` it carried.
    pub event_id: String,
    /// The receiver's status, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub status: Option<u16>,
    /// Why there was no status (timed out, connection reset, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
    /// From sending to the response's status line (or to the error).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: u64,
    /// The start of the response body, any form of the signing key masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub body_excerpt: Option<String>,
}

impl Exchange {
    /// Whether the receiver acknowledged it (a status of 200-399).
    pub fn acknowledged(&self) -> bool {
        self.status.is_some_and(partner_api::delivery::acknowledges)
    }

    /// `401 in 12 ms`, `no answer: timed out after 4s`.
    pub fn answer(&self) -> String {
        match (self.status, &self.error) {
            (Some(status), _) => format!("{status} in {}", format_ms(self.duration_ms)),
            (None, Some(error)) => format!("no answer: {error}"),
            (None, None) => "no answer".to_owned(),
        }
    }
}

/// `12 ms`, `2.3 s`.
pub fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        // Tenths of a second, by integer arithmetic (no float casts).
        format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
    }
}

/// One rule, its outcome and the evidence for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleResult {
    pub id: RuleId,
    pub title: &'static str,
    pub outcome: Outcome,
    /// Why this outcome, in a sentence a partner can act on.
    pub summary: String,
    /// The requests behind the outcome (none for the TLS rules, which only shake hands).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<Exchange>>"))]
    pub evidence: Vec<Exchange>,
    /// The TLS versions the receiver accepted (for the TLS rule), e.g. `["TLS 1.3", "TLS 1.2"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tls_versions: Option<Vec<String>>,
}

impl RuleResult {
    pub fn new(id: RuleId, outcome: Outcome, summary: impl Into<String>) -> Self {
        Self {
            id,
            title: id.title(),
            outcome,
            summary: summary.into(),
            evidence: Vec::new(),
            tls_versions: None,
        }
    }

    pub fn with_evidence(mut self, evidence: Vec<Exchange>) -> Self {
        self.evidence = evidence;
        self
    }
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The receiver's URL as given.
    pub url: String,
    pub subscription_id: String,
    /// The resource type of the notifications sent.
    pub resource: partner_api::ResourceType,
    /// How long a receiver had to answer (the service's 30 s unless changed).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub timeout_ms: u64,
    /// How many HTTP requests the check sent (never more than [`crate::MAX_REQUESTS`]).
    pub requests_sent: usize,
    /// One per rule, in [`RuleId::ALL`]'s order.
    pub rules: Vec<RuleResult>,
}

impl Report {
    /// No rule failed (warnings and skipped rules aside).
    pub fn passed(&self) -> bool {
        !self.rules.iter().any(|rule| rule.outcome == Outcome::Fail)
    }

    pub fn rule(&self, id: RuleId) -> Option<&RuleResult> {
        self.rules.iter().find(|rule| rule.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_serialise_as_their_names() {
        for id in RuleId::ALL {
            assert_eq!(serde_json::to_value(id).unwrap(), id.as_str());
        }
        assert_eq!(serde_json::to_value(Outcome::Skipped).unwrap(), "skipped");
    }

    #[test]
    fn durations_read_in_ms_then_seconds() {
        assert_eq!(format_ms(12), "12 ms");
        assert_eq!(format_ms(2345), "2.3 s");
        assert_eq!(format_ms(30_000), "30.0 s");
    }
}

//! Sending a set of captures again, to any receiver: a receiver fixed after an hour of failures
//! gets the hour again (`partner listen replay --filter ...`), and captures kept as fixtures run
//! as a contract test in CI (`partner listen replay --from FILE --expect 2xx --junit FILE`).
//!
//! Each capture goes as [`crate::outbound`] sends a replay: the same body bytes and headers (less
//! those of one hop), `Svc-Replay: 1`. When a key is given for all (a CI receiver configured with
//! a test key) or known for its subscription, the body is signed again with it, so the receiver's
//! signature check passes; otherwise the original signature goes as it came.
//!
//! Pacing: at most `concurrency` in flight and, with a rate, sends start no faster than it (the
//! n-th at `n / rate` seconds), so a receiver that was just down is not flooded. Each send has an
//! outcome: the answer's status and time checked against the [`Expectation`], or why it could
//! not be sent. Outcomes come back in the captures' order; [`junit`] writes them as a JUnit
//! report. The app keeps each send's record beside its capture (as a single replay's is kept);
//! the CLI reads the store only and keeps nothing.

use crate::capture::{Capture, Header, OutboundKind, OutboundRecord};
use crate::keys::KeySource;
use crate::outbound;
use crate::{Error, Result};
use futures::StreamExt;
use partner_api::secret::Secret;
use partner_api::signature::{self, SIGNATURE_HEADER};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a receiver's answer must be for a send to pass: one of the statuses (a class such as
/// `2xx`, or an exact status) and, when set, within a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    statuses: Vec<StatusPattern>,
    pub within: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatusPattern {
    Class(u16),
    Exact(u16),
}

impl Expectation {
    /// `2xx`, `200`, or a comma-separated list of them (`200,204`, `2xx,409`).
    pub fn parse(text: &str) -> Result<Self> {
        let mut statuses = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let lower = part.to_ascii_lowercase();
            let pattern = match lower.strip_suffix("xx") {
                Some(class) => match class.parse::<u16>() {
                    Ok(c @ 1..=5) => StatusPattern::Class(c),
                    _ => return Err(bad_expectation(part)),
                },
                None => match lower.parse::<u16>() {
                    Ok(s @ 100..=599) => StatusPattern::Exact(s),
                    _ => return Err(bad_expectation(part)),
                },
            };
            statuses.push(pattern);
        }
        if statuses.is_empty() {
            return Err(bad_expectation(text));
        }
        Ok(Self {
            statuses,
            within: None,
        })
    }

    /// The service's own rule: any 2xx or 3xx is delivered (field notes, "Webhooks").
    pub fn delivered() -> Self {
        Self {
            statuses: vec![StatusPattern::Class(2), StatusPattern::Class(3)],
            within: None,
        }
    }

    pub fn within(mut self, limit: Option<Duration>) -> Self {
        self.within = limit;
        self
    }

    fn accepts(&self, status: u16) -> bool {
        self.statuses.iter().any(|pattern| match pattern {
            StatusPattern::Class(class) => status / 100 == *class,
            StatusPattern::Exact(exact) => status == *exact,
        })
    }

    /// The statuses as written back (`2xx, 409`).
    pub fn describe(&self) -> String {
        self.statuses
            .iter()
            .map(|pattern| match pattern {
                StatusPattern::Class(class) => format!("{class}xx"),
                StatusPattern::Exact(exact) => exact.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why an answer fails, or `None` when it passes.
    fn judge(&self, status: Option<u16>, elapsed: Duration, error: Option<&str>) -> Option<String> {
        let Some(status) = status else {
            return Some(error.unwrap_or("no answer").to_string());
        };
        if !self.accepts(status) {
            return Some(format!("answered {status}, expected {}", self.describe()));
        }
        match self.within {
            Some(limit) if elapsed > limit => Some(format!(
                "answered {status} after {} ms, over the {} ms allowed",
                elapsed.as_millis(),
                limit.as_millis()
            )),
            _ => None,
        }
    }
}

fn bad_expectation(text: &str) -> Error {
    Error::InvalidInput(format!(
        "`{text}` is not an expected status: write a class (2xx) or a status (204), or several with commas"
    ))
}

/// How a set of captures is sent.
#[derive(Debug, Clone)]
pub struct SendPlan {
    pub target: url::Url,
    /// Sends in flight at most (at least 1).
    pub concurrency: usize,
    /// Sends started per second at most; `None`: as fast as `concurrency` allows.
    pub per_second: Option<f64>,
    pub expect: Expectation,
}

/// The key a capture is signed again with: one for all, else its subscription's (from `keys`).
#[derive(Debug)]
pub enum Resign<'a> {
    /// Send the signature as it came.
    Never,
    /// The same key for every capture (a receiver configured with a test key).
    With(&'a Secret),
    /// The subscription's current key where `keys` knows it; the original signature elsewhere.
    FromKeys(&'a dyn KeySource),
}

/// What happened to one capture sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SentCapture {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub capture_id: i64,
    pub event_id: Option<String>,
    pub resource_type: Option<String>,
    pub subscription_id: Option<String>,
    pub status: Option<u16>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
    /// Signed again before it went (else the original signature went).
    pub resigned: bool,
    /// Why it was not sent, or why no answer came.
    pub error: Option<String>,
    /// Why it does not meet the expectation; `None`: it passed.
    pub failure: Option<String>,
}

impl SentCapture {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// Every outcome, in the captures' order, and whether the run was cancelled (then the captures
/// not yet sent have none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SendReport {
    pub sent: Vec<SentCapture>,
    pub cancelled: bool,
}

impl SendReport {
    pub fn failures(&self) -> usize {
        self.sent.iter().filter(|s| !s.passed()).count()
    }
}

/// The request a capture is sent as: the replay's headers and body, signed again when `resign`
/// has a key for it. Returns whether it was signed again.
pub fn request_for(capture: &Capture, resign: &Resign<'_>) -> Result<(Vec<Header>, Vec<u8>, bool)> {
    let (mut headers, body) = outbound::outbound_request(
        capture,
        OutboundKind::Replay,
        None,
        &crate::keys::MemoryKeys::new(),
    )?;
    let key = match resign {
        Resign::Never => None,
        Resign::With(key) => Some((*key).clone()),
        Resign::FromKeys(keys) => capture
            .subscription_id
            .as_deref()
            .and_then(|id| keys.keys(id))
            .map(|k| k.current),
    };
    let resigned = key.is_some();
    if let Some(key) = key {
        headers.retain(|h| !h.name.eq_ignore_ascii_case(SIGNATURE_HEADER));
        headers.push(Header::new(
            SIGNATURE_HEADER,
            signature::sign(key.expose().as_bytes(), &body),
        ));
    }
    Ok((headers, body, resigned))
}

/// Sends each of `captures` to the plan's target, paced as it says, telling `progress(done,
/// total)` as each ends. With `keep`, the record of each send (request, answer) is stored
/// beside its capture, as a single replay's is, so the capture's detail shows it.
pub async fn send_all(
    http: &reqwest::Client,
    plan: &SendPlan,
    captures: &[Capture],
    resign: &Resign<'_>,
    keep: Option<&crate::Store>,
    cancel: &CancellationToken,
    progress: impl FnMut(usize, usize),
) -> SendReport {
    let (ended, cancelled) = send_each(plan, captures, cancel, progress, |capture| {
        let request = request_for(capture, resign);
        let (http, target, capture_id) = (http.clone(), plan.target.clone(), capture.id);
        async move {
            let (headers, body, resigned) = request.map_err(|e| e.to_string())?;
            let record = outbound::send(
                &http,
                capture_id,
                OutboundKind::Replay,
                &target,
                headers,
                body,
            )
            .await;
            Ok((record, resigned))
        }
    })
    .await;
    let mut sent = Vec::with_capacity(ended.len());
    for (outcome, record) in ended {
        if let (Some(store), Some(record)) = (keep, record) {
            if let Err(error) = store.insert_outbound(record).await {
                tracing::warn!(capture = outcome.capture_id, %error, "the record of a send again was not kept");
            }
        }
        sent.push(outcome);
    }
    SendReport { sent, cancelled }
}

/// What one send gave: the record of the request and its answer and whether the body was
/// signed again, or why it was not sent.
pub type SendResult = std::result::Result<(OutboundRecord, bool), String>;

/// The pacing and the judging of a "send again" of many captures, whoever sends each one:
/// `send(capture)` is started for each in order, at most `plan.concurrency` at once and
/// `plan.per_second` a second, and each answer judged against `plan.expect`; the outcomes
/// (with their records) come back in the captures' order, and whether `cancel` stopped it.
/// [`send_all`] sends from this machine; `partner listen replay` on a team workspace has the
/// workspace's servers send each (`POST /api/v1/captures/{id}/replay`).
pub async fn send_each<F, Fut>(
    plan: &SendPlan,
    captures: &[Capture],
    cancel: &CancellationToken,
    mut progress: impl FnMut(usize, usize),
    send: F,
) -> (Vec<(SentCapture, Option<OutboundRecord>)>, bool)
where
    F: Fn(&Capture) -> Fut,
    Fut: std::future::Future<Output = SendResult>,
{
    let total = captures.len();
    let start = tokio::time::Instant::now();
    let interval = plan
        .per_second
        .filter(|rate| rate.is_finite() && *rate > 0.0)
        .map(|rate| Duration::from_secs_f64(1.0 / rate));
    // Built in a loop rather than by a closure over the captures: an iterator's closure in
    // this future's state makes it not `Send` for every lifetime (rustc's higher-ranked
    // closure limit), which a Tauri command needs it to be.
    let mut sends = Vec::with_capacity(captures.len());
    for (index, capture) in captures.iter().enumerate() {
        let mut outcome = SentCapture {
            capture_id: capture.id,
            event_id: capture.fields.event_id.clone(),
            resource_type: capture.fields.resource_type.clone(),
            subscription_id: capture.subscription_id.clone(),
            status: None,
            elapsed_ms: 0,
            resigned: false,
            error: None,
            failure: None,
        };
        let not_before = interval.map(|every| start + every * index as u32);
        let expect = &plan.expect;
        let sending = send(capture);
        sends.push(async move {
            if let Some(at) = not_before {
                tokio::time::sleep_until(at).await;
            }
            match sending.await {
                Ok((record, resigned)) => {
                    outcome.resigned = resigned;
                    outcome.status = record.status;
                    outcome.elapsed_ms = record.elapsed_ms;
                    outcome.error = record.error.clone();
                    outcome.failure = expect.judge(
                        record.status,
                        Duration::from_millis(record.elapsed_ms),
                        record.error.as_deref(),
                    );
                    (outcome, Some(record))
                }
                Err(e) => {
                    outcome.failure = Some(format!("not sent: {e}"));
                    outcome.error = Some(e);
                    (outcome, None)
                }
            }
        });
    }
    in_order(sends, plan.concurrency, cancel, |done| {
        progress(done, total)
    })
    .await
}

/// Runs `work` with at most `in_flight` at once (at least one), handing back what each gave in
/// `work`'s order and telling `progress(done)` as each ends; when `cancel` fires it stops and
/// hands back what had ended, with `true`. The pacing of every "send again" of the console.
pub async fn in_order<T>(
    work: impl IntoIterator<Item = impl std::future::Future<Output = T>>,
    in_flight: usize,
    cancel: &CancellationToken,
    mut progress: impl FnMut(usize),
) -> (Vec<T>, bool) {
    let mut running = futures::stream::iter(work).buffered(in_flight.max(1));
    let mut ended = Vec::new();
    loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return (ended, true),
            next = running.next() => match next {
                Some(outcome) => {
                    ended.push(outcome);
                    progress(ended.len());
                }
                None => return (ended, false),
            },
        }
    }
}

/// A JUnit XML report of a run: one test case per capture sent (named by its resource type and
/// eventId, or its capture id), a failure for each that did not pass.
pub fn junit(suite: &str, target: &str, report: &SendReport) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let seconds: f64 = report
        .sent
        .iter()
        .map(|s| s.elapsed_ms as f64 / 1000.0)
        .sum();
    xml.push_str(&format!(
        "<testsuites>\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{:.3}\">\n",
        crate::xml::escape(suite),
        report.sent.len(),
        report.failures(),
        seconds
    ));
    xml.push_str(&format!(
        "    <properties><property name=\"target\" value=\"{}\"/></properties>\n",
        crate::xml::escape(target)
    ));
    for sent in &report.sent {
        let name = match (&sent.resource_type, &sent.event_id) {
            (Some(resource), Some(event)) => format!("{resource} {event}"),
            _ => format!("capture {}", sent.capture_id),
        };
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            crate::xml::escape(suite),
            crate::xml::escape(&name),
            sent.elapsed_ms as f64 / 1000.0
        ));
        match &sent.failure {
            None => xml.push_str("/>\n"),
            Some(why) => xml.push_str(&format!(
                ">\n      <failure message=\"{}\"/>\n    </testcase>\n",
                crate::xml::escape(why)
            )),
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_are_classes_or_statuses() {
        let expect = Expectation::parse("2xx, 409").unwrap();
        assert!(expect.accepts(204) && expect.accepts(409) && !expect.accepts(500));
        assert_eq!(expect.describe(), "2xx, 409");
        for bad in ["", "6xx", "abc", "99", "2x"] {
            assert!(Expectation::parse(bad).is_err(), "{bad}");
        }
        let timed = Expectation::parse("200")
            .unwrap()
            .within(Some(Duration::from_millis(10)));
        assert_eq!(timed.judge(Some(200), Duration::from_millis(5), None), None);
        assert!(timed
            .judge(Some(200), Duration::from_millis(50), None)
            .unwrap()
            .contains("over the 10 ms"));
        assert_eq!(
            timed
                .judge(None, Duration::ZERO, Some("connection refused"))
                .as_deref(),
            Some("connection refused")
        );
    }

    #[test]
    fn the_junit_report_names_each_capture_and_its_failure() {
        let sent = |id: i64, failure: Option<&str>| SentCapture {
            capture_id: id,
            event_id: Some(format!("ev-{id}")),
            resource_type: Some("urn:svc:partner:transaction".into()),
            subscription_id: None,
            status: Some(200),
            elapsed_ms: 12,
            resigned: true,
            error: None,
            failure: failure.map(str::to_string),
        };
        let report = SendReport {
            sent: vec![
                sent(1, None),
                sent(2, Some("answered 500, expected 2xx <&>")),
            ],
            cancelled: false,
        };
        let xml = junit("contract", "http://localhost/hooks?a=1&b=2", &report);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("name=\"urn:svc:partner:transaction ev-1\" time=\"0.012\"/>"));
        assert!(xml.contains("<failure message=\"answered 500, expected 2xx &lt;&amp;&gt;\"/>"));
        assert!(xml.contains("value=\"http://localhost/hooks?a=1&amp;b=2\""));
    }
}

//! [`CallLog`]: every call the client made to a service in this run, for `partner --verbose`
//! and the app's Calls panel, each with a "copy as curl" that never holds a secret.
//!
//! Why it is recorded in the transport: that is the one place every call passes, so nothing
//! is missed (token issuance, introspection and revocation included) and a call is one entry
//! however many attempts and waits it took. The entry is made redacted before anything is kept
//! (how, in [`curl`]), so no secret sits in the log's memory, in a line printed from it or in a
//! curl command copied from it.
//!
//! Bounded: a ring of the last [`CALL_LOG_CAPACITY`] calls with a count of those dropped. Shared
//! by the client's clones, and live through [`CallLog::subscribe`].
//!
//! This file holds the log itself: the ring, the [`CallTrace`] a call in progress fills, the
//! records ([`CallRecord`], [`CallOutcome`], [`RequestId`]) and the subscription to them. The
//! redaction of a request and its rendering as a curl command are in [`curl`], a concern of
//! their own (secrets and shell quoting) that the ring only stores the result of.

mod curl;

pub use curl::{quote_text, CLIENT_ID_VARIABLE, CLIENT_SECRET_VARIABLE, TOKEN_VARIABLE};

use chrono::{DateTime, Utc};
use curl::{CurlCall, RedactedRequest};
use reqwest::header::HeaderMap;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How many calls a log keeps by default.
pub const CALL_LOG_CAPACITY: usize = 500;

/// The response headers a service's request id comes in, in order of preference.
pub const REQUEST_ID_HEADERS: &[&str] = &[
    "x-request-id",
    "request-id",
    "x-correlation-id",
    "correlation-id",
    "x-amzn-requestid",
    "x-amz-request-id",
    "x-ms-request-id",
    "x-trace-id",
    "traceparent",
];

/// Longest request id kept.
const MAX_REQUEST_ID: usize = 200;

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// The service answered with this status (the last attempt's, when there were several).
    Answered { status: u16 },
    /// No answer: the transport failed (`network`, `timeout`, ...).
    Failed { kind: crate::ErrorKind },
    /// The caller stopped waiting (a cancelled search, a closed screen) before it ended.
    Cancelled,
}

impl fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallOutcome::Answered { status } => write!(f, "{status}"),
            CallOutcome::Failed { kind } => write!(f, "{}", kind_word(*kind)),
            CallOutcome::Cancelled => f.write_str("cancelled"),
        }
    }
}

fn kind_word(kind: crate::ErrorKind) -> &'static str {
    use crate::ErrorKind::*;
    match kind {
        Unauthorized => "unauthorized",
        InvalidRequest => "invalid request",
        NotFound => "not found",
        Conflict => "conflict",
        RateLimited => "rate limited",
        Network => "network error",
        Timeout => "timeout",
        Server => "server error",
        Rule => "refused before sending",
        Keychain => "keychain error",
        ReadOnly => "refused: read-only connection",
    }
}

/// The service's id for the request, from one of [`REQUEST_ID_HEADERS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId {
    /// The header's name, lower case.
    pub header: String,
    pub value: String,
}

/// One call to a service, as it ended: no secret in any field.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// Its number in this log, from 1, in the order calls ended.
    pub seq: u64,
    pub started_at: DateTime<Utc>,
    pub method: String,
    /// The path, without the base URL's host.
    pub path: String,
    /// The query as sent, values of secret-named parameters replaced.
    pub query: Option<String>,
    pub outcome: CallOutcome,
    /// From the first attempt to the end, waits included.
    pub duration: Duration,
    /// How many times the request was sent (1 when it was not retried).
    pub attempts: u32,
    /// The waits the service asked for (`Retry-After` on a 429 or 503), in order.
    pub waits: Vec<Duration>,
    pub request_id: Option<RequestId>,
    /// The last answer's body, in bytes as read (after decompression).
    pub response_bytes: Option<u64>,
    curl: CurlCall,
}

impl CallRecord {
    /// `/path?query`.
    pub fn target(&self) -> String {
        match &self.query {
            Some(query) => format!("{}?{query}", self.path),
            None => self.path.clone(),
        }
    }

    /// The transient retries (attempts after the first that were not a wait the service asked).
    pub fn retries(&self) -> u32 {
        let waits = u32::try_from(self.waits.len()).unwrap_or(u32::MAX);
        self.attempts.saturating_sub(1).saturating_sub(waits)
    }

    /// The time spent waiting as the service asked.
    pub fn waited(&self) -> Duration {
        self.waits.iter().sum()
    }

    /// A curl command that repeats the call: secrets as shell variables, words shell-quoted.
    pub fn curl(&self) -> String {
        self.curl.render()
    }
}

/// The one line `partner --verbose` prints: `GET /partner/v2/products?start=0 200 41 ms,
/// 1 retry, waited 2 s (1 wait), request id x-request-id=abc, 1234 bytes`.
impl fmt::Display for CallRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} ms",
            self.method,
            self.target(),
            self.outcome,
            self.duration.as_millis()
        )?;
        match self.retries() {
            0 => {}
            1 => f.write_str(", 1 retry")?,
            n => write!(f, ", {n} retries")?,
        }
        if !self.waits.is_empty() {
            let waits = self.waits.len();
            write!(
                f,
                ", waited {} s ({waits} wait{})",
                self.waited().as_secs_f64().ceil() as u64,
                if waits == 1 { "" } else { "s" }
            )?;
        }
        if let Some(id) = &self.request_id {
            write!(f, ", request id {}={}", id.header, id.value)?;
        }
        if let Some(bytes) = self.response_bytes {
            write!(f, ", {bytes} bytes")?;
        }
        Ok(())
    }
}

/// The calls kept so far, oldest first, and how many older ones were let go.
#[derive(Debug, Clone, Default)]
pub struct CallLogSnapshot {
    pub calls: Vec<Arc<CallRecord>>,
    pub dropped: u64,
}

/// The calls of one client (and its clones) in this run: a bounded ring, live to subscribers.
#[derive(Clone)]
pub struct CallLog {
    inner: Arc<LogInner>,
}

struct LogInner {
    capacity: usize,
    ring: Mutex<Ring>,
    live: tokio::sync::broadcast::Sender<Arc<CallRecord>>,
}

#[derive(Default)]
struct Ring {
    calls: VecDeque<Arc<CallRecord>>,
    dropped: u64,
    last_seq: u64,
}

impl fmt::Debug for CallLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring = self.ring();
        f.debug_struct("CallLog")
            .field("calls", &ring.calls.len())
            .field("dropped", &ring.dropped)
            .finish()
    }
}

impl Default for CallLog {
    fn default() -> Self {
        Self::new(CALL_LOG_CAPACITY)
    }
}

impl CallLog {
    /// A log keeping the last `capacity` calls (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(LogInner {
                capacity: capacity.max(1),
                ring: Mutex::new(Ring::default()),
                live: tokio::sync::broadcast::channel(256).0,
            }),
        }
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        // The ring is consistent after every statement; a panic elsewhere leaves it usable.
        self.inner
            .ring
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `other` is this log (a clone of it), not merely one with the same calls.
    pub fn same_log(&self, other: &CallLog) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// Every call kept, oldest first.
    pub fn snapshot(&self) -> CallLogSnapshot {
        let ring = self.ring();
        CallLogSnapshot {
            calls: ring.calls.iter().cloned().collect(),
            dropped: ring.dropped,
        }
    }

    /// The calls kept that ended after call number `seq`, oldest first (a subscriber that fell
    /// behind catches up here).
    pub fn since(&self, seq: u64) -> Vec<Arc<CallRecord>> {
        self.ring()
            .calls
            .iter()
            .filter(|call| call.seq > seq)
            .cloned()
            .collect()
    }

    /// Call number `seq`, while it is kept.
    pub fn get(&self, seq: u64) -> Option<Arc<CallRecord>> {
        self.ring().calls.iter().find(|c| c.seq == seq).cloned()
    }

    /// The number of the last call that ended (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.ring().last_seq
    }

    /// Each call as it ends. A receiver that falls behind is told how many it missed
    /// (`RecvError::Lagged`) and can read them with [`CallLog::since`].
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<CallRecord>> {
        self.inner.live.subscribe()
    }

    fn record(&self, mut call: CallRecord) {
        let call = {
            let mut ring = self.ring();
            ring.last_seq += 1;
            call.seq = ring.last_seq;
            let call = Arc::new(call);
            if ring.calls.len() >= self.inner.capacity {
                ring.calls.pop_front();
                ring.dropped += 1;
            }
            ring.calls.push_back(call.clone());
            call
        };
        // No subscriber is no error: the ring still has it.
        let _ = self.inner.live.send(call);
    }
}

/// One call in progress: filled by the transport as attempts are made, recorded in the log
/// when it ends, or as cancelled when the caller drops the call before then.
pub(crate) struct CallTrace {
    log: CallLog,
    started_at: DateTime<Utc>,
    started: std::time::Instant,
    request: Option<RedactedRequest>,
    attempts: u32,
    waits: Vec<Duration>,
    status: Option<u16>,
    request_id: Option<RequestId>,
    response_bytes: Option<u64>,
    ended: bool,
}

impl CallTrace {
    pub(crate) fn start(log: &CallLog) -> Self {
        Self {
            log: log.clone(),
            started_at: Utc::now(),
            started: std::time::Instant::now(),
            request: None,
            attempts: 0,
            waits: Vec::new(),
            status: None,
            request_id: None,
            response_bytes: None,
            ended: false,
        }
    }

    /// An attempt is being sent (the first one also describes the request).
    pub(crate) fn attempt(&mut self, request: &reqwest::Request) {
        self.attempts += 1;
        if self.request.is_none() {
            self.request = Some(RedactedRequest::of(request));
        }
        // A new attempt's answer replaces the last one's.
        self.status = None;
        self.request_id = None;
        self.response_bytes = None;
    }

    /// An attempt was answered (whatever the status).
    pub(crate) fn answered(&mut self, status: u16, headers: &HeaderMap) {
        self.status = Some(status);
        if let Some(id) = request_id(headers) {
            self.request_id = Some(id);
        }
    }

    pub(crate) fn body_read(&mut self, bytes: usize) {
        self.response_bytes = Some(bytes as u64);
    }

    /// The service asked for this wait before the next attempt.
    pub(crate) fn waited(&mut self, wait: Duration) {
        self.waits.push(wait);
    }

    /// The call ended with `result`: recorded now.
    pub(crate) fn end<T>(mut self, result: &crate::Result<T>) {
        let outcome = match (self.status, result) {
            (Some(status), _) => CallOutcome::Answered { status },
            (None, Err(error)) => CallOutcome::Failed { kind: error.kind() },
            // Success without a status cannot happen; say what is known.
            (None, Ok(_)) => CallOutcome::Failed {
                kind: crate::ErrorKind::Server,
            },
        };
        self.finish(outcome);
    }

    fn finish(&mut self, outcome: CallOutcome) {
        self.ended = true;
        // A request that could not even be built was never sent: nothing to log.
        let Some(request) = self.request.take() else {
            return;
        };
        self.log.record(CallRecord {
            seq: 0,
            started_at: self.started_at,
            method: request.method,
            path: request.path,
            query: request.query,
            outcome,
            duration: self.started.elapsed(),
            attempts: self.attempts,
            waits: std::mem::take(&mut self.waits),
            request_id: self.request_id.take(),
            response_bytes: self.response_bytes,
            curl: request.curl,
        });
    }
}

impl Drop for CallTrace {
    fn drop(&mut self) {
        if !self.ended {
            self.finish(CallOutcome::Cancelled);
        }
    }
}

/// The service's request id from the first of [`REQUEST_ID_HEADERS`] present, if its value is
/// printable.
pub fn request_id(headers: &HeaderMap) -> Option<RequestId> {
    REQUEST_ID_HEADERS.iter().find_map(|name| {
        let value = headers.get(*name)?.to_str().ok()?.trim();
        let printable = !value.is_empty() && value.chars().all(|c| c.is_ascii_graphic());
        printable.then(|| RequestId {
            header: (*name).to_owned(),
            value: value.chars().take(MAX_REQUEST_ID).collect(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> reqwest::Request {
        reqwest::Client::new().get(url).build().unwrap()
    }

    #[test]
    fn the_log_is_a_bounded_ring_that_counts_what_it_dropped() {
        let log = CallLog::new(3);
        let mut live = log.subscribe();
        for n in 0..5 {
            let mut trace = CallTrace::start(&log);
            let req = get(&format!("http://h/p{n}"));
            trace.attempt(&req);
            let mut headers = HeaderMap::new();
            headers.insert("x-request-id", format!("rid-{n}").parse().unwrap());
            trace.answered(200, &headers);
            trace.body_read(10);
            trace.end::<()>(&Ok(()));
        }
        let snapshot = log.snapshot();
        assert_eq!(snapshot.dropped, 2);
        let paths: Vec<_> = snapshot.calls.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["/p2", "/p3", "/p4"]);
        assert_eq!(log.since(3).len(), 2);
        assert_eq!(
            log.get(5).unwrap().request_id.as_ref().unwrap().value,
            "rid-4"
        );
        assert!(log.get(1).is_none());
        assert_eq!(live.try_recv().unwrap().seq, 1);
        let line = log.get(5).unwrap().to_string();
        assert!(line.starts_with("GET /p4 200 "), "{line}");
        assert!(
            line.ends_with("request id x-request-id=rid-4, 10 bytes"),
            "{line}"
        );
    }

    #[test]
    fn a_call_dropped_before_it_ended_is_recorded_as_cancelled() {
        let log = CallLog::default();
        let mut trace = CallTrace::start(&log);
        trace.attempt(&get("http://h/slow"));
        drop(trace);
        let call = log.get(1).unwrap();
        assert_eq!(call.outcome, CallOutcome::Cancelled);
        assert_eq!(call.attempts, 1);
    }
}

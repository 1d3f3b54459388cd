//! The one place requests leave the process: timeouts, retries, status mapping, logging.
//!
//! Retrying is decided by the caller, who knows whether the call is safe to repeat: GET and token
//! issuance are, a POST that creates a product or a PATCH that answers a transaction are not (a
//! timeout does not say whether the server acted). Requests are rebuilt for each attempt from a
//! closure, so a secret that goes into a header or form is exposed only while building it.
//! Log lines name the method, path, status and time; never a header, a query value or a body.
//!
//! A service that says when to come back (429 or 503 with `Retry-After`) is waited for on a
//! read, within a budget, and the wait is published for progress lines; a write is never sent
//! twice. Redirects stay within the origin, so the bearer token never follows one elsewhere.

use crate::call_log::{CallLog, CallTrace};
use crate::config::{ConnectionConfig, RetryPolicy};
use crate::error::{ClientError, Result};
use bytes::Bytes;
use partner_api::read::Document;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::time::{Duration, Instant};
use url::Url;

/// Whether a call may be sent again after a failure that leaves its outcome unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeat {
    Safe,
    Once,
}

/// Whether an unparseable body may be kept in an error (not for the token endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyPolicy {
    Keep,
    Withhold,
}

/// A successful response, read whole (list pages are at most 50 items).
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// `METHOD /path` of the call, for errors that must say which answer could not be read.
    pub call: String,
}

impl RawResponse {
    pub fn content_type(&self) -> &str {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type")
    }

    /// The body as JSON of any shape; a body that is not JSON names the call, the status, the
    /// content type and (unless withheld) its first bytes.
    pub fn value(&self, policy: BodyPolicy) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.body).map_err(|e| {
            ClientError::not_json(
                self.status,
                &self.call,
                self.content_type(),
                e,
                &self.body,
                policy == BodyPolicy::Keep,
            )
        })
    }

    pub fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        policy: BodyPolicy,
    ) -> Result<T> {
        let value = self.value(policy)?;
        serde_json::from_value(value).map_err(|e| self.unreadable(what, e, policy))
    }

    /// One resource: the JSON object as sent, with the view `T` read from it.
    pub fn document<T: serde::de::DeserializeOwned>(&self, what: &str) -> Result<Document<T>> {
        Document::read(self.value(BodyPolicy::Keep)?)
            .map_err(|e| self.unreadable(what, e, BodyPolicy::Keep))
    }

    /// A JSON array of resources, each kept as sent with its view.
    pub fn documents<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
    ) -> Result<Vec<Document<T>>> {
        Document::read_all(self.value(BodyPolicy::Keep)?)
            .map_err(|e| self.unreadable(what, e, BodyPolicy::Keep))
    }

    fn unreadable(
        &self,
        what: &str,
        error: impl std::fmt::Display,
        policy: BodyPolicy,
    ) -> ClientError {
        ClientError::unparseable(
            self.status,
            &self.call,
            what,
            error,
            &self.body,
            policy == BodyPolicy::Keep,
        )
    }
}

/// A wait before a call is sent again, as a progress line can tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// `METHOD /path` of the call that waits.
    pub call: String,
    pub wait: Duration,
    /// Why: "rate limited" (429) or "service unavailable" (503), as the service said.
    pub reason: &'static str,
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "waiting {} s: {}",
            self.wait.as_secs_f64().ceil() as u64,
            self.reason
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    base_url: Url,
    retry: RetryPolicy,
    waiting: std::sync::Arc<tokio::sync::watch::Sender<Option<Waiting>>>,
    calls: CallLog,
}

/// Redirects are followed only within the origin the call went to: a token must never follow
/// a redirect to another host (reqwest drops `Authorization` there, but the call would then
/// fail in a stranger's words). A redirect elsewhere stops, and its 3xx is reported.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| {
            first.scheme() == attempt.url().scheme()
                && first.host_str() == attempt.url().host_str()
                && first.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if !same_origin || attempt.previous().len() >= 5 {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

impl Transport {
    pub fn new(config: &ConnectionConfig) -> Result<Self> {
        let builder = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("partner-client/", env!("CARGO_PKG_VERSION")))
            .redirect(same_origin_redirects());
        let http = crate::network::configure(builder, &config.network)?
            .build()
            .map_err(ClientError::from_transport)?;
        Ok(Self {
            http,
            base_url: config.base_url.clone(),
            retry: config.retry,
            waiting: std::sync::Arc::new(tokio::sync::watch::channel(None).0),
            calls: CallLog::default(),
        })
    }

    /// The wait in progress, if any (`None` once the call is sent again).
    pub fn waiting(&self) -> tokio::sync::watch::Receiver<Option<Waiting>> {
        self.waiting.subscribe()
    }

    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// The calls made through this transport and its clones.
    pub fn calls(&self) -> &CallLog {
        &self.calls
    }

    /// `{base_url}/{segments...}`, each segment percent-encoded, so an id can never change the path.
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base_url.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// Sends the call, retrying and waiting as `repeat` allows; the call is recorded in the
    /// call log when it ends (or as cancelled if the caller stops waiting).
    pub async fn send(
        &self,
        repeat: Repeat,
        body_policy: BodyPolicy,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
    ) -> Result<RawResponse> {
        let mut trace = CallTrace::start(&self.calls);
        let result = self
            .send_traced(repeat, body_policy, build, &mut trace)
            .await;
        trace.end(&result);
        result
    }

    async fn send_traced(
        &self,
        repeat: Repeat,
        body_policy: BodyPolicy,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
        trace: &mut CallTrace,
    ) -> Result<RawResponse> {
        let attempts = match repeat {
            Repeat::Safe => self.retry.max_attempts.max(1),
            Repeat::Once => 1,
        };
        let mut attempt = 1;
        // Waits the service asked for (429 or 503 with `Retry-After`): counted apart from the
        // transient retries, bounded in number and in time.
        let mut told_waits = 0;
        let mut told_waited = Duration::ZERO;
        loop {
            let outcome = self.send_once(build, body_policy, attempt, trace).await;
            match outcome {
                Err(failure) if repeat == Repeat::Safe && failure.told_wait.is_some() => {
                    let wait = failure.told_wait.unwrap_or_default();
                    // `Retry-After` is the service's number: a huge one must not overflow.
                    let waited = told_waited.checked_add(wait);
                    let Some(waited) = waited.filter(|w| *w <= self.retry.max_told_wait) else {
                        return Err(failure.error);
                    };
                    if told_waits >= self.retry.max_told_waits {
                        return Err(failure.error);
                    }
                    told_waits += 1;
                    told_waited = waited;
                    let waiting = Waiting {
                        call: failure.call,
                        wait,
                        reason: if failure.error.kind() == crate::ErrorKind::RateLimited {
                            "rate limited"
                        } else {
                            "service unavailable"
                        },
                    };
                    tracing::info!(call = %waiting.call, wait_ms = wait.as_millis() as u64, "{waiting}");
                    self.waiting.send_replace(Some(waiting));
                    trace.waited(wait);
                    tokio::time::sleep(wait).await;
                    self.waiting.send_replace(None);
                }
                Err(failure) if attempt < attempts && failure.error.is_transient() => {
                    let wait = self.retry.backoff(attempt + 1);
                    tracing::debug!(attempt, wait_ms = wait.as_millis() as u64, kind = ?failure.error.kind(), "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(failure) => return Err(failure.error),
                Ok(response) => return Ok(response),
            }
        }
    }

    async fn send_once(
        &self,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
        body_policy: BodyPolicy,
        attempt: u32,
        trace: &mut CallTrace,
    ) -> std::result::Result<RawResponse, Failure> {
        let request = build(&self.http)
            .build()
            .map_err(|e| Failure::plain(ClientError::from_transport(e)))?;
        trace.attempt(&request);
        let method = request.method().clone();
        let path = request.url().path().to_string();
        let call = format!("{method} {path}");
        let started = Instant::now();
        let response = match self.http.execute(request).await {
            Ok(response) => response,
            Err(error) => {
                tracing::debug!(%method, %path, attempt, error = %error, "request failed");
                return Err(Failure::plain(ClientError::from_transport(error)));
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        trace.answered(status, &headers);
        let body = response
            .bytes()
            .await
            .map_err(|e| Failure::plain(ClientError::from_transport(e)))?;
        trace.body_read(body.len());
        tracing::debug!(
            %method,
            %path,
            status,
            attempt,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "request"
        );
        if (200..300).contains(&status) {
            Ok(RawResponse {
                status,
                headers,
                body,
                call,
            })
        } else if (300..400).contains(&status) {
            // A redirect the policy did not follow: to another origin, or too many.
            let location = headers
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| Url::parse(v).ok())
                .and_then(|u| u.host_str().map(str::to_owned))
                .unwrap_or_else(|| "another address".into());
            Err(Failure::plain(ClientError::Server {
                status,
                message: format!(
                    "{call} was redirected to {location}; not followed, so the token does not leave this service"
                ),
                raw_body: None,
            }))
        } else {
            let retry_after = retry_after(&headers, std::time::SystemTime::now());
            let error = ClientError::from_status(
                status,
                &body,
                retry_after,
                body_policy == BodyPolicy::Keep,
            );
            let told_wait = retry_after.filter(|_| matches!(status, 429 | 503));
            Err(Failure {
                error,
                told_wait,
                call,
            })
        }
    }
}

/// A failed attempt, with the wait the service asked for before another.
struct Failure {
    error: ClientError,
    told_wait: Option<Duration>,
    call: String,
}

impl Failure {
    fn plain(error: ClientError) -> Self {
        Self {
            error,
            told_wait: None,
            call: String::new(),
        }
    }
}

/// `Retry-After` (RFC 9110): a number of seconds, or an HTTP date (a date in the past is no
/// wait).
fn retry_after(headers: &HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = std::time::SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(u64::try_from(at.timestamp()).ok()?))?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_api::Secret;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A socket that accepts, counts and then does `answer` with each connection: a broken
    /// network, not a stand-in for the service.
    async fn counting_socket(answer: Option<&'static [u8]>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    match answer {
                        Some(reply) => {
                            let _ = socket.write_all(reply).await;
                            let _ = socket.shutdown().await;
                        }
                        None => tokio::time::sleep(Duration::from_secs(30)).await,
                    }
                });
            }
        });
        (url, accepted)
    }

    fn transport(url: &str) -> Transport {
        let mut config = ConnectionConfig::new(url, "c", Secret::new("s")).unwrap();
        config.request_timeout = Duration::from_millis(300);
        config.retry.initial_backoff = Duration::from_millis(10);
        Transport::new(&config).unwrap()
    }

    #[tokio::test]
    async fn timeouts_are_retried_only_when_the_call_is_safe_to_repeat() {
        let (url, accepted) = counting_socket(None).await;
        let transport = transport(&url);
        let target = transport.url(&["partner", "v2", "products"]);
        let err = transport
            .send(Repeat::Safe, BodyPolicy::Keep, &|http| {
                http.get(target.clone())
            })
            .await
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Timeout);
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            3,
            "three attempts for a GET"
        );

        accepted.store(0, Ordering::SeqCst);
        let err = transport
            .send(Repeat::Once, BodyPolicy::Keep, &|http| {
                http.post(target.clone()).body("{}")
            })
            .await
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Timeout);
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one attempt for a POST");
    }

    #[test]
    fn retry_after_in_seconds_or_as_an_http_date() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(7)));
        let later = chrono::DateTime::from_timestamp(1_795_000_030, 0).unwrap();
        let http_date = later.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        headers.insert(RETRY_AFTER, http_date.parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        let past = chrono::DateTime::from_timestamp(1_794_000_000, 0).unwrap();
        let past = past.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        headers.insert(RETRY_AFTER, past.parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::ZERO));
        headers.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&headers, now), None);
    }

    #[tokio::test]
    async fn a_redirect_to_another_host_is_not_followed() {
        let (url, accepted) = counting_socket(Some(
            b"HTTP/1.1 302 Found\r\nlocation: http://elsewhere.invalid/partner/v2/products\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ))
        .await;
        let transport = transport(&url);
        let target = transport.url(&["partner", "v2", "products"]);
        let err = transport
            .send(Repeat::Safe, BodyPolicy::Keep, &|http| {
                http.get(target.clone()).bearer_auth("t")
            })
            .await
            .unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("redirected to elsewhere.invalid; not followed"),
            "{message}"
        );
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "asked once, never elsewhere"
        );
    }

    #[tokio::test]
    async fn a_success_that_is_not_json_names_the_call() {
        let (url, _) = counting_socket(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 27\r\nconnection: close\r\n\r\n<html>Sign in first</html>\n",
        ))
        .await;
        let transport = transport(&url);
        let target = transport.url(&["partner", "v2", "products"]);
        let response = transport
            .send(Repeat::Safe, BodyPolicy::Keep, &|http| {
                http.get(target.clone())
            })
            .await
            .unwrap();
        let err = response
            .documents::<partner_api::read::ProductView>("products")
            .unwrap_err();
        let message = err.to_string();
        for part in [
            "GET /partner/v2/products",
            "(200)",
            "text/html",
            "Sign in first",
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_network_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let transport = transport(&url);
        let target = transport.url(&["x"]);
        let err = transport
            .send(Repeat::Safe, BodyPolicy::Keep, &|http| {
                http.get(target.clone())
            })
            .await
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Network);
        assert!(err.to_string().contains("cannot reach"), "{err}");
    }

    #[tokio::test]
    async fn an_unparseable_error_keeps_its_raw_body() {
        let (url, accepted) = counting_socket(Some(
            b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 16\r\nconnection: close\r\n\r\n<html>oops</html",
        ))
        .await;
        let transport = transport(&url);
        let target = transport.url(&["x"]);
        let err = transport
            .send(Repeat::Safe, BodyPolicy::Keep, &|http| {
                http.get(target.clone())
            })
            .await
            .unwrap_err();
        match &err {
            ClientError::Server {
                status, raw_body, ..
            } => {
                assert_eq!(*status, 502);
                assert_eq!(raw_body.as_deref(), Some("<html>oops</html"));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            3,
            "a 502 is retried for a GET"
        );
    }
}

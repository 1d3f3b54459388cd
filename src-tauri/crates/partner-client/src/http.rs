//! The one place requests leave the process: timeouts, retries, status mapping, logging.
//!
//! Retrying is decided by the caller, who knows whether the call is safe to repeat: GET and token
//! issuance are, a POST that creates a product or a PATCH that answers a transaction are not (a
//! timeout does not say whether the server acted). Requests are rebuilt for each attempt from a
//! closure, so a secret that goes into a header or form is exposed only while building it.
//! Log lines name the method, path, status and time; never a header, a query value or a body.

use crate::config::{ConnectionConfig, RetryPolicy};
use crate::error::{ClientError, Result};
use bytes::Bytes;
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
}

impl RawResponse {
    pub fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        policy: BodyPolicy,
    ) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| {
            ClientError::unparseable(self.status, what, e, &self.body, policy == BodyPolicy::Keep)
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    base_url: Url,
    retry: RetryPolicy,
}

impl Transport {
    pub fn new(config: &ConnectionConfig) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("partner-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(ClientError::from_transport)?;
        Ok(Self {
            http,
            base_url: config.base_url.clone(),
            retry: config.retry,
        })
    }

    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// `{base_url}/{segments...}`, each segment percent-encoded, so an id can never change the path.
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base_url.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    pub async fn send(
        &self,
        repeat: Repeat,
        body_policy: BodyPolicy,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
    ) -> Result<RawResponse> {
        let attempts = match repeat {
            Repeat::Safe => self.retry.max_attempts.max(1),
            Repeat::Once => 1,
        };
        let mut attempt = 1;
        loop {
            let outcome = self.send_once(build, body_policy, attempt).await;
            match outcome {
                Err(error) if attempt < attempts && error.is_transient() => {
                    let wait = match &error {
                        ClientError::RateLimited {
                            retry_after: Some(after),
                            ..
                        } => (*after).min(self.retry.max_backoff),
                        _ => self.retry.backoff(attempt + 1),
                    };
                    tracing::debug!(attempt, wait_ms = wait.as_millis() as u64, kind = ?error.kind(), "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn send_once(
        &self,
        build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync),
        body_policy: BodyPolicy,
        attempt: u32,
    ) -> Result<RawResponse> {
        let request = build(&self.http)
            .build()
            .map_err(ClientError::from_transport)?;
        let method = request.method().clone();
        let path = request.url().path().to_string();
        let started = Instant::now();
        let response = match self.http.execute(request).await {
            Ok(response) => response,
            Err(error) => {
                tracing::debug!(%method, %path, attempt, error = %error, "request failed");
                return Err(ClientError::from_transport(error));
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(ClientError::from_transport)?;
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
            })
        } else {
            Err(ClientError::from_status(
                status,
                &body,
                retry_after(&headers),
                body_policy == BodyPolicy::Keep,
            ))
        }
    }
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
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

//! A webhook receiver for tests: a real HTTP server on 127.0.0.1 port 0 that answers each request
//! as a script says (a status, or hanging) and hands every request it got (method, path,
//! headers, the raw body bytes, when it arrived) to the test through a channel.
//!
//! Shaped after svix-server's test receiver: the test owns the receiving end, so it can wait for
//! the n-th request with a deadline instead of sleeping, and sees the exact bytes that arrived
//! (a signature is checked over those, never over re-serialised JSON).

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Where a 3xx reply points (on the receiver itself), so a client that follows redirects shows
/// up as a second request with this path.
pub const REDIRECT_PATH: &str = "/redirected";

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Answer with this status (a 3xx also carries `Location: /redirected`).
    Status(u16),
    /// Never answer (until the receiver is dropped).
    Hang,
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    pub method: Method,
    /// Path and query.
    pub path: String,
    pub headers: HeaderMap,
    /// The raw body bytes, unparsed.
    pub body: Bytes,
    /// When the receiver got it (real time).
    pub received_at: Instant,
}

impl ReceivedRequest {
    /// A header's value as text, if present and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A running receiver. Dropping it stops the server and releases hanging requests.
#[derive(Debug)]
pub struct TestReceiver {
    addr: SocketAddr,
    requests: mpsc::UnboundedReceiver<ReceivedRequest>,
    stop: CancellationToken,
}

#[derive(Debug)]
struct ReceiverState {
    script: Vec<Reply>,
    answered: AtomicUsize,
    requests: mpsc::UnboundedSender<ReceivedRequest>,
    stop: CancellationToken,
}

impl ReceiverState {
    /// The script's reply for the next request; the last one repeats once the script runs out.
    fn next_reply(&self) -> Reply {
        let n = self.answered.fetch_add(1, Ordering::SeqCst);
        self.script
            .get(n)
            .or(self.script.last())
            .copied()
            .unwrap_or(Reply::Status(200))
    }
}

impl TestReceiver {
    /// Binds 127.0.0.1 port 0 and answers the requests in turn with `script` (the last reply
    /// repeats; an empty script answers 200). A status that is not a valid HTTP status is an
    /// `InvalidInput` error.
    pub async fn start(script: impl IntoIterator<Item = Reply>) -> io::Result<Self> {
        let script: Vec<Reply> = script.into_iter().collect();
        for reply in &script {
            if let Reply::Status(code) = reply {
                StatusCode::from_u16(*code).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{code} is not an HTTP status"),
                    )
                })?;
            }
        }
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (sender, requests) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let state = Arc::new(ReceiverState {
            script,
            answered: AtomicUsize::new(0),
            requests: sender,
            stop: stop.clone(),
        });
        let app = Router::new().fallback(receive).with_state(state);
        let shutdown = stop.clone().cancelled_owned();
        tokio::spawn(async move {
            // An accept error ends the receiver; the test then sees no requests and fails on its
            // own deadline.
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await;
        });
        Ok(Self {
            addr,
            requests,
            stop,
        })
    }

    /// Answers every request with `status`.
    pub async fn always(status: u16) -> io::Result<Self> {
        Self::start([Reply::Status(status)]).await
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/hook`
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The next request, or `None` if none arrives within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<ReceivedRequest> {
        tokio::time::timeout(within, self.requests.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next `n` requests, or as many as arrived within `within` in all.
    pub async fn take(&mut self, n: usize, within: Duration) -> Vec<ReceivedRequest> {
        let deadline = tokio::time::Instant::now() + within;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            match tokio::time::timeout_at(deadline, self.requests.recv()).await {
                Ok(Some(request)) => got.push(request),
                _ => break,
            }
        }
        got
    }

    /// Requests that already arrived and were not taken yet.
    pub fn drain(&mut self) -> Vec<ReceivedRequest> {
        let mut got = Vec::new();
        while let Ok(request) = self.requests.try_recv() {
            got.push(request);
        }
        got
    }
}

impl Drop for TestReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn receive(State(state): State<Arc<ReceiverState>>, request: Request) -> Response {
    let received_at = Instant::now();
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(_) => return StatusCode::BAD_REQUEST.into_response(),
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    // The test may have stopped listening; the reply is still given.
    let _ = state.requests.send(ReceivedRequest {
        method: parts.method,
        path,
        headers: parts.headers,
        body,
        received_at,
    });
    match state.next_reply() {
        Reply::Hang => {
            state.stop.cancelled().await;
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
        Reply::Status(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            if status.is_redirection() {
                (
                    status,
                    [(
                        http::header::LOCATION,
                        HeaderValue::from_static(REDIRECT_PATH),
                    )],
                )
                    .into_response()
            } else {
                status.into_response()
            }
        }
    }
}

/// A URL on 127.0.0.1 where nothing listens: a port is bound, then released. (Another process
/// could take it again in between; on a test machine that is rare enough.)
pub async fn refused_url() -> io::Result<String> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{addr}/hook"))
}

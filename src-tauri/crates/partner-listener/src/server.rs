//! The receiving server: one `POST` path, every request recorded, 2xx only after commit.
//!
//! Built on hyper directly rather than through a router because the listener needs what a router
//! hides: a header-read timeout against slow-loris clients, a connection cap, the raw body bytes
//! with a limit and a deadline, and requests on *any* path recorded (the tunnel check must see a
//! request that arrived on the wrong path). `serve(listener, shutdown)` takes a bound socket so
//! tests and the app start it on port 0.
//!
//! After a capture is committed (and before it is answered), a valid one that is neither a
//! replay nor already forwarded by a listener is passed on in a task of its own to the URL of
//! the first forward rule that matches it, or else to `forward_to` ([`crate::forward`]); the
//! answer or error is recorded as an [`OutboundRecord`](crate::OutboundRecord) and sent on
//! the live feed.
//!
//! Junk past a rate is answered but counted rather than stored ([`crate::flood`]), and
//! connections that hold a slot without sending are closed when a new client needs it
//! ([`crate::connections`]).

use crate::capture::{header_value, Capture, Header, OutboundKind, ResponseRecord};
use crate::connections::{Connection, Connections, LOOK_FOR_IDLE_EVERY, MIN_IDLE_TO_CLOSE};
use crate::flood::{Fate, FloodSummary, JunkFlood, DEFAULT_JUNK_RATE};
use crate::forward::{ForwardRule, ForwardRules};
use crate::keys::{KeySource, SubscriptionKeys};
use crate::live::{LiveEvent, LIVE_CAPACITY};
use crate::outbound::{self, ReplayOutcome, REPLAY_HEADER};
use crate::store::Store;
use crate::test_mode::TestMode;
use crate::verdict::{self, Judgement, NotificationFields, Verdict};
use crate::{Error, Result};
use bytes::Bytes;
use chrono::Utc;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use partner_api::signature::{SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, oneshot, OwnedSemaphorePermit, Semaphore};

/// The default listening address: loopback, a fixed port.
pub const DEFAULT_ADDR: &str = "127.0.0.1:7070";
pub const DEFAULT_PATH: &str = "/webhooks";
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// The header a tunnel check's probe carries (its nonce).
pub const PROBE_HEADER: &str = "Svc-Tunnel-Check";
/// The header a receiver check's probes carry when the receiver is this listener (the nonce
/// of [`Listener::expect_receiver_check`]): they are answered as any notification is, but
/// neither kept, shown nor forwarded, since they are forged on purpose.
pub const RECEIVER_CHECK_HEADER: &str = "Svc-Receiver-Check";

/// How the listener receives.
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// The path notifications are posted to.
    pub path: String,
    /// Bodies larger than this get 413 and are recorded without the body.
    pub body_limit: usize,
    /// A client must send its whole request head within this time.
    pub header_read_timeout: Duration,
    /// ... and its whole body within this time after the head.
    pub body_read_timeout: Duration,
    /// Connections served at once. A client arriving at the cap takes the place of the
    /// connection idle the longest, which is closed; if every connection is handling a
    /// request, it waits (and further clients wait in the accept queue).
    pub max_connections: usize,
    /// Valid notifications are also sent, unchanged, here: a catch-all consulted after
    /// `forward_rules` (see [`crate::forward`]).
    pub forward_to: Option<url::Url>,
    /// Where valid notifications are sent, unchanged, by resource type and event type; the
    /// first rule that matches wins (see [`crate::forward`]).
    pub forward_rules: Vec<ForwardRule>,
    pub test_mode: TestMode,
    /// Junk requests ([`crate::RetentionClass::Junk`]) stored in full per second; past it they
    /// are answered and counted, one in a hundred kept as a sample ([`crate::flood`]). `None`:
    /// every request is stored.
    pub junk_rate: Option<u32>,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.into(),
            body_limit: DEFAULT_BODY_LIMIT,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 512,
            forward_to: None,
            forward_rules: Vec::new(),
            test_mode: TestMode::default(),
            junk_rate: Some(DEFAULT_JUNK_RATE),
        }
    }
}

/// Normalises a configured path: leading slash, no trailing slash (except `/`).
pub fn normalise_path(path: &str) -> Result<String> {
    let trimmed = path.trim();
    if trimmed.contains(['?', '#', ' ']) {
        return Err(Error::InvalidInput(
            "the listening path may not contain '?', '#' or spaces".into(),
        ));
    }
    let with_slash = if trimmed.starts_with('/') {
        trimmed.to_string()
    } else {
        format!("/{trimmed}")
    };
    let normalised = with_slash.trim_end_matches('/');
    Ok(if normalised.is_empty() {
        "/".into()
    } else {
        normalised.into()
    })
}

/// The listener: its store, its keys and its live feed. Clones share everything.
#[derive(Debug, Clone)]
pub struct Listener {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: ListenerConfig,
    store: Store,
    keys: Arc<dyn KeySource>,
    live: broadcast::Sender<LiveEvent>,
    test_mode: RwLock<TestMode>,
    forward_to: RwLock<Option<url::Url>>,
    forward_rules: RwLock<ForwardRules>,
    /// Replays sent to this listener that have not arrived yet, by the nonce they carry in
    /// [`outbound::REPLAY_ID_HEADER`]: the capture's id is sent back when it is stored.
    replays_in_flight: Mutex<HashMap<String, oneshot::Sender<i64>>>,
    /// The addresses `serve` is accepting on, to tell whether a replay's target is this
    /// listener.
    serving_on: Mutex<Vec<SocketAddr>>,
    /// Ephemeral keys of tunnel-check probes in flight, by nonce.
    probes: Mutex<HashMap<String, Secret>>,
    /// Nonces of receiver checks running against this listener.
    receiver_checks: Mutex<std::collections::HashSet<String>>,
    /// Junk past the rate, counted ([`crate::flood`]).
    flood: JunkFlood,
    http: reqwest::Client,
}

impl Listener {
    pub fn new(config: ListenerConfig, store: Store, keys: Arc<dyn KeySource>) -> Result<Self> {
        config.test_mode.validate()?;
        let mut config = config;
        config.path = normalise_path(&config.path)?;
        let forward_rules = ForwardRules::new(config.forward_rules.clone())?;
        config.forward_rules = forward_rules.rules().to_vec();
        if let Some(url) = &config.forward_to {
            outbound::parse_target(url.as_str())?;
        }
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        let flood = JunkFlood::new(config.junk_rate);
        Ok(Self {
            shared: Arc::new(Shared {
                test_mode: RwLock::new(config.test_mode.clone()),
                forward_to: RwLock::new(config.forward_to.clone()),
                forward_rules: RwLock::new(forward_rules),
                replays_in_flight: Mutex::default(),
                serving_on: Mutex::default(),
                config,
                store,
                keys,
                live,
                probes: Mutex::default(),
                receiver_checks: Mutex::default(),
                flood,
                http: outbound::http_client(),
            }),
        })
    }

    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    pub fn keys(&self) -> &Arc<dyn KeySource> {
        &self.shared.keys
    }

    pub fn config(&self) -> &ListenerConfig {
        &self.shared.config
    }

    /// How much junk was counted rather than stored since the listener was made
    /// ([`crate::flood`]).
    pub fn flood_summary(&self) -> FloodSummary {
        self.shared.flood.summary()
    }

    /// Changes the rate past which junk is counted rather than stored, from the next request
    /// on (`None`: every request stored). [`Listener::config`] keeps the rate it started with.
    pub fn set_junk_rate(&self, rate: Option<u32>) {
        self.shared.flood.set_rate(rate);
    }

    /// A receiver of every capture committed from now on (and of forward/replay outcomes).
    pub fn subscribe(&self) -> broadcast::Receiver<LiveEvent> {
        self.shared.live.subscribe()
    }

    pub fn test_mode(&self) -> TestMode {
        read(&self.shared.test_mode).clone()
    }

    pub fn set_test_mode(&self, mode: TestMode) -> Result<()> {
        mode.validate()?;
        *write(&self.shared.test_mode) = mode;
        Ok(())
    }

    pub fn forward_to(&self) -> Option<url::Url> {
        read(&self.shared.forward_to).clone()
    }

    /// Sets the catch-all forward URL, used for a valid notification no forward rule takes.
    pub fn set_forward_to(&self, url: Option<url::Url>) {
        *write(&self.shared.forward_to) = url;
    }

    /// The forward rules, in order (normalised: full resource type names, `None` for any).
    pub fn forward_rules(&self) -> Vec<ForwardRule> {
        read(&self.shared.forward_rules).rules().to_vec()
    }

    /// Replaces the forward rules; each is checked first ([`ForwardRule::normalised`]: an
    /// http(s) URL, a resource type and event type the service has), and on an error none
    /// changes. Takes effect for the next capture.
    pub fn set_forward_rules(&self, rules: Vec<ForwardRule>) -> Result<()> {
        let rules = ForwardRules::new(rules)?;
        *write(&self.shared.forward_rules) = rules;
        Ok(())
    }

    /// Where a valid notification `capture` is forwarded: the first matching rule's URL, else
    /// the catch-all `forward_to`.
    pub fn forward_target(&self, capture: &Capture) -> Option<url::Url> {
        forward_target(&self.shared, capture)
    }

    /// Registers the ephemeral key of a tunnel-check probe; dropping the guard forgets it.
    pub fn register_probe(&self, nonce: &str, key: Secret) -> ProbeGuard {
        lock(&self.shared.probes).insert(nonce.to_string(), key);
        ProbeGuard {
            listener: self.clone(),
            nonce: nonce.to_string(),
        }
    }

    /// Marks the probes of a receiver check of this listener: those that carry the returned
    /// nonce in [`RECEIVER_CHECK_HEADER`] are answered but not kept, shown or forwarded, until
    /// the guard is dropped.
    pub fn expect_receiver_check(&self) -> ReceiverCheckGuard {
        let nonce = uuid::Uuid::new_v4().to_string();
        lock(&self.shared.receiver_checks).insert(nonce.clone());
        ReceiverCheckGuard {
            listener: self.clone(),
            nonce,
        }
    }

    /// Sends capture `id` again to `target` (default: the forward URL), unchanged or with
    /// `edited_body` re-signed with the subscription's current key, and records the outcome.
    ///
    /// A replay carries `Svc-Replay: 1`, so wherever it arrives it is not taken for a delivery
    /// of the service: a listener stores it with `replay = true`, does not forward it, and does
    /// not count it as an attempt of its notification.
    ///
    /// When `target` is this listener (its port, on loopback, `localhost` or the address it
    /// serves on), the request also carries a one-time nonce in
    /// [`outbound::REPLAY_ID_HEADER`], and the outcome names the capture the replay became
    /// ([`ReplayOutcome::capture_id`]): the listener stores a request before it answers it, so
    /// the id is known by the time the answer is. Other targets get no such header (they see
    /// exactly the original headers, plus `Svc-Replay`), and `capture_id` is `None`; so is it
    /// for this listener reached through another name (a tunnel's public URL).
    pub async fn replay(
        &self,
        id: i64,
        target: Option<url::Url>,
        edited_body: Option<Vec<u8>>,
    ) -> Result<ReplayOutcome> {
        let target = target.or_else(|| self.forward_to()).ok_or_else(|| {
            Error::InvalidInput("replay needs a target URL (no forward URL is set)".into())
        })?;
        let target = outbound::parse_target(target.as_str())?;
        let capture = self.shared.store.get(id)?;
        let kind = if edited_body.is_some() {
            OutboundKind::ReplayEdited
        } else {
            OutboundKind::Replay
        };
        let (mut headers, body) =
            outbound::outbound_request(&capture, kind, edited_body, self.shared.keys.as_ref())?;
        let awaited = self.is_this_listener(&target).then(|| {
            let nonce = uuid::Uuid::new_v4().simple().to_string();
            headers.push(Header::new(outbound::REPLAY_ID_HEADER, nonce.as_str()));
            let (tx, rx) = oneshot::channel();
            lock(&self.shared.replays_in_flight).insert(nonce.clone(), tx);
            AwaitedReplay {
                shared: self.shared.clone(),
                nonce,
                arrived: rx,
            }
        });
        let record = outbound::send(&self.shared.http, id, kind, &target, headers, body).await;
        let capture_id = awaited.and_then(|mut awaited| awaited.arrived.try_recv().ok());
        let record = self.shared.store.insert_outbound(record).await?;
        let _ = self
            .shared
            .live
            .send(LiveEvent::Outbound(Arc::new(record.clone())));
        Ok(ReplayOutcome { record, capture_id })
    }

    /// Whether `target` reaches this listener's socket (see [`Listener::replay`]).
    fn is_this_listener(&self, target: &url::Url) -> bool {
        if target.scheme() != "http" {
            return false;
        }
        let Some(port) = target.port_or_known_default() else {
            return false;
        };
        let target_ip: Option<IpAddr> = match target.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) if name.eq_ignore_ascii_case("localhost") => {
                Some(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST))
            }
            _ => None,
        };
        let Some(target_ip) = target_ip else {
            return false;
        };
        lock(&self.shared.serving_on).iter().any(|serving| {
            serving.port() == port
                && (serving.ip() == target_ip
                    || serving.ip().is_unspecified()
                    || (serving.ip().is_loopback() && target_ip.is_loopback()))
        })
    }

    /// Accepts connections on `listener` until `shutdown` completes, then lets requests in flight
    /// finish (up to 5 s).
    ///
    /// The run is recorded in the store ([`crate::runs`]): its start before the first
    /// connection, its stop once the requests in flight are answered. A run whose future is
    /// dropped instead (the process ends, the task is aborted) keeps no stop, and counts as
    /// having ended at its last capture.
    ///
    /// At most `max_connections` are served at once. When a client arrives with every slot
    /// taken, the connection idle the longest is asked to close to make room (see
    /// [`crate::connections`]); if every one is handling a request, the client waits for one
    /// to finish.
    pub async fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<()> {
        self.serve_announced(listener, shutdown, || Ok(())).await
    }

    /// [`Listener::serve`], calling `ready` once the run's start is in the store and before the
    /// first connection is taken: whoever announces "listening" there (`partner listen`'s
    /// first line) is never ahead of the record a missed-notification check reads. An error
    /// from `ready` stops the listener before it serves.
    pub async fn serve_announced(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
        ready: impl FnOnce() -> std::io::Result<()>,
    ) -> Result<()> {
        let config = &self.shared.config;
        let max_connections = config
            .max_connections
            .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let slots = Arc::new(Semaphore::new(max_connections));
        let connections = Arc::new(Connections::new());
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(config.header_read_timeout)
            .keep_alive(true);
        let local = listener.local_addr().ok();
        if let Some(local) = local {
            lock(&self.shared.serving_on).push(local);
        }
        let run = match self.shared.store.record_run_start(Utc::now()).await {
            Ok(run) => Some(run),
            Err(error) => {
                // Listening matters more than the record of it; the missed-notification check
                // then knows less about this run.
                tracing::warn!(%error, "could not record the listener's start in its store");
                None
            }
        };
        if let Err(error) = ready() {
            if let Some(run) = run {
                if let Err(error) = self.shared.store.record_run_stop(run, Utc::now()).await {
                    tracing::warn!(%error, "could not record the listener's stop in its store");
                }
            }
            return Err(crate::Error::Io(error));
        }
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: back off, never crash.
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let slot = match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => match wait_for_slot(&slots, &connections, &mut shutdown).await {
                    Some(slot) => slot,
                    None => break,
                },
            };
            let _ = stream.set_nodelay(true);
            let (id, connection) = connections.open();
            let shared = self.shared.clone();
            // Written once per connection, not per request: formatting an address costs more
            // than copying its text.
            let peer: Arc<str> = peer.to_string().into();
            let service = hyper::service::service_fn({
                let connection = connection.clone();
                let connections = connections.clone();
                move |request| {
                    let shared = shared.clone();
                    let peer = peer.clone();
                    let busy = connection.busy(&connections);
                    let (connection, connections) = (connection.clone(), connections.clone());
                    async move {
                        let at = ConnectionAt {
                            connection: &connection,
                            connections: &connections,
                        };
                        let response = handle(&shared, &peer, at, request).await;
                        drop(busy);
                        Ok::<_, Infallible>(response)
                    }
                }
            });
            let serving = http.serve_connection(TokioIo::new(stream), service);
            let connections = connections.clone();
            tokio::spawn(async move {
                tokio::pin!(serving);
                tokio::select! {
                    _ = serving.as_mut() => {}
                    () = connection.close_requested() => {
                        // With nothing in hand for a while (idle, or part-way through a head
                        // for that long), dropped at once: a graceful shutdown would wait for
                        // the rest of the head (see `connections`). Else it finishes the
                        // request in hand (and its answer), then closes.
                        if !connection.idle_for(&connections, MIN_IDLE_TO_CLOSE) {
                            serving.as_mut().graceful_shutdown();
                            let _ = serving.await;
                        }
                    }
                }
                connections.forget(id);
                drop(slot);
            });
        }
        drop(listener);
        if let Some(local) = local {
            lock(&self.shared.serving_on).retain(|serving| *serving != local);
        }
        connections.close_all();
        let all_slots = u32::try_from(max_connections).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(Duration::from_secs(5), slots.acquire_many(all_slots)).await;
        if let Some(run) = run {
            if let Err(error) = self.shared.store.record_run_stop(run, Utc::now()).await {
                tracing::warn!(%error, "could not record the listener's stop in its store");
            }
        }
        Ok(())
    }
}

/// Waits for a connection slot to free, meanwhile asking the connection idle the longest to
/// close for it (see [`crate::connections`]), and looking again every [`LOOK_FOR_IDLE_EVERY`]
/// while none has been idle long enough. `None` when `shutdown` completes first.
async fn wait_for_slot(
    slots: &Arc<Semaphore>,
    connections: &Connections,
    shutdown: &mut Pin<&mut impl Future<Output = ()>>,
) -> Option<OwnedSemaphorePermit> {
    let freed = slots.clone().acquire_owned();
    tokio::pin!(freed);
    connections.close_longest_idle(MIN_IDLE_TO_CLOSE);
    loop {
        tokio::select! {
            slot = &mut freed => return slot.ok(),
            () = tokio::time::sleep(LOOK_FOR_IDLE_EVERY) => {
                connections.close_longest_idle(MIN_IDLE_TO_CLOSE);
            }
            () = shutdown.as_mut() => return None,
        }
    }
}

/// A receiver check of this listener under way; its probes are told apart by [`Self::nonce`].
#[derive(Debug)]
pub struct ReceiverCheckGuard {
    listener: Listener,
    nonce: String,
}

impl ReceiverCheckGuard {
    /// The value of [`RECEIVER_CHECK_HEADER`] the check's probes carry.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }
}

impl Drop for ReceiverCheckGuard {
    fn drop(&mut self) {
        lock(&self.listener.shared.receiver_checks).remove(&self.nonce);
    }
}

/// Forgets a probe's key when the check is over.
#[derive(Debug)]
pub struct ProbeGuard {
    listener: Listener,
    nonce: String,
}

impl Drop for ProbeGuard {
    fn drop(&mut self) {
        lock(&self.listener.shared.probes).remove(&self.nonce);
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

enum BodyRead {
    Complete(Vec<u8>),
    /// Over the limit; this many bytes were seen (a lower bound if the client stopped early).
    TooLarge(u64),
    /// The client stopped or stalled after this many bytes.
    Incomplete(u64),
}

/// The connection a request arrived on, told as its body moves (see [`crate::connections`]).
#[derive(Clone, Copy)]
struct ConnectionAt<'a> {
    connection: &'a Connection,
    connections: &'a Connections,
}

/// Reads the body up to `limit`. Past it, keeps reading (and discarding) up to `drain_limit` so
/// an ordinary client gets to read its 413; beyond that the connection is simply closed. Gives
/// up, as incomplete, when the connection is chosen for a body that stalled.
async fn read_body(
    body: Incoming,
    limit: usize,
    drain_limit: u64,
    at: ConnectionAt<'_>,
) -> BodyRead {
    at.connection.body_moved(at.connections, true);
    let read = tokio::select! {
        read = read_body_moving(body, limit, drain_limit, at) => read,
        () = at.connection.body_abandoned() => BodyRead::Incomplete(0),
    };
    at.connection.body_moved(at.connections, false);
    read
}

async fn read_body_moving(
    mut body: Incoming,
    limit: usize,
    drain_limit: u64,
    at: ConnectionAt<'_>,
) -> BodyRead {
    let mut kept: Vec<u8> = Vec::new();
    let mut seen: u64 = 0;
    let mut over = false;
    while let Some(frame) = body.frame().await {
        at.connection.body_moved(at.connections, true);
        let Ok(frame) = frame else {
            return if over {
                BodyRead::TooLarge(seen)
            } else {
                BodyRead::Incomplete(seen)
            };
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len() as u64;
        if !over && kept.len() + data.len() > limit {
            over = true;
            kept = Vec::new();
        }
        if over {
            if seen > drain_limit {
                return BodyRead::TooLarge(seen);
            }
        } else {
            kept.extend_from_slice(&data);
        }
    }
    if over {
        BodyRead::TooLarge(seen)
    } else {
        BodyRead::Complete(kept)
    }
}

fn text_response(status: u16, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

async fn handle(
    shared: &Shared,
    peer: &str,
    at: ConnectionAt<'_>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let received_at = Utc::now();
    let (parts, body) = request.into_parts();
    let headers: Vec<Header> = parts
        .headers
        .iter()
        .map(|(name, value)| Header::new(name.as_str(), String::from_utf8_lossy(value.as_bytes())))
        .collect();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let limit = shared.config.body_limit;
    let announced: Option<u64> =
        header_value(&headers, "content-length").and_then(|v| v.trim().parse().ok());
    let drain_limit = (limit as u64).saturating_mul(8);
    let read = if announced.is_some_and(|n| n > drain_limit) {
        BodyRead::TooLarge(announced.unwrap_or_default())
    } else if announced.is_some_and(|n| n > limit as u64) {
        match tokio::time::timeout(
            shared.config.body_read_timeout,
            read_body(body, limit, drain_limit, at),
        )
        .await
        {
            Ok(BodyRead::Complete(_)) | Ok(BodyRead::TooLarge(_)) | Err(_) => {
                BodyRead::TooLarge(announced.unwrap_or_default())
            }
            Ok(incomplete) => incomplete,
        }
    } else {
        tokio::time::timeout(
            shared.config.body_read_timeout,
            read_body(body, limit, drain_limit, at),
        )
        .await
        .unwrap_or(BodyRead::Incomplete(0))
    };

    let on_path =
        parts.uri.path().trim_end_matches('/') == shared.config.path.trim_end_matches('/');
    let is_post = parts.method == hyper::Method::POST;
    let subscription_id = header_value(&headers, SUBSCRIPTION_HEADER).map(str::to_string);
    let (body_bytes, body_size, judgement) = match read {
        BodyRead::TooLarge(size) => (None, size, plain(Verdict::TooLarge, &[])),
        BodyRead::Incomplete(size) => (None, size, plain(Verdict::Incomplete, &[])),
        BodyRead::Complete(bytes) => {
            let judgement = if !on_path {
                plain(Verdict::WrongPath, &bytes)
            } else if !is_post {
                plain(Verdict::WrongMethod, &bytes)
            } else {
                judge(
                    shared,
                    &headers,
                    subscription_id.as_deref(),
                    parts.uri.path(),
                    &bytes,
                )
            };
            (Some(bytes), 0, judgement)
        }
    };
    let body_size = body_bytes.as_ref().map_or(body_size, |b| b.len() as u64);

    let (mut status, mut response_body) = judgement.verdict.response();
    // Keys that cannot be read now (a locked keychain) are not keys that do not exist: the
    // sender is asked to try again later, so the service retries instead of discarding the
    // notification while the user unlocks. The capture is kept either way.
    if judgement.verdict == Verdict::UnknownSubscription
        && subscription_id.is_some()
        && shared.keys.unavailable()
    {
        status = 503;
        response_body = "signing keys unavailable, try again later\n";
    }
    let mut from_test_mode = false;
    let mut delay = None;
    let test_mode = read_lock(&shared.test_mode).clone();
    let judged = on_path && is_post && body_bytes.is_some();
    if judged && test_mode.is_active() {
        let attempt = prior_attempts(shared, subscription_id.as_deref(), &judgement.fields) + 1;
        let answer = test_mode.answer(attempt, &mut rand::rng());
        if let Some(chosen) = answer.status {
            status = chosen;
            response_body = if (200..300).contains(&chosen) {
                "ok\n"
            } else {
                "test mode\n"
            };
            from_test_mode = true;
        }
        delay = answer.delay;
    }

    // A receiver check's forged probe: answered as above, nothing kept, shown or forwarded.
    let checking = header_value(&headers, RECEIVER_CHECK_HEADER)
        .is_some_and(|nonce| lock(&shared.receiver_checks).contains(nonce.trim()));
    if checking {
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        return text_response(status, response_body);
    }
    // A flood of junk past the rate: answered as above, counted, not stored (`flood`). What
    // this listener waits for itself is always kept: a tunnel check's probe (one that arrived
    // on another path is junk, and what the check has to report) and a replay sent here.
    let awaited = || {
        header_value(&headers, PROBE_HEADER)
            .is_some_and(|nonce| lock(&shared.probes).contains_key(nonce.trim()))
            || header_value(&headers, outbound::REPLAY_ID_HEADER)
                .is_some_and(|nonce| lock(&shared.replays_in_flight).contains_key(nonce.trim()))
    };
    if judgement.verdict.retention_class() == crate::RetentionClass::Junk
        && !awaited()
        && shared.flood.fate(judgement.verdict) == Fate::Summarise
    {
        return text_response(status, response_body);
    }
    let capture = Capture {
        id: 0,
        received_at,
        method: parts.method.to_string(),
        path,
        replay: header_value(&headers, REPLAY_HEADER).is_some_and(outbound::marks_replay),
        headers,
        body: body_bytes,
        body_size,
        peer: Some(peer.to_string()),
        verdict: judgement.verdict,
        matched_key: judgement.matched_key,
        subscription_id,
        fields: judgement.fields,
        attempt: 0,
        notification_id: None,
        response: ResponseRecord {
            status,
            body: response_body.to_string(),
            from_test_mode,
            delay_ms: delay.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        },
        processing_micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    let stored = match shared.store.insert(capture).await {
        Ok(stored) => Arc::new(stored),
        Err(error) => {
            // Not stored means not acknowledged: the sender will retry.
            tracing::error!(%error, "a capture could not be stored");
            return text_response(503, "storage unavailable\n");
        }
    };
    if stored.replay {
        if let Some(nonce) = stored.header(outbound::REPLAY_ID_HEADER) {
            if let Some(waiting) = lock(&shared.replays_in_flight).remove(nonce.trim()) {
                let _ = waiting.send(stored.id);
            }
        }
    }
    let _ = shared.live.send(LiveEvent::Captured(stored.clone()));
    let already_forwarded = stored.header(outbound::FORWARDED_HEADER).is_some();
    if stored.verdict == Verdict::Valid && !stored.replay && !already_forwarded {
        if let Some(target) = forward_target(shared, &stored) {
            spawn_forward(shared, stored.clone(), target);
        }
    }
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    text_response(status, response_body)
}

/// The first matching forward rule's URL, else the catch-all `forward_to` ([`crate::forward`]).
fn forward_target(shared: &Shared, capture: &Capture) -> Option<url::Url> {
    read(&shared.forward_rules)
        .matching(capture)
        .map(|rule| rule.url.clone())
        .or_else(|| read(&shared.forward_to).clone())
}

/// A replay sent to this listener, waiting for the id of the capture it becomes; forgets its
/// nonce however the replay ends.
struct AwaitedReplay {
    shared: Arc<Shared>,
    nonce: String,
    arrived: oneshot::Receiver<i64>,
}

impl Drop for AwaitedReplay {
    fn drop(&mut self) {
        lock(&self.shared.replays_in_flight).remove(&self.nonce);
    }
}

fn read_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    read(lock)
}

fn plain(verdict: Verdict, body: &[u8]) -> Judgement {
    Judgement {
        verdict,
        matched_key: None,
        fields: NotificationFields::read(body).0,
    }
}

fn judge(
    shared: &Shared,
    headers: &[Header],
    subscription_id: Option<&str>,
    path: &str,
    body: &[u8],
) -> Judgement {
    let signature = header_value(headers, SIGNATURE_HEADER);
    let probe_key = header_value(headers, PROBE_HEADER)
        .and_then(|nonce| lock(&shared.probes).get(nonce.trim()).cloned());
    let now = Utc::now();
    match probe_key {
        Some(key) => verdict::judge_with(
            signature,
            Some(&SubscriptionKeys::new(key)),
            shared.keys.previous_key_grace(),
            body,
            now,
        ),
        None => verdict::judge_at(
            signature,
            subscription_id,
            Some(path),
            body,
            shared.keys.as_ref(),
            now,
        ),
    }
}

fn prior_attempts(
    shared: &Shared,
    subscription_id: Option<&str>,
    fields: &NotificationFields,
) -> u32 {
    match (
        subscription_id,
        fields.resource_type.as_deref(),
        fields.event_id.as_deref(),
    ) {
        (Some(sub), Some(resource_type), Some(event_id)) => {
            shared.store.prior_attempts(sub, resource_type, event_id)
        }
        _ => 0,
    }
}

fn spawn_forward(shared: &Shared, capture: Arc<Capture>, target: url::Url) {
    let http = shared.http.clone();
    let store = shared.store.clone();
    let live = shared.live.clone();
    let keys = shared.keys.clone();
    tokio::spawn(async move {
        let Ok((headers, body)) =
            outbound::outbound_request(&capture, OutboundKind::Forward, None, keys.as_ref())
        else {
            return;
        };
        let record = outbound::send(
            &http,
            capture.id,
            OutboundKind::Forward,
            &target,
            headers,
            body,
        )
        .await;
        match store.insert_outbound(record).await {
            Ok(record) => {
                let _ = live.send(LiveEvent::Outbound(Arc::new(record)));
            }
            Err(error) => tracing::warn!(%error, "recording a forward failed"),
        }
    });
}

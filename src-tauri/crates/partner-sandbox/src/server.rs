//! Starting and stopping a sandbox: [`serve`] for a process that runs until a signal, and
//! [`Sandbox::start`] for a caller that embeds one (the desktop app, tests) and wants its
//! base URL, its demo client and a handle to stop it.
//!
//! Both take a pre-bound listener, so a test binds 127.0.0.1:0 and learns the real port.

use crate::app;
use crate::clock::Clock;
use crate::config::{ClientCredentials, SandboxConfig};
use crate::data_file::{self, Journal, Loaded, Opened};
use crate::demo;
use crate::dispatch::Dispatcher;
use crate::error::{Error, Result};
use crate::state::AppState;
use crate::store::Store;
use crate::tokens::{Client, Tokens};
use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long shutdown waits for requests in flight before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Runs a sandbox on `listener` until `shutdown` completes, then stops it cleanly.
pub async fn serve(
    config: SandboxConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let handle = Sandbox::start(config, listener).await?;
    shutdown.await;
    handle.shutdown().await;
    Ok(())
}

/// Namespace of [`Sandbox::start`].
#[derive(Debug)]
pub struct Sandbox;

/// A running sandbox.
#[derive(Debug)]
pub struct SandboxHandle {
    local_addr: SocketAddr,
    base_url: String,
    clients: Vec<ClientCredentials>,
    clock: Clock,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
    dispatcher: Dispatcher,
    journal: Journal,
}

impl Sandbox {
    /// Starts serving on `listener` in the background. Without clients in the config, one
    /// demo client is generated (see [`SandboxHandle::demo_client`]).
    pub async fn start(mut config: SandboxConfig, listener: TcpListener) -> Result<SandboxHandle> {
        let local_addr = listener.local_addr().map_err(Error::Listener)?;
        if !local_addr.ip().is_loopback()
            && config.admin_token.as_ref().is_none_or(|t| t.is_empty())
        {
            return Err(Error::AdminTokenRequired(local_addr));
        }
        for (i, client) in config.clients.iter().enumerate() {
            client.check().map_err(Error::Config)?;
            if config.clients[..i]
                .iter()
                .any(|c| c.client_id == client.client_id)
            {
                return Err(Error::Config(format!(
                    "client id `{}` is given twice",
                    client.client_id
                )));
            }
        }
        let base_url = match &config.public_url {
            Some(url) => {
                let parsed = url::Url::parse(url)
                    .map_err(|e| Error::Config(format!("public URL is not a URL ({e})")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(Error::Config(
                        "public URL must be http:// or https://".into(),
                    ));
                }
                url.trim_end_matches('/').to_string()
            }
            None => format!("http://{}", reachable(local_addr)),
        };
        let mut opened = match config.data_file.clone() {
            Some(path) => {
                let key = config.data_key.clone().ok_or_else(|| {
                    Error::Config(
                        "a data file needs the data key it is encrypted with (data_key)".into(),
                    )
                })?;
                Some(
                    tokio::task::spawn_blocking(move || data_file::open(&path, &key))
                        .await
                        .map_err(|e| {
                            Error::Config(format!("opening the data file failed ({e})"))
                        })??,
                )
            }
            None => None,
        };
        let mut loaded = opened
            .as_mut()
            .map(|o| std::mem::take(&mut o.loaded))
            .unwrap_or_default();
        let clients = resolve_clients(&mut config.clients, &loaded.clients);
        let mut initial_rows: Vec<data_file::Row> = clients
            .iter()
            .filter(|c| config.clients.iter().any(|k| k.client_id == c.client_id))
            .map(data_file::client_row)
            .collect();
        let clock = Clock::with_offset_ms(loaded.clock_offset_ms);
        let tokens = Tokens::new(clients, clock.clone());
        let deliveries = std::mem::take(&mut loaded.deliveries);
        let had_data = !loaded.holds_no_data();
        let Loaded {
            products,
            transactions,
            ..
        } = loaded;
        let mut store =
            Store::restore(products, transactions).map_err(|problem| match &config.data_file {
                Some(path) => Error::DataFile {
                    path: path.clone(),
                    problem,
                },
                None => Error::Config(problem),
            })?;
        if let Some(demo) = config.demo {
            if had_data {
                tracing::info!("the data file holds data already: demo data not seeded again");
            } else {
                let partner = tokens
                    .client(&config.clients[0].client_id)
                    .map(|c| crate::tokens::Caller {
                        client_id: c.client_id.clone(),
                        partner_id: c.partner_id.clone(),
                    })
                    .ok_or_else(|| Error::Config("no client to seed demo data for".into()))?;
                demo::seed(&mut store, &partner, demo.transactions).map_err(Error::Config)?;
                tracing::info!(transactions = demo.transactions, "demo data seeded");
                if opened.is_some() {
                    initial_rows.extend(data_file::store_rows(&store).map_err(Error::Config)?);
                }
            }
        }
        let journal = match opened {
            Some(opened) => write_initial(opened, initial_rows).await?,
            None => Journal::none(),
        };
        let shutdown = CancellationToken::new();
        let dispatcher = Dispatcher::start_persistent(
            config.delivery,
            clock.clone(),
            shutdown.clone(),
            journal.clone(),
        );
        dispatcher.restore(deliveries);
        let state = Arc::new(
            AppState::new(
                clock.clone(),
                tokens,
                store,
                base_url.clone(),
                config.allow_http_callbacks,
                config.admin_token.clone(),
                dispatcher.clone(),
            )
            .with_journal(journal.clone()),
        );
        let router = app::router(state, config.body_limit, config.body_timeout);
        let stop = shutdown.clone();
        let task = tokio::spawn(serve_connections(
            listener,
            router,
            config.header_read_timeout,
            stop,
        ));
        tracing::info!(%local_addr, %base_url, clients = config.clients.len(), "sandbox listening");
        Ok(SandboxHandle {
            local_addr,
            base_url,
            clients: config.clients,
            clock,
            shutdown,
            task,
            dispatcher,
            journal,
        })
    }
}

/// The clients of this run, in order: the config's (a client the file knows keeps its partner
/// and takes the config's secret), then the file's others (they sign in with the secret they
/// had). Without clients in the config, the file's first client is taken again with a new
/// secret (the old one was never kept, so it cannot be shown), or a new one is generated; it
/// is pushed into `configured`.
fn resolve_clients(configured: &mut Vec<ClientCredentials>, stored: &[Client]) -> Vec<Client> {
    if configured.is_empty() {
        let mut generated = ClientCredentials::generate();
        if let Some(first) = stored.first() {
            generated.client_id = first.client_id.clone();
        }
        configured.push(generated);
    }
    let mut clients: Vec<Client> = configured
        .iter()
        .map(|credentials| {
            let mut client = Client::from_credentials(credentials);
            if let Some(known) = stored.iter().find(|s| s.client_id == client.client_id) {
                client.partner_id = known.partner_id.clone();
            }
            client
        })
        .collect();
    for known in stored {
        if !clients.iter().any(|c| c.client_id == known.client_id) {
            clients.push(known.clone());
        }
    }
    clients
}

/// Writes this run's clients (and a seeded demo) to the file, then starts its journal.
async fn write_initial(mut opened: Opened, rows: Vec<data_file::Row>) -> Result<Journal> {
    tokio::task::spawn_blocking(move || {
        opened.write(&rows)?;
        opened.into_journal()
    })
    .await
    .map_err(|e| Error::Config(format!("writing the data file failed ({e})")))?
}

/// Accepts connections until `stop`, serving each over HTTP/1 with a deadline for its request
/// head, then lets requests in flight finish.
///
/// hyper's connection builder rather than `axum::serve`, because `axum::serve` has no
/// header-read timeout: a client that sends its headers a byte at a time (or nothing at all)
/// would hold a connection, and a task, forever. The body deadline is the router's
/// `RequestBodyTimeoutLayer`.
async fn serve_connections(
    listener: TcpListener,
    router: axum::Router,
    header_read_timeout: Duration,
    stop: CancellationToken,
) {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .keep_alive(true);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: back off, never stop serving.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    // Bounded by the caller (`SandboxHandle::shutdown` waits `SHUTDOWN_GRACE`).
    graceful.shutdown().await;
}

/// The address to reach a listener at: an unspecified bind address (0.0.0.0, ::) is reached
/// through loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

impl SandboxHandle {
    /// Where partners reach the service (no trailing slash): the configured public URL, or
    /// [`SandboxHandle::local_url`].
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `http://` and the address the listener can be reached at on this machine (an
    /// unspecified bind address is reached through loopback).
    pub fn local_url(&self) -> String {
        format!("http://{}", reachable(self.local_addr))
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The first client: the one demo data belongs to, and the generated one when the config
    /// named none.
    pub fn demo_client(&self) -> &ClientCredentials {
        &self.clients[0]
    }

    pub fn clients(&self) -> &[ClientCredentials] {
        &self.clients
    }

    /// The sandbox's clock (the same one `POST /sandbox/v1/clock/advance` moves).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Every notification queued so far, as `GET /sandbox/v1/deliveries` shows them.
    pub fn deliveries(&self, event_id: Option<&str>) -> Vec<crate::dispatch::DeliveryRecord> {
        self.dispatcher.deliveries(event_id)
    }

    /// Stops accepting, lets requests in flight finish (up to a few seconds), stops webhook
    /// deliveries, and returns when the server is gone.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let mut task = self.task;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
            .await
            .is_err()
        {
            tracing::warn!("requests still open after the grace period; dropping them");
            task.abort();
        }
        if tokio::time::timeout(SHUTDOWN_GRACE, self.dispatcher.stopped())
            .await
            .is_err()
        {
            tracing::warn!("webhook deliveries still running after the grace period");
        }
        self.journal.close().await;
        tracing::info!("sandbox stopped");
    }
}

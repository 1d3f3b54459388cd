//! One team server: the webhook endpoint and the workspace API on one address, over the
//! workspace's database. Servers keep nothing of their own (the captures, keys, members and
//! notes are PostgreSQL's; each server's key cache and live feeds follow the database through
//! LISTEN/NOTIFY), so any number run behind a load balancer and any of them may be killed.

use crate::api::{self, Workspace};
use crate::capture_writer::CaptureWriter;
use crate::database;
use crate::error::{Error, Result};
use crate::failed_logins::FailedLogins;
use crate::index_sync;
use crate::intake::{self, Intake, IntakeConfig};
use crate::live::Live;
use crate::service::Service;
use crate::signing_keys::WorkspaceKeys;
use crate::support_index::WorkspaceIndex;
use crate::tls::{self, TlsConfig};
use axum::routing::{any, get};
use axum::serve::ListenerExt as _;
use axum::{Json, Router};
use partner_listener::JunkFlood;
use partner_seal::DataKey;
use sqlx::PgPool;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How a server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub intake: IntakeConfig,
    /// Junk stored in full per second before the rest is only counted (the listener's meter).
    pub junk_rate: Option<u32>,
    /// How much of the captures the workspace keeps (the listener's limits and order); the
    /// servers prune one at a time.
    pub retention: partner_listener::Retention,
    /// How often this server syncs the support index on its own (`None`: only when a member
    /// asks). One sync runs at a time across the workspace's servers.
    pub sync_every: Option<std::time::Duration>,
    /// HTTPS with this certificate and key ([`tls::load`]); None: plain HTTP (TLS, if any, is
    /// a reverse proxy's).
    pub tls: Option<TlsConfig>,
}

/// A server taking requests.
#[derive(Debug)]
pub struct RunningServer {
    pub local_addr: SocketAddr,
    tls: bool,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// The webhook endpoint's URL: https when the server has a certificate, else http (TLS, if
    /// any, is then a reverse proxy's or the host's).
    pub fn webhook_url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme(), self.local_addr)
    }

    /// `https` when the server speaks TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls {
            "https"
        } else {
            "http"
        }
    }

    /// Stops taking requests, lets those in flight finish, and returns.
    pub async fn stop(self) -> Result<()> {
        self.shutdown.cancel();
        self.wait().await
    }

    /// Runs until stopped (or its listener fails).
    pub async fn wait(self) -> Result<()> {
        match self.task.await {
            Ok(result) => result.map_err(|error| Error::Io(error.to_string())),
            Err(error) => Err(Error::Io(error.to_string())),
        }
    }

    /// A token that stops the server when cancelled (for a signal handler).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// Checks the database and starts serving on `config.addr`.
pub async fn start(
    pool: PgPool,
    server_key: DataKey,
    config: ServerConfig,
) -> Result<RunningServer> {
    database::check(&pool, &server_key).await?;
    let server_key = Arc::new(server_key);
    let keys = WorkspaceKeys::load(pool.clone(), server_key.clone()).await?;
    let service = Service::new(pool.clone(), server_key);
    let index = WorkspaceIndex::new(pool.clone());
    let live = Live::start(&pool, keys.clone()).await?;
    let intake = Arc::new(Intake {
        config: config.intake.clone(),
        keys: keys.clone(),
        writer: CaptureWriter::start(pool.clone()),
        flood: JunkFlood::new(config.junk_rate),
    });
    let shutdown = CancellationToken::new();
    crate::retention::schedule(pool.clone(), config.retention, shutdown.clone());
    index_sync::schedule(
        service.clone(),
        index.clone(),
        config.sync_every,
        shutdown.clone(),
    );
    let workspace = Arc::new(Workspace {
        pool,
        live,
        failed_logins: FailedLogins::default(),
        keys,
        service,
        index,
        intake: intake.clone(),
        shutdown: shutdown.clone(),
    });
    let webhooks = Router::new()
        .route(&config.intake.path, any(intake::take))
        .fallback(intake::take)
        .with_state(intake);
    let app = api::router(workspace)
        .route("/api/{*rest}", any(unknown_call))
        .route("/health", get(|| async { "ok\n" }))
        .merge(webhooks);
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|error| Error::Io(format!("{} could not be bound: {error}", config.addr)))?;
    let local_addr = listener
        .local_addr()
        .map_err(|error| Error::Io(error.to_string()))?;
    let stopped = shutdown.clone();
    let make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    let task = match &config.tls {
        None => tokio::spawn(async move {
            axum::serve(listener, make_service)
                .with_graceful_shutdown(stopped.cancelled_owned())
                .await
        }),
        Some(tls) => {
            // tap_io (doing nothing): axum gives `ConnectInfo<SocketAddr>` to a listener's
            // connections through it, as it does to a bare TcpListener's.
            let listener = tls::listen(listener, tls)
                .map_err(|error| Error::Io(error.to_string()))?
                .tap_io(|_| {});
            tokio::spawn(async move {
                axum::serve(listener, make_service)
                    .with_graceful_shutdown(stopped.cancelled_owned())
                    .await
            })
        }
    };
    Ok(RunningServer {
        local_addr,
        tls: config.tls.is_some(),
        shutdown,
        task,
    })
}

/// A path under `/api` that is no call: 404 in the API's shape, not a webhook capture.
async fn unknown_call() -> (axum::http::StatusCode, Json<serde_json::Value>) {
    (
        axum::http::StatusCode::NOT_FOUND,
        Json(serde_json::json!({"error": "not-found", "message": "no such workspace call"})),
    )
}

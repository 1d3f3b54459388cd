//! A real sandbox on 127.0.0.1:0 for a test: its base URL, its demo client's credentials, its
//! clock, and a way to stop it.

use partner_api::Secret;
use partner_sandbox::{Clock, Sandbox, SandboxConfig, SandboxHandle};
use std::net::SocketAddr;
use tokio::net::TcpListener;

#[derive(Debug)]
pub struct TestSandbox {
    handle: SandboxHandle,
    local_url: String,
}

impl TestSandbox {
    /// A sandbox with one generated client, no data, and `http://` loopback callbacks allowed
    /// (test receivers are plain HTTP on 127.0.0.1).
    pub async fn start() -> Self {
        Self::start_with(SandboxConfig {
            allow_http_callbacks: true,
            ..SandboxConfig::default()
        })
        .await
    }

    /// A sandbox with the demo data of `partner sandbox --demo`.
    pub async fn start_demo() -> Self {
        Self::start_with(SandboxConfig {
            allow_http_callbacks: true,
            demo: Some(partner_sandbox::DemoData::default()),
            ..SandboxConfig::default()
        })
        .await
    }

    /// A sandbox with the given config on 127.0.0.1:0.
    pub async fn start_with(config: SandboxConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for a test sandbox");
        Self::start_on(config, listener).await
    }

    /// A sandbox with the given config on a listener the test bound itself.
    pub async fn start_on(config: SandboxConfig, listener: TcpListener) -> Self {
        let handle = Sandbox::start(config, listener)
            .await
            .expect("start a test sandbox");
        let local_url = handle.local_url();
        Self { handle, local_url }
    }

    /// `http://127.0.0.1:PORT`, no trailing slash: where a test reaches the sandbox (even
    /// when its config names another public URL for notifications).
    pub fn base_url(&self) -> &str {
        &self.local_url
    }

    /// The base URL in notifications' `resourceRef` (the config's public URL, if set).
    pub fn public_url(&self) -> &str {
        self.handle.base_url()
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url(), path)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// The demo client's id (the owner of any demo data).
    pub fn client_id(&self) -> &str {
        &self.handle.demo_client().client_id
    }

    pub fn client_secret(&self) -> &Secret {
        &self.handle.demo_client().client_secret
    }

    /// Every configured client as (id, secret).
    pub fn clients(&self) -> Vec<(String, Secret)> {
        self.handle
            .clients()
            .iter()
            .map(|c| (c.client_id.clone(), c.client_secret.clone()))
            .collect()
    }

    /// The sandbox's clock (what `POST /sandbox/v1/clock/advance` moves).
    pub fn clock(&self) -> &Clock {
        self.handle.clock()
    }

    pub fn handle(&self) -> &SandboxHandle {
        &self.handle
    }

    /// Stops the sandbox and waits until it is gone.
    pub async fn stop(self) {
        self.handle.shutdown().await;
    }
}

//! "Check connection" and `partner doctor`: each step between this machine and the service in
//! turn (address, proxy, TCP, TLS, HTTP, a token, one list call of each kind), with what was
//! found and, when a step did not pass, what to do: text for a support ticket.
//!
//! Why it is done this way:
//! - The lower steps (TCP, proxy tunnel, TLS) are made by hand here, not through reqwest, because
//!   reqwest reports one opaque error for all of them; the check needs to say which one failed
//!   and show the certificate chain the server presented.
//! - The TLS step trusts exactly what the client trusts (the OS store read by
//!   `rustls-native-certs`, which honours `SSL_CERT_FILE`/`SSL_CERT_DIR`, plus the connection's
//!   extra CA) and shows its client certificate, so "passed" here means the client will agree.
//!   Its verifier records the chain and then delegates to rustls's own WebPKI verifier, so an
//!   untrusted chain is both refused and listed.
//! - The HTTP, token and list steps go through the normal client path ([`PartnerClient`]), so
//!   they see the same proxy, trust and retries as every other call.
//! - Once a step fails, the steps that depend on it are `skipped`, saying why.
//! - Secrets (client secret, proxy password, client key) are never put in a step: the proxy is
//!   named by its address only and errors come from [`crate::ClientError`], whose messages hold none.

use crate::config::ConnectionConfig;
use crate::network::{self, NetworkOptions};
use crate::page::PageRequest;
use crate::PartnerClient;
use base64::Engine;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long the TCP connection, the proxy's answer and the TLS handshake may each take.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// How one step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepOutcome {
    Passed,
    Failed,
    Skipped,
    Warning,
}

/// One step of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckStep {
    /// `address`, `proxy`, `tcp`, `tls`, `http`, `token`, `products`, `transactions`.
    pub name: String,
    pub outcome: StepOutcome,
    /// What was found.
    pub detail: String,
    /// What to do, when the step did not pass.
    pub advice: Option<String>,
    pub elapsed_ms: u64,
}

/// The whole check of one connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionReport {
    pub base_url: String,
    pub client_id: String,
    pub steps: Vec<CheckStep>,
}

impl ConnectionReport {
    /// Whether every step passed (TLS skipped over plain HTTP counts as passed).
    pub fn all_passed(&self) -> bool {
        self.steps.iter().all(|step| {
            step.outcome == StepOutcome::Passed
                || (step.outcome == StepOutcome::Skipped
                    && step.name == "tls"
                    && step.advice.is_none())
        })
    }

    /// The report as text for a support ticket.
    pub fn to_text(&self) -> String {
        self.to_string()
    }
}

impl StepOutcome {
    /// ✓, ✗, – or !, as `partner doctor` prints it.
    pub fn mark(self) -> &'static str {
        match self {
            StepOutcome::Passed => "✓",
            StepOutcome::Failed => "✗",
            StepOutcome::Skipped => "–",
            StepOutcome::Warning => "!",
        }
    }
}

impl fmt::Display for CheckStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:<12} {} ({} ms)",
            self.outcome.mark(),
            self.name,
            self.detail.replace('\n', "\n                 "),
            self.elapsed_ms
        )?;
        if let Some(advice) = &self.advice {
            write!(f, "\n    → {advice}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ConnectionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Connection check of {} (client {})",
            self.base_url, self.client_id
        )?;
        for step in &self.steps {
            writeln!(f, "{step}")?;
        }
        Ok(())
    }
}

/// Runs every step against `config`'s service, calling `progress` as each one ends.
pub async fn check_connection(
    config: &ConnectionConfig,
    progress: impl Fn(&CheckStep),
) -> ConnectionReport {
    let mut run = Run {
        steps: Vec::new(),
        progress: &progress,
    };
    run_steps(config, &mut run).await;
    ConnectionReport {
        base_url: config.base_url.to_string(),
        client_id: config.client_id.clone(),
        steps: run.steps,
    }
}

struct Run<'a, P: Fn(&CheckStep)> {
    steps: Vec<CheckStep>,
    progress: &'a P,
}

impl<P: Fn(&CheckStep)> Run<'_, P> {
    fn record(
        &mut self,
        name: &str,
        started: Instant,
        outcome: StepOutcome,
        detail: String,
        advice: Option<String>,
    ) {
        let step = CheckStep {
            name: name.to_owned(),
            outcome,
            detail,
            advice,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        (self.progress)(&step);
        self.steps.push(step);
    }

    fn pass(&mut self, name: &str, started: Instant, detail: String) {
        self.record(name, started, StepOutcome::Passed, detail, None);
    }

    fn fail(&mut self, name: &str, started: Instant, detail: String, advice: impl Into<String>) {
        self.record(
            name,
            started,
            StepOutcome::Failed,
            detail,
            Some(advice.into()),
        );
    }

    fn skip_rest(&mut self, names: &[&str], why: &str) {
        for name in names {
            self.record(
                name,
                Instant::now(),
                StepOutcome::Skipped,
                format!("skipped: {why}"),
                Some("fix the failed step above first".into()),
            );
        }
    }
}

const ALL_STEPS: [&str; 8] = [
    "address",
    "proxy",
    "tcp",
    "tls",
    "http",
    "token",
    "products",
    "transactions",
];

fn after(name: &str) -> &'static [&'static str] {
    let index = ALL_STEPS.iter().position(|s| *s == name).unwrap_or(0);
    &ALL_STEPS[index + 1..]
}

async fn run_steps<P: Fn(&CheckStep)>(config: &ConnectionConfig, run: &mut Run<'_, P>) {
    let url = &config.base_url;
    let https = url.scheme() == "https";
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url
        .port_or_known_default()
        .unwrap_or(if https { 443 } else { 80 });

    // address
    let started = Instant::now();
    let proxy = applicable_proxy(&config.network, url);
    match lookup(&host, port).await {
        Ok(addresses) => run.pass(
            "address",
            started,
            format!("{url} → {host} resolves to {}", list(&addresses)),
        ),
        Err(error) if proxy.is_some() => run.record(
            "address",
            started,
            StepOutcome::Warning,
            format!("{host} does not resolve here ({error}); the proxy resolves it"),
            Some("fine when only the proxy can resolve company names".into()),
        ),
        Err(error) => {
            run.fail(
                "address",
                started,
                format!("{host} could not be resolved ({error})"),
                "check the base URL's host name for typos, and this machine's DNS or VPN",
            );
            run.skip_rest(after("address"), "the service's host name does not resolve");
            return;
        }
    }

    // proxy + tcp
    let started = Instant::now();
    let stream = match &proxy {
        None => {
            run.pass("proxy", started, "none, direct".into());
            let started = Instant::now();
            match connect(&host, port).await {
                Ok(stream) => {
                    let peer = stream
                        .peer_addr()
                        .map_or_else(|_| format!("{host}:{port}"), |a| a.to_string());
                    run.pass("tcp", started, format!("connected to {peer}"));
                    Some(stream)
                }
                Err(error) => {
                    run.fail(
                        "tcp",
                        started,
                        format!("no TCP connection to {host}:{port}: {error}"),
                        "check that the service runs at that address and port, and that no firewall blocks it (a company network may need a proxy: --proxy, or HTTPS_PROXY)",
                    );
                    run.skip_rest(after("tcp"), "no TCP connection to the service");
                    return;
                }
            }
        }
        Some(proxy) if proxy.https => {
            run.record(
                "proxy",
                started,
                StepOutcome::Warning,
                format!(
                    "{} ({}), an https:// proxy: its tunnel is not probed by hand",
                    proxy.address, proxy.source
                ),
                Some("the HTTP step below still goes through it".into()),
            );
            run.record(
                "tcp",
                Instant::now(),
                StepOutcome::Skipped,
                "skipped: reached through the https:// proxy".into(),
                None,
            );
            run.record(
                "tls",
                Instant::now(),
                StepOutcome::Skipped,
                "skipped: reached through the https:// proxy".into(),
                None,
            );
            None
        }
        Some(proxy) => match tunnel(proxy, &host, port).await {
            Ok(stream) => {
                run.pass(
                    "proxy",
                    started,
                    format!(
                        "{} ({}) opened a tunnel (HTTP CONNECT) to {host}:{port}{}",
                        proxy.address,
                        proxy.source,
                        if proxy.user.is_some() {
                            " with its credentials"
                        } else {
                            ""
                        }
                    ),
                );
                run.pass(
                    "tcp",
                    Instant::now(),
                    format!("through the proxy to {host}:{port}"),
                );
                Some(stream)
            }
            Err(failure) => {
                run.fail("proxy", started, failure.detail, failure.advice);
                run.skip_rest(after("proxy"), "the proxy did not open a tunnel");
                return;
            }
        },
    };

    // tls
    if let Some(stream) = stream {
        let started = Instant::now();
        if !https {
            run.record(
                "tls",
                started,
                StepOutcome::Skipped,
                "skipped: the base URL is plain http://, no TLS".into(),
                None,
            );
        } else {
            match handshake(&config.network, &host, stream).await {
                Ok(detail) => run.pass("tls", started, detail),
                Err(failure) => {
                    run.fail("tls", started, failure.detail, failure.advice);
                    run.skip_rest(after("tls"), "no trusted TLS connection");
                    return;
                }
            }
        }
    }

    // http
    let started = Instant::now();
    match unauthenticated_request(config).await {
        Ok(detail) => run.pass("http", started, detail),
        Err(error) => {
            run.fail(
                "http",
                started,
                format!("no HTTP answer: {error}"),
                "the steps above passed, so look at what answers at that address: is it the partner service?",
            );
            run.skip_rest(after("http"), "no HTTP answer");
            return;
        }
    }

    // token
    let started = Instant::now();
    let client = match PartnerClient::new(config.clone()) {
        Ok(client) => client,
        Err(error) => {
            run.fail(
                "token",
                started,
                error.to_string(),
                "check the connection's settings",
            );
            run.skip_rest(after("token"), "no client");
            return;
        }
    };
    match client.tokens().ensure_fresh().await {
        Ok(()) => run.pass(
            "token",
            started,
            format!("a token was issued to client {}", config.client_id),
        ),
        Err(error) => {
            run.fail(
                "token",
                started,
                format!("no token: {error}"),
                "check the client id and secret with the partner team (a rotated or revoked secret is refused)",
            );
            run.skip_rest(after("token"), "no token");
            return;
        }
    }

    // one list call of each kind
    let Ok(one) = PageRequest::new(0, 1) else {
        return;
    };
    let started = Instant::now();
    match client.list_products(&one).await {
        Ok(page) => run.pass(
            "products",
            started,
            format!("listed {} of {} products", page.items.len(), page.total),
        ),
        Err(error) => run.fail(
            "products",
            started,
            format!("the products list was refused: {error}"),
            "ask the partner team whether this client may list products",
        ),
    }
    let started = Instant::now();
    match client.list_transactions(&one).await {
        Ok(page) => run.pass(
            "transactions",
            started,
            format!("listed {} of {} transactions", page.items.len(), page.total),
        ),
        Err(error) => run.fail(
            "transactions",
            started,
            format!("the transactions list was refused: {error}"),
            "ask the partner team whether this client may list transactions",
        ),
    }
}

fn list(addresses: &[SocketAddr]) -> String {
    addresses
        .iter()
        .map(|a| a.ip().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

async fn lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
    if addresses.is_empty() {
        return Err(std::io::Error::other("no addresses"));
    }
    Ok(addresses)
}

async fn connect(host: &str, port: u16) -> Result<TcpStream, String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match tokio::time::timeout(STEP_TIMEOUT, TcpStream::connect((host, port))).await {
        Err(_) => Err(format!("no answer within {} s", STEP_TIMEOUT.as_secs())),
        Ok(Err(error)) => Err(error.to_string()),
        Ok(Ok(stream)) => Ok(stream),
    }
}

/// The proxy the client would use for `url`, with where it came from.
struct ApplicableProxy {
    address: String,
    host: String,
    port: u16,
    https: bool,
    source: &'static str,
    user: Option<String>,
    /// In memory only; never printed.
    password: Option<String>,
}

fn applicable_proxy(network: &NetworkOptions, url: &url::Url) -> Option<ApplicableProxy> {
    if let Some(own) = &network.proxy {
        return Some(ApplicableProxy {
            address: own.address(),
            host: own.url.host_str().unwrap_or_default().to_owned(),
            port: own.url.port_or_known_default().unwrap_or(80),
            https: own.url.scheme() == "https",
            source: "the connection's own proxy",
            user: own.user.clone(),
            password: own.password.as_ref().map(|p| p.expose().to_owned()),
        });
    }
    let host = url.host_str().unwrap_or_default();
    if bypassed(host, &env_either("NO_PROXY").unwrap_or_default()) {
        return None;
    }
    let names: &[(&str, &'static str)] = if url.scheme() == "https" {
        &[("HTTPS_PROXY", "HTTPS_PROXY"), ("ALL_PROXY", "ALL_PROXY")]
    } else {
        &[("HTTP_PROXY", "HTTP_PROXY"), ("ALL_PROXY", "ALL_PROXY")]
    };
    names.iter().find_map(|(name, source)| {
        let raw = env_either(name)?;
        let parsed = url::Url::parse(&raw)
            .or_else(|_| url::Url::parse(&format!("http://{raw}")))
            .ok()?;
        let proxy_host = parsed.host_str()?.to_owned();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let user = (!parsed.username().is_empty()).then(|| parsed.username().to_owned());
        Some(ApplicableProxy {
            address: format!("{proxy_host}:{port}"),
            host: proxy_host,
            port,
            https: parsed.scheme() == "https",
            source,
            user,
            password: parsed.password().map(str::to_owned),
        })
    })
}

fn env_either(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| std::env::var(name.to_lowercase()).ok())
        .filter(|v| !v.trim().is_empty())
}

/// Whether `NO_PROXY` (comma separated hosts or domains, `*` for all) covers `host`.
fn bypassed(host: &str, no_proxy: &str) -> bool {
    no_proxy.split(',').map(str::trim).any(|entry| {
        let entry = entry.trim_start_matches('.');
        entry == "*"
            || (!entry.is_empty()
                && (host.eq_ignore_ascii_case(entry)
                    || host
                        .to_ascii_lowercase()
                        .ends_with(&format!(".{}", entry.to_ascii_lowercase()))))
    })
}

struct Failure {
    detail: String,
    advice: String,
}

/// TCP to the proxy, then `CONNECT host:port`; the open tunnel.
async fn tunnel(proxy: &ApplicableProxy, host: &str, port: u16) -> Result<TcpStream, Failure> {
    let mut stream = connect(&proxy.host, proxy.port)
        .await
        .map_err(|error| Failure {
            detail: format!(
                "no TCP connection to the proxy {} ({}): {error}",
                proxy.address, proxy.source
            ),
            advice: "check the proxy's address and port with your network team".into(),
        })?;
    let mut request = format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n");
    if let Some(user) = &proxy.user {
        let pair = format!("{user}:{}", proxy.password.as_deref().unwrap_or(""));
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        request.push_str(&format!("Proxy-Authorization: Basic {encoded}\r\n"));
    }
    request.push_str("\r\n");
    let answer = async {
        stream.write_all(request.as_bytes()).await?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
            if stream.read(&mut byte).await? == 0 {
                break;
            }
            head.push(byte[0]);
        }
        std::io::Result::Ok(head)
    };
    let head = match tokio::time::timeout(STEP_TIMEOUT, answer).await {
        Err(_) => Err(format!("no answer within {} s", STEP_TIMEOUT.as_secs())),
        Ok(Err(error)) => Err(error.to_string()),
        Ok(Ok(head)) => Ok(head),
    }
    .map_err(|error| Failure {
        detail: format!(
            "the proxy {} did not answer CONNECT: {error}",
            proxy.address
        ),
        advice: "check that this address is an HTTP proxy".into(),
    })?;
    let head = String::from_utf8_lossy(&head);
    let status_line = head.lines().next().unwrap_or_default().to_owned();
    let status: Option<u16> = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok());
    match status {
        Some(200..=299) => Ok(stream),
        Some(407) => Err(Failure {
            detail: format!(
                "the proxy {} ({}) answered 407: the proxy wants credentials{}",
                proxy.address,
                proxy.source,
                if proxy.user.is_some() { ", and refused the ones given" } else { "" }
            ),
            advice: "give the proxy user and password (--proxy-user, PARTNER_PROXY_PASSWORD, or the app's proxy fields); ask your network team if they are right".into(),
        }),
        _ => Err(Failure {
            detail: format!(
                "the proxy {} refused a tunnel to {host}:{port}: {}",
                proxy.address,
                if status_line.is_empty() { "no answer" } else { status_line.as_str() }
            ),
            advice: "ask your network team to allow this host and port through the proxy".into(),
        }),
    }
}

/// Trusted roots as the client has them: the OS store plus the connection's extra CA.
fn roots(network: &NetworkOptions) -> Result<(RootCertStore, usize), String> {
    let mut roots = RootCertStore::empty();
    let loaded = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(loaded.certs);
    if let Some(file) = &network.extra_ca_file {
        let pem =
            network::read_pem_certificates(file, "CA certificate").map_err(|e| e.to_string())?;
        for certificate in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let certificate = certificate
                .map_err(|e| format!("the CA file {} is not PEM ({e})", file.display()))?;
            roots.add(certificate).map_err(|e| {
                format!(
                    "the CA file {} holds an unusable certificate ({e})",
                    file.display()
                )
            })?;
        }
    }
    Ok((roots, added))
}

async fn handshake(
    network: &NetworkOptions,
    host: &str,
    stream: TcpStream,
) -> Result<String, Failure> {
    let setup = |detail: String| Failure {
        detail,
        advice: "check the connection's CA and client certificate files".into(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (roots, system_roots) = roots(network).map_err(setup)?;
    let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::clone(&provider),
    )
    .build()
    .map_err(|e| setup(format!("no trusted roots could be used ({e})")))?;
    let recorder = Arc::new(Recording {
        inner,
        chain: Mutex::new(Vec::new()),
    });
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| setup(format!("TLS could not be set up ({e})")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::clone(&recorder) as Arc<dyn ServerCertVerifier>);
    let mut config = match &network.client_certificate {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let pem =
                network::read_pem_certificates(&client.certificate_file, "client certificate")
                    .map_err(|e| setup(e.to_string()))?;
            let certificates = CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| setup("the client certificate is not PEM".into()))?;
            let key = PrivateKeyDer::from_pem_slice(client.private_key.expose().as_bytes())
                .map_err(|_| {
                    setup("the client certificate's private key is not a PEM key".into())
                })?;
            builder
                .with_client_auth_cert(certificates, key)
                .map_err(|_| {
                    setup("the client certificate and its key do not go together".into())
                })?
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = ServerName::try_from(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
    )
    .map_err(|_| setup(format!("{host} is not a TLS server name")))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let outcome = tokio::time::timeout(STEP_TIMEOUT, connector.connect(name, stream)).await;
    let chain = recorder
        .chain
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let chain_text = describe_chain(&chain);
    match outcome {
        Err(_) => Err(Failure {
            detail: format!("no TLS handshake within {} s", STEP_TIMEOUT.as_secs()),
            advice: "the port may not speak TLS: check http:// versus https:// in the base URL"
                .into(),
        }),
        Ok(Ok(tls)) => {
            let (_, connection) = tls.get_ref();
            let version = match connection.protocol_version() {
                Some(rustls::ProtocolVersion::TLSv1_3) => "TLS 1.3".to_owned(),
                Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2".to_owned(),
                other => format!("{other:?}"),
            };
            let alpn = connection.alpn_protocol().map_or("none".to_owned(), |p| {
                String::from_utf8_lossy(p).into_owned()
            });
            Ok(format!(
                "{version}, ALPN {alpn}, trusted ({system_roots} system roots{})\n{chain_text}",
                if network.extra_ca_file.is_some() {
                    " plus the connection's CA"
                } else {
                    ""
                }
            ))
        }
        Ok(Err(error)) => {
            let tls_error = error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                .cloned();
            let last_issuer = chain
                .last()
                .and_then(|der| x509_parser::parse_x509_certificate(der).ok())
                .map(|(_, c)| c.issuer().to_string())
                .unwrap_or_else(|| "an unknown issuer".into());
            let trust_advice = "add the CA to the connection (--ca-cert, the app's CA field) or to this machine's trust store / SSL_CERT_FILE";
            let (detail, advice) = match tls_error {
                Some(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)) => (
                    format!("the certificate chain is not trusted: issued by {last_issuer}, which this machine does not trust"),
                    trust_advice.to_owned(),
                ),
                Some(rustls::Error::InvalidCertificate(
                    CertificateError::Expired | CertificateError::ExpiredContext { .. },
                )) => (
                    "the server's certificate has expired".to_owned(),
                    "the service's operators must renew its certificate".to_owned(),
                ),
                Some(rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
                )) => (
                    format!("the server's certificate is not valid for the host name {host}"),
                    "check the base URL's host name; it must be a name the certificate covers".to_owned(),
                ),
                Some(other) => (format!("the TLS handshake failed: {other}"), trust_advice.to_owned()),
                None => (
                    format!("the TLS handshake failed: {error}"),
                    "check that the port speaks TLS (https://) and that a client certificate is given when the service asks for one".to_owned(),
                ),
            };
            Err(Failure {
                detail: if chain.is_empty() {
                    detail
                } else {
                    format!("{detail}\n{chain_text}")
                },
                advice,
            })
        }
    }
}

/// Each certificate: subject, issuer and validity, end entity first.
fn describe_chain(chain: &[CertificateDer<'static>]) -> String {
    chain
        .iter()
        .enumerate()
        .map(
            |(index, der)| match x509_parser::parse_x509_certificate(der) {
                Ok((_, certificate)) => format!(
                    "certificate {}: subject {}; issuer {}; valid {} to {}",
                    index + 1,
                    certificate.subject(),
                    certificate.issuer(),
                    certificate.validity().not_before,
                    certificate.validity().not_after
                ),
                Err(error) => format!("certificate {}: unreadable ({error})", index + 1),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// rustls's own verification, keeping the chain it was shown.
#[derive(Debug)]
struct Recording {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    chain: Mutex<Vec<CertificateDer<'static>>>,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let mut seen = vec![end_entity.clone().into_owned()];
        seen.extend(intermediates.iter().map(|c| c.clone().into_owned()));
        *self.chain.lock().unwrap_or_else(PoisonError::into_inner) = seen;
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// One GET of the products list without a token, through the client's own network settings.
async fn unauthenticated_request(config: &ConnectionConfig) -> Result<String, String> {
    let builder = reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .timeout(config.request_timeout);
    let client = network::configure(builder, &config.network)
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!(
        "{}/partner/v2/products?limit=1",
        config.base_url.as_str().trim_end_matches('/')
    );
    let response = client.get(&url).send().await.map_err(|e| {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(inner) = source {
            message.push_str(&format!(": {inner}"));
            source = inner.source();
        }
        message
    })?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("not sent")
            .to_owned()
    };
    Ok(format!(
        "GET /partner/v2/products without a token: {} over {:?}; server {}; content-type {}",
        response.status(),
        response.version(),
        header("server"),
        header("content-type")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_matches_hosts_and_domains() {
        assert!(bypassed("api.corp.example", ".corp.example"));
        assert!(bypassed("api.corp.example", "other, corp.example"));
        assert!(bypassed("anything", "*"));
        assert!(!bypassed("api.corp.example", "example.org"));
        assert!(!bypassed("api.corp.example", ""));
    }
}

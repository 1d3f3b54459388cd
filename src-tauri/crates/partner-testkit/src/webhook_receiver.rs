//! A partner's webhook receiver as partners write them, for the conformance check's tests: it
//! verifies `Svc-Signature` over the raw body, deduplicates on eventId and acknowledges with
//! 200, unless told to break exactly one rule ([`Misbehaviour`]). It serves plain HTTP or
//! HTTPS with a certificate from a [`TestCa`] (a private CA made with rcgen, as a company's
//! own CA would be) or a self-signed one; [`Tls11Receiver`] is a TLS 1.1-only endpoint
//! (`openssl s_server`, since rustls speaks nothing older than TLS 1.2).
//!
//! Every request it got is kept ([`WebhookReceiver::requests`]) so a test can see what the
//! check sent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use partner_api::signature::{self, SIGNATURE_HEADER};
use partner_api::{Notification, NotificationText, Secret};
use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_util::sync::CancellationToken;

/// The one rule a receiver breaks (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehaviour {
    /// Follows every rule.
    None,
    /// Never checks the signature: acknowledges anything.
    AcceptsBadSignature,
    /// Verifies the signature over its compact re-serialisation of the body, keys in arrival
    /// order, instead of the raw body: `JSON.stringify(req.body)`, the public samples' mistake.
    VerifiesCompactReserialisation,
    /// Verifies over the body re-serialised with its keys sorted (compact).
    VerifiesSortedReserialisation,
    /// Verifies over the body pretty-printed (`JSON.stringify(req.body, null, 2)`).
    VerifiesPrettyReserialisation,
    /// Verifies at once, but acknowledges a valid notification only after this long.
    AnswersSlowly(Duration),
    /// Puts the signing key in the body of its 401.
    LeaksKeyInErrors,
    /// Answers a notification that does not verify with 500 and a Python stack trace.
    StackTraceInErrors,
    /// Answers 409 to an eventId it has seen before.
    RefusesRedelivery,
}

/// A certificate and its private key, DER and PEM.
#[derive(Debug, Clone)]
pub struct ServerCert {
    pub cert_der: Vec<u8>,
    pub cert_pem: String,
    pub key_der: Vec<u8>,
    pub key_pem: String,
}

/// A private certificate authority for tests: its root's PEM is what `--ca-cert` gets.
pub struct TestCa {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    pub fn new() -> Self {
        let key = rcgen::KeyPair::generate().expect("generate a CA key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Partner Console test CA");
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("self-sign the CA");
        Self { cert, key }
    }

    /// The root certificate, PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A server certificate for 127.0.0.1 and localhost, signed by this CA.
    pub fn issue(&self) -> ServerCert {
        let key = rcgen::KeyPair::generate().expect("generate a server key");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .expect("server params");
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("sign a server certificate");
        ServerCert {
            cert_der: cert.der().to_vec(),
            cert_pem: cert.pem(),
            key_der: key.serialize_der(),
            key_pem: key.serialize_pem(),
        }
    }
}

impl TestCa {
    /// A client certificate (for mutual TLS) named `common_name`, signed by this CA.
    pub fn issue_client(&self, common_name: &str) -> ServerCert {
        let key = rcgen::KeyPair::generate().expect("generate a client key");
        let mut params =
            rcgen::CertificateParams::new(Vec::<String>::new()).expect("client params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("sign a client certificate");
        ServerCert {
            cert_der: cert.der().to_vec(),
            cert_pem: cert.pem(),
            key_der: key.serialize_der(),
            key_pem: key.serialize_pem(),
        }
    }
}

impl Default for TestCa {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerCert {
    /// A self-signed certificate for 127.0.0.1 and localhost.
    pub fn self_signed() -> Self {
        let certified =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
                .expect("self-sign a certificate");
        Self {
            cert_der: certified.cert.der().to_vec(),
            cert_pem: certified.cert.pem(),
            key_der: certified.key_pair.serialize_der(),
            key_pem: certified.key_pair.serialize_pem(),
        }
    }
}

/// How the receiver is reached.
#[derive(Debug, Clone)]
pub enum Transport {
    Http,
    /// HTTPS (TLS 1.2 and 1.3) with this certificate.
    Https(ServerCert),
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Arrived {
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Debug)]
struct ReceiverState {
    key: Secret,
    misbehaviour: Misbehaviour,
    seen: Mutex<HashSet<String>>,
    arrived: Mutex<Vec<Arrived>>,
}

/// A running receiver on 127.0.0.1 port 0; dropping it stops it.
#[derive(Debug)]
pub struct WebhookReceiver {
    url: String,
    state: Arc<ReceiverState>,
    stop: CancellationToken,
}

impl WebhookReceiver {
    /// Starts a receiver that holds `key` and breaks the rule `misbehaviour` names.
    pub async fn start(
        key: Secret,
        misbehaviour: Misbehaviour,
        transport: Transport,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(ReceiverState {
            key,
            misbehaviour,
            seen: Mutex::new(HashSet::new()),
            arrived: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(receive)
            .with_state(Arc::clone(&state));
        let stop = CancellationToken::new();
        let url = match transport {
            Transport::Http => {
                let shutdown = stop.clone().cancelled_owned();
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(shutdown)
                        .await;
                });
                format!("http://{addr}/hook")
            }
            Transport::Https(cert) => {
                let acceptor = tls_acceptor(&cert)?;
                tokio::spawn(serve_tls(listener, acceptor, app, stop.clone()));
                format!("https://{addr}/hook")
            }
        };
        Ok(Self { url, state, stop })
    }

    /// `http(s)://127.0.0.1:PORT/hook`
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request that arrived, oldest first.
    pub fn requests(&self) -> Vec<Arrived> {
        self.state
            .arrived
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn tls_acceptor(cert: &ServerCert) -> io::Result<tokio_rustls::TlsAcceptor> {
    tls_acceptor_with(cert, None)
}

/// An acceptor with `cert`; with `client_ca_pem`, a client certificate issued by that CA is
/// required (mutual TLS) and a client without one fails the handshake.
pub(crate) fn tls_acceptor_with(
    cert: &ServerCert,
    client_ca_pem: Option<&str>,
) -> io::Result<tokio_rustls::TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        cert.key_der.clone(),
    ));
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(io::Error::other)?;
    let builder = match client_ca_pem {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            use rustls::pki_types::pem::PemObject as _;
            let mut roots = rustls::RootCertStore::empty();
            for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots
                    .add(certificate.map_err(io::Error::other)?)
                    .map_err(io::Error::other)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(io::Error::other)?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(
                cert.cert_der.clone(),
            )],
            key,
        )
        .map_err(io::Error::other)?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

pub(crate) async fn serve_tls(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: Router,
    stop: CancellationToken,
) {
    loop {
        let (tcp, _) = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            // A handshake that fails (a probe that gives up, a client that distrusts the
            // certificate) ends this connection only.
            let Ok(Ok(tls)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
            else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service);
            tokio::select! {
                () = stop.cancelled() => {}
                _ = connection => {}
            }
        });
    }
}

/// The body without the white space outside strings: what `JSON.stringify(JSON.parse(body))`
/// writes for a body without escapes to normalise, keys in the order they arrived.
fn compact_in_arrival_order(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let (mut in_string, mut escaped) = (false, false);
    for &byte in body {
        if in_string {
            out.push(byte);
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if !byte.is_ascii_whitespace() {
            in_string = byte == b'"';
            out.push(byte);
        }
    }
    out
}

/// `value` with every object's keys sorted (whatever map serde_json was built with).
fn sorted_keys(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut sorted = serde_json::Map::new();
            for key in keys {
                sorted.insert(key.clone(), sorted_keys(&map[key]));
            }
            serde_json::Value::Object(sorted)
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(sorted_keys).collect())
        }
        other => other.clone(),
    }
}

async fn receive(
    State(state): State<Arc<ReceiverState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state
        .arrived
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Arrived {
            headers: headers.clone(),
            body: body.clone(),
        });
    let key = state.key.expose().as_bytes();
    let signature = headers
        .get(SIGNATURE_HEADER)
        .and_then(|value| value.to_str().ok());
    let verified = match state.misbehaviour {
        Misbehaviour::AcceptsBadSignature => true,
        Misbehaviour::VerifiesCompactReserialisation => signature.is_some_and(|signature| {
            signature::verify(key, &compact_in_arrival_order(&body), signature)
        }),
        Misbehaviour::VerifiesSortedReserialisation => signature.is_some_and(|signature| {
            serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .map(|value| sorted_keys(&value).to_string())
                .is_some_and(|again| signature::verify(key, again.as_bytes(), signature))
        }),
        // The notification's own key order is the order every probe arrives in.
        Misbehaviour::VerifiesPrettyReserialisation => signature.is_some_and(|signature| {
            serde_json::from_slice::<Notification>(&body)
                .ok()
                .and_then(|parsed| serde_json::to_vec_pretty(&parsed).ok())
                .is_some_and(|again| signature::verify(key, &again, signature))
        }),
        _ => signature.is_some_and(|signature| signature::verify(key, &body, signature)),
    };
    if !verified {
        let error = if state.misbehaviour == Misbehaviour::LeaksKeyInErrors {
            format!(
                "{{\"error\":\"signature mismatch\",\"detail\":\"expected HMAC-SHA256 of the body under {}\"}}",
                state.key.expose()
            )
        } else {
            "{\"error\":\"invalid signature\"}".to_owned()
        };
        if state.misbehaviour == Misbehaviour::StackTraceInErrors {
            let trace = "Traceback (most recent call last):\n  File \"/srv/hooks/app.py\", line 41, in receive\n    verify(request)\nValueError: signature mismatch\n";
            return (StatusCode::INTERNAL_SERVER_ERROR, trace).into_response();
        }
        return (StatusCode::UNAUTHORIZED, error).into_response();
    }
    let Ok(notification) = serde_json::from_slice::<NotificationText<'_>>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            "{\"error\":\"not a notification\"}",
        )
            .into_response();
    };
    let first_time = state
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(format!(
            "{}/{}",
            notification.meta.resource_type, notification.event_id
        ));
    if !first_time && state.misbehaviour == Misbehaviour::RefusesRedelivery {
        return (StatusCode::CONFLICT, "{\"error\":\"already processed\"}").into_response();
    }
    if let Misbehaviour::AnswersSlowly(delay) = state.misbehaviour {
        tokio::time::sleep(delay).await;
    }
    (
        StatusCode::OK,
        format!("{{\"received\":true,\"duplicate\":{}}}", !first_time),
    )
        .into_response()
}

/// An HTTPS endpoint that speaks TLS 1.1 only: `openssl s_server -tls1_1` with a certificate
/// of a [`TestCa`] (so only the TLS version is wrong). Killed when dropped.
#[derive(Debug)]
pub struct Tls11Receiver {
    url: String,
    _child: tokio::process::Child,
    _files: tempfile::TempDir,
}

impl Tls11Receiver {
    /// Starts `openssl s_server` on 127.0.0.1 port 0. An error says why it could not (no
    /// `openssl` on the PATH, or it did not start listening within 10 s).
    pub async fn start(cert: &ServerCert) -> io::Result<Self> {
        let files = tempfile::Builder::new()
            .prefix("partner-tls11-")
            .tempdir()?;
        let cert_path = files.path().join("cert.pem");
        let key_path = files.path().join("key.pem");
        std::fs::write(&cert_path, &cert.cert_pem)?;
        std::fs::write(&key_path, &cert.key_pem)?;
        let mut child = tokio::process::Command::new("openssl")
            .arg("s_server")
            .args(["-accept", "127.0.0.1:0", "-naccept", "1000"])
            .arg("-cert")
            .arg(&cert_path)
            .arg("-key")
            .arg(&key_path)
            // OpenSSL 3 allows TLS 1.1 only at security level 0.
            .args(["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0", "-www"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout from openssl"))?;
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(addr) = line.strip_prefix("ACCEPT ") {
                    let addr: SocketAddr = addr
                        .trim()
                        .parse()
                        .map_err(|_| io::Error::other(format!("openssl printed {line:?}")))?;
                    return Ok(addr.port());
                }
            }
            Err(io::Error::other("openssl s_server ended before listening"))
        })
        .await
        .map_err(|_| io::Error::other("openssl s_server did not listen within 10 s"))??;
        // Keep reading its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Self {
            url: format!("https://127.0.0.1:{port}/hook"),
            _child: child,
            _files: files,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

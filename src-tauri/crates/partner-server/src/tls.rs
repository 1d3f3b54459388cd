//! HTTPS on the team server itself (`partner server run --tls-cert FILE --tls-key FILE`), for a
//! team with no reverse proxy in front of it: consoles send members' tokens and read captures,
//! so anything beyond a private network needs TLS, and one binary with two PEM files is the
//! least a small team can run.
//!
//! The certificate chain and its key are read once, at start ([`load`]), and checked there: a
//! missing file, a file that holds no PEM certificate or key, or a key that is not the
//! certificate's is refused by the file's name before anything is bound, instead of failing on
//! every handshake later. A file's bytes never reach a message (a key file given by mistake for
//! the certificate would otherwise be printed), and the key file's bytes are wiped once parsed.
//!
//! rustls with the ring provider, as the rest of the tree; TLS 1.2 and 1.3; ALPN offers h2 and
//! http/1.1 (axum's connection builder serves both). Serving stays `axum::serve`'s (its graceful
//! shutdown, `ConnectInfo<SocketAddr>` for the failed-login limiter): [`TlsListener`] is only
//! the listener it accepts from, handshaking each connection in its own task, so a slow or
//! failed handshake holds up no other (each has [`HANDSHAKE_TIMEOUT`]). A plain-HTTP request
//! to the TLS port is answered 400 in plain HTTP, saying to use https, and closed.

use crate::error::{Error, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_rustls::rustls;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use zeroize::Zeroizing;

use rustls::pki_types::pem::{self, PemObject as _};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// How long a connection has to complete its TLS handshake before it is closed.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The first byte of a TLS record carrying a handshake (a ClientHello starts with it).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// A certificate chain and its key, checked and ready to serve.
#[derive(Clone)]
pub struct TlsConfig {
    config: Arc<rustls::ServerConfig>,
    cert_file: PathBuf,
}

impl std::fmt::Debug for TlsConfig {
    // The certificate's file only: nothing of the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("cert_file", &self.cert_file)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// The certificate chain's file, as given.
    pub fn cert_file(&self) -> &Path {
        &self.cert_file
    }
}

/// Reads the certificate chain (PEM, the server's certificate first, then any intermediates)
/// and its private key (PEM: PKCS#8, RSA or SEC1, unencrypted), and checks that the key is the
/// certificate's. Every refusal is [`Error::Invalid`] naming the file.
pub fn load(cert_file: &Path, key_file: &Path) -> Result<TlsConfig> {
    let chain = read_chain(cert_file)?;
    let key = read_key(key_file)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|error| {
            Error::Invalid(format!(
                "the TLS key file {} holds a key that cannot be used: {error}",
                key_file.display()
            ))
        })?;
    let certified = rustls::sign::CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        // Unknown: the key type cannot say its public key (never so for ring's keys).
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(Error::Invalid(format!(
                "the TLS key file {} is not the key of the certificate in {}: give the key the \
                 certificate was issued for",
                key_file.display(),
                cert_file.display()
            )))
        }
        Err(error) => {
            return Err(Error::Invalid(format!(
                "the TLS certificate file {} holds a certificate that cannot be read: {error}",
                cert_file.display()
            )))
        }
    }
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| Error::Invalid(format!("TLS: {error}")))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsConfig {
        config: Arc::new(config),
        cert_file: cert_file.to_path_buf(),
    })
}

fn read_file(what: &str, path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    std::fs::read(path).map(Zeroizing::new).map_err(|error| {
        Error::Invalid(if error.kind() == std::io::ErrorKind::NotFound {
            format!("the TLS {what} file {} does not exist", path.display())
        } else {
            format!(
                "the TLS {what} file {} could not be read: {error}",
                path.display()
            )
        })
    })
}

/// What a PEM parser's refusal says, without the line it quotes (which may be a key's).
fn pem_refusal(what: &str, path: &Path, error: &pem::Error) -> Error {
    let why = match error {
        pem::Error::Base64Decode(_) => "a PEM section is not valid base64",
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line",
        pem::Error::IllegalSectionStart { .. } => "a PEM BEGIN line is malformed",
        pem::Error::SectionTooLarge => "a PEM section is too large",
        _ => "it is not PEM",
    };
    Error::Invalid(format!(
        "the TLS {what} file {} could not be read: {why}",
        path.display()
    ))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = read_file("certificate", path)?;
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|error| pem_refusal("certificate", path, &error))?;
    if chain.is_empty() {
        return Err(Error::Invalid(format!(
            "the TLS certificate file {} holds no certificate (PEM, -----BEGIN CERTIFICATE-----)",
            path.display()
        )));
    }
    Ok(chain)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let bytes = read_file("key", path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|error| match error {
        pem::Error::NoItemsFound => Error::Invalid(format!(
            "the TLS key file {} holds no private key (PEM: PKCS#8 -----BEGIN PRIVATE KEY-----, \
             RSA or SEC1; unencrypted)",
            path.display()
        )),
        error => pem_refusal("key", path, &error),
    })
}

/// Connections that completed their handshake, from a TCP listener: what `axum::serve` accepts
/// from when the server speaks HTTPS. Dropping it (the server stopping) closes the port.
pub(crate) struct TlsListener {
    local_addr: SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    acceptor: JoinHandle<()>,
}

/// Starts taking connections on `listener`, each handshaken in its own task.
pub(crate) fn listen(listener: TcpListener, tls: &TlsConfig) -> std::io::Result<TlsListener> {
    let local_addr = listener.local_addr()?;
    let (sender, accepted) = mpsc::channel(64);
    let acceptor = TlsAcceptor::from(tls.config.clone());
    let acceptor = tokio::spawn(accept_loop(listener, acceptor, sender));
    Ok(TlsListener {
        local_addr,
        accepted,
        acceptor,
    })
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(connection) => connection,
            // The accept loop never ends while this listener lives.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    handshaken: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // As axum's own loop: a connection gone before it was taken is nothing; else
                // (out of file descriptors) wait a moment.
                if !matches!(
                    error.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                ) {
                    tracing::error!("accept error: {error}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let handshaken = handshaken.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&acceptor, stream)).await {
                Ok(Some(tls)) => {
                    // Err: the server is stopping; the connection is dropped.
                    let _ = handshaken.send((tls, peer)).await;
                }
                Ok(None) => {}
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

/// The connection's handshake, or None (a plain-HTTP request answered, a failure logged).
async fn handshake(acceptor: &TlsAcceptor, stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    let peer = stream.peer_addr().ok();
    let mut first = [0u8; 1];
    match stream.peek(&mut first).await {
        Ok(0) | Err(_) => return None,
        Ok(_) if first[0] != TLS_HANDSHAKE_RECORD => {
            answer_plain_http(stream).await;
            return None;
        }
        Ok(_) => {}
    }
    match acceptor.accept(stream).await {
        Ok(tls) => Some(tls),
        Err(error) => {
            tracing::debug!(?peer, "TLS handshake failed: {error}");
            None
        }
    }
}

/// A request in plain HTTP on the HTTPS port: 400 saying so (as nginx does), then closed.
async fn answer_plain_http(mut stream: TcpStream) {
    // Read what came (a request's head) first: closing with it unread would reset the
    // connection before the client reads the answer.
    let mut request = [0u8; 8192];
    let _ = stream.read(&mut request).await;
    let body = "this server speaks HTTPS: use an https:// URL\n";
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_non_pem_files_are_refused_by_name_without_their_contents() {
        let folder = tempfile::tempdir().unwrap();
        let cert = folder.path().join("cert.pem");
        let key = folder.path().join("key.pem");
        let error = load(&cert, &key).unwrap_err().to_string();
        assert!(error.contains("cert.pem does not exist"), "{error}");

        std::fs::write(&cert, "not a certificate").unwrap();
        let error = load(&cert, &key).unwrap_err().to_string();
        assert!(error.contains("cert.pem holds no certificate"), "{error}");

        std::fs::write(
            &key,
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0aXNo!!\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let error = read_key(&key).unwrap_err().to_string();
        assert!(error.contains("key.pem could not be read"), "{error}");
        assert!(!error.contains("c2VjcmV0aXNo"), "{error}");

        std::fs::write(&key, "secretish").unwrap();
        let error = read_key(&key).unwrap_err().to_string();
        assert!(error.contains("key.pem holds no private key"), "{error}");
        assert!(!error.contains("secretish"), "{error}");
    }
}

//! The TLS side of the endpoint requirements: which versions the receiver accepts, and whether
//! its certificate chains to a trusted certificate authority.
//!
//! Why it is done this way:
//! - Versions are named by shaking hands twice with rustls, once allowing TLS 1.3 only and once
//!   TLS 1.2 only. rustls speaks nothing older, so a receiver that only offers TLS 1.1 fails
//!   both, and the report can say it accepts neither 1.2 nor 1.3 (which is also why the service,
//!   which requires 1.2, could never deliver to it).
//! - The handshakes accept any certificate but keep the chain the receiver presented, which is
//!   then verified on its own against the trusted roots (Mozilla's, as reqwest uses, plus any
//!   `--ca-cert`). So a self-signed certificate fails the certificate rule with its reason and
//!   does not hide the version rule.
//! - When the chain is not trusted, the notifications that check the other rules trust exactly
//!   the certificate the receiver presented (pinned), nothing else, so a receiver with a
//!   self-signed certificate still learns whether it verifies signatures.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme, SupportedProtocolVersion,
};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpStream;

/// The crypto of every TLS connection the check makes (reqwest's is ring too).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file's text (a private CA's root, say). No certificate in it is
/// an error, as is text that is not PEM.
pub fn certificates_from_pem(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a PEM certificate file ({e})"))?;
    if certificates.is_empty() {
        return Err("no certificate in it (expected -----BEGIN CERTIFICATE-----)".into());
    }
    Ok(certificates)
}

/// Mozilla's roots (as reqwest uses) and `extra`.
pub fn root_store(extra: &[CertificateDer<'static>]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for certificate in extra {
        roots
            .add(certificate.clone())
            .map_err(|e| format!("a --ca-cert certificate cannot be a trusted root: {e}"))?;
    }
    Ok(roots)
}

/// The two versions rustls can offer, newest first, with the names the report uses.
pub const VERSIONS: [(&SupportedProtocolVersion, &str); 2] = [
    (&rustls::version::TLS13, "TLS 1.3"),
    (&rustls::version::TLS12, "TLS 1.2"),
];

/// One handshake restricted to one version.
#[derive(Debug)]
pub struct Handshake {
    pub version: &'static str,
    /// The chain the receiver presented, end entity first (empty when it sent none).
    pub chain: Vec<CertificateDer<'static>>,
    /// Why the handshake failed; `None` when it succeeded.
    pub refused: Option<String>,
}

/// Could not even open a TCP connection: the receiver is not reachable.
#[derive(Debug)]
pub struct Unreachable(pub String);

/// Shakes hands with `host:port` allowing only `version`; the certificate is recorded, not
/// judged. Nothing is sent after the handshake.
pub async fn handshake(
    host: &str,
    port: u16,
    server_name: ServerName<'static>,
    version: (&'static SupportedProtocolVersion, &'static str),
    timeout: Duration,
) -> Result<Handshake, Unreachable> {
    let recorder = Arc::new(CertificateCheck::recording(provider()));
    let config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[version.0])
        .map_err(|e| Unreachable(format!("TLS could not be set up: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::clone(&recorder) as Arc<dyn ServerCertVerifier>)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = match tokio::time::timeout(timeout, TcpStream::connect((host, port))).await {
        Err(_) => {
            return Err(Unreachable(format!(
                "no TCP connection to {host}:{port} within {}",
                humanize(timeout)
            )))
        }
        Ok(Err(error)) => return Err(Unreachable(format!("{host}:{port}: {error}"))),
        Ok(Ok(tcp)) => tcp,
    };
    let refused = match tokio::time::timeout(timeout, connector.connect(server_name, tcp)).await {
        Err(_) => Some(format!("no handshake within {}", humanize(timeout))),
        Ok(Err(error)) => Some(describe_io(&error)),
        Ok(Ok(stream)) => {
            let (_, connection) = stream.get_ref();
            let agreed = connection.protocol_version();
            let wanted = version.0.version;
            (agreed != Some(wanted))
                .then(|| format!("the handshake agreed on {agreed:?}, not {wanted:?}"))
        }
    };
    Ok(Handshake {
        version: version.1,
        chain: recorder.chain(),
        refused,
    })
}

fn humanize(duration: Duration) -> String {
    crate::report::format_ms(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// A handshake error in words: rustls's own error where there is one.
fn describe_io(error: &std::io::Error) -> String {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<TlsError>())
    {
        Some(TlsError::AlertReceived(alert)) => {
            format!("the receiver refused it (TLS alert: {alert:?})")
        }
        Some(tls) => tls.to_string(),
        None => match error.kind() {
            std::io::ErrorKind::UnexpectedEof => "the receiver closed the connection".into(),
            std::io::ErrorKind::ConnectionReset => "the receiver reset the connection".into(),
            _ => error.to_string(),
        },
    }
}

/// Whether `chain` is trusted for `server_name` under `roots`; the reason when not.
pub fn verify_chain(
    chain: &[CertificateDer<'static>],
    server_name: &ServerName<'static>,
    roots: RootCertStore,
) -> Result<(), String> {
    let Some((end_entity, intermediates)) = chain.split_first() else {
        return Err("the receiver presented no certificate".into());
    };
    let verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| format!("the trusted roots could not be used: {e}"))?;
    match verifier.verify_server_cert(end_entity, intermediates, server_name, &[], UnixTime::now())
    {
        Ok(_) => Ok(()),
        Err(TlsError::InvalidCertificate(CertificateError::UnknownIssuer))
            if is_self_signed(end_entity, server_name) =>
        {
            Err(
                "the certificate is self-signed; the service needs one signed by a certificate \
                 authority"
                    .into(),
            )
        }
        Err(TlsError::InvalidCertificate(CertificateError::UnknownIssuer)) => Err(
            "the certificate is not signed by a trusted certificate authority (unknown issuer; \
             a private CA's root can be added with --ca-cert)"
                .into(),
        ),
        Err(TlsError::InvalidCertificate(CertificateError::NotValidForName))
        | Err(TlsError::InvalidCertificate(CertificateError::NotValidForNameContext { .. })) => {
            Err(format!(
                "the certificate is not valid for {}",
                server_name.to_str()
            ))
        }
        Err(TlsError::InvalidCertificate(CertificateError::Expired))
        | Err(TlsError::InvalidCertificate(CertificateError::ExpiredContext { .. })) => {
            Err("the certificate has expired".into())
        }
        Err(error) => Err(format!("the certificate is not trusted: {error}")),
    }
}

/// A certificate that verifies when it is its own only trusted root signed itself.
fn is_self_signed(end_entity: &CertificateDer<'static>, server_name: &ServerName<'static>) -> bool {
    let mut own = RootCertStore::empty();
    if own.add(end_entity.clone()).is_err() {
        return false;
    }
    rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(own), provider())
        .build()
        .is_ok_and(|verifier| {
            verifier
                .verify_server_cert(end_entity, &[], server_name, &[], UnixTime::now())
                .is_ok()
        })
}

/// The TLS configuration of the notifications: the trusted roots, or, when the receiver's
/// chain is not trusted, its end-entity certificate pinned.
pub fn client_config(
    roots: RootCertStore,
    pinned: Option<CertificateDer<'static>>,
) -> Result<ClientConfig, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS could not be set up: {e}"))?;
    Ok(match pinned {
        None => builder.with_root_certificates(roots).with_no_client_auth(),
        Some(certificate) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(CertificateCheck::pinned(
                provider(),
                certificate,
            )))
            .with_no_client_auth(),
    })
}

/// The certificate check of this module's two TLS clients. The handshake's signatures are
/// always verified; what differs is which certificate is accepted:
/// - `Record`: any, during a version probe, keeping the chain to be judged apart (so a
///   self-signed certificate fails its own rule without hiding the others);
/// - `Pin`: exactly the end-entity certificate the receiver presented at the probe.
#[derive(Debug)]
struct CertificateCheck {
    provider: Arc<CryptoProvider>,
    mode: CheckMode,
}

#[derive(Debug)]
enum CheckMode {
    Record(Mutex<Vec<CertificateDer<'static>>>),
    Pin(CertificateDer<'static>),
}

impl CertificateCheck {
    fn recording(provider: Arc<CryptoProvider>) -> Self {
        Self {
            provider,
            mode: CheckMode::Record(Mutex::new(Vec::new())),
        }
    }

    fn pinned(provider: Arc<CryptoProvider>, certificate: CertificateDer<'static>) -> Self {
        Self {
            provider,
            mode: CheckMode::Pin(certificate),
        }
    }

    /// The chain a recording check saw (empty for a pinned one).
    fn chain(&self) -> Vec<CertificateDer<'static>> {
        match &self.mode {
            CheckMode::Record(chain) => {
                chain.lock().unwrap_or_else(PoisonError::into_inner).clone()
            }
            CheckMode::Pin(_) => Vec::new(),
        }
    }
}

impl ServerCertVerifier for CertificateCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        match &self.mode {
            CheckMode::Record(chain) => {
                let mut seen = vec![end_entity.clone().into_owned()];
                seen.extend(intermediates.iter().map(|c| c.clone().into_owned()));
                *chain.lock().unwrap_or_else(PoisonError::into_inner) = seen;
                Ok(ServerCertVerified::assertion())
            }
            CheckMode::Pin(certificate) if end_entity.as_ref() == certificate.as_ref() => {
                Ok(ServerCertVerified::assertion())
            }
            CheckMode::Pin(_) => Err(TlsError::InvalidCertificate(
                CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

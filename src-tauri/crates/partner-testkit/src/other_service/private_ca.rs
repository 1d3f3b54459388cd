//! The other service over TLS with a certificate from a private CA of its own, that CA's PEM
//! written to a file (and client certificates from it for mutual TLS): a company network's
//! service, as a user would hand it to the console.

use super::{Dialect, OtherService, ServiceTls};

/// The other service over TLS with a certificate from a private CA of its own (one no machine
/// trusts), and that CA's PEM written to a file, as a user would hand it to the console. With
/// `client_certificates`, the service also requires a client certificate from that CA, and
/// [`PrivateCaService::client_certificate`] writes one.
#[derive(Debug)]
pub struct PrivateCaService {
    pub service: OtherService,
    pub ca: crate::TestCa,
    /// The CA's certificate (PEM), in a folder kept as long as this value.
    pub ca_file: std::path::PathBuf,
    files: tempfile::TempDir,
}

impl PrivateCaService {
    pub async fn start(dialect: Dialect, client_certificates: bool) -> Self {
        let ca = crate::TestCa::new();
        let service = OtherService::start_tls(
            dialect,
            ServiceTls {
                certificate: ca.issue(),
                client_ca_pem: client_certificates.then(|| ca.pem()),
            },
        )
        .await;
        let files = tempfile::tempdir().expect("a folder for the certificates");
        let ca_file = files.path().join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).expect("write the CA file");
        Self {
            service,
            ca,
            ca_file,
            files,
        }
    }

    /// A client certificate issued by the CA: the paths of its certificate and its private
    /// key (both PEM).
    pub fn client_certificate(
        &self,
        common_name: &str,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let issued = self.ca.issue_client(common_name);
        let cert = self.files.path().join("client.pem");
        let key = self.files.path().join("client-key.pem");
        std::fs::write(&cert, &issued.cert_pem).expect("write the client certificate");
        std::fs::write(&key, &issued.key_pem).expect("write the client key");
        (cert, key)
    }
}

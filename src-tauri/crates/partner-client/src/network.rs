//! How a connection reaches the service from a company network: whose certificates it trusts,
//! which proxy it goes through, and which client certificate it shows. [`configure`] applies a
//! connection's [`NetworkOptions`] to the one reqwest client of [`crate::http`].
//!
//! Why it is done this way:
//! - Trust is the operating system's store, read by `rustls-native-certs` (reqwest's
//!   `rustls-tls-native-roots`), not the Mozilla roots bundled into the binary, so a company's
//!   TLS-inspecting proxy, whose CA the machine trusts, works. Chosen over
//!   `rustls-platform-verifier` (both are kept by the rustls project) because
//!   `rustls-native-certs` honours `SSL_CERT_FILE` and `SSL_CERT_DIR` on every platform, as
//!   OpenSSL-based tools (curl, git, Python) do, which is how a CA is usually handed to command
//!   line tools behind such a proxy; the platform verifier asks the macOS and Windows verifiers
//!   and ignores those variables there. The bundled roots are switched off so "trusted" means
//!   one thing: what the machine trusts, plus the connection's own extra CA.
//! - Proxies: with no proxy of its own, reqwest reads `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`
//!   and `NO_PROXY` (either case) from the environment: its default, kept (nothing here calls
//!   `no_proxy`). A connection's own proxy replaces the environment's for every call (reqwest
//!   stops reading the environment once a proxy is given), so a saved connection behaves the
//!   same whatever shell it is used from.
//! - Credentials never sit in a URL: the proxy's user and password are given apart (the URL is
//!   refused if it carries them) so the URL can be saved and shown, and the password and the
//!   client certificate's private key are [`Secret`]s, kept in the keychain when saved
//!   ([`crate::SecretSlot::ProxyPassword`], [`crate::SecretSlot::ClientCertificateKey`]).

use crate::error::{ClientError, Result};
use partner_api::Secret;
use std::path::{Path, PathBuf};
use url::Url;

/// A connection's network options; the default is the machine's own (its trust store and its
/// environment's proxy).
#[derive(Debug, Clone, Default)]
pub struct NetworkOptions {
    /// A proxy for this connection, replacing `HTTPS_PROXY`/`HTTP_PROXY`.
    pub proxy: Option<ProxyOptions>,
    /// A PEM file of one or more CA certificates trusted beside the operating system's store.
    pub extra_ca_file: Option<PathBuf>,
    /// A client certificate shown to the service (mutual TLS).
    pub client_certificate: Option<ClientCertificate>,
}

/// A connection's own proxy.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// `http://host:port` (or `https://`), without credentials.
    pub url: Url,
    pub user: Option<String>,
    pub password: Option<Secret>,
}

impl ProxyOptions {
    /// Checks the URL (http or https, a host, no credentials in it) and that a password comes
    /// with a user.
    pub fn new(url: &str, user: Option<String>, password: Option<Secret>) -> Result<Self> {
        let parsed = Url::parse(url.trim())
            .map_err(|e| ClientError::input(format!("the proxy URL is not a valid URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(ClientError::input(
                "the proxy URL must be an http:// or https:// address with a host",
            ));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(ClientError::input(
                "the proxy URL may not carry credentials; give the proxy user and password separately",
            ));
        }
        let user = user.filter(|u| !u.trim().is_empty());
        let password = password.filter(|p| !p.is_empty());
        if password.is_some() && user.is_none() {
            return Err(ClientError::input(
                "a proxy password was given without a proxy user",
            ));
        }
        if user.as_deref().is_some_and(|u| u.contains(':')) {
            return Err(ClientError::input("the proxy user may not contain `:`"));
        }
        Ok(Self {
            url: parsed,
            user,
            password,
        })
    }

    /// `host:port` of the proxy, for messages.
    pub fn address(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        }
    }
}

/// A client certificate and its private key.
#[derive(Debug, Clone)]
pub struct ClientCertificate {
    /// The certificate (and any intermediates), PEM.
    pub certificate_file: PathBuf,
    /// The private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub private_key: Secret,
}

impl ClientCertificate {
    /// Reads the key from `key_file` into memory; the caller may then keep it in the keychain
    /// and forget the file.
    pub fn from_files(certificate_file: &Path, key_file: &Path) -> Result<Self> {
        let key = std::fs::read_to_string(key_file).map_err(|e| {
            ClientError::input(format!(
                "the client key file {} could not be read ({e})",
                key_file.display()
            ))
        })?;
        if !key.contains("PRIVATE KEY-----") {
            return Err(ClientError::input(format!(
                "the client key file {} holds no PEM private key",
                key_file.display()
            )));
        }
        Ok(Self {
            certificate_file: certificate_file.to_path_buf(),
            private_key: Secret::new(key),
        })
    }
}

/// Applies `options` to a client being built: trust, proxy and client certificate.
pub(crate) fn configure(
    builder: reqwest::ClientBuilder,
    options: &NetworkOptions,
) -> Result<reqwest::ClientBuilder> {
    let mut builder = builder
        .tls_built_in_webpki_certs(false)
        .tls_built_in_native_certs(true);
    if let Some(file) = &options.extra_ca_file {
        for certificate in extra_ca_certificates(file)? {
            builder = builder.add_root_certificate(certificate);
        }
    }
    if let Some(proxy) = &options.proxy {
        builder = builder.proxy(reqwest_proxy(proxy)?);
    }
    if let Some(client) = &options.client_certificate {
        builder = builder.identity(identity(client)?);
    }
    Ok(builder)
}

/// The certificates of a CA file, each as reqwest takes them.
pub(crate) fn extra_ca_certificates(file: &Path) -> Result<Vec<reqwest::Certificate>> {
    let pem = read_pem_certificates(file, "CA certificate")?;
    reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| {
        ClientError::input(format!(
            "the CA certificate file {} could not be read as PEM ({e})",
            file.display()
        ))
    })
}

/// A PEM file that must hold at least one certificate.
pub(crate) fn read_pem_certificates(file: &Path, what: &str) -> Result<String> {
    let pem = std::fs::read_to_string(file).map_err(|e| {
        ClientError::input(format!(
            "the {what} file {} could not be read ({e})",
            file.display()
        ))
    })?;
    if !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err(ClientError::input(format!(
            "the {what} file {} holds no PEM certificate",
            file.display()
        )));
    }
    Ok(pem)
}

fn reqwest_proxy(proxy: &ProxyOptions) -> Result<reqwest::Proxy> {
    let mut built = reqwest::Proxy::all(proxy.url.as_str()).map_err(|e| {
        ClientError::input(format!("the proxy {} is not usable ({e})", proxy.address()))
    })?;
    if let Some(user) = &proxy.user {
        let password = proxy.password.as_ref().map_or("", |p| p.expose());
        built = built.basic_auth(user, password);
    }
    Ok(built)
}

fn identity(client: &ClientCertificate) -> Result<reqwest::Identity> {
    let certificate = read_pem_certificates(&client.certificate_file, "client certificate")?;
    // The PEM of certificate and key together, in memory only.
    let mut both = certificate;
    both.push('\n');
    both.push_str(client.private_key.expose());
    reqwest::Identity::from_pem(both.as_bytes()).map_err(|_| {
        // reqwest's own message could quote the key's parse state; say only which file.
        ClientError::input(format!(
            "the client certificate {} and its private key could not be used together as PEM",
            client.certificate_file.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_are_checked() {
        let proxy = ProxyOptions::new("http://proxy.corp:3128", Some("me".into()), None).unwrap();
        assert_eq!(proxy.address(), "proxy.corp:3128");
        assert_eq!(
            ProxyOptions::new("http://proxy.corp", None, None)
                .unwrap()
                .address(),
            "proxy.corp:80"
        );
        assert!(ProxyOptions::new("http://me:pw@proxy.corp:3128", None, None).is_err());
        assert!(ProxyOptions::new("ftp://proxy.corp", None, None).is_err());
        assert!(ProxyOptions::new("not a url", None, None).is_err());
        assert!(
            ProxyOptions::new("http://proxy.corp:3128", None, Some(Secret::new("pw"))).is_err()
        );
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let options = NetworkOptions {
            proxy: Some(
                ProxyOptions::new(
                    "http://proxy.corp:3128",
                    Some("me".into()),
                    Some(Secret::new("proxy-pw-123")),
                )
                .unwrap(),
            ),
            extra_ca_file: None,
            client_certificate: Some(ClientCertificate {
                certificate_file: "c.pem".into(),
                private_key: Secret::new("-----BEGIN PRIVATE KEY-----abc"),
            }),
        };
        let printed = format!("{options:?}");
        assert!(!printed.contains("proxy-pw-123"));
        assert!(!printed.contains("BEGIN PRIVATE KEY"));
    }

    #[test]
    fn unreadable_files_say_which() {
        let missing = Path::new("/nonexistent/ca.pem");
        let error = extra_ca_certificates(missing).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/ca.pem"), "{error}");
    }
}

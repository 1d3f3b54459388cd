//! A saved connection's company network: its own proxy, an extra CA and a client certificate
//! (`partner_client::network`). The paths and names are kept in the settings
//! (`partner_local::ConnectionNetwork`); the proxy password and the client certificate's
//! private key in the keychain (`SecretSlot::ProxyPassword`, `SecretSlot::ClientCertificateKey`),
//! the key read once from its file, whose path is not kept (the CLI's design: `--client-key`
//! only when there is no key in the keychain).
//!
//! Every check is the library's own: `ProxyOptions::new` for the proxy, and the client built
//! from the options reads and parses the CA and certificate files, so a bad file is a clear
//! error when the settings are given, not at the next start. New settings are tried by
//! signing in through them before anything is saved.
use crate::bridge::NetworkForm;
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::Secret;
use partner_client::{ClientCertificate, NetworkOptions, ProxyOptions, SecretSlot, SecretStore};
use partner_local::ConnectionNetwork;
use std::path::PathBuf;
use url::Url;

/// Network options ready to use, with what to keep of them.
#[derive(Debug, Clone, Default)]
pub struct ChosenNetwork {
    pub options: NetworkOptions,
    /// What goes to the settings file.
    pub saved: ConnectionNetwork,
}

fn text(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The form's settings as network options. `kept` gives the secrets already in the keychain
/// (changing a saved connection): a blank secret in the form falls back to them.
pub fn from_form(form: &NetworkForm, kept: &KeptSecrets) -> Result<ChosenNetwork> {
    let proxy_url = text(&form.proxy_url);
    let proxy_user = text(&form.proxy_user);
    let proxy = match &proxy_url {
        None => {
            if proxy_user.is_some() || text(&form.proxy_password).is_some() {
                return Err(AppError::invalid(
                    "A proxy user or password was given without a proxy URL.",
                ));
            }
            None
        }
        Some(url) => {
            let password = match text(&form.proxy_password) {
                Some(typed) => Some(Secret::new(typed)),
                None if form.forget_proxy_password => None,
                None => kept.proxy_password.clone(),
            };
            // A kept password without a user any more is dropped, not an error.
            let password = password.filter(|_| proxy_user.is_some());
            Some(ProxyOptions::new(url, proxy_user.clone(), password)?)
        }
    };
    let ca_cert_file = text(&form.ca_cert_file).map(PathBuf::from);
    let client_cert_file = text(&form.client_cert_file).map(PathBuf::from);
    let client_key_file = text(&form.client_key_file).map(PathBuf::from);
    let client_certificate = match (&client_cert_file, &client_key_file) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err(AppError::invalid(
                "A client key file was given without a client certificate file.",
            ))
        }
        (Some(cert), Some(key)) => Some(ClientCertificate::from_files(cert, key)?),
        (Some(cert), None) => match &kept.client_key {
            Some(key) => Some(ClientCertificate {
                certificate_file: cert.clone(),
                private_key: key.clone(),
            }),
            None => {
                return Err(AppError::invalid(format!(
                    "Give the private key file of the client certificate {}.",
                    cert.display()
                )))
            }
        },
    };
    let saved = ConnectionNetwork {
        proxy_url: proxy.as_ref().map(|p| p.url.as_str().to_string()),
        proxy_user: proxy.as_ref().and_then(|p| p.user.clone()),
        ca_cert_file: ca_cert_file.clone(),
        client_cert_file,
    };
    Ok(ChosenNetwork {
        options: NetworkOptions {
            proxy,
            extra_ca_file: ca_cert_file,
            client_certificate,
        },
        saved,
    })
}

/// The secrets of a connection's network already in the keychain.
#[derive(Debug, Clone, Default)]
pub struct KeptSecrets {
    pub proxy_password: Option<Secret>,
    pub client_key: Option<Secret>,
}

impl KeptSecrets {
    pub fn read(store: &dyn SecretStore, base_url: &Url, client_id: &str) -> Result<Self> {
        Ok(Self {
            proxy_password: store.get(&SecretSlot::proxy_password(base_url, client_id))?,
            client_key: store.get(&SecretSlot::client_certificate_key(base_url, client_id))?,
        })
    }
}

/// The network options of a saved connection, its secrets from the keychain. A secret the
/// settings need and the keychain lacks is a Keychain error that says what to do.
pub fn saved_options(
    store: &dyn SecretStore,
    base_url: &Url,
    client_id: &str,
    network: &ConnectionNetwork,
) -> Result<NetworkOptions> {
    if network.is_default() {
        return Ok(NetworkOptions::default());
    }
    let kept = KeptSecrets::read(store, base_url, client_id)?;
    let proxy = match &network.proxy_url {
        None => None,
        Some(url) => {
            let password = kept
                .proxy_password
                .clone()
                .filter(|_| network.proxy_user.is_some());
            Some(ProxyOptions::new(
                url,
                network.proxy_user.clone(),
                password,
            )?)
        }
    };
    let client_certificate = match &network.client_cert_file {
        None => None,
        Some(cert) => Some(ClientCertificate {
            certificate_file: cert.clone(),
            private_key: kept.client_key.ok_or_else(|| {
                AppError::new(
                    ErrorKind::Keychain,
                    "The private key of this connection's client certificate is not in the keychain.",
                    "Open Network… on the connection and give the client key file again.",
                )
            })?,
        }),
    };
    Ok(NetworkOptions {
        proxy,
        extra_ca_file: network.ca_cert_file.clone(),
        client_certificate,
    })
}

/// Keeps the options' secrets in the keychain and removes the ones they no longer have.
pub fn save_secrets(
    store: &dyn SecretStore,
    base_url: &Url,
    client_id: &str,
    options: &NetworkOptions,
) -> Result<()> {
    let password_slot = SecretSlot::proxy_password(base_url, client_id);
    match options.proxy.as_ref().and_then(|p| p.password.as_ref()) {
        Some(password) => store.set(&password_slot, password)?,
        None => store.delete(&password_slot)?,
    }
    let key_slot = SecretSlot::client_certificate_key(base_url, client_id);
    match &options.client_certificate {
        Some(certificate) => store.set(&key_slot, &certificate.private_key)?,
        None => store.delete(&key_slot)?,
    }
    Ok(())
}

/// Removes a connection's network secrets from the keychain.
pub fn forget_secrets(store: &dyn SecretStore, base_url: &Url, client_id: &str) -> Result<()> {
    store.delete(&SecretSlot::proxy_password(base_url, client_id))?;
    store.delete(&SecretSlot::client_certificate_key(base_url, client_id))?;
    Ok(())
}

/// The secrets already kept for a saved connection (read on a blocking thread).
pub async fn read_kept(state: &AppState, base_url: &Url, client_id: &str) -> Result<KeptSecrets> {
    let (base_url, client_id) = (base_url.clone(), client_id.to_string());
    state
        .with_keychain(move |store| KeptSecrets::read(store, &base_url, &client_id))
        .await?
}

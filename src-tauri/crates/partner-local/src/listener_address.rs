//! Where the webhook listener listens, and what happens when that port is taken.
//!
//! A tunnel (ngrok, cloudflared) forwards to one fixed local port, and every subscription behind
//! it points at the tunnel: so the listener always binds the address the settings name
//! (`127.0.0.1:7070` unless changed, the same as `partner listen`), or the one
//! `PARTNER_LISTENER_ADDR` names for this run, and never falls back to a random port. A taken
//! port is an error that names it and offers a free one nearby, for the user to choose.

use crate::settings::ListenerSettings;
use std::net::{SocketAddr, TcpListener};

/// The variable that overrides the listener's address for one run.
pub const ADDRESS_VARIABLE: &str = "PARTNER_LISTENER_ADDR";
/// How far past a taken port a free one is looked for.
const SUGGESTION_RANGE: u16 = 50;

/// The listener's address and path for this run, and whether the environment chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerAddress {
    pub address: SocketAddr,
    pub path: String,
    /// Set when `PARTNER_LISTENER_ADDR` chose the address (the settings keep theirs).
    pub from_environment: bool,
}

impl ListenerAddress {
    /// The address and path in the settings.
    pub fn from_settings(settings: &ListenerSettings) -> Self {
        Self {
            address: settings.address,
            path: settings.path.clone(),
            from_environment: false,
        }
    }

    /// The settings' address, unless `override_address` (the variable's value) names another.
    pub fn resolve(
        settings: &ListenerSettings,
        override_address: Option<&str>,
    ) -> Result<Self, String> {
        match override_address.map(str::trim).filter(|a| !a.is_empty()) {
            Some(raw) => Ok(Self {
                address: parse_address(raw)
                    .map_err(|e| format!("{ADDRESS_VARIABLE}={raw}: {e}"))?,
                path: settings.path.clone(),
                from_environment: true,
            }),
            None => Ok(Self::from_settings(settings)),
        }
    }

    /// [`ListenerAddress::resolve`] with the variable read from the environment.
    pub fn from_env(settings: &ListenerSettings) -> Result<Self, String> {
        let variable = std::env::var(ADDRESS_VARIABLE).ok();
        Self::resolve(settings, variable.as_deref())
    }

    /// The loopback URL notifications are posted to.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.address, self.path)
    }
}

/// Parses `HOST:PORT` (an IP address; `localhost` is taken as 127.0.0.1).
pub fn parse_address(raw: &str) -> Result<SocketAddr, String> {
    let raw = raw.trim();
    let normalised = raw
        .strip_prefix("localhost:")
        .map(|port| format!("127.0.0.1:{port}"));
    normalised
        .as_deref()
        .unwrap_or(raw)
        .parse::<SocketAddr>()
        .map_err(|_| "give the address as IP:PORT, for example 127.0.0.1:7070".to_string())
}

/// The port is in use: what to tell the user, and a free port to offer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{address} is already in use by another program{}", match .suggestion {
    Some(free) => format!("; {free} is free"),
    None => String::new(),
})]
pub struct PortTaken {
    pub address: SocketAddr,
    pub suggestion: Option<SocketAddr>,
}

/// Why the listener's address could not be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(transparent)]
    Taken(#[from] PortTaken),
    #[error("could not listen on {address}: {source}")]
    Other {
        address: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Binds exactly `address` (a standard listener, non-blocking, for an async runtime to adopt).
pub fn bind(address: SocketAddr) -> Result<TcpListener, BindError> {
    match TcpListener::bind(address) {
        Ok(listener) => {
            listener
                .set_nonblocking(true)
                .map_err(|source| BindError::Other { address, source })?;
            Ok(listener)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(PortTaken {
            address,
            suggestion: free_port_near(address),
        }
        .into()),
        Err(source) => Err(BindError::Other { address, source }),
    }
}

/// The first port after `address`'s that can be bound now, on the same IP.
pub fn free_port_near(address: SocketAddr) -> Option<SocketAddr> {
    (1..=SUGGESTION_RANGE)
        .filter_map(|step| address.port().checked_add(step))
        .map(|port| SocketAddr::new(address.ip(), port))
        .find(|candidate| TcpListener::bind(candidate).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_overrides_the_settings_for_one_run() {
        let settings = ListenerSettings::default();
        let plain = ListenerAddress::resolve(&settings, None).expect("resolve");
        assert_eq!(plain.address.to_string(), "127.0.0.1:7070");
        assert!(!plain.from_environment);
        let chosen = ListenerAddress::resolve(&settings, Some("127.0.0.1:7999")).expect("env");
        assert_eq!(chosen.address.to_string(), "127.0.0.1:7999");
        assert!(chosen.from_environment);
        assert_eq!(chosen.url(), "http://127.0.0.1:7999/webhooks");
        let local = ListenerAddress::resolve(&settings, Some("localhost:7000")).expect("localhost");
        assert_eq!(local.address.to_string(), "127.0.0.1:7000");
        let bad = ListenerAddress::resolve(&settings, Some("seven")).expect_err("bad");
        assert!(bad.contains("PARTNER_LISTENER_ADDR=seven"), "{bad}");
    }

    #[test]
    fn a_taken_port_is_named_and_a_free_one_offered() {
        let holder = TcpListener::bind("127.0.0.1:0").expect("bind");
        let taken = holder.local_addr().expect("addr");
        let Err(BindError::Taken(error)) = bind(taken) else {
            panic!("the port is taken");
        };
        assert_eq!(error.address, taken);
        let free = error.suggestion.expect("a free port nearby");
        assert_ne!(free, taken);
        let message = error.to_string();
        assert!(message.contains(&taken.to_string()), "{message}");
        assert!(message.contains(&format!("{free} is free")), "{message}");
        drop(holder);
        bind(taken).expect("free again once released");
    }
}

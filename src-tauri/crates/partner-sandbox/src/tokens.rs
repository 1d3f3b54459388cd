//! Client credentials and access tokens.
//!
//! Tokens are random 256-bit values; the sandbox keeps only their SHA-256 digests, so even a
//! memory dump of the token table holds nothing a caller could present. Each token carries a
//! [`TokenLifetime`] (partner-api's one home of the 15/120-minute rule) read against the
//! sandbox [`Clock`], so advancing the clock expires tokens exactly as time would.
//!
//! Client secrets are kept the same way, as salted SHA-256 digests ([`SecretDigest`]): the
//! persistent mode writes them to its data file, and a digest is all it needs to check a
//! secret, so the file (and memory) never hold a secret a caller could present.

use crate::clock::Clock;
use crate::config::ClientCredentials;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use partner_api::{Secret, TokenLifetime};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use subtle::ConstantTimeEq;
use uuid::Uuid;

/// Namespace of partner ids derived from client ids (so a client keeps its partner id from
/// one run to the next).
const PARTNER_NAMESPACE: Uuid = Uuid::from_u128(0x6d1f_3c2a_9b4e_4f7a_8c21_5e0b_7a93_d104);
/// Expired tokens are swept from the table every this many issuances.
const SWEEP_EVERY: u64 = 1024;

type TokenDigest = [u8; 32];

/// Bytes of salt in a [`SecretDigest`].
pub const SALT_LEN: usize = 16;

/// A client secret as the sandbox keeps it: SHA-256 over a random salt and the secret.
#[derive(Clone)]
pub struct SecretDigest {
    salt: [u8; SALT_LEN],
    digest: [u8; 32],
}

impl fmt::Debug for SecretDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretDigest([redacted])")
    }
}

impl SecretDigest {
    /// The digest of `secret` under a fresh random salt.
    pub fn of(secret: &Secret) -> Self {
        let mut salt = [0u8; SALT_LEN];
        rand::rng().fill_bytes(&mut salt);
        let digest = Self::hash(&salt, secret.expose());
        Self { salt, digest }
    }

    /// A digest read back from a data file; `None` when a part has the wrong length.
    pub fn from_parts(salt: &[u8], digest: &[u8]) -> Option<Self> {
        Some(Self {
            salt: salt.try_into().ok()?,
            digest: digest.try_into().ok()?,
        })
    }

    pub fn salt(&self) -> &[u8] {
        &self.salt
    }

    pub fn digest(&self) -> &[u8] {
        &self.digest
    }

    fn hash(salt: &[u8], secret: &str) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(salt);
        hasher.update(secret.as_bytes());
        hasher.finalize().into()
    }

    /// Whether `presented` is the secret (digests compared in constant time).
    pub fn matches(&self, presented: &str) -> bool {
        Self::hash(&self.salt, presented).ct_eq(&self.digest).into()
    }
}

/// A registered API client and the partner it acts for.
#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub partner_id: String,
    secret: SecretDigest,
}

impl Client {
    pub fn new(client_id: String, partner_id: String, secret: SecretDigest) -> Self {
        Self {
            client_id,
            partner_id,
            secret,
        }
    }

    /// A client of the config: its partner id derived from its id, its secret digested.
    pub fn from_credentials(credentials: &ClientCredentials) -> Self {
        Self::new(
            credentials.client_id.clone(),
            partner_id_of(&credentials.client_id),
            SecretDigest::of(&credentials.client_secret),
        )
    }

    pub fn secret_digest(&self) -> &SecretDigest {
        &self.secret
    }
}

/// Who made an API call: resolved from a bearer token.
#[derive(Debug, Clone)]
pub struct Caller {
    pub client_id: String,
    pub partner_id: String,
}

#[derive(Debug, Clone)]
struct TokenRecord {
    client_id: String,
    partner_id: String,
    lifetime: TokenLifetime,
}

/// Why a token was refused. All of them are a 401 with the same words outside, but the
/// sandbox logs which one it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    /// Unknown, revoked, or issued to another client.
    Unknown,
    Expired,
}

#[derive(Debug)]
pub struct Tokens {
    clients: HashMap<String, Client>,
    live: Mutex<TokenTable>,
    clock: Clock,
}

#[derive(Debug, Default)]
struct TokenTable {
    tokens: HashMap<TokenDigest, TokenRecord>,
    issued: u64,
}

/// The partner id a client acts for: stable for a client id.
pub fn partner_id_of(client_id: &str) -> String {
    Uuid::new_v5(&PARTNER_NAMESPACE, client_id.as_bytes()).to_string()
}

fn digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

impl Tokens {
    pub fn new(clients: Vec<Client>, clock: Clock) -> Self {
        let clients = clients
            .into_iter()
            .map(|c| (c.client_id.clone(), c))
            .collect();
        Self {
            clients,
            live: Mutex::new(TokenTable::default()),
            clock,
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, TokenTable> {
        // A panic while holding the lock cannot leave the table half-written (every change
        // is a single insert or remove), so a poisoned lock is still safe to use.
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client whose id and secret these are; `None` for an unknown id or a wrong secret
    /// (the caller cannot tell which).
    pub fn authenticate(&self, client_id: &str, secret: &str) -> Option<&Client> {
        let client = self.clients.get(client_id)?;
        client.secret.matches(secret).then_some(client)
    }

    /// Issues a token for an authenticated client; returns it and its `expires_in`.
    pub fn issue(&self, client: &Client) -> (Secret, u64) {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = format!("sbx_{}", URL_SAFE_NO_PAD.encode(bytes));
        let now = self.clock.now();
        let lifetime = TokenLifetime::issued(now);
        let mut table = self.table();
        table.issued += 1;
        if table.issued.is_multiple_of(SWEEP_EVERY) {
            table.tokens.retain(|_, t| t.lifetime.is_active(now));
        }
        table.tokens.insert(
            digest(&token),
            TokenRecord {
                client_id: client.client_id.clone(),
                partner_id: client.partner_id.clone(),
                lifetime,
            },
        );
        (Secret::new(token), lifetime.seconds_left(now))
    }

    /// An API call with a bearer token: refuses a dead token, and restarts the idle window of
    /// a live one.
    pub fn use_token(&self, token: &str) -> Result<Caller, TokenRefusal> {
        let now = self.clock.now();
        let key = digest(token);
        let mut table = self.table();
        let record = table.tokens.get_mut(&key).ok_or(TokenRefusal::Unknown)?;
        if !record.lifetime.is_active(now) {
            table.tokens.remove(&key);
            return Err(TokenRefusal::Expired);
        }
        record.lifetime.touch(now);
        Ok(Caller {
            client_id: record.client_id.clone(),
            partner_id: record.partner_id.clone(),
        })
    }

    /// Introspection by the client that owns the token: its lifetime, without using it.
    pub fn inspect(&self, client: &Client, token: &str) -> Result<TokenLifetime, TokenRefusal> {
        let now = self.clock.now();
        let table = self.table();
        let record = table
            .tokens
            .get(&digest(token))
            .ok_or(TokenRefusal::Unknown)?;
        if record.client_id != client.client_id {
            return Err(TokenRefusal::Unknown);
        }
        if !record.lifetime.is_active(now) {
            return Err(TokenRefusal::Expired);
        }
        Ok(record.lifetime)
    }

    /// Revocation by the client that owns the token.
    pub fn revoke(&self, client: &Client, token: &str) -> Result<(), TokenRefusal> {
        let now = self.clock.now();
        let key = digest(token);
        let mut table = self.table();
        let record = table.tokens.get(&key).ok_or(TokenRefusal::Unknown)?;
        if record.client_id != client.client_id {
            return Err(TokenRefusal::Unknown);
        }
        let active = record.lifetime.is_active(now);
        table.tokens.remove(&key);
        if active {
            Ok(())
        } else {
            Err(TokenRefusal::Expired)
        }
    }

    /// Revokes every token of every client at once (`POST /sandbox/v1/tokens/revoke`): the
    /// next call of each client is refused, as after a service's key rotation. Returns how
    /// many were live.
    pub fn revoke_all(&self) -> usize {
        let now = self.clock.now();
        let mut table = self.table();
        let live = table
            .tokens
            .values()
            .filter(|t| t.lifetime.is_active(now))
            .count();
        table.tokens.clear();
        live
    }

    pub fn client(&self, client_id: &str) -> Option<&Client> {
        self.clients.get(client_id)
    }
}

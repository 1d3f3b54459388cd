//! Client credentials and access tokens.
//!
//! Tokens are random 256-bit values; the sandbox keeps only their SHA-256 digests, so even a
//! memory dump of the token table holds nothing a caller could present. Each token carries a
//! [`TokenLifetime`] (partner-api's one home of the 15/120-minute rule) read against the
//! sandbox [`Clock`], so advancing the clock expires tokens exactly as time would.

use crate::clock::Clock;
use crate::config::ClientCredentials;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use partner_api::{Secret, TokenLifetime};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use uuid::Uuid;

/// Namespace of partner ids derived from client ids (so a client keeps its partner id from
/// one run to the next).
const PARTNER_NAMESPACE: Uuid = Uuid::from_u128(0x6d1f_3c2a_9b4e_4f7a_8c21_5e0b_7a93_d104);
/// Expired tokens are swept from the table every this many issuances.
const SWEEP_EVERY: u64 = 1024;

type TokenDigest = [u8; 32];

/// A registered API client and the partner it acts for.
#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub partner_id: String,
    secret: Secret,
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
    pub fn new(clients: &[ClientCredentials], clock: Clock) -> Self {
        let clients = clients
            .iter()
            .map(|c| {
                (
                    c.client_id.clone(),
                    Client {
                        client_id: c.client_id.clone(),
                        partner_id: partner_id_of(&c.client_id),
                        secret: c.client_secret.clone(),
                    },
                )
            })
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
        client.secret.ct_eq(secret).then_some(client)
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

    pub fn client(&self, client_id: &str) -> Option<&Client> {
        self.clients.get(client_id)
    }
}

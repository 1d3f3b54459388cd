//! The shared state every handler sees ([`AppState`]), and how a handler learns who is calling
//! (the bearer token, checked and its idle window restarted, as a [`Caller`]).
//!
//! Its own module, below the routes and the router: every route reads this state, and the
//! router (`app`) is built from the routes, so the state living beside the router made each
//! route file and the router need each other.

use crate::clock::Clock;
use crate::data_file::Journal;
use crate::dispatch::Dispatcher;
use crate::error::HttpError;
use crate::store::{SortCache, Store};
use crate::tokens::{Caller, TokenRefusal, Tokens};
use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use partner_api::Secret;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

pub type SharedState = Arc<AppState>;

#[derive(Debug)]
pub struct AppState {
    pub clock: Clock,
    pub tokens: Tokens,
    store: RwLock<Store>,
    sort_cache: Mutex<SortCache>,
    /// Base URL of `resourceRef`s in notifications.
    pub public_url: String,
    pub allow_http_callbacks: bool,
    /// Required on `/sandbox/v1/` when set.
    pub admin_token: Option<Secret>,
    pub dispatcher: Dispatcher,
    /// The data file's write-through (a no-op in memory): every write is answered only once
    /// its ticket is durable.
    pub journal: Journal,
    /// The simulated network latency of the partner API (`POST /sandbox/v1/latency`).
    pub latency: Latency,
    /// Faults on demand (`POST /sandbox/v1/faults`).
    pub faults: crate::faults::Faults,
}

/// A delay added before every partner API request (OAuth, products, transactions), so a
/// client's progress, cancel and timeout paths can be watched against a local sandbox that
/// otherwise answers in microseconds. Zero (the default) adds nothing; `/sandbox/v1/` controls
/// and `/openapi.json` are never delayed.
#[derive(Debug, Default)]
pub struct Latency(AtomicU64);

impl Latency {
    pub fn get(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::Relaxed))
    }

    pub fn set(&self, latency: Duration) {
        let millis = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
        self.0.store(millis, Ordering::Relaxed);
    }
}

impl AppState {
    pub fn new(
        clock: Clock,
        tokens: Tokens,
        store: Store,
        public_url: String,
        allow_http_callbacks: bool,
        admin_token: Option<Secret>,
        dispatcher: Dispatcher,
    ) -> Self {
        Self {
            clock,
            tokens,
            store: RwLock::new(store),
            sort_cache: Mutex::new(SortCache::default()),
            public_url,
            allow_http_callbacks,
            admin_token,
            dispatcher,
            journal: Journal::none(),
            latency: Latency::default(),
            faults: crate::faults::Faults::default(),
        }
    }

    /// Writes every change through `journal` (the persistent mode).
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    // Every write to the store is checked before it changes anything, so a panic (which the
    // server catches) cannot leave it half-written: a poisoned lock is still safe to read.
    pub fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn sort_cache(&self) -> MutexGuard<'_, SortCache> {
        self.sort_cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bearer-authenticated API call: the token is checked and its idle window restarted.
impl FromRequestParts<SharedState> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &SharedState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        state.tokens.use_token(token).map_err(|refusal| {
            tracing::debug!(?refusal, "bearer token refused");
            match refusal {
                TokenRefusal::Expired => {
                    HttpError::unauthorized("the access token has expired; request a new one")
                }
                TokenRefusal::Unknown => {
                    HttpError::unauthorized("the access token is not valid (unknown or revoked)")
                }
            }
        })
    }
}

pub fn bearer_token(parts: &Parts) -> Result<&str, HttpError> {
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return Err(HttpError::unauthorized(
            "this endpoint needs `Authorization: Bearer <access token>`",
        ));
    };
    let value = value
        .to_str()
        .map_err(|_| HttpError::unauthorized("the Authorization header is not readable text"))?;
    match value.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim())
        }
        _ => Err(HttpError::unauthorized(
            "the Authorization header must be `Bearer <access token>`",
        )),
    }
}

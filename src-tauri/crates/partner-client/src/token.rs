//! Access tokens that never lapse under a caller: one [`TokenManager`] per connection.
//!
//! Why it is shaped so:
//! - A token dies 15 minutes after its last use or 120 minutes after issue
//!   ([`partner_api::TokenLifetime`] is that rule; the issuance's `expires_in` may shorten the idle
//!   window further). The manager tracks both deadlines from its [`Clock`] and replaces the token
//!   a margin before the earlier one, so no request leaves with a token about to lapse.
//! - Uses are stamped with the time the request was *sent*: the server restarts its idle window
//!   when the request *arrives*, which is never earlier, so the client's deadline is never later
//!   than the server's.
//! - Issuance happens while holding one async mutex: twenty callers that all find the token stale
//!   queue behind the first, which issues once; the rest find the new token fresh (single flight).
//! - A 401 despite all that (the token was revoked on the server, the clocks disagree) drops the
//!   token only if it is still the one that was refused (a generation number says so), gets one
//!   fresh token and retries once. A second 401 is returned as an error, never a loop.
//! - The state is published on a `tokio::sync::watch` channel: a UI subscribes and draws live
//!   countdowns from the deadlines, and only ever sees the latest state.

use crate::clock::Clock;
use crate::config::ConnectionConfig;
use crate::error::{ClientError, ErrorKind, Result};
use crate::http::{BodyPolicy, RawResponse, Repeat, Transport};
use chrono::{DateTime, TimeDelta, Utc};
use partner_api::token::{GRANT_TYPE, IDLE_LIFETIME, MAX_LIFETIME, SCOPE};
use partner_api::{Introspection, Secret, TokenLifetime};

/// The issuance answer as read: the spec shows `access_token`, `token_type` (always `Bearer`)
/// and `expires_in` (seconds), but a token is all a client needs. `expires_in` may be absent,
/// a string, or any number. Its `Debug` is the secret's: redacted.
#[derive(Debug, serde::Deserialize)]
struct IssuedBody {
    access_token: Secret,
    #[serde(default, deserialize_with = "partner_api::read::lenient::text")]
    token_type: Option<String>,
    #[serde(default, deserialize_with = "partner_api::read::lenient::integer")]
    expires_in: Option<i64>,
}
use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use tokio::sync::{watch, Mutex};

/// What the UI shows about a connection's token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum TokenState {
    NoToken,
    #[serde(rename_all = "camelCase")]
    Active {
        /// When the token lapses unless used again.
        idle_deadline: DateTime<Utc>,
        /// When the token lapses however much it is used.
        max_deadline: DateTime<Utc>,
    },
    Refreshing,
    Revoked,
    /// The last issuance failed; the next call tries again.
    Error {
        message: String,
    },
}

impl TokenState {
    /// When the held token lapses: the earlier of its two deadlines, the same rule as
    /// [`TokenLifetime::expires_at`] (the idle deadline here already carries a shorter
    /// `expires_in`, so it is taken as published rather than rebuilt from the last use).
    pub fn expires_at(&self) -> Option<DateTime<Utc>> {
        match self {
            TokenState::Active {
                idle_deadline,
                max_deadline,
            } => Some((*idle_deadline).min(*max_deadline)),
            _ => None,
        }
    }

    /// Whether a held token has lapsed at `now` (at or past either deadline), as
    /// [`TokenLifetime::is_active`] decides it. No token, or one being replaced, has not lapsed.
    pub fn has_lapsed(&self, now: DateTime<Utc>) -> bool {
        self.expires_at().is_some_and(|at| now >= at)
    }

    /// When the held token was issued: its maximum deadline less the maximum lifetime.
    pub fn issued_at(&self) -> Option<DateTime<Utc>> {
        match self {
            TokenState::Active { max_deadline, .. } => Some(*max_deadline - MAX_LIFETIME),
            _ => None,
        }
    }
}

/// The token handed to one call, with the generation that identifies it.
#[derive(Debug, Clone)]
pub(crate) struct IssuedToken {
    pub token: Secret,
    pub generation: u64,
}

/// The deadlines of the held token. Kept behind a plain mutex, apart from the token itself, so
/// a finished call can record its use without waiting for an issuance in flight.
#[derive(Debug, Clone, Copy)]
struct Timing {
    generation: u64,
    lifetime: TokenLifetime,
    /// The idle window: 15 minutes, or less if `expires_in` said so.
    idle_window: TimeDelta,
}

impl Timing {
    fn idle_deadline(&self) -> DateTime<Utc> {
        self.lifetime
            .idle_deadline()
            .min(self.lifetime.last_used_at + self.idle_window)
    }

    fn max_deadline(&self) -> DateTime<Utc> {
        self.lifetime.max_deadline()
    }

    /// Whether the token outlives `now + margin` on both deadlines.
    fn is_fresh(&self, now: DateTime<Utc>, margin: TimeDelta) -> bool {
        now + margin < self.idle_deadline().min(self.max_deadline())
    }

    fn state(&self) -> TokenState {
        TokenState::Active {
            idle_deadline: self.idle_deadline(),
            max_deadline: self.max_deadline(),
        }
    }
}

/// Issues, keeps, replaces, introspects and revokes the access token of one connection.
#[derive(Clone)]
pub struct TokenManager {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Transport,
    client_id: String,
    client_secret: Secret,
    margin: TimeDelta,
    clock: Arc<dyn Clock>,
    /// Held across an issuance: the single-flight lock.
    held: Mutex<Option<IssuedToken>>,
    timing: StdMutex<Option<Timing>>,
    state: watch::Sender<TokenState>,
    issuances: AtomicU64,
    rejections: AtomicU64,
    generations: AtomicU64,
}

impl fmt::Debug for TokenManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenManager")
            .field("base_url", &self.inner.transport.base_url().as_str())
            .field("client_id", &self.inner.client_id)
            .field("client_secret", &self.inner.client_secret)
            .field("state", &*self.inner.state.borrow())
            .field("issuances", &self.issuances())
            .field("rejections", &self.rejections())
            .finish()
    }
}

impl TokenManager {
    /// A manager with its own HTTP client.
    pub fn new(config: &ConnectionConfig, clock: Arc<dyn Clock>) -> Result<Self> {
        Ok(Self::with_transport(Transport::new(config)?, config, clock))
    }

    pub(crate) fn with_transport(
        transport: Transport,
        config: &ConnectionConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                transport,
                client_id: config.client_id.clone(),
                client_secret: config.client_secret.clone(),
                margin: TimeDelta::from_std(config.refresh_margin)
                    .unwrap_or(TimeDelta::seconds(60)),
                clock,
                held: Mutex::new(None),
                timing: StdMutex::new(None),
                state: watch::Sender::new(TokenState::NoToken),
                issuances: AtomicU64::new(0),
                rejections: AtomicU64::new(0),
                generations: AtomicU64::new(0),
            }),
        }
    }

    pub fn client_id(&self) -> &str {
        &self.inner.client_id
    }

    /// A live view of the token's state; every change is published, the latest one wins.
    pub fn subscribe(&self) -> watch::Receiver<TokenState> {
        self.inner.state.subscribe()
    }

    pub fn state(&self) -> TokenState {
        self.inner.state.borrow().clone()
    }

    /// How many tokens this manager has been issued so far.
    pub fn issuances(&self) -> u64 {
        self.inner.issuances.load(Ordering::SeqCst)
    }

    /// How many times the service refused a token this manager handed out (each answered by
    /// one fresh token and one retry).
    pub fn rejections(&self) -> u64 {
        self.inner.rejections.load(Ordering::SeqCst)
    }

    /// The secrets this manager holds: its client secret and the token it holds now, if any.
    /// For a redaction to search for and mask (an evidence bundle); never to be shown. Waits
    /// for an issuance in flight, so the token it returns is the one in use.
    pub async fn held_secrets(&self) -> Vec<Secret> {
        let mut secrets = vec![self.inner.client_secret.clone()];
        if let Some(issued) = self.inner.held.lock().await.as_ref() {
            secrets.push(issued.token.clone());
        }
        secrets
    }

    /// The token to send now, for callers that make requests of their own (`partner token
    /// issue` prints it for use with curl). It is a [`Secret`]: it prints as `[redacted]`.
    pub async fn bearer(&self) -> Result<Secret> {
        Ok(self.access_token().await?.token)
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    /// Makes sure a token is held that outlives the refresh margin, issuing one if needed. An
    /// app may call this on a timer to keep a connection warm.
    pub async fn ensure_fresh(&self) -> Result<()> {
        self.access_token().await.map(|_| ())
    }

    /// The token to send now: the held one while fresh, else a new one (single flight).
    pub(crate) async fn access_token(&self) -> Result<IssuedToken> {
        let mut held = self.inner.held.lock().await;
        if let Some(token) = self.fresh(&held) {
            return Ok(token);
        }
        self.issue_into(&mut held).await
    }

    /// After a 401 with the token of `generation`: drop it if it is still held, then hand out a
    /// fresh one (another caller may already have replaced it).
    pub(crate) async fn after_rejection(&self, generation: u64) -> Result<IssuedToken> {
        self.inner.rejections.fetch_add(1, Ordering::SeqCst);
        let mut held = self.inner.held.lock().await;
        if held.as_ref().is_some_and(|t| t.generation == generation) {
            tracing::debug!(generation, "token refused by the service; replacing it");
            *held = None;
        }
        if let Some(token) = self.fresh(&held) {
            return Ok(token);
        }
        self.issue_into(&mut held).await
    }

    fn fresh(&self, held: &Option<IssuedToken>) -> Option<IssuedToken> {
        let token = held.as_ref()?;
        let timing = (*self.timing())?;
        let now = self.inner.clock.now();
        (timing.generation == token.generation && timing.is_fresh(now, self.inner.margin))
            .then(|| token.clone())
    }

    fn timing(&self) -> std::sync::MutexGuard<'_, Option<Timing>> {
        self.inner.timing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a successful use of the token of `generation`, sent at `sent_at`: the idle window
    /// restarts. Never waits for an issuance in flight.
    pub(crate) fn touch(&self, generation: u64, sent_at: DateTime<Utc>) {
        let state = {
            let mut timing = self.timing();
            match timing.as_mut() {
                Some(t) if t.generation == generation && sent_at > t.lifetime.last_used_at => {
                    t.lifetime.touch(sent_at);
                    t.state()
                }
                _ => return,
            }
        };
        // Only an active state moves; `Refreshing` or `Revoked` stand until they end.
        self.inner.state.send_if_modified(|current| {
            if matches!(current, TokenState::Active { .. }) && *current != state {
                *current = state;
                true
            } else {
                false
            }
        });
    }

    async fn issue_into(&self, held: &mut Option<IssuedToken>) -> Result<IssuedToken> {
        self.inner.state.send_replace(TokenState::Refreshing);
        match self.issue().await {
            Ok((token, timing)) => {
                *self.timing() = Some(timing);
                self.inner.state.send_replace(timing.state());
                *held = Some(token.clone());
                Ok(token)
            }
            Err(error) => {
                *held = None;
                *self.timing() = None;
                self.inner.state.send_replace(TokenState::Error {
                    message: error.to_string(),
                });
                Err(error)
            }
        }
    }

    async fn issue(&self) -> Result<(IssuedToken, Timing)> {
        let sent_at = self.inner.clock.now();
        let url = self.inner.transport.url(&["oauth2", "v1", "token"]);
        let response = self
            .inner
            .transport
            .send(Repeat::Safe, BodyPolicy::Withhold, &|http| {
                http.post(url.clone())
                    .basic_auth(
                        &self.inner.client_id,
                        Some(self.inner.client_secret.expose()),
                    )
                    .form(&[("grant_type", GRANT_TYPE), ("scope", SCOPE)])
            })
            .await?;
        let body: IssuedBody = response.json("token", BodyPolicy::Withhold)?;
        if let Some(token_type) = body
            .token_type
            .as_deref()
            .filter(|t| !t.eq_ignore_ascii_case(partner_api::token::TOKEN_TYPE))
        {
            return Err(ClientError::Unreadable {
                status: response.status,
                call: response.call.clone(),
                message: format!(
                    "the token type is `{}`, not Bearer",
                    token_type.chars().take(20).collect::<String>()
                ),
                raw_body: None,
            });
        }
        if body.access_token.is_empty() {
            return Err(ClientError::Unreadable {
                status: response.status,
                call: response.call.clone(),
                message: "the token response carries an empty token".into(),
                raw_body: None,
            });
        }
        // `expires_in` of any value or none: the spec's 15/120-minute rules hold regardless, and
        // a stated lifetime only ever shortens the idle window.
        let expires_in = body
            .expires_in
            .filter(|seconds| *seconds > 0)
            .map_or(IDLE_LIFETIME, TimeDelta::seconds);
        let generation = self.inner.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let issuances = self.inner.issuances.fetch_add(1, Ordering::SeqCst) + 1;
        tracing::debug!(
            generation,
            issuances,
            expires_in = ?body.expires_in,
            "token issued"
        );
        Ok((
            IssuedToken {
                token: body.access_token,
                generation,
            },
            Timing {
                generation,
                lifetime: TokenLifetime::issued(sent_at),
                idle_window: IDLE_LIFETIME.min(expires_in),
            },
        ))
    }

    /// Asks the service about the held token (issuing one first if none is held).
    pub async fn introspect(&self) -> Result<Introspection> {
        let token = self.access_token().await?;
        let url = self
            .inner
            .transport
            .url(&["oauth2", "v1", "token", "introspection"]);
        let response = self
            .token_form_call(&url, &token.token, Repeat::Safe)
            .await?;
        response.json("introspection", BodyPolicy::Withhold)
    }

    /// Asks the service about a token this manager did not issue (`partner token introspect`).
    /// An expired, revoked or unknown token is an `Unauthorized` error, as the service says.
    pub async fn introspect_token(&self, token: &Secret) -> Result<Introspection> {
        let url = self
            .inner
            .transport
            .url(&["oauth2", "v1", "token", "introspection"]);
        let response = self.token_form_call(&url, token, Repeat::Safe).await?;
        response.json("introspection", BodyPolicy::Withhold)
    }

    /// Revokes a token this manager did not issue (`partner token revoke`).
    pub async fn revoke_token(&self, token: &Secret) -> Result<()> {
        let url = self
            .inner
            .transport
            .url(&["oauth2", "v1", "token", "revocation"]);
        self.token_form_call(&url, token, Repeat::Safe).await?;
        Ok(())
    }

    /// Revokes the held token (on sign-out, or when the connection is removed). With no token
    /// held there is nothing to revoke; the state still becomes `Revoked`.
    pub async fn revoke(&self) -> Result<()> {
        let mut held = self.inner.held.lock().await;
        if let Some(token) = held.as_ref() {
            let url = self
                .inner
                .transport
                .url(&["oauth2", "v1", "token", "revocation"]);
            match self.token_form_call(&url, &token.token, Repeat::Safe).await {
                Ok(_) => {}
                // A token the service already forgot is as revoked as it gets.
                Err(error) if error.kind() == ErrorKind::Unauthorized => {}
                Err(error) => return Err(error),
            }
            tracing::debug!(generation = token.generation, "token revoked");
        }
        *held = None;
        *self.timing() = None;
        self.inner.state.send_replace(TokenState::Revoked);
        Ok(())
    }

    async fn token_form_call(
        &self,
        url: &url::Url,
        token: &Secret,
        repeat: Repeat,
    ) -> Result<RawResponse> {
        self.inner
            .transport
            .send(repeat, BodyPolicy::Withhold, &|http| {
                http.post(url.clone())
                    .basic_auth(
                        &self.inner.client_id,
                        Some(self.inner.client_secret.expose()),
                    )
                    .form(&[("token", token.expose())])
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_token_lapses_at_the_earlier_deadline() {
        let issued = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        let lifetime = TokenLifetime::issued(issued);
        let state = TokenState::Active {
            idle_deadline: lifetime.idle_deadline(),
            max_deadline: lifetime.max_deadline(),
        };
        assert_eq!(state.issued_at(), Some(issued));
        assert_eq!(state.expires_at(), Some(lifetime.expires_at()));
        for minutes in [0, 14, 15, 16, 119, 120, 121] {
            let now = issued + TimeDelta::minutes(minutes);
            assert_eq!(
                state.has_lapsed(now),
                !lifetime.is_active(now),
                "at {minutes} min"
            );
        }
        // Used late in its life: the idle deadline is past the maximum, which decides.
        let late = TokenState::Active {
            idle_deadline: issued + TimeDelta::minutes(130),
            max_deadline: lifetime.max_deadline(),
        };
        assert!(!late.has_lapsed(issued + TimeDelta::minutes(119)));
        assert!(late.has_lapsed(issued + TimeDelta::minutes(120)));
        for other in [
            TokenState::NoToken,
            TokenState::Refreshing,
            TokenState::Revoked,
            TokenState::Error {
                message: "no".into(),
            },
        ] {
            assert!(!other.has_lapsed(issued + TimeDelta::days(1)));
            assert_eq!(other.issued_at(), None);
        }
    }

    fn held(expires_in_minutes: i64) -> Timing {
        let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        Timing {
            generation: 1,
            lifetime: TokenLifetime::issued(at),
            idle_window: IDLE_LIFETIME.min(TimeDelta::minutes(expires_in_minutes)),
        }
    }

    #[test]
    fn freshness_keeps_a_margin_before_either_deadline() {
        let mut token = held(15);
        let issued = token.lifetime.issued_at;
        let margin = TimeDelta::seconds(60);
        assert!(token.is_fresh(issued + TimeDelta::minutes(13), margin));
        assert!(!token.is_fresh(issued + TimeDelta::seconds(14 * 60 + 1), margin));
        // Used every 10 minutes: the idle deadline moves, the maximum does not.
        for m in (10..=110).step_by(10) {
            token.lifetime.touch(issued + TimeDelta::minutes(m));
        }
        assert!(token.is_fresh(issued + TimeDelta::minutes(118), margin));
        assert!(!token.is_fresh(issued + TimeDelta::seconds(119 * 60 + 1), margin));
    }

    #[test]
    fn a_short_expires_in_shortens_the_idle_window() {
        let token = held(5);
        let issued = token.lifetime.issued_at;
        assert_eq!(token.idle_deadline(), issued + TimeDelta::minutes(5));
        assert!(!token.is_fresh(
            issued + TimeDelta::minutes(4) + TimeDelta::seconds(1),
            TimeDelta::seconds(60)
        ));
    }
}

//! Access tokens: the wire shapes of issuance and introspection, and the lifetime rule.
//!
//! A token dies 15 minutes after its last use or 120 minutes after issue, whichever is first.
//! [`TokenLifetime`] is that rule's one home: the sandbox uses it to refuse a token and the
//! client to replace one before it lapses.

pub use crate::constraints::scope_pattern;
use crate::openapi::text;
use crate::secret::Secret;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

pub const GRANT_TYPE: &str = "client_credentials";
pub const SCOPE: &str = "pc pcapi";
pub const TOKEN_TYPE: &str = "Bearer";
pub const IDENTITY_TYPE: &str = "Partner";

/// 15 minutes without use.
pub const IDLE_LIFETIME: TimeDelta = TimeDelta::minutes(15);
/// 120 minutes after issue, however much it is used.
pub const MAX_LIFETIME: TimeDelta = TimeDelta::minutes(120);

/// Body of `201` from `POST /oauth2/v1/token`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenResponse {
    #[serde(serialize_with = "Secret::serialize_exposed")]
    pub access_token: Secret,
    pub token_type: String,
    /// Seconds until the token's idle expiry, as issued.
    pub expires_in: u64,
}

/// Body of `POST /oauth2/v1/token/introspection`.
// The sandbox writes every field; a reader needs only `active`. The others are read leniently
// (absent or `null` is empty, `exp` as a string is read as its number, absent is 0), since
// another service may send fewer; `required` keeps the OpenAPI document stating the sandbox's
// answer. (Plain comments: doc comments would change the document's descriptions.)
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Introspection {
    pub active: bool,
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub scope: String,
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub client_id: String,
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub token_type: String,
    /// When the token lapses if not used again, in seconds since the epoch.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    #[serde(default, deserialize_with = "crate::read::lenient::integer_or_zero")]
    #[schema(required = true)]
    pub exp: i64,
    /// `sandbox` or `production`.
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub environment: String,
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub identity_type: String,
    /// The partner's id (named so by the interface).
    #[serde(default, deserialize_with = "crate::read::lenient::text_or_empty")]
    #[schema(required = true)]
    pub encompass_client_id: String,
}

/// The issuance form's `grant_type`: the one grant the service has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum GrantType {
    #[serde(rename = "client_credentials")]
    ClientCredentials,
}

/// The form of `POST /oauth2/v1/token`. A parameter given twice is a 400; unknown parameters
/// are ignored.
// The server reads the pairs itself and checks them with `check_grant`; this type states the
// form in the OpenAPI document.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenRequest {
    pub grant_type: GrantType,
    pub scope: String,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_secret: Option<Secret>,
}

impl utoipa::PartialSchema for TokenRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        token_request().into()
    }
}

impl ToSchema for TokenRequest {}

/// The form of `POST /oauth2/v1/token/introspection` and `.../revocation`.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenForm {
    pub token: Secret,
}

impl utoipa::PartialSchema for TokenForm {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        token_form().into()
    }
}

impl ToSchema for TokenForm {}

/// A form: `fields`, then any other parameter (ignored), each given once as text.
fn form(fields: ObjectBuilder) -> Object {
    fields
        .additional_properties(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}

/// The issuance form.
pub fn token_request() -> Object {
    form(
        ObjectBuilder::new()
            .property("grant_type", GrantType::schema())
            .required("grant_type")
            .property(
                "scope",
                text(1, None, Some(&scope_pattern()))
                    .description(Some("`pc pcapi` (the two scopes in any order)")),
            )
            .required("scope")
            .property(
                "client_id",
                text(0, None, None)
                    .description(Some("The client id, when it is not sent as HTTP Basic")),
            )
            .property(
                "client_secret",
                text(0, None, None)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Password)))
                    .description(Some("The client secret, when it is not sent as HTTP Basic")),
            ),
    )
}

/// The introspection and revocation form: the `token` (an access token of the calling client).
pub fn token_form() -> Object {
    form(
        ObjectBuilder::new()
            .property(
                "token",
                text(1, None, None)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Password)))
                    .description(Some("An access token of the calling client")),
            )
            .required("token"),
    )
}

/// Checks the issuance form's `grant_type` and `scope`; the message names what was wrong.
pub fn check_grant(grant_type: Option<&str>, scope: Option<&str>) -> Result<(), String> {
    match grant_type {
        None | Some("") => {
            return Err("grant_type is required and must be client_credentials".into())
        }
        Some(GRANT_TYPE) => {}
        Some(other) => {
            return Err(format!(
                "grant_type `{}` is not supported; use client_credentials",
                printable(other)
            ))
        }
    }
    match scope {
        None | Some("") => Err("scope is required and must be `pc pcapi`".into()),
        Some(scope) if normalise_scope(scope) == SCOPE => Ok(()),
        Some(other) => Err(format!(
            "scope `{}` is not supported; use `pc pcapi`",
            printable(other)
        )),
    }
}

/// Scopes are a set: `pcapi pc` and `pc  pcapi` mean the same as `pc pcapi`.
fn normalise_scope(scope: &str) -> String {
    let mut parts: Vec<&str> = scope.split_whitespace().collect();
    parts.sort_unstable();
    parts.dedup();
    parts.join(" ")
}

/// Echoes a short, printable excerpt of client input in an error message.
fn printable(value: &str) -> String {
    value.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// When a token was issued and last used, and so when it lapses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLifetime {
    pub issued_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
}

impl TokenLifetime {
    pub fn issued(at: DateTime<Utc>) -> Self {
        Self {
            issued_at: at,
            last_used_at: at,
        }
    }

    pub fn idle_deadline(&self) -> DateTime<Utc> {
        self.last_used_at + IDLE_LIFETIME
    }

    pub fn max_deadline(&self) -> DateTime<Utc> {
        self.issued_at + MAX_LIFETIME
    }

    /// The earlier of the two deadlines.
    pub fn expires_at(&self) -> DateTime<Utc> {
        self.idle_deadline().min(self.max_deadline())
    }

    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at()
    }

    /// A use restarts the idle window (never past the maximum lifetime).
    pub fn touch(&mut self, now: DateTime<Utc>) {
        if now > self.last_used_at {
            self.last_used_at = now;
        }
    }

    /// Whole seconds until expiry, as `expires_in` reports it.
    pub fn seconds_left(&self, now: DateTime<Utc>) -> u64 {
        (self.expires_at() - now).num_seconds().max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap() + TimeDelta::minutes(minutes)
    }

    #[test]
    fn idle_window_restarts_on_use() {
        let mut life = TokenLifetime::issued(at(0));
        assert!(life.is_active(at(14)));
        assert!(!life.is_active(at(15)));
        life.touch(at(14));
        assert!(life.is_active(at(28)));
        assert_eq!(life.idle_deadline(), at(29));
    }

    #[test]
    fn maximum_lifetime_caps_any_use() {
        let mut life = TokenLifetime::issued(at(0));
        for m in (10..=110).step_by(10) {
            life.touch(at(m));
        }
        assert_eq!(life.expires_at(), at(120));
        assert!(life.is_active(at(119)));
        assert!(!life.is_active(at(120)));
        assert_eq!(life.seconds_left(at(119)), 60);
    }

    #[test]
    fn grant_rules() {
        assert!(check_grant(Some("client_credentials"), Some("pc pcapi")).is_ok());
        assert!(check_grant(Some("client_credentials"), Some("pcapi  pc")).is_ok());
        assert!(check_grant(Some("password"), Some("pc pcapi"))
            .unwrap_err()
            .contains("password"));
        assert!(check_grant(None, Some("pc pcapi")).is_err());
        assert!(check_grant(Some("client_credentials"), Some("pc")).is_err());
        assert!(check_grant(Some("client_credentials"), None).is_err());
    }

    #[test]
    fn introspection_reads_leniently_and_its_document_still_requires_every_field() {
        let minimal: Introspection = serde_json::from_str(
            r#"{"active":true,"client_id":"c","exp":"1795000000","scope":null}"#,
        )
        .unwrap();
        assert!(minimal.active);
        assert_eq!(
            (minimal.client_id.as_str(), minimal.exp),
            ("c", 1_795_000_000)
        );
        assert_eq!(minimal.scope, "");
        assert!(serde_json::from_str::<Introspection>(r#"{"client_id":"c"}"#).is_err());

        let schema =
            serde_json::to_value(<Introspection as utoipa::PartialSchema>::schema()).unwrap();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            required,
            [
                "active",
                "scope",
                "client_id",
                "token_type",
                "exp",
                "environment",
                "identity_type",
                "encompass_client_id"
            ]
        );
        assert!(schema["properties"]["exp"].get("default").is_none());
    }

    #[test]
    fn token_response_debug_hides_the_token() {
        let response = TokenResponse {
            access_token: Secret::new("abc.def"),
            token_type: TOKEN_TYPE.into(),
            expires_in: 900,
        };
        assert!(!format!("{response:?}").contains("abc.def"));
        assert!(serde_json::to_string(&response)
            .unwrap()
            .contains("abc.def"));
    }
}

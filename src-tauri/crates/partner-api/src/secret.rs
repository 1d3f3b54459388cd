//! A string that must never leak: client secrets, access tokens, signing keys.
//!
//! `Debug` and `Display` print `[redacted]`, and the type has no `Serialize`, so a secret cannot
//! reach a log line, an error message or a JSON body by accident. Putting one on the wire is a
//! visible act: a field opts in with `#[serde(serialize_with = "Secret::serialize_exposed")]`.
//! The bytes are zeroed on drop (via `secrecy`).

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer, Serializer};
use std::fmt;
use subtle::ConstantTimeEq;

#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The secret's text. Call it only where the value must leave the process (an HTTP header,
    /// the keychain, an HMAC key) and never to print it.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// Compares with another value in time independent of where they differ.
    pub fn ct_eq(&self, other: &str) -> bool {
        self.expose().as_bytes().ct_eq(other.as_bytes()).into()
    }

    pub fn is_empty(&self) -> bool {
        self.expose().is_empty()
    }

    /// For the few wire fields that must carry a secret (a token response, a PATCH that sets a
    /// signing key).
    pub fn serialize_exposed<S: Serializer>(secret: &Secret, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(secret.expose())
    }

    /// As [`Secret::serialize_exposed`], for an optional field.
    pub fn serialize_exposed_opt<S: Serializer>(
        secret: &Option<Secret>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match secret {
            Some(secret) => s.serialize_str(secret.expose()),
            None => s.serialize_none(),
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Secret::new)
    }
}

impl utoipa::PartialSchema for Secret {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Password)))
            .into()
    }
}

impl utoipa::ToSchema for Secret {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_its_value() {
        let secret = Secret::new("hunter2-very-secret");
        assert_eq!(format!("{secret:?}"), "[redacted]");
        assert_eq!(format!("{secret}"), "[redacted]");
        assert_eq!(format!("{:?}", Some(secret.clone())), "Some([redacted])");
        assert_eq!(secret.expose(), "hunter2-very-secret");
    }

    #[test]
    fn compares_by_value() {
        let secret = Secret::new("abc");
        assert!(secret.ct_eq("abc"));
        assert!(!secret.ct_eq("abd"));
        assert!(!secret.ct_eq("ab"));
    }

    #[test]
    fn serializes_only_when_a_field_opts_in() {
        #[derive(serde::Serialize)]
        struct Wire {
            #[serde(serialize_with = "Secret::serialize_exposed")]
            token: Secret,
        }
        let json = serde_json::to_string(&Wire {
            token: "t0k".into(),
        })
        .unwrap();
        assert_eq!(json, r#"{"token":"t0k"}"#);
    }
}

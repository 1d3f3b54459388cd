//! The webhook notification body and its two enumerations.
//!
//! The body is built here, but the sender serialises it once and signs those bytes; a receiver
//! parses it only after verifying the bytes that arrived.
//!
//! Two readings, on purpose. [`Notification`] (with the closed [`EventType`] and
//! [`ResourceType`]) is what *our sandbox* sends, and it is strict: the sandbox never sends an
//! event type the spec does not show. [`crate::received::NotificationFields`] is what a *receiver* takes from any
//! faithful service (issue #46): the spec shows `created` and `updated` and two resource types
//! but does not say the lists are closed, so the day a service adds one, a receiver that refused
//! it would answer 400 to every such notification and the service would discard them after its
//! retries. So a receiver keeps every value as sent (in `received.rs`: this file is the strict one, which
//! `read.rs` builds on, so the tolerant reading lives apart to keep the two from importing
//! each other).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use utoipa::ToSchema;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum ResourceType {
    #[serde(rename = "urn:svc:partner:transaction")]
    Transaction,
    #[serde(rename = "urn:svc:partner:transaction:event")]
    TransactionEvent,
}

impl ResourceType {
    pub const ALL: [ResourceType; 2] = [ResourceType::Transaction, ResourceType::TransactionEvent];

    pub fn as_str(self) -> &'static str {
        match self {
            ResourceType::Transaction => "urn:svc:partner:transaction",
            ResourceType::TransactionEvent => "urn:svc:partner:transaction:event",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == value)
    }
}

impl fmt::Display for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventType {
    Created,
    Updated,
}

impl EventType {
    pub const ALL: [EventType; 2] = [EventType::Created, EventType::Updated];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Created => "created",
            EventType::Updated => "updated",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == value)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `$.meta` of a notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationMeta {
    /// The product's `name`.
    pub instance_id: String,
    pub resource_id: String,
    pub resource_type: ResourceType,
    /// Where the resource can be fetched.
    pub resource_ref: String,
}

/// The body of a webhook notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// The id of the transaction event behind the notification.
    pub event_id: String,
    pub event_time: DateTime<Utc>,
    pub event_type: EventType,
    pub meta: NotificationMeta,
}

impl Notification {
    /// The notification of a change to a transaction: `eventId` is the id of the event that
    /// stands for the change, `resourceId` the transaction's (field notes, "Webhooks").
    pub fn transaction(
        event_id: &str,
        event_time: DateTime<Utc>,
        event_type: EventType,
        instance_id: &str,
        transaction_id: &str,
        base_url: &str,
    ) -> Self {
        Self {
            event_id: event_id.to_owned(),
            event_time,
            event_type,
            meta: NotificationMeta {
                instance_id: instance_id.to_owned(),
                resource_id: transaction_id.to_owned(),
                resource_type: ResourceType::Transaction,
                resource_ref: transaction_ref(base_url, transaction_id),
            },
        }
    }

    /// The notification of a new transaction event: its id is both `eventId` and
    /// `resourceId`, and the event type is always `created`.
    pub fn transaction_event(
        event_id: &str,
        event_time: DateTime<Utc>,
        instance_id: &str,
        transaction_id: &str,
        base_url: &str,
    ) -> Self {
        Self {
            event_id: event_id.to_owned(),
            event_time,
            event_type: EventType::Created,
            meta: NotificationMeta {
                instance_id: instance_id.to_owned(),
                resource_id: event_id.to_owned(),
                resource_type: ResourceType::TransactionEvent,
                resource_ref: event_ref(base_url, transaction_id, event_id),
            },
        }
    }
}

/// A notification's fields as the text that arrived, borrowed from the body where no escape
/// forces a copy: for a receiver that keeps what was sent (`eventTime` as written, not
/// re-formatted). It holds the shape only (every field a string, no duplicate key); the values'
/// rules are [`Notification`]'s.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationText<'a> {
    #[serde(borrow)]
    pub event_id: Cow<'a, str>,
    #[serde(borrow)]
    pub event_time: Cow<'a, str>,
    #[serde(borrow)]
    pub event_type: Cow<'a, str>,
    #[serde(borrow)]
    pub meta: NotificationMetaText<'a>,
}

/// `$.meta` of a [`NotificationText`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationMetaText<'a> {
    #[serde(borrow)]
    pub instance_id: Cow<'a, str>,
    #[serde(borrow)]
    pub resource_id: Cow<'a, str>,
    #[serde(borrow)]
    pub resource_type: Cow<'a, str>,
    #[serde(borrow)]
    pub resource_ref: Cow<'a, str>,
}

impl NotificationText<'_> {
    /// The [`Notification`] these fields make, each value read by its own type's `Deserialize`
    /// (the same rules a parse of the whole body applies), without parsing the body again.
    ///
    /// For a body that reads as a `NotificationText`, this succeeds exactly when
    /// `serde_json::from_slice::<Notification>` of the same body would.
    pub fn to_notification(&self) -> Result<Notification, serde::de::value::Error> {
        fn value<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, serde::de::value::Error> {
            T::deserialize(serde::de::IntoDeserializer::into_deserializer(text))
        }
        Ok(Notification {
            event_id: value(&self.event_id)?,
            event_time: value(&self.event_time)?,
            event_type: value(&self.event_type)?,
            meta: NotificationMeta {
                instance_id: value(&self.meta.instance_id)?,
                resource_id: value(&self.meta.resource_id)?,
                resource_type: value(&self.meta.resource_type)?,
                resource_ref: value(&self.meta.resource_ref)?,
            },
        })
    }
}

/// `eventTime` read by the rule [`Notification`] applies (an RFC 3339 date-time, any offset);
/// `None` for text in another form.
pub fn event_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::deserialize(
        serde::de::IntoDeserializer::<serde::de::value::Error>::into_deserializer(text),
    )
    .ok()
}

/// `{base_url}/partner/v2/transactions/<id>`
pub fn transaction_ref(base_url: &str, transaction_id: &str) -> String {
    format!(
        "{}{}/transactions/{transaction_id}",
        base_url.trim_end_matches('/'),
        crate::PARTNER_PREFIX
    )
}

/// `{base_url}/partner/v2/transactions/<id>/events/<event id>`
pub fn event_ref(base_url: &str, transaction_id: &str, event_id: &str) -> String {
    format!(
        "{}/events/{event_id}",
        transaction_ref(base_url, transaction_id)
    )
}

/// What a `resourceRef` names on a service: the inverse of [`transaction_ref`] and
/// [`event_ref`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceAddress {
    Transaction {
        transaction_id: String,
    },
    Event {
        transaction_id: String,
        event_id: String,
    },
}

/// Why a `resourceRef` is not read as a resource of the service at a base URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceRefMismatch {
    #[error("the resourceRef is not a URL")]
    NotAUrl,
    #[error("the resourceRef points at {found}, not at this connection's service ({expected})")]
    OtherService { found: String, expected: String },
    #[error("the resourceRef's path {0} is not a transaction or a transaction's event")]
    UnknownPath(String),
}

/// Reads `resource_ref` as a resource of the service at `base_url`: same scheme, host and port,
/// under the base URL's path, then `/partner/v2/transactions/<id>[/events/<event id>]`.
/// A reference to another service (another connection's, or a forged one) is refused, so the
/// console never opens on one service what a notification says lives on another.
pub fn resource_at(
    base_url: &str,
    resource_ref: &str,
) -> Result<ResourceAddress, ResourceRefMismatch> {
    let found = url::Url::parse(resource_ref).map_err(|_| ResourceRefMismatch::NotAUrl)?;
    let base = url::Url::parse(base_url).map_err(|_| ResourceRefMismatch::OtherService {
        found: found.origin().ascii_serialization(),
        expected: base_url.to_owned(),
    })?;
    let prefix = format!(
        "{}{}/transactions/",
        base.path().trim_end_matches('/'),
        crate::PARTNER_PREFIX
    );
    if found.origin() != base.origin()
        || !found.path().starts_with(base.path().trim_end_matches('/'))
    {
        return Err(ResourceRefMismatch::OtherService {
            found: format!("{}{}", found.origin().ascii_serialization(), found.path()),
            expected: base_url.trim_end_matches('/').to_owned(),
        });
    }
    let unknown = || ResourceRefMismatch::UnknownPath(found.path().to_owned());
    let rest = found.path().strip_prefix(&prefix).ok_or_else(unknown)?;
    let parts: Vec<&str> = rest.split('/').collect();
    let segment = |s: &str| {
        percent_decoded(s)
            .filter(|s| !s.is_empty())
            .ok_or_else(unknown)
    };
    match parts.as_slice() {
        [transaction] => Ok(ResourceAddress::Transaction {
            transaction_id: segment(transaction)?,
        }),
        [transaction, "events", event] => Ok(ResourceAddress::Event {
            transaction_id: segment(transaction)?,
            event_id: segment(event)?,
        }),
        _ => Err(unknown()),
    }
}

fn percent_decoded(segment: &str) -> Option<String> {
    url::form_urlencoded::parse(format!("s={}", segment.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_view_reads_the_fields_of_a_notification_as_sent() {
        let body = br#"{"eventId":"e-1","eventTime":"2024-05-01T10:00:00+00:00","eventType":"updated","meta":{"instanceId":"acme","resourceId":"t-1","resourceType":"urn:svc:partner:transaction","resourceRef":"https://svc.example/partner/v2/transactions/t-1"}}"#;
        let typed: Notification = serde_json::from_slice(body).unwrap();
        let text: NotificationText<'_> = serde_json::from_slice(body).unwrap();
        assert_eq!(text.event_id, typed.event_id);
        assert_eq!(text.event_time, "2024-05-01T10:00:00+00:00", "as written");
        assert_eq!(text.event_type, typed.event_type.as_str());
        assert_eq!(text.meta.instance_id, typed.meta.instance_id);
        assert_eq!(text.meta.resource_id, typed.meta.resource_id);
        assert_eq!(text.meta.resource_type, typed.meta.resource_type.as_str());
        assert_eq!(text.meta.resource_ref, typed.meta.resource_ref);
        assert!(
            matches!(text.event_id, Cow::Borrowed(_)),
            "no copy without escapes"
        );
        // The shape only: a value no rule allows still reads, a missing field does not.
        let odd = br#"{"eventId":"e","eventTime":"soon","eventType":"x","meta":{"instanceId":"i","resourceId":"r","resourceType":"t","resourceRef":"f"}}"#;
        assert!(serde_json::from_slice::<NotificationText<'_>>(odd).is_ok());
        assert!(serde_json::from_slice::<Notification>(odd).is_err());
        assert!(serde_json::from_slice::<NotificationText<'_>>(br#"{"eventId":"e"}"#).is_err());
    }

    #[test]
    fn the_text_view_makes_a_notification_exactly_when_the_body_parses_as_one() {
        let meta = r#""meta":{"instanceId":"acme","resourceId":"t-1","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/t-1"}"#;
        let bodies = [
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T12:00:00.123+02:00","eventType":"updated",{meta},"extra":1}}"#),
            format!(r#"{{"eventId":"e\u00e9\n","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01 10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"yesterday","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"Created",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"deleted",{meta}}}"#),
            format!(r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"cre\u0061ted",{meta}}}"#),
            r#"{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{"instanceId":"a","resourceId":"r","resourceType":"urn:svc:partner:transaction:event","resourceRef":"f"}}"#.to_string(),
            r#"{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":{"instanceId":"a","resourceId":"r","resourceType":"urn:svc:partner:other","resourceRef":"f"}}"#.to_string(),
        ];
        for body in &bodies {
            let whole = serde_json::from_slice::<Notification>(body.as_bytes());
            let text = serde_json::from_slice::<NotificationText<'_>>(body.as_bytes())
                .expect("every body here has the shape");
            let from_text = text.to_notification();
            assert_eq!(from_text.is_ok(), whole.is_ok(), "{body}");
            if let (Ok(a), Ok(b)) = (from_text, whole) {
                assert_eq!(a, b, "{body}");
            }
        }
    }

    /// The fast path must read exactly what the general path reads, for every kind of body.

    #[test]
    fn the_names_of_event_and_resource_types_are_their_wire_names() {
        for event in EventType::ALL {
            assert_eq!(serde_json::to_value(event).unwrap(), event.as_str());
            assert_eq!(EventType::parse(event.as_str()), Some(event));
        }
        for resource in ResourceType::ALL {
            assert_eq!(serde_json::to_value(resource).unwrap(), resource.as_str());
            assert_eq!(ResourceType::parse(resource.as_str()), Some(resource));
        }
        assert_eq!(EventType::parse("Created"), None);
    }

    #[test]
    fn body_has_the_spec_shape() {
        let n = Notification {
            event_id: "e1".into(),
            event_time: "2024-05-01T10:00:00Z".parse().unwrap(),
            event_type: EventType::Created,
            meta: NotificationMeta {
                instance_id: "acme-valuation".into(),
                resource_id: "e1".into(),
                resource_type: ResourceType::TransactionEvent,
                resource_ref: event_ref("http://h/", "t1", "e1"),
            },
        };
        let json = serde_json::to_value(&n).unwrap();
        assert_eq!(json["eventType"], "created");
        assert_eq!(
            json["meta"]["resourceType"],
            "urn:svc:partner:transaction:event"
        );
        assert_eq!(
            json["meta"]["resourceRef"],
            "http://h/partner/v2/transactions/t1/events/e1"
        );
        assert_eq!(json["meta"]["instanceId"], "acme-valuation");
        let back: Notification = serde_json::from_value(json).unwrap();
        assert_eq!(back, n);
        assert_eq!(
            ResourceType::parse("urn:svc:partner:transaction"),
            Some(ResourceType::Transaction)
        );
    }

    #[test]
    fn a_resource_ref_is_read_back_only_under_its_own_service() {
        let base = "http://127.0.0.1:3000";
        assert_eq!(
            resource_at(base, &transaction_ref(base, "t-1")),
            Ok(ResourceAddress::Transaction {
                transaction_id: "t-1".into()
            })
        );
        assert_eq!(
            resource_at("http://127.0.0.1:3000/", &event_ref(base, "t-1", "e 2")),
            Ok(ResourceAddress::Event {
                transaction_id: "t-1".into(),
                event_id: "e 2".into()
            })
        );
        // Under a base URL with a path of its own.
        let prefixed = "https://svc.example/api";
        assert_eq!(
            resource_at(prefixed, &event_ref(prefixed, "t", "e")),
            Ok(ResourceAddress::Event {
                transaction_id: "t".into(),
                event_id: "e".into()
            })
        );
        for (reference, why) in [
            (
                "http://127.0.0.1:3001/partner/v2/transactions/t",
                "other service",
            ),
            (
                "https://127.0.0.1:3000/partner/v2/transactions/t",
                "other service",
            ),
            (
                "http://evil.example/partner/v2/transactions/t",
                "other service",
            ),
            ("http://127.0.0.1:3000/partner/v2/products/p", "path"),
            ("http://127.0.0.1:3000/partner/v2/transactions/", "path"),
            (
                "http://127.0.0.1:3000/partner/v2/transactions/t/events",
                "path",
            ),
            ("not a url", "url"),
        ] {
            let refused = resource_at(base, reference).unwrap_err();
            let matches = match why {
                "other service" => matches!(refused, ResourceRefMismatch::OtherService { .. }),
                "path" => matches!(refused, ResourceRefMismatch::UnknownPath(_)),
                _ => refused == ResourceRefMismatch::NotAUrl,
            };
            assert!(matches, "{reference}: {refused}");
        }
        assert!(matches!(
            resource_at(
                prefixed,
                "https://svc.example/other/partner/v2/transactions/t"
            ),
            Err(ResourceRefMismatch::OtherService { .. } | ResourceRefMismatch::UnknownPath(_))
        ));
    }
}

//! The webhook notification body and its two enumerations.
//!
//! The body is built here, but the sender serialises it once and signs those bytes; a receiver
//! parses it only after verifying the bytes that arrived.
//!
//! Two readings, on purpose. [`Notification`] (with the closed [`EventType`] and
//! [`ResourceType`]) is what *our sandbox* sends, and it is strict: the sandbox never sends an
//! event type the spec does not show. [`NotificationFields`] is what a *receiver* takes from any
//! faithful service (issue #46): the spec shows `created` and `updated` and two resource types
//! but does not say the lists are closed, so the day a service adds one, a receiver that refused
//! it would answer 400 to every such notification and the service would discard them after its
//! retries. So a receiver keeps every value as sent ([`crate::read::Open`] names the known
//! ones), and what makes a body a notification at all is only an `eventId`
//! ([`NotificationFields::is_notification`]); what else departs from the spec's shape (no
//! `meta`, an `eventTime` in another form, a type the spec does not show) is said beside it
//! ([`NotificationFields::departures`]), never a reason to refuse what the service signed.

use crate::read::Open;
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

/// The notification fields a receiver read from a body, each present only if the body had it
/// as a string, kept exactly as sent (`eventTime` as written, an event type the spec does not
/// show as its text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationFields {
    pub event_id: Option<String>,
    pub event_time: Option<String>,
    pub event_type: Option<String>,
    pub instance_id: Option<String>,
    pub resource_id: Option<String>,
    pub resource_type: Option<String>,
    pub resource_ref: Option<String>,
}

/// How a notification a receiver took departs from the shape the spec shows. None of these
/// makes it less of a notification: they are shown beside it so the user sees what is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Departure {
    /// The body has no `meta` fields at all (no `meta`, or one without any of its fields).
    NoMeta,
    /// A field the spec shows is absent or not a string (a JSON path: `eventTime`,
    /// `meta.resourceRef`).
    Missing(&'static str),
    /// `eventTime` is not an RFC 3339 date-time (the form the spec shows); kept as written.
    EventTimeForm(String),
    /// An `eventType` the spec does not show (kept as sent).
    UnknownEventType(String),
    /// A `meta.resourceType` the spec does not show (kept as sent).
    UnknownResourceType(String),
}

impl fmt::Display for Departure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Departure::NoMeta => {
                f.write_str("no meta (instanceId, resourceId, resourceType, resourceRef)")
            }
            Departure::Missing(field) => write!(f, "no {field}"),
            Departure::EventTimeForm(text) => {
                write!(f, "eventTime {text:?} is not an RFC 3339 date-time")
            }
            Departure::UnknownEventType(text) => {
                write!(f, "event type {text:?} is not one the spec shows")
            }
            Departure::UnknownResourceType(text) => {
                write!(f, "resource type {text:?} is not one the spec shows")
            }
        }
    }
}

impl NotificationFields {
    /// Reads what it can from any body; returns the fields and whether the body is a
    /// notification at all ([`Self::is_notification`]).
    ///
    /// Every notification a faithful service sends passes here, so the common case takes one
    /// borrowing pass over the bytes ([`NotificationText`]) with no `serde_json::Value` tree.
    /// Anything unusual (a field missing or not a string, a duplicate key, not JSON at all) takes
    /// the general path below, which reads whatever fields it can.
    pub fn read(body: &[u8]) -> (Self, bool) {
        // Only an object takes the fast path: serde's derived structs would also accept an array.
        if body.trim_ascii_start().first() == Some(&b'{') {
            if let Ok(text) = serde_json::from_slice::<NotificationText<'_>>(body) {
                let fields = Self::of(text);
                let is_notification = fields.is_notification();
                return (fields, is_notification);
            }
        }
        let fields = Self::read_any(body);
        let is_notification = fields.is_notification();
        (fields, is_notification)
    }

    fn read_any(body: &[u8]) -> Self {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
            return Self::default();
        };
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        Self {
            event_id: text("/eventId"),
            event_time: text("/eventTime"),
            event_type: text("/eventType"),
            instance_id: text("/meta/instanceId"),
            resource_id: text("/meta/resourceId"),
            resource_type: text("/meta/resourceType"),
            resource_ref: text("/meta/resourceRef"),
        }
    }

    /// The fields of a notification read as sent.
    fn of(text: NotificationText<'_>) -> Self {
        Self {
            event_id: Some(text.event_id.into_owned()),
            event_time: Some(text.event_time.into_owned()),
            event_type: Some(text.event_type.into_owned()),
            instance_id: Some(text.meta.instance_id.into_owned()),
            resource_id: Some(text.meta.resource_id.into_owned()),
            resource_type: Some(text.meta.resource_type.into_owned()),
            resource_ref: Some(text.meta.resource_ref.into_owned()),
        }
    }

    /// Whether the body these fields came from is a notification at all: a JSON object with an
    /// `eventId` that is a string, not empty. That is the one field without which nothing can
    /// be done with it (no redelivery seen as such, no delivery record found, no answer to
    /// trace), so it is the receiver's only requirement; everything else the spec shows is
    /// reported by [`Self::departures`] instead.
    pub fn is_notification(&self) -> bool {
        self.event_id.as_deref().is_some_and(|id| !id.is_empty())
    }

    /// The event type, open: one the spec shows, or the text sent.
    pub fn event_type(&self) -> Option<Open<EventType>> {
        self.event_type.as_deref().map(Open::parse)
    }

    /// The resource type, open: one the spec shows, or the text sent.
    pub fn resource_type(&self) -> Option<Open<ResourceType>> {
        self.resource_type.as_deref().map(Open::parse)
    }

    /// How these fields depart from the notification the spec shows, in the order of the body
    /// (empty for every notification our sandbox sends).
    pub fn departures(&self) -> Vec<Departure> {
        let mut found = Vec::new();
        if self.event_id.is_none() {
            found.push(Departure::Missing("eventId"));
        }
        match self.event_time.as_deref() {
            None => found.push(Departure::Missing("eventTime")),
            Some(text) if event_time(text).is_none() => {
                found.push(Departure::EventTimeForm(text.to_owned()))
            }
            Some(_) => {}
        }
        match self.event_type() {
            None => found.push(Departure::Missing("eventType")),
            Some(Open::Other(text)) => found.push(Departure::UnknownEventType(text)),
            Some(Open::Known(_)) => {}
        }
        let meta = [
            ("meta.instanceId", &self.instance_id),
            ("meta.resourceId", &self.resource_id),
            ("meta.resourceType", &self.resource_type),
            ("meta.resourceRef", &self.resource_ref),
        ];
        if meta.iter().all(|(_, value)| value.is_none()) {
            found.push(Departure::NoMeta);
        } else {
            for (path, value) in meta {
                if value.is_none() {
                    found.push(Departure::Missing(path));
                }
            }
        }
        if let Some(Open::Other(text)) = self.resource_type() {
            found.push(Departure::UnknownResourceType(text));
        }
        found
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
    fn fast_and_general_reads_agree() {
        let meta = r#""meta":{"instanceId":"i","resourceId":"r","resourceType":"urn:svc:partner:transaction","resourceRef":"https://h/x"}"#;
        let bodies = [
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#" {{"eventId":"e\u0031","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta},"extra":[1,2]}}"#),
            format!(r#"{{"eventId":"e1","eventTime":"yesterday","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"deleted",{meta}}}"#),
            format!(r#"{{"eventId":"e1","eventId":"e2","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":7,"eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            format!(r#"{{"eventId":"","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}}"#),
            r#"{"eventId":"e1","eventType":"created"}"#.to_string(),
            r#"["e1","2024-05-01T10:00:00Z","created",["i","r","urn:svc:partner:transaction","x"]]"#.to_string(),
            format!(r#"{{"eventId":"e1","eventTime":"2024-05-01T10:00:00Z","eventType":"created",{meta}}} trailing"#),
            "not json".to_string(),
            String::new(),
        ];
        for body in &bodies {
            let (fields, is_notification) = NotificationFields::read(body.as_bytes());
            let general = NotificationFields::read_any(body.as_bytes());
            assert_eq!(fields, general, "{body}");
            assert_eq!(is_notification, general.is_notification(), "{body}");
        }
        let (first, is_notification) = NotificationFields::read(bodies[0].as_bytes());
        assert!(is_notification);
        assert!(first.departures().is_empty());
        assert_eq!(
            NotificationFields::read(bodies[1].as_bytes())
                .0
                .event_id
                .as_deref(),
            Some("e1")
        );
    }

    #[test]
    fn a_receiver_takes_any_body_with_an_event_id_and_says_what_departs_from_the_spec() {
        let read = |body: &str| NotificationFields::read(body.as_bytes());
        // An event type and a resource type the spec does not show: a notification, kept as sent.
        let (fields, is_notification) = read(
            r#"{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"reassigned","meta":{"instanceId":"a","resourceId":"r","resourceType":"urn:svc:partner:transaction:document","resourceRef":"f"},"more":{"x":1}}"#,
        );
        assert!(is_notification);
        assert_eq!(fields.event_type.as_deref(), Some("reassigned"));
        assert_eq!(fields.event_type(), Some(Open::Other("reassigned".into())));
        assert_eq!(
            fields.resource_type(),
            Some(Open::Other("urn:svc:partner:transaction:document".into()))
        );
        assert_eq!(
            fields.departures(),
            vec![
                Departure::UnknownEventType("reassigned".into()),
                Departure::UnknownResourceType("urn:svc:partner:transaction:document".into()),
            ]
        );
        // No meta, an eventTime in another form: a notification, with what is missing said.
        let (fields, is_notification) =
            read(r#"{"eventId":"e","eventTime":"2024-05-01 10:00","eventType":"created"}"#);
        assert!(is_notification);
        assert_eq!(
            fields.departures(),
            vec![
                Departure::EventTimeForm("2024-05-01 10:00".into()),
                Departure::NoMeta
            ]
        );
        assert_eq!(
            fields.departures()[1].to_string(),
            "no meta (instanceId, resourceId, resourceType, resourceRef)"
        );
        // Part of meta: each missing field named.
        let (fields, _) =
            read(r#"{"eventId":"e","meta":{"resourceType":"urn:svc:partner:transaction"}}"#);
        assert_eq!(
            fields.departures(),
            vec![
                Departure::Missing("eventTime"),
                Departure::Missing("eventType"),
                Departure::Missing("meta.instanceId"),
                Departure::Missing("meta.resourceId"),
                Departure::Missing("meta.resourceRef"),
            ]
        );
        // What cannot be a notification at all: not JSON, not an object, no eventId (or not a
        // string, or empty).
        for body in [
            "not json",
            "",
            "[1,2,3]",
            r#"{"eventId": 12"#,
            r#"{"eventType":"created"}"#,
            r#"{"eventId":12}"#,
            r#"{"eventId":""}"#,
        ] {
            assert!(!read(body).1, "{body}");
        }
        assert!(read(r#"{"eventId":"e"}"#).1);
        // The eventTime rule is Notification's own.
        assert!(event_time("2024-05-01T12:00:00.5+02:00").is_some());
        assert!(event_time("yesterday").is_none());
    }

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

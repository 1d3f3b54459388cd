//! What a receiver takes from a notification that any faithful service sent (issue #46): every
//! field kept as sent, an unknown event or resource type as its text ([`crate::read::Open`] names
//! the known ones), and what makes a body a notification at all only an `eventId`
//! ([`NotificationFields::is_notification`]); what else departs from the spec's shape (no
//! `meta`, an `eventTime` in another form, a type the spec does not show) is said beside it
//! ([`NotificationFields::departures`]), never a reason to refuse what the service signed.
//!
//! Why apart from `notification.rs`: that file is the strict body our sandbox sends, which the
//! tolerant readings of `read.rs` build on; this reading builds on `read.rs` in turn.

use crate::notification::{event_time, EventType, NotificationText, ResourceType};
use crate::read::Open;
use serde::{Deserialize, Serialize};
use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}

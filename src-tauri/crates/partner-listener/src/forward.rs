//! Forward rules: which of the user's own apps a valid notification is passed on to, by its
//! resource type and event type ("transaction notifications to :3000/hooks, transaction events
//! to :4000/hooks").
//!
//! The rules are an ordered list and the FIRST rule that matches a capture wins, as in a routing
//! table. Why not every matching rule: the usual list is a few specific rules followed by a
//! catch-all ("everything else to :5000"), and sending to every match would then deliver each
//! specific notification twice (once by its rule, once by the catch-all), a surprise duplicate
//! the user's app would have to deduplicate. A user who wants a copy in two places can run two
//! listeners.
//!
//! `--forward-to URL` (and [`crate::Listener::set_forward_to`]) is kept as it was: one catch-all
//! URL, consulted AFTER the rules, as if it were the last rule. So adding rules never changes
//! where the notifications they do not name go.
//!
//! Only valid notifications that are not replays and were not forwarded by a listener already
//! are forwarded at all (see [`crate::server`]); the rules only choose where to.
//!
//! The resource types and event types are those of the service spec ("Resources and event
//! types"), from `partner_api::notification`: a rule naming anything else could never match, so
//! it is refused when set rather than silently never used.

use crate::capture::Capture;
use crate::outbound;
use crate::{Error, Result};
use partner_api::notification::{EventType, ResourceType};
use serde::{Deserialize, Serialize};

/// The prefix of every resource type of the service; a rule may leave it out.
pub const RESOURCE_TYPE_PREFIX: &str = "urn:svc:partner:";

/// Where notifications of one resource type and event type are forwarded.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForwardRule {
    /// The short name (`transaction`, `transaction:event`) or the full resource type
    /// (`urn:svc:partner:transaction`); `None` matches any.
    pub resource_type: Option<String>,
    /// The exact `eventType` (`created`, `updated`); `None` matches any.
    pub event_type: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    #[serde(with = "url_text")]
    pub url: url::Url,
}

/// A URL as its text (the workspace builds `url` without its serde feature).
mod url_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(url: &url::Url, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(url.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<url::Url, D::Error> {
        let text = String::deserialize(d)?;
        url::Url::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl ForwardRule {
    /// A rule that matches every notification.
    pub fn catch_all(url: url::Url) -> Self {
        Self {
            resource_type: None,
            event_type: None,
            url,
        }
    }

    /// Whether this rule takes `capture` (by its body's `meta.resourceType` and `eventType`).
    pub fn matches(&self, capture: &Capture) -> bool {
        let resource_matches = match self.resource_type.as_deref() {
            None => true,
            Some(wanted) => capture
                .fields
                .resource_type
                .as_deref()
                .is_some_and(|actual| same_resource_type(wanted, actual)),
        };
        let event_matches = match self.event_type.as_deref() {
            None => true,
            Some(wanted) => capture.fields.event_type.as_deref() == Some(wanted),
        };
        resource_matches && event_matches
    }

    /// The rule in a normal form: blank or `*` fields become `None` (any), a short resource
    /// type its full name; refused (with the reason) when a field names a resource type or
    /// event type the service does not have, or the URL is not http(s).
    pub fn normalised(self) -> Result<Self> {
        let resource_type = match any_or(self.resource_type.as_deref()) {
            None => None,
            Some(name) => Some(full_resource_type(name)?.as_str().to_string()),
        };
        let event_type = match any_or(self.event_type.as_deref()) {
            None => None,
            Some(name) => Some(known_event_type(name)?.as_str().to_string()),
        };
        let url = outbound::parse_target(self.url.as_str())?;
        Ok(Self {
            resource_type,
            event_type,
            url,
        })
    }
}

/// `None` for a field that means "any" (absent, blank or `*`), else the trimmed name.
fn any_or(field: Option<&str>) -> Option<&str> {
    field.map(str::trim).filter(|f| !f.is_empty() && *f != "*")
}

fn same_resource_type(wanted: &str, actual: &str) -> bool {
    wanted == actual || actual.strip_prefix(RESOURCE_TYPE_PREFIX) == Some(wanted)
}

fn short_names() -> String {
    ResourceType::ALL
        .iter()
        .map(|r| r.as_str().trim_start_matches(RESOURCE_TYPE_PREFIX))
        .collect::<Vec<_>>()
        .join(", ")
}

fn full_resource_type(name: &str) -> Result<ResourceType> {
    ResourceType::parse(name)
        .or_else(|| ResourceType::parse(&format!("{RESOURCE_TYPE_PREFIX}{name}")))
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "the service has no resource type {name:?}: use one of {} (or * for any)",
                short_names()
            ))
        })
}

fn known_event_type(name: &str) -> Result<EventType> {
    EventType::parse(name).ok_or_else(|| {
        let known: Vec<&str> = EventType::ALL.iter().map(|e| e.as_str()).collect();
        Error::InvalidInput(format!(
            "the service has no event type {name:?}: use one of {} (or * for any)",
            known.join(", ")
        ))
    })
}

/// The forward rules in order; the first that matches a capture wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardRules(Vec<ForwardRule>);

impl ForwardRules {
    /// Checks and normalises each rule ([`ForwardRule::normalised`]), keeping their order.
    pub fn new(rules: Vec<ForwardRule>) -> Result<Self> {
        rules
            .into_iter()
            .map(ForwardRule::normalised)
            .collect::<Result<Vec<_>>>()
            .map(Self)
    }

    pub fn rules(&self) -> &[ForwardRule] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first rule that takes `capture`, if any.
    pub fn matching(&self, capture: &Capture) -> Option<&ForwardRule> {
        self.0.iter().find(|rule| rule.matches(capture))
    }

    /// Reads a rule as `partner listen --forward-rule` takes it: `[RESOURCE][:EVENT]=URL`.
    ///
    /// - `transaction=http://localhost:3000/hooks`: transaction notifications, any event type;
    /// - `transaction:created=URL`: only those whose `eventType` is `created`;
    /// - `transaction:event=URL`, `transaction:event:created=URL`: the transaction-event
    ///   resource type (its short name has a colon: a known resource type is read whole first);
    /// - `*:updated=URL`: any resource type, `updated` only;
    /// - `=URL` or `*=URL`: everything (a catch-all);
    /// - full names work too: `urn:svc:partner:transaction:created=URL`.
    pub fn parse_cli(spec: &str) -> Result<ForwardRule> {
        let usage = "write a forward rule as [RESOURCE][:EVENT]=URL, e.g. \
                     transaction:created=http://localhost:3000/hooks or *=http://localhost:3000/hooks";
        let (selector, url) = spec.split_once('=').ok_or_else(|| {
            Error::InvalidInput(format!("the forward rule {spec:?} has no '=URL': {usage}"))
        })?;
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::InvalidInput(format!(
                "the forward rule {spec:?} has no URL after '=': {usage}"
            )));
        }
        let url = outbound::parse_target(url)?;
        let selector = selector.trim();
        // A whole known resource type first (its name may hold colons), then RESOURCE:EVENT
        // split at the last colon.
        let (resource, event) =
            if any_or(Some(selector)).is_none() || full_resource_type(selector).is_ok() {
                (selector, None)
            } else {
                match selector.rsplit_once(':') {
                    Some((resource, event)) => (resource, Some(event)),
                    None => (selector, None),
                }
            };
        ForwardRule {
            resource_type: Some(resource.to_string()),
            event_type: event.map(str::to_string),
            url,
        }
        .normalised()
        .map_err(|e| Error::InvalidInput(format!("the forward rule {spec:?}: {e}")))
    }
}

impl From<ForwardRules> for Vec<ForwardRule> {
    fn from(rules: ForwardRules) -> Self {
        rules.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::NotificationFields;

    fn capture(resource_type: &str, event_type: &str) -> Capture {
        let body = format!(
            r#"{{"eventId":"e","eventTime":"2024-05-01T10:00:00Z","eventType":"{event_type}","meta":{{"instanceId":"a","resourceId":"r","resourceType":"{resource_type}","resourceRef":"f"}}}}"#
        );
        let fields = NotificationFields::read(body.as_bytes()).0;
        Capture {
            id: 1,
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/webhooks".into(),
            headers: Vec::new(),
            body: Some(body.into_bytes()),
            body_size: 0,
            peer: None,
            verdict: crate::Verdict::Valid,
            matched_key: None,
            subscription_id: Some("s".into()),
            fields,
            attempt: 1,
            notification_id: Some(1),
            response: crate::ResponseRecord {
                status: 200,
                body: "ok\n".into(),
                from_test_mode: false,
                delay_ms: 0,
            },
            processing_micros: 0,
            replay: false,
        }
    }

    fn rule(spec: &str) -> ForwardRule {
        ForwardRules::parse_cli(spec).unwrap()
    }

    #[test]
    fn cli_rules_read_resource_event_and_url() {
        let r = rule("transaction=http://localhost:3000/hooks");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction")
        );
        assert_eq!(r.event_type, None);
        assert_eq!(r.url.as_str(), "http://localhost:3000/hooks");

        let r = rule("transaction:created=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction")
        );
        assert_eq!(r.event_type.as_deref(), Some("created"));

        let r = rule("transaction:event=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction:event")
        );
        assert_eq!(r.event_type, None);

        let r = rule("transaction:event:created=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction:event")
        );
        assert_eq!(r.event_type.as_deref(), Some("created"));

        let r = rule("urn:svc:partner:transaction:updated=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction")
        );
        assert_eq!(r.event_type.as_deref(), Some("updated"));

        let r = rule("*:updated=http://h/a?x=1");
        assert_eq!(r.resource_type, None);
        assert_eq!(r.event_type.as_deref(), Some("updated"));
        assert_eq!(r.url.as_str(), "http://h/a?x=1", "a '=' in the URL is kept");

        for any in ["=http://h/a", "*=http://h/a", " * = http://h/a"] {
            assert_eq!(
                rule(any),
                ForwardRule::catch_all("http://h/a".parse().unwrap())
            );
        }
    }

    #[test]
    fn bad_cli_rules_are_clear_errors() {
        for (spec, says) in [
            ("transaction", "no '=URL'"),
            ("transaction=", "no URL"),
            ("transaction=ftp://h/a", "http:// or https://"),
            ("transaction=not a url", "not a URL"),
            ("product=http://h/a", "no resource type \"product\""),
            (
                "transaction:deleted=http://h/a",
                "no event type \"deleted\"",
            ),
        ] {
            let error = ForwardRules::parse_cli(spec).unwrap_err().to_string();
            assert!(error.contains(says), "{spec}: {error}");
        }
    }

    #[test]
    fn the_first_matching_rule_wins_and_short_and_full_names_match() {
        let rules = ForwardRules::new(vec![
            rule("transaction:created=http://h/created"),
            ForwardRule {
                resource_type: Some("urn:svc:partner:transaction:event".into()),
                event_type: None,
                url: "http://h/events".parse().unwrap(),
            },
            rule("*=http://h/rest"),
        ])
        .unwrap();
        let url = |c: &Capture| rules.matching(c).map(|r| r.url.path().to_string());
        let tx = "urn:svc:partner:transaction";
        let ev = "urn:svc:partner:transaction:event";
        assert_eq!(url(&capture(tx, "created")).as_deref(), Some("/created"));
        assert_eq!(url(&capture(tx, "updated")).as_deref(), Some("/rest"));
        assert_eq!(url(&capture(ev, "created")).as_deref(), Some("/events"));

        let no_catch_all = ForwardRules::new(vec![rule("transaction:event=http://h/e")]).unwrap();
        assert!(no_catch_all.matching(&capture(tx, "created")).is_none());
        // A short name in a rule built by hand matches without normalising, too.
        let by_hand = ForwardRule {
            resource_type: Some("transaction".into()),
            event_type: Some("updated".into()),
            url: "http://h/a".parse().unwrap(),
        };
        assert!(by_hand.matches(&capture(tx, "updated")));
        assert!(!by_hand.matches(&capture(ev, "updated")));
        assert!(!by_hand.matches(&capture(tx, "created")));
    }

    #[test]
    fn rules_set_by_hand_are_normalised_or_refused() {
        let rules = ForwardRules::new(vec![ForwardRule {
            resource_type: Some(" * ".into()),
            event_type: Some(String::new()),
            url: "https://h/a".parse().unwrap(),
        }])
        .unwrap();
        assert_eq!(
            rules.rules(),
            &[ForwardRule::catch_all("https://h/a".parse().unwrap())]
        );
        let refused = ForwardRules::new(vec![ForwardRule {
            resource_type: None,
            event_type: None,
            url: "file:///etc/passwd".parse().unwrap(),
        }]);
        assert!(refused.is_err());
        let json = serde_json::to_value(rule("transaction:created=http://h/a")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"resourceType": "urn:svc:partner:transaction", "eventType": "created", "url": "http://h/a"})
        );
    }
}

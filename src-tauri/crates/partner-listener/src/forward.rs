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
//! A rule may name any resource type and event type, not only those the spec shows
//! (`partner_api::notification`): the listener takes every validly signed notification whatever
//! its types (issue #46), and a service that adds an event type (`reassigned`) or a resource type
//! (`urn:svc:partner:transaction:document`) must be routable the day it does, without a new
//! console. A name the spec does not show is kept as written and matched as text;
//! [`ForwardRule::unknown_names`] lets the CLI and the app say so, since a typo then matches
//! nothing rather than being refused.

use crate::capture::Capture;
use crate::outbound;
use crate::{Error, Result};
use partner_api::notification::{EventType, ResourceType};
use partner_api::read::Open;
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

    /// The rule in a normal form: blank or `*` fields become `None` (any), a resource type
    /// without its `urn:` its full name (`transaction:document` is
    /// `urn:svc:partner:transaction:document`); refused (with the reason) only when the URL is
    /// not http(s). Any resource type and event type is taken (see the module notes).
    pub fn normalised(self) -> Result<Self> {
        let resource_type = any_or(self.resource_type.as_deref()).map(full_resource_type);
        let event_type = any_or(self.event_type.as_deref()).map(str::to_string);
        let url = outbound::parse_target(self.url.as_str())?;
        Ok(Self {
            resource_type,
            event_type,
            url,
        })
    }

    /// The names in this rule that the spec does not show (a resource type, then an event
    /// type), for a note: such a rule matches only notifications that carry exactly that text.
    pub fn unknown_names(&self) -> Vec<String> {
        let mut unknown = Vec::new();
        if let Some(name) = any_or(self.resource_type.as_deref()) {
            if let Open::Other(full) = Open::<ResourceType>::parse(&full_resource_type(name)) {
                unknown.push(full);
            }
        }
        if let Some(Open::Other(name)) =
            any_or(self.event_type.as_deref()).map(Open::<EventType>::parse)
        {
            unknown.push(name);
        }
        unknown
    }
}

/// `None` for a field that means "any" (absent, blank or `*`), else the trimmed name.
fn any_or(field: Option<&str>) -> Option<&str> {
    field.map(str::trim).filter(|f| !f.is_empty() && *f != "*")
}

fn same_resource_type(wanted: &str, actual: &str) -> bool {
    wanted == actual || actual.strip_prefix(RESOURCE_TYPE_PREFIX) == Some(wanted)
}

/// The full name of a resource type: a name that starts with `urn:` as it is, another (a short
/// name, known or not) under the service's prefix.
fn full_resource_type(name: &str) -> String {
    if name.starts_with("urn:") {
        name.to_string()
    } else {
        format!("{RESOURCE_TYPE_PREFIX}{name}")
    }
}

/// Whether `name` is a resource type the spec shows, by its short or full name.
fn known_resource_type(name: &str) -> bool {
    Open::<ResourceType>::parse(&full_resource_type(name))
        .known()
        .is_some()
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
    ///   resource type (its short name has a colon: a resource type the spec shows is read
    ///   whole first);
    /// - `*:updated=URL`, `*:reassigned=URL`: any resource type, that event type only (any
    ///   name: the spec's list is not closed);
    /// - `transaction:document:*=URL`: a resource type the spec does not show, any event type
    ///   (otherwise the text after its last colon would be read as the event type);
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
        let (resource, event) = if any_or(Some(selector)).is_none() || known_resource_type(selector)
        {
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
        ] {
            let error = ForwardRules::parse_cli(spec).unwrap_err().to_string();
            assert!(error.contains(says), "{spec}: {error}");
        }
    }

    #[test]
    fn rules_take_event_and_resource_types_the_spec_does_not_show() {
        let r = rule("transaction:reassigned=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction")
        );
        assert_eq!(r.event_type.as_deref(), Some("reassigned"));
        assert_eq!(r.unknown_names(), vec!["reassigned".to_string()]);

        let r = rule("transaction:document:*=http://h/a");
        assert_eq!(
            r.resource_type.as_deref(),
            Some("urn:svc:partner:transaction:document")
        );
        assert_eq!(r.event_type, None);
        assert_eq!(
            r.unknown_names(),
            vec!["urn:svc:partner:transaction:document".to_string()]
        );

        let r = rule("urn:other:thing:deleted=http://h/a");
        assert_eq!(r.resource_type.as_deref(), Some("urn:other:thing"));
        assert_eq!(r.event_type.as_deref(), Some("deleted"));
        assert!(rule("transaction:event:created=http://h/a")
            .unknown_names()
            .is_empty());

        let rules = ForwardRules::new(vec![
            rule("*:reassigned=http://h/reassigned"),
            rule("transaction:document:*=http://h/documents"),
            rule("*=http://h/rest"),
        ])
        .unwrap();
        let url = |c: &Capture| rules.matching(c).map(|r| r.url.path().to_string());
        let tx = "urn:svc:partner:transaction";
        let doc = "urn:svc:partner:transaction:document";
        assert_eq!(
            url(&capture(tx, "reassigned")).as_deref(),
            Some("/reassigned")
        );
        assert_eq!(url(&capture(doc, "created")).as_deref(), Some("/documents"));
        assert_eq!(url(&capture(tx, "created")).as_deref(), Some("/rest"));
        // Set by hand (the app's rules): any names, a short unknown one given its prefix.
        let by_hand = ForwardRules::new(vec![ForwardRule {
            resource_type: Some("transaction:document".into()),
            event_type: Some("archived".into()),
            url: "http://h/a".parse().unwrap(),
        }])
        .unwrap();
        assert_eq!(
            by_hand.rules()[0].resource_type.as_deref(),
            Some("urn:svc:partner:transaction:document")
        );
        assert!(by_hand.matching(&capture(doc, "archived")).is_some());
        assert!(by_hand.matching(&capture(doc, "created")).is_none());
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

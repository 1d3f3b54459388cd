//! A product's `webhooks` as a create or PATCH changes them: the spec's signing-key rule and
//! field checks, and the merge (by `subscriptionId`, or in the `no_subscription_ids` dialect by
//! `url` and `resource`), which keeps each subscription's own id and key.

use super::dialect::Dialect;
use super::state::{Data, Webhook};
use serde_json::{json, Map, Value};

/// The spec's signing-key rule, read from its words: 32 to 64 of letters, digits and
/// `!@#$^&*`, with at least one lowercase, uppercase, digit and special.
pub(super) fn signing_key_ok(key: &str) -> bool {
    const SPECIALS: &str = "!@#$^&*";
    let length = key.chars().count();
    (32..=64).contains(&length)
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || SPECIALS.contains(c))
        && key.chars().any(|c| c.is_ascii_lowercase())
        && key.chars().any(|c| c.is_ascii_uppercase())
        && key.chars().any(|c| c.is_ascii_digit())
        && key.chars().any(|c| SPECIALS.contains(c))
}

pub(super) const RESOURCES: [&str; 2] = [
    "urn:svc:partner:transaction",
    "urn:svc:partner:transaction:event",
];

/// Reads one webhook entry's `url`, `events`, `resource` into `shown`; `Err` names the problem.
pub(super) fn apply_webhook_fields(
    entry: &Map<String, Value>,
    shown: &mut Map<String, Value>,
) -> Result<(), String> {
    if let Some(url) = entry.get("url").filter(|v| !v.is_null()) {
        let url = url.as_str().ok_or("url must be a string")?;
        if !url.starts_with("https://") && !url.starts_with("http://127.0.0.1") {
            return Err("url must be an HTTPS address".into());
        }
        shown.insert("url".into(), json!(url));
    }
    if let Some(events) = entry.get("events").filter(|v| !v.is_null()) {
        let events = events.as_array().ok_or("events must be an array")?;
        if events.is_empty()
            || !events
                .iter()
                .all(|e| matches!(e.as_str(), Some("created" | "updated")))
        {
            return Err("events must be created and/or updated".into());
        }
        shown.insert("events".into(), Value::Array(events.clone()));
    }
    if let Some(resource) = entry.get("resource").filter(|v| !v.is_null()) {
        if !resource.as_str().is_some_and(|r| RESOURCES.contains(&r)) {
            return Err("resource is not a known resource".into());
        }
        shown.insert("resource".into(), resource.clone());
    }
    Ok(())
}

/// The webhook merge of a create or PATCH: an entry with `subscriptionId` updates that
/// subscription (an omitted key keeps the current one), one without creates a subscription,
/// and a subscription left out is deleted.
pub(super) fn merge_webhooks(
    dialect: Dialect,
    data: &mut Data,
    current: &[Webhook],
    entries: &[Value],
) -> Result<Vec<Webhook>, String> {
    if dialect.no_subscription_ids {
        return merge_webhooks_by_element(data, current, entries);
    }
    let mut merged = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let n = n + 1;
        let entry = entry
            .as_object()
            .ok_or_else(|| format!("webhooks[{n}] must be an object"))?;
        let key = match entry.get("signingkey").filter(|v| !v.is_null()) {
            None => None,
            Some(Value::String(key)) if signing_key_ok(key) => Some(key.clone()),
            Some(_) => {
                return Err(format!(
                    "webhooks[{n}].signingkey does not meet the complexity rule"
                ))
            }
        };
        match entry.get("subscriptionId").and_then(Value::as_str) {
            Some(id) => {
                let mut webhook =
                    current
                        .iter()
                        .find(|w| w.id == id)
                        .cloned()
                        .ok_or_else(|| {
                            format!("webhooks[{n}]: no subscription {id} on this product")
                        })?;
                apply_webhook_fields(entry, &mut webhook.shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                if let Some(key) = key {
                    webhook.signing_key = key;
                }
                merged.push(webhook);
            }
            None => {
                let mut shown = Map::new();
                apply_webhook_fields(entry, &mut shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                for field in ["url", "events", "resource"] {
                    if !shown.contains_key(field) {
                        return Err(format!("webhooks[{n}].{field} is required"));
                    }
                }
                let key = key.ok_or_else(|| format!("webhooks[{n}].signingkey is required"))?;
                let id = data.fresh_id("whs");
                shown.insert("subscriptionId".into(), json!(id));
                merged.push(Webhook {
                    id,
                    shown,
                    signing_key: key,
                });
            }
        }
    }
    Ok(merged)
}

/// The webhook merge of the `no_subscription_ids` dialect: an entry is the subscription with the
/// same `url` and `resource` (its other fields change it, an omitted `signingkey` or `events`
/// keeps it), or a new subscription where none has them; a subscription left out is deleted.
/// The service's own id of each is kept, and never shown.
pub(super) fn merge_webhooks_by_element(
    data: &mut Data,
    current: &[Webhook],
    entries: &[Value],
) -> Result<Vec<Webhook>, String> {
    let mut merged: Vec<Webhook> = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let n = n + 1;
        let entry = entry
            .as_object()
            .ok_or_else(|| format!("webhooks[{n}] must be an object"))?;
        if entry.contains_key("subscriptionId") {
            return Err(format!(
                "webhooks[{n}].subscriptionId is not a field of a subscription"
            ));
        }
        let key = match entry.get("signingkey").filter(|v| !v.is_null()) {
            None => None,
            Some(Value::String(key)) if signing_key_ok(key) => Some(key.clone()),
            Some(_) => {
                return Err(format!(
                    "webhooks[{n}].signingkey does not meet the complexity rule"
                ))
            }
        };
        let mut shown = Map::new();
        apply_webhook_fields(entry, &mut shown).map_err(|e| format!("webhooks[{n}]: {e}"))?;
        let (Some(url), Some(resource)) = (shown.get("url"), shown.get("resource")) else {
            return Err(format!(
                "webhooks[{n}]: url and resource name a subscription and are required"
            ));
        };
        let same = |w: &Webhook| {
            w.shown.get("url") == Some(url) && w.shown.get("resource") == Some(resource)
        };
        if merged.iter().any(same) {
            return Err(format!(
                "webhooks[{n}] names a subscription another entry names (same url and resource)"
            ));
        }
        match current.iter().find(|w| same(w)).cloned() {
            Some(mut webhook) => {
                apply_webhook_fields(entry, &mut webhook.shown)
                    .map_err(|e| format!("webhooks[{n}]: {e}"))?;
                if let Some(key) = key {
                    webhook.signing_key = key;
                }
                merged.push(webhook);
            }
            None => {
                if !shown.contains_key("events") {
                    return Err(format!("webhooks[{n}].events is required"));
                }
                let key = key.ok_or_else(|| format!("webhooks[{n}].signingkey is required"))?;
                merged.push(Webhook {
                    id: data.fresh_id("whs"),
                    shown,
                    signing_key: key,
                });
            }
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_key_rule_follows_the_spec() {
        assert!(signing_key_ok(
            "Seeded-Key-0123456789abcdefGHIJ#$!"
                .replace('-', "x")
                .as_str()
        ));
        assert!(!signing_key_ok("short1A!"));
        assert!(!signing_key_ok(&"a".repeat(40)));
        assert!(!signing_key_ok("Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!-"));
    }
}

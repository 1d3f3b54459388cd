//! The data the other service starts with ([`Seed`] says how much): products, transactions
//! and their events, written in the dialect's shapes (fields left out in `minimal`, unknown
//! fields and values in `extra`).

use super::dialect::{date, Dialect};
use super::state::{Data, StoredProduct, Webhook, PARTNER_ID};
use chrono::{DateTime, Duration as TimeDelta, TimeZone, Utc};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// How many items the service starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed {
    pub products: usize,
    pub transactions: usize,
}

impl Default for Seed {
    fn default() -> Self {
        Self {
            products: 3,
            transactions: 30,
        }
    }
}

/// The service's data at its start: `seed`'s products and transactions (with their events),
/// written in `dialect`.
pub(super) fn data(dialect: Dialect, seed: Seed) -> Data {
    let mut data = Data {
        tokens: HashMap::new(),
        products: Vec::new(),
        transactions: Vec::new(),
        events: HashMap::new(),
        next_id: 0,
    };
    let base = Utc
        .with_ymd_and_hms(2026, 11, 2, 9, 0, 0)
        .single()
        .unwrap_or_else(Utc::now);
    for i in 0..seed.products {
        let product = seeded_product(dialect, i, base + TimeDelta::hours(i as i64));
        data.products.push(product);
    }
    for i in 0..seed.transactions {
        let id = format!("{:08x}-0000-4000-8000-{:012x}", 0x7a00 + i, i);
        let at = base + TimeDelta::minutes(37 * i as i64);
        data.transactions
            .push(seeded_transaction(dialect, i, &id, at));
        data.events
            .insert(id.clone(), seeded_events(dialect, i, &id, at));
    }
    data
}

fn seeded_product(dialect: Dialect, i: usize, created: DateTime<Utc>) -> StoredProduct {
    let id = format!("{:08x}-1111-4111-8111-{:012x}", 0x9000 + i, i);
    let name = format!("other-product-{i}");
    let listing = ["Zephyr Appraisals", "Acme Flood Check", "Mid Title"][i % 3].to_string();
    let mut fields = Map::new();
    fields.insert("id".into(), json!(id));
    fields.insert("name".into(), json!(name));
    fields.insert("listingName".into(), json!(format!("{listing} {i}")));
    if dialect.minimal {
        // The spec's fields only, and of those only some: optional ones left out.
        if i.is_multiple_of(2) {
            fields.insert("requestTypes".into(), json!(["NEW_REQUEST"]));
            fields.insert("status".into(), json!("development"));
        }
        if i % 3 == 1 {
            fields.insert("environment".into(), json!("sandbox"));
            fields.insert("partnerId".into(), json!(PARTNER_ID));
        }
    } else {
        fields.insert("partnerId".into(), json!(PARTNER_ID));
        fields.insert("requestTypes".into(), json!(["NEW_REQUEST"]));
        fields.insert("environment".into(), json!("sandbox"));
        fields.insert("status".into(), json!("development"));
        fields.insert("integrationType".into(), json!("ASYNC"));
        fields.insert(
            "interfaceUrl".into(),
            json!(format!("https://order.example/{i}")),
        );
        fields.insert(
            "adminInterfaceUrl".into(),
            json!(format!("https://admin.example/{i}")),
        );
        fields.insert(
            "credentials".into(),
            json!([{"id": "apiKey", "type": "string", "title": "API key", "minimum": 8,
                    "maximum": 64, "secret": true, "scope": "company", "required": true}]),
        );
        fields.insert(
            "tags".into(),
            json!({"workflows": ["ordering"], "categories": ["appraisal"], "applications": []}),
        );
        fields.insert("extensionLimit".into(), json!(0));
        fields.insert("created".into(), date(dialect, created));
        fields.insert("createdBy".into(), json!("admin@other.example"));
        fields.insert(
            "updated".into(),
            date(dialect, created + TimeDelta::days(1)),
        );
        fields.insert("updatedBy".into(), json!("admin@other.example"));
    }
    if dialect.extra {
        fields.insert(
            "status".into(),
            json!(["approved-pending", "development", "retired"][i % 3]),
        );
        fields.insert(
            "environment".into(),
            json!(["prod", "sandbox", "uat"][i % 3]),
        );
        fields.insert(
            "requestTypes".into(),
            json!(["NEW_REQUEST", "REISSUE_REQUEST"]),
        );
        fields.insert("integrationType".into(), json!("SYNC_POLL"));
        fields.insert("extensionLimit".into(), json!("0"));
        fields.insert("interfaceUrl".into(), Value::Null);
        fields.insert(
            "credentials".into(),
            json!([{"id": "apiKey", "type": "secret-string", "title": "API key",
                    "minimum": "8", "maximum": "64", "secret": true, "scope": "lender",
                    "required": true, "hint": "from your admin page"}]),
        );
        fields.insert("region".into(), json!("eu-west"));
        fields.insert(
            "_links".into(),
            json!({"self": {"href": format!("/partner/v2/products/{id}")}}),
        );
        fields.insert("createdBy".into(), Value::Null);
    }
    let mut webhooks = Vec::new();
    if i == 0 {
        let mut shown = Map::new();
        let sub_id = format!("sub-{i}-transactions");
        if !dialect.no_subscription_ids {
            shown.insert("subscriptionId".into(), json!(sub_id));
        }
        shown.insert("url".into(), json!("https://hooks.other.example/tx"));
        shown.insert("events".into(), json!(["created", "updated"]));
        shown.insert("resource".into(), json!("urn:svc:partner:transaction"));
        if dialect.extra {
            shown.insert("events".into(), json!(["created", "updated", "archived"]));
            shown.insert("status".into(), json!("active"));
        }
        webhooks.push(Webhook {
            id: sub_id,
            shown,
            signing_key: "Seeded-Key-0123456789abcdefGHIJ#$!".into(),
        });
        if dialect.extra {
            let mut shown = Map::new();
            shown.insert("subscriptionId".into(), json!("sub-0-documents"));
            shown.insert("url".into(), json!("https://hooks.other.example/docs"));
            shown.insert("events".into(), json!(["created"]));
            shown.insert("resource".into(), json!("urn:svc:partner:document"));
            webhooks.push(Webhook {
                id: "sub-0-documents".into(),
                shown,
                signing_key: "Seeded-Key-0123456789abcdefGHIJ#$?".replace('?', "!"),
            });
        }
    }
    StoredProduct { fields, webhooks }
}

fn seeded_transaction(dialect: Dialect, i: usize, id: &str, at: DateTime<Utc>) -> Value {
    let mut t = Map::new();
    t.insert("id".into(), json!(id));
    if dialect.minimal {
        // `id` always; a few fields on some.
        if !i.is_multiple_of(3) {
            t.insert(
                "status".into(),
                json!(["created", "processing", "completed"][i % 3]),
            );
        }
        if i.is_multiple_of(2) {
            t.insert("created".into(), date(dialect, at));
            t.insert("request".into(), json!({"type": "NEW_REQUEST"}));
        }
        return Value::Object(t);
    }
    let statuses = if dialect.extra {
        ["created", "on-hold", "completed", "escalated"]
    } else {
        ["created", "processing", "completed", "processing"]
    };
    t.insert("status".into(), json!(statuses[i % 4]));
    t.insert("clientId".into(), json!("lender-client-1"));
    t.insert("environment".into(), json!("sandbox"));
    t.insert("created".into(), date(dialect, at));
    t.insert("createdBy".into(), json!("lender@bank.example"));
    t.insert("updated".into(), date(dialect, at + TimeDelta::minutes(5)));
    t.insert("updatedBy".into(), json!("lender@bank.example"));
    t.insert(
        "product".into(),
        json!({"id": format!("{:08x}-1111-4111-8111-{:012x}", 0x9000, 0), "partnerId": PARTNER_ID, "name": "other-product-0"}),
    );
    t.insert(
        "entityRef".into(),
        json!({"entityId": format!("loan-{i}"), "entityType": "urn:svc:loan"}),
    );
    t.insert(
        "request".into(),
        json!({"type": "NEW_REQUEST", "options": {}, "loan": {"loanNumber": format!("L-{i}"), "amount": 250000 + i}}),
    );
    if i % 4 == 2 {
        let response_status = if dialect.extra && i % 8 == 2 {
            "partiallyCompleted"
        } else {
            "completed"
        };
        t.insert(
            "response".into(),
            json!({"status": response_status, "partnerStatus": "Delivered", "referenceNumber": format!("R-{i}")}),
        );
    }
    if dialect.extra {
        t.insert("priority".into(), json!(i % 3));
        // A field of the service's own, with words found nowhere else.
        t.insert("assignedDesk".into(), json!(format!("kestrel desk {i}")));
        t.insert("environment".into(), json!("prod"));
        t.insert("createdBy".into(), Value::Null);
        if i.is_multiple_of(4) {
            t.insert(
                "request".into(),
                json!({"type": "REISSUE_REQUEST", "options": {}, "loan": {}, "channel": "api"}),
            );
        }
        if i % 4 == 3 {
            t.insert(
                "response".into(),
                json!({"status": "awaitingLender", "partnerStatus": null}),
            );
        }
    }
    Value::Object(t)
}

fn seeded_events(
    dialect: Dialect,
    i: usize,
    transaction_id: &str,
    at: DateTime<Utc>,
) -> Vec<Value> {
    let mut events = vec![json!({
        "id": format!("ev-{i}-1"),
        "type": "urn:svc:partner:transaction:request:created",
        "text": "Request created",
        "from": "System",
        "sent": date(dialect, at),
    })];
    if dialect.minimal {
        events.push(json!({"id": format!("ev-{i}-2")}));
    } else if dialect.extra {
        events.push(json!({
            "id": format!("ev-{i}-2"),
            "type": "urn:vendor:escalation:opened",
            "text": "Escalated",
            "from": "Lender desk",
            "sent": date(dialect, at + TimeDelta::minutes(3)),
            "comments": null,
            "severity": "high",
            "details": {"transactionId": transaction_id, "status": "escalated", "ticket": 4411},
        }));
    } else {
        events.push(json!({
            "id": format!("ev-{i}-2"),
            "type": "urn:lender:note",
            "text": "Called the borrower",
            "from": "Lender desk",
            "sent": date(dialect, at + TimeDelta::minutes(3)),
            "comments": "left a message",
        }));
    }
    events
}

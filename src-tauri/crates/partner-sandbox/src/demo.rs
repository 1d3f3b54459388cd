//! Deterministic demo data: a few products (some with webhook subscriptions) and as many
//! transactions as asked for, spread over every transaction and response status, with events.
//!
//! Everything goes through the store's own write paths (the same rules as the API), from a
//! fixed seed and fixed timestamps, so two runs produce the same ids and the same data. The
//! demo subscriptions point at `https://127.0.0.1:9/…` (the discard port on loopback): a
//! delivery to them fails fast and never leaves the machine. Their signing keys come from the
//! OS's randomness; nobody can read them back anyway.

use crate::store::Store;
use crate::tokens::Caller;
use chrono::{DateTime, TimeDelta, Utc};
use partner_api::{
    signing_key, NewEvent, NewTransaction, ResponseStatus, TransactionResponse, TransactionUpdate,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

const SEED: u64 = 0x5EED_DA7A;
/// The demo's first transaction is stamped at this instant; the rest follow minutes apart.
const EPOCH_SECONDS: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

const PURPOSES: &[&str] = &["Purchase", "Refinance", "CashOutRefinance", "Construction"];
const STATES: &[&str] = &["CA", "TX", "NY", "FL", "WA", "IL", "CO", "GA"];
const PARTNER_STATUSES: &[&str] = &[
    "Ordered",
    "Inspection scheduled",
    "In review",
    "Awaiting documents",
];

/// Seeds `store` for `partner`. Errors are the store's rule violations, which would be a bug
/// in this module.
pub fn seed(store: &mut Store, partner: &Caller, transactions: usize) -> Result<(), String> {
    store.seed_ids(SEED);
    let result = seed_with_fixed_ids(store, partner, transactions);
    store.random_ids();
    result.map_err(|e| format!("seeding demo data failed: {e}"))
}

fn seed_with_fixed_ids(
    store: &mut Store,
    partner: &Caller,
    transactions: usize,
) -> Result<(), partner_api::ApiError> {
    let epoch = DateTime::<Utc>::from_timestamp(EPOCH_SECONDS, 0).unwrap_or_default();
    let hook = |resource: &str, events: &[&str]| {
        json!({
            "url": format!("https://127.0.0.1:9/demo/{}", resource.rsplit(':').next().unwrap_or("hook")),
            "events": events,
            "resource": resource,
            "signingkey": signing_key::generate().expose(),
        })
    };
    let products = [
        json!({
            "name": "acme-valuation",
            "listingName": "Acme Valuation Services",
            "requestTypes": ["NEW_REQUEST"],
            "interfaceUrl": "https://acme.example/order",
            "adminInterfaceUrl": "https://acme.example/admin",
            "credentials": [{"id": "username", "type": "string", "title": "User name",
                              "minimum": 3, "maximum": 64, "secret": false, "scope": "user", "required": true},
                             {"id": "password", "type": "string", "title": "Password",
                              "minimum": 8, "maximum": 128, "secret": true, "scope": "user", "required": true}],
            "tags": {"workflows": ["appraisal"], "categories": ["valuation"], "applications": ["lender-portal"]},
            "webhooks": [hook("urn:svc:partner:transaction", &["created", "updated"]),
                         hook("urn:svc:partner:transaction:event", &["created"])],
        }),
        json!({
            "name": "acme-title",
            "listingName": "Acme Title Search",
            "requestTypes": ["NEW_REQUEST"],
            "tags": {"workflows": ["title"], "categories": ["title"], "applications": []},
            "webhooks": [hook("urn:svc:partner:transaction:event", &["created"])],
        }),
        json!({
            "name": "acme-flood",
            "listingName": "Acme Flood Certification",
            "requestTypes": ["NEW_REQUEST"],
        }),
    ];
    let mut product_ids = Vec::new();
    for (i, body) in products.into_iter().enumerate() {
        let at = epoch - TimeDelta::days(30 - i as i64);
        product_ids.push(store.create_product(partner, body, at, false)?.id);
    }

    let mut rng = StdRng::seed_from_u64(SEED);
    for i in 0..transactions {
        let created = epoch + TimeDelta::minutes(7 * i as i64 + rng.random_range(0..5));
        let product_id = product_ids[i % product_ids.len()].clone();
        let (transaction, _) = store.create_transaction(
            NewTransaction {
                product_id,
                request_type: "NEW_REQUEST".into(),
                loan: Some(json!({
                    "loanNumber": format!("LN-{:06}", i + 1),
                    "loanAmount": rng.random_range(80..1500) * 1000,
                    "loanPurpose": PURPOSES[rng.random_range(0..PURPOSES.len())],
                    "propertyState": STATES[rng.random_range(0..STATES.len())],
                })),
                options: Some(json!({"rush": i % 9 == 0})),
            },
            created,
        )?;
        let id = transaction.id;
        let mut at = created;
        let mut later = |rng: &mut StdRng| {
            at += TimeDelta::minutes(rng.random_range(3..240));
            at
        };
        if i % 7 == 3 {
            store.update_transaction(
                &id,
                TransactionUpdate {
                    loan: None,
                    options: Some(json!({"rush": true})),
                },
                later(&mut rng),
            )?;
        }
        if i % 4 == 1 {
            store.add_event(
                &id,
                NewEvent {
                    event_type: "urn:lender:note".into(),
                    text: "Borrower contact updated".into(),
                    comments: Some("Please call the borrower's mobile number.".into()),
                },
                later(&mut rng),
            )?;
        }
        // Three in ten stay `created`, three are in progress, four are finished.
        let answers: &[ResponseStatus] = match i % 10 {
            0..=2 => &[],
            3 | 4 => &[ResponseStatus::Processing],
            5 => &[ResponseStatus::InputRequired],
            6 | 7 => &[ResponseStatus::Processing, ResponseStatus::Completed],
            8 => &[ResponseStatus::Failed],
            _ => &[ResponseStatus::Canceled],
        };
        for status in answers {
            let response = TransactionResponse {
                status: *status,
                partner_status: Some(
                    PARTNER_STATUSES[rng.random_range(0..PARTNER_STATUSES.len())].into(),
                ),
                reference_number: Some(format!("ACME-{:06}", i + 1)),
                responding_party: None,
                loan: None,
                resources: None,
                errors: (*status == ResponseStatus::Failed).then(|| {
                    vec![partner_api::ResponseError {
                        code: "E-ADDR".into(),
                        description: "The property address could not be verified".into(),
                        kind: Some("validation".into()),
                        field_id: Some("loan.propertyAddress".into()),
                    }]
                }),
            };
            store.respond(partner, &id, response, later(&mut rng))?;
        }
    }
    Ok(())
}

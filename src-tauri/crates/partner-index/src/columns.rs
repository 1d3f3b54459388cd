//! What of a transaction a copy files it under: the fields questions filter on, and the words
//! a text search finds it by.
//!
//! One home for it, so this machine's index and a team workspace's (`partner-server`, on
//! PostgreSQL) answer the same question with the same transactions: which field is "the
//! product", where a loan number is read from, which words of which parts are searchable.
//! Every field but `id` may be absent (a faithful service may send a transaction with only its
//! `id`); values the console does not know are kept as sent.

use chrono::{DateTime, Utc};
use partner_api::read::{self, Document};
use serde_json::Value;

/// The columns of one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    pub id: String,
    pub status: Option<String>,
    pub product_id: Option<String>,
    pub product_name: Option<String>,
    pub request_type: Option<String>,
    pub response_status: Option<String>,
    pub partner_status: Option<String>,
    pub reference_number: Option<String>,
    pub requesting_party: Option<String>,
    /// `request.loan.loanNumber`, a string or a number as text.
    pub loan_number: Option<String>,
    /// `request.loan` as JSON text (any loan field is asked of it).
    pub loan: Option<String>,
    pub created: Option<DateTime<Utc>>,
    pub updated: Option<DateTime<Utc>>,
    /// The strings and numbers of the request, at any depth (field names left out).
    pub request_words: String,
    /// The same of the response.
    pub response_words: String,
    /// The same of every other field the service sent (fields the console does not know too).
    pub other_words: String,
}

impl Columns {
    pub fn of(transaction: &Document<read::TransactionView>) -> Self {
        let view = transaction.view();
        let raw = transaction.raw();
        let response = view.response.as_ref();
        let loan = raw
            .get("request")
            .and_then(|r| r.get("loan"))
            .filter(|l| !l.is_null());
        let loan_number = match loan.and_then(|l| l.get("loanNumber")) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        Self {
            id: view.id.clone(),
            status: view.status.as_ref().map(|s| s.as_str().to_string()),
            product_id: view.product_id().map(str::to_string),
            product_name: view.product_name().map(str::to_string),
            request_type: view.request_type().map(str::to_string),
            response_status: view.response_status().map(|s| s.as_str().to_string()),
            partner_status: response.and_then(|r| r.partner_status.clone()),
            reference_number: response.and_then(|r| r.reference_number.clone()),
            requesting_party: view
                .request
                .as_ref()
                .and_then(|r| r.requesting_party_name())
                .map(str::to_string),
            loan_number,
            loan: loan.map(Value::to_string),
            created: view.created,
            updated: view.updated,
            request_words: raw.get("request").map(words).unwrap_or_default(),
            response_words: raw.get("response").map(words).unwrap_or_default(),
            other_words: raw
                .iter()
                .filter(|(field, _)| !matches!(field.as_str(), "request" | "response"))
                .map(|(_, value)| words(value))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// The strings and numbers of `value`, at any depth, one text (field names left out, as the
/// listing search does).
fn words(value: &Value) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push(' ');
            }
            Value::Number(n) => {
                out.push_str(&n.to_string());
                out.push(' ');
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut out = String::new();
    walk(value, &mut out);
    out
}

//! Transactions and their events, as the field notes settle them.
//!
//! The lender writes `request`, the partner writes `response`. A final response status locks
//! both, which is why [`ResponseStatus::is_final`] and [`ResponseStatus::transaction_status`]
//! live here: the sandbox enforces the lock and the console greys out the form by the same rule.

pub use crate::constraints::{
    event_type_pattern, EVENT_COMMENTS_MAX, EVENT_TEXT_MAX, EVENT_TYPE_MAX, RESPONSE_TEXT_MAX,
    SYSTEM_EVENT_TYPE_PREFIX,
};
use crate::list::{SortValue, Sortable};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use utoipa::ToSchema;

/// System event types (`request:updated` and `response:failed` are the sandbox's own).
pub mod event_types {
    pub const REQUEST_CREATED: &str = "urn:svc:partner:transaction:request:created";
    pub const REQUEST_UPDATED: &str = "urn:svc:partner:transaction:request:updated";
    pub const RESPONSE_UPDATED: &str = "urn:svc:partner:transaction:response:updated";
    pub const RESPONSE_PROCESSED: &str = "urn:svc:partner:transaction:response:processed";
    pub const RESPONSE_FAILED: &str = "urn:svc:partner:transaction:response:failed";
    /// Who sends system events.
    pub const SYSTEM: &str = "System";
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransactionStatus {
    Created,
    Processing,
    Completed,
}

impl TransactionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionStatus::Created => "created",
            TransactionStatus::Processing => "processing",
            TransactionStatus::Completed => "completed",
        }
    }
}

impl fmt::Display for TransactionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The partner's answer to a transaction.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ResponseStatus {
    Processing,
    Completed,
    Failed,
    /// One l, as the interface spells it.
    Canceled,
    InputRequired,
}

impl ResponseStatus {
    pub const ALL: [ResponseStatus; 5] = [
        ResponseStatus::Processing,
        ResponseStatus::Completed,
        ResponseStatus::Failed,
        ResponseStatus::Canceled,
        ResponseStatus::InputRequired,
    ];

    /// `completed`, `failed` and `canceled` end the exchange: request and response lock.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ResponseStatus::Completed | ResponseStatus::Failed | ResponseStatus::Canceled
        )
    }

    /// The transaction's own status once the partner has answered with this.
    pub fn transaction_status(self) -> TransactionStatus {
        if self.is_final() {
            TransactionStatus::Completed
        } else {
            TransactionStatus::Processing
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ResponseStatus::Processing => "processing",
            ResponseStatus::Completed => "completed",
            ResponseStatus::Failed => "failed",
            ResponseStatus::Canceled => "canceled",
            ResponseStatus::InputRequired => "inputRequired",
        }
    }
}

impl fmt::Display for ResponseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductRef {
    pub id: String,
    pub partner_id: String,
    pub name: String,
}

/// The lender's loan the transaction is about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityRef {
    pub entity_id: String,
    pub entity_type: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceFile {
    pub id: String,
    pub name: String,
    pub mime_type: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PointOfContact {
    pub name: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub phone: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Party {
    pub name: String,
    #[serde(default)]
    pub address: String,
    #[serde(default)]
    pub city: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub postal_code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_of_contact: Option<PointOfContact>,
}

/// What the lender asks for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionRequest {
    /// A request type of the product; fixed after creation.
    #[serde(rename = "type")]
    pub request_type: String,
    #[schema(value_type = Object)]
    pub options: Value,
    #[schema(value_type = Object)]
    pub loan: Value,
    #[serde(default)]
    pub resources: Vec<ResourceFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requesting_party: Option<Party>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResponseError {
    pub code: String,
    pub description: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_id: Option<String>,
}

/// What the partner answers; the body of `PATCH /partner/v2/transactions/{id}/response` too.
/// Fields left out of a PATCH keep their current values.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransactionResponse {
    pub status: ResponseStatus,
    /// Free text for the lender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_response_text)]
    pub partner_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_response_text)]
    pub reference_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responding_party: Option<Party>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub loan: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<ResourceFile>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ResponseError>>,
}

impl TransactionResponse {
    /// A response the user wrote as JSON (a file, the app's editor), checked before anything
    /// is sent: valid JSON, an object of the response's fields with a known `status`, and no
    /// field the console would drop on the way (a misspelt `partnerstatus`, a `loan` inside
    /// `respondingParty`): nothing the user wrote is lost on the way, or nothing is sent.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let written: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if !written.is_object() {
            return Err("a response is a JSON object, such as {\"status\": \"processing\"}".into());
        }
        let response: TransactionResponse =
            serde_json::from_value(written.clone()).map_err(|e| format!("not a response: {e}"))?;
        let sent = serde_json::to_value(&response).map_err(|e| format!("not a response: {e}"))?;
        let mut dropped = Vec::new();
        dropped_fields(&written, &sent, "", &mut dropped);
        if !dropped.is_empty() {
            return Err(format!(
                "the response names fields it does not have: {} (its fields: status, partnerStatus, referenceNumber, respondingParty, loan, resources, errors)",
                dropped.join(", ")
            ));
        }
        Ok(response)
    }
}

/// The paths of `written` that `sent` does not carry (a `null` counts as left out).
fn dropped_fields(written: &Value, sent: &Value, at: &str, dropped: &mut Vec<String>) {
    match (written, sent) {
        (Value::Object(written), Value::Object(sent)) => {
            for (key, value) in written {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                match sent.get(key) {
                    None if !value.is_null() => dropped.push(path),
                    None => {}
                    Some(kept) => dropped_fields(value, kept, &path, dropped),
                }
            }
        }
        (Value::Array(written), Value::Array(sent)) => {
            for (i, (value, kept)) in written.iter().zip(sent).enumerate() {
                dropped_fields(value, kept, &format!("{at}[{i}]"), dropped);
            }
        }
        _ => {}
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    pub id: String,
    pub status: TransactionStatus,
    pub client_id: String,
    pub environment: String,
    pub created: DateTime<Utc>,
    pub created_by: String,
    pub updated: DateTime<Utc>,
    pub updated_by: String,
    pub product: ProductRef,
    pub entity_ref: EntityRef,
    pub request: TransactionRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<TransactionResponse>,
}

impl Transaction {
    /// Whether a final response has locked request and response.
    pub fn is_locked(&self) -> bool {
        self.response.as_ref().is_some_and(|r| r.status.is_final())
    }
}

impl Sortable for Transaction {
    const SORT_KEYS: &'static [&'static str] =
        &["id", "status", "created", "updated", "requestType"];

    fn sort_value(&self, key: &str) -> SortValue<'_> {
        match key {
            "id" => SortValue::Text(&self.id),
            "status" => SortValue::Text(self.status.as_str()),
            "created" => SortValue::Instant(self.created),
            "updated" => SortValue::Instant(self.updated),
            "requestType" => SortValue::Text(&self.request.request_type),
            _ => SortValue::Missing,
        }
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_type: Option<String>,
    pub transaction_id: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionEvent {
    pub id: String,
    /// A URN: a system type of [`event_types`] or a sender's own.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The event's title.
    pub text: String,
    /// `System` or the sender's name.
    pub from: String,
    pub sent: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comments: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<EventDetails>,
}

/// The lender starts a transaction (sandbox `POST /sandbox/v1/transactions`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTransaction {
    pub product_id: String,
    /// One of the product's request types.
    #[schema(schema_with = crate::openapi::request_type)]
    pub request_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_object)]
    pub loan: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_object)]
    pub options: Option<Value>,
}

/// The lender updates a transaction's request (sandbox `PATCH /sandbox/v1/transactions/{id}`):
/// `loan`, `options` or both, each a JSON object (`null` leaves it as it is).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransactionUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loan: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// A custom event (sandbox `POST /sandbox/v1/transactions/{id}/events`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewEvent {
    /// A URN of the sender's own, such as `urn:acme:note` (not one of the system's).
    #[serde(rename = "type")]
    #[schema(schema_with = crate::openapi::custom_event_type)]
    pub event_type: String,
    #[schema(schema_with = crate::openapi::event_text)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_event_comments)]
    pub comments: Option<String>,
}

impl utoipa::PartialSchema for TransactionUpdate {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::Schema::AllOf(crate::openapi::transaction_update()).into()
    }
}

impl ToSchema for TransactionUpdate {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_response_is_read_whole_or_refused_saying_what_is_wrong() {
        let full = r#"{"status": "completed", "partnerStatus": "Report delivered",
            "referenceNumber": "R-7", "respondingParty": {"name": "Acme Appraisals",
            "pointOfContact": {"name": "Ana", "email": "ana@acme.test"}},
            "loan": {"amount": 250000}, "resources": [{"id": "r1", "name": "report.pdf",
            "mimeType": "application/pdf"}], "errors": []}"#;
        let read = TransactionResponse::from_json(full).expect("every field of the notes");
        assert_eq!(read.status, ResponseStatus::Completed);
        assert_eq!(read.loan, Some(serde_json::json!({"amount": 250000})));
        let left_out =
            TransactionResponse::from_json(r#"{"status": "processing", "partnerStatus": null}"#)
                .expect("null is a field left out");
        assert_eq!(left_out.partner_status, None);

        for (text, says) in [
            ("{", "not JSON"),
            ("[1]", "a response is a JSON object"),
            (r#"{"partnerStatus": "x"}"#, "missing field `status`"),
            (r#"{"status": "complete"}"#, "unknown variant `complete`"),
            (
                r#"{"status": "processing", "partnerstatus": "x"}"#,
                "partnerstatus",
            ),
            (
                r#"{"status": "processing", "respondingParty": {"name": "A", "phone": "1"}}"#,
                "respondingParty.phone",
            ),
        ] {
            let refused = TransactionResponse::from_json(text).expect_err(text);
            assert!(refused.contains(says), "{text}: {refused}");
        }
    }

    #[test]
    fn final_statuses_lock() {
        for status in ResponseStatus::ALL {
            let locks = matches!(status.as_str(), "completed" | "failed" | "canceled");
            assert_eq!(status.is_final(), locks, "{status}");
        }
        assert_eq!(
            ResponseStatus::InputRequired.transaction_status(),
            TransactionStatus::Processing
        );
        assert_eq!(
            ResponseStatus::Canceled.transaction_status(),
            TransactionStatus::Completed
        );
    }

    #[test]
    fn response_patch_parses_and_rejects_unknown_fields() {
        let ok: TransactionResponse = serde_json::from_str(
            r#"{"status":"processing","partnerStatus":"Ordered","referenceNumber":"R-1"}"#,
        )
        .unwrap();
        assert_eq!(ok.status, ResponseStatus::Processing);
        assert!(serde_json::from_str::<TransactionResponse>(r#"{"status":"cancelled"}"#).is_err());
        assert!(
            serde_json::from_str::<TransactionResponse>(r#"{"status":"failed","x":1}"#).is_err()
        );
        let input_required: TransactionResponse =
            serde_json::from_str(r#"{"status":"inputRequired"}"#).unwrap();
        assert_eq!(input_required.status, ResponseStatus::InputRequired);
    }
}

//! What a client can count on from any faithful implementation of the service: the tolerant
//! reader's types.
//!
//! Why a second set of types: [`crate::Product`], [`crate::Transaction`] and
//! [`crate::TransactionEvent`] are what *our sandbox* writes (the field notes' choices: extra
//! fields, a few enum values) and what its OpenAPI document and data file hold it to; they are
//! strict on purpose. A client reading them from another service learned those choices as if the
//! spec had made them (issue #23: a service without `created` broke `partner products list`).
//! These types require only what the spec pins: a product has an `id` (and its subscriptions
//! in `webhooks`), a transaction and an event have an `id`. Every other field is an `Option`
//! (or an empty list), read leniently: `null` is absent, a date may carry any offset and a
//! fraction, a number may come as a string, a field of an unexpected type is absent rather
//! than fatal. Every "only X is shown" enumeration is [`Open`]: a value the client has never
//! seen is kept exactly as sent, and the console decides cautiously from it
//! ([`Open::<ResponseStatus>::may_be_final`], [`ProductView::may_be_production`]).
//!
//! The view is read *from* the service's document, never instead of it: [`Document`] carries
//! the JSON object as it arrived beside its typed view, and serialises back to exactly that
//! object, so `--output json`, CSV exports and the app's raw view show the service's own fields,
//! unknown ones included (kubectl's lesson: a typed client that re-serialises drops fields newer
//! than itself).

use crate::list::{SortValue, Sortable};
use crate::notification::{EventType, ResourceType};
use crate::transaction::{ResponseStatus, TransactionStatus};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;
use std::ops::Deref;

// ---- open enumerations ------------------------------------------------------------------

/// A closed enumeration of values the spec (or the field notes) shows, whose text is fixed.
pub trait KnownValues: Copy + Eq + 'static {
    /// Every known value.
    const KNOWN: &'static [Self];
    fn text(self) -> &'static str;
}

impl KnownValues for ResponseStatus {
    const KNOWN: &'static [Self] = &ResponseStatus::ALL;
    fn text(self) -> &'static str {
        self.as_str()
    }
}

impl KnownValues for TransactionStatus {
    const KNOWN: &'static [Self] = &[
        TransactionStatus::Created,
        TransactionStatus::Processing,
        TransactionStatus::Completed,
    ];
    fn text(self) -> &'static str {
        self.as_str()
    }
}

impl KnownValues for EventType {
    const KNOWN: &'static [Self] = &EventType::ALL;
    fn text(self) -> &'static str {
        self.as_str()
    }
}

impl KnownValues for ResourceType {
    const KNOWN: &'static [Self] = &ResourceType::ALL;
    fn text(self) -> &'static str {
        self.as_str()
    }
}

/// A value of an enumeration the spec shows only part of: one the client knows, or another
/// kept exactly as the service sent it. Serialises back to the same string, displays it, and
/// orders by it (as the spec sorts strings).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Open<E> {
    Known(E),
    Other(String),
}

impl<E: KnownValues> Open<E> {
    pub fn parse(text: &str) -> Self {
        E::KNOWN
            .iter()
            .copied()
            .find(|known| known.text() == text)
            .map_or_else(|| Open::Other(text.to_owned()), Open::Known)
    }

    /// The value as the service wrote it.
    pub fn as_str(&self) -> &str {
        match self {
            Open::Known(known) => known.text(),
            Open::Other(text) => text,
        }
    }

    pub fn known(&self) -> Option<E> {
        match self {
            Open::Known(known) => Some(*known),
            Open::Other(_) => None,
        }
    }

    pub fn is(&self, value: E) -> bool {
        self.known() == Some(value)
    }
}

impl<E> From<E> for Open<E> {
    fn from(value: E) -> Self {
        Open::Known(value)
    }
}

impl Open<ResponseStatus> {
    /// Whether this status may end the exchange (and lock request and response). A status the
    /// client does not know may be a final one: the console reads it so, and asks before it
    /// answers such a transaction.
    pub fn may_be_final(&self) -> bool {
        match self {
            Open::Known(status) => status.is_final(),
            Open::Other(_) => true,
        }
    }
}

impl<E: KnownValues> fmt::Display for Open<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<E: KnownValues> PartialOrd for Open<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E: KnownValues> Ord for Open<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        crate::list::compare_text(self.as_str(), other.as_str())
    }
}

impl<E: KnownValues> Serialize for Open<E> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de, E: KnownValues> Deserialize<'de> for Open<E> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Open::parse(&text))
    }
}

// ---- the tolerant reading ----------------------------------------------------------------

/// A value a field of a view may hold, read so that it never fails: what does not read is
/// absent (the document still holds it). Each field of the views below says only
/// `#[serde(default, deserialize_with = "tolerant")]` (with `skip_serializing_if = "absent"`
/// where an absent value is left out); how it is read follows from its type, here:
///
/// - text (`String`): a string as is, a number or boolean as its text;
/// - an integer (`i64`): a number, or a string holding one (`"0"`);
/// - a boolean: `true`/`false`, or the strings `"true"`/`"false"` (any case);
/// - an instant: RFC 3339 / ISO 8601 with any offset and fraction, or none (UTC), as
///   [`parse_instant`];
/// - an open enumeration value ([`Open`]): a string, kept as sent;
/// - any JSON (`Value`): anything but `null`;
/// - an object of the views ([`CredentialView`], [`TagsView`], …): an object that reads as it;
///
/// and for a field, `Option<T>` is `T` or absent (`null`, missing, unreadable), `Vec<T>` is an
/// array's elements that read as `T` (anything but an array is empty).
pub trait Tolerant: Sized {
    /// `value` as `Self`, or `None` when it does not read as one.
    fn read(value: Value) -> Option<Self>;
}

impl Tolerant for String {
    fn read(value: Value) -> Option<Self> {
        lenient::text_of(&value)
    }
}

impl Tolerant for i64 {
    fn read(value: Value) -> Option<Self> {
        lenient::integer_of(&value)
    }
}

impl Tolerant for bool {
    fn read(value: Value) -> Option<Self> {
        match value {
            Value::Bool(b) => Some(b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        }
    }
}

impl Tolerant for DateTime<Utc> {
    fn read(value: Value) -> Option<Self> {
        match value {
            Value::String(s) => parse_instant(&s),
            _ => None,
        }
    }
}

impl<E: KnownValues> Tolerant for Open<E> {
    fn read(value: Value) -> Option<Self> {
        value.as_str().map(Open::parse)
    }
}

impl Tolerant for Value {
    fn read(value: Value) -> Option<Self> {
        (!value.is_null()).then_some(value)
    }
}

/// The views' own object types: read whole (each of their fields tolerantly), absent when the
/// value is not an object that reads as one.
macro_rules! tolerant_objects {
    ($($view:ty),* $(,)?) => {$(
        impl Tolerant for $view {
            fn read(value: Value) -> Option<Self> {
                serde_json::from_value(value).ok()
            }
        }
    )*};
}

tolerant_objects!(
    CredentialView,
    TagsView,
    SubscriptionView,
    ProductRefView,
    EntityRefView,
    RequestView,
    ResponseView
);

/// What a field of a view holds: one [`Tolerant`] value or none, or a list of them.
pub trait TolerantField: Sized {
    fn read_field(value: Value) -> Self;
}

impl<T: Tolerant> TolerantField for Option<T> {
    fn read_field(value: Value) -> Self {
        T::read(value)
    }
}

impl<T: Tolerant> TolerantField for Vec<T> {
    fn read_field(value: Value) -> Self {
        match value {
            Value::Array(items) => items.into_iter().filter_map(T::read).collect(),
            _ => Vec::new(),
        }
    }
}

/// Whether a field's value is left out of the view's JSON (`skip_serializing_if = "absent"`):
/// an absent optional field is left out rather than written as `null`.
fn absent<T>(value: &Option<T>) -> bool {
    value.is_none()
}

/// The one reader of the views' fields, for `#[serde(default, deserialize_with = "tolerant")]`:
/// it never fails on a value of an unexpected type (see [`Tolerant`]).
pub fn tolerant<'de, D: Deserializer<'de>, F: TolerantField>(
    deserializer: D,
) -> Result<F, D::Error> {
    Ok(F::read_field(Value::deserialize(deserializer)?))
}

/// Readers for the plain fields of other types (a token's answer), in the same tolerant way,
/// for `#[serde(default, deserialize_with = ...)]`.
pub mod lenient {
    use super::*;

    /// Text: a string as is, a number or boolean as its text, `null` or anything else absent.
    pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
        tolerant(deserializer)
    }

    pub(crate) fn text_of(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// Text for a field that keeps a plain `String`: absent or unreadable is empty.
    pub fn text_or_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        Ok(text(deserializer)?.unwrap_or_default())
    }

    /// An integer for a field that keeps a plain `i64`: absent or unreadable is 0.
    pub fn integer_or_zero<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
        Ok(integer(deserializer)?.unwrap_or_default())
    }

    /// An integer: a number, or a string holding one (`"0"`); anything else absent.
    pub fn integer<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
        tolerant(deserializer)
    }

    pub(crate) fn integer_of(value: &Value) -> Option<i64> {
        match value {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.007e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        }
    }
}

/// Reads an instant in any RFC 3339 / ISO 8601 form the spec's "ISO 8601 UTC" may arrive in:
/// `Z` or any offset, any fraction, a space for the `T`, or no offset at all (read as UTC).
pub fn parse_instant(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    let with_t = text.replacen(' ', "T", 1);
    if let Ok(at) = DateTime::parse_from_rfc3339(&with_t) {
        return Some(at.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(at) = NaiveDateTime::parse_from_str(&with_t, format) {
            return Some(at.and_utc());
        }
    }
    // ISO 8601's basic offset (`+0100`) and the like.
    DateTime::parse_from_str(&with_t, "%Y-%m-%dT%H:%M:%S%.f%z")
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

// ---- the document beside its view ---------------------------------------------------------

/// A resource as the service sent it (the JSON object, every field kept) with the typed view
/// read from it. Derefs to the view; serialises to the document, unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Document<T> {
    raw: Map<String, Value>,
    view: T,
}

/// Why a JSON value is not a document of `T`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DocumentError(String);

impl<T: DeserializeOwned> Document<T> {
    /// Reads the view from `value`, which must be a JSON object holding what `T` requires.
    pub fn read(value: Value) -> Result<Self, DocumentError> {
        let not_an_object = |value: &Value| {
            DocumentError(format!(
                "expected a JSON object, found {}",
                json_kind(value)
            ))
        };
        if !value.is_object() {
            return Err(not_an_object(&value));
        }
        // Read from the value in place: no copy of the document for its view.
        let view = T::deserialize(&value).map_err(|e| DocumentError(e.to_string()))?;
        match value {
            Value::Object(raw) => Ok(Self { raw, view }),
            other => Err(not_an_object(&other)),
        }
    }

    /// Each element of a JSON array as a document; the first that does not read is the error,
    /// named by its position.
    pub fn read_all(value: Value) -> Result<Vec<Self>, DocumentError> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    Self::read(item).map_err(|e| DocumentError(format!("item {}: {}", i + 1, e.0)))
                })
                .collect(),
            other => Err(DocumentError(format!(
                "expected a JSON array, found {}",
                json_kind(&other)
            ))),
        }
    }
}

impl<T> Document<T> {
    /// A document of a view built here (tests, values the client made itself).
    pub fn from_parts(raw: Map<String, Value>, view: T) -> Self {
        Self { raw, view }
    }

    /// The JSON object exactly as the service sent it.
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    pub fn view(&self) -> &T {
        &self.view
    }

    pub fn into_view(self) -> T {
        self.view
    }

    pub fn into_raw(self) -> Map<String, Value> {
        self.raw
    }

    pub fn into_parts(self) -> (Map<String, Value>, T) {
        (self.raw, self.view)
    }
}

impl<T> Deref for Document<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.view
    }
}

impl<T> Serialize for Document<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Document<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::read(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl<T: Sortable> Sortable for Document<T> {
    const SORT_KEYS: &'static [&'static str] = T::SORT_KEYS;
    fn sort_value(&self, key: &str) -> SortValue<'_> {
        self.view.sort_value(key)
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---- products -----------------------------------------------------------------------------

/// A credential definition as read: only its `id` is needed to name it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialView {
    #[serde(default, deserialize_with = "tolerant")]
    pub id: Option<String>,
    /// `string` is shown; any other kind is kept as sent.
    #[serde(rename = "type")]
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub title: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub pattern: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub minimum: Option<i64>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub maximum: Option<i64>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub secret: Option<bool>,
    /// `user` or `company` are shown; any other scope is kept as sent.
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub scope: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub required: Option<bool>,
}

/// `tags` as read: each list empty when absent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagsView {
    #[serde(default, deserialize_with = "tolerant")]
    pub workflows: Vec<String>,
    #[serde(default, deserialize_with = "tolerant")]
    pub categories: Vec<String>,
    #[serde(default, deserialize_with = "tolerant")]
    pub applications: Vec<String>,
}

/// A webhook subscription as read. The spec does not show `subscriptionId` (the field notes
/// do); without one a subscription cannot be addressed, and a client must not drop it from a
/// PATCH either, since a subscription left out is deleted.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionView {
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub subscription_id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub url: Option<String>,
    /// `created`, `updated`, or values the client does not know.
    #[serde(default, deserialize_with = "tolerant")]
    #[cfg_attr(feature = "ts", ts(type = "Array<string>"))]
    pub events: Vec<Open<EventType>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub resource: Option<Open<ResourceType>>,
}

/// A product configuration as read: an `id` and its subscriptions; everything else optional.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductView {
    pub id: String,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub partner_id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub listing_name: Option<String>,
    /// `NEW_REQUEST` is shown; others are kept as sent.
    #[serde(default, deserialize_with = "tolerant")]
    pub request_types: Vec<String>,
    /// `sandbox` is shown; see [`ProductView::may_be_production`].
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub environment: Option<String>,
    /// `development` is shown (the field notes add `approved`, `deprecated`).
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub status: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub interface_url: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub admin_interface_url: Option<String>,
    /// `ASYNC` is shown.
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub integration_type: Option<String>,
    #[serde(default, deserialize_with = "tolerant")]
    pub credentials: Vec<CredentialView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub tags: Option<TagsView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub extension_limit: Option<i64>,
    #[serde(default, deserialize_with = "tolerant")]
    pub webhooks: Vec<SubscriptionView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub created: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub created_by: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub updated: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub updated_by: Option<String>,
}

/// The value the spec shows for a product's environment.
pub const SANDBOX_ENVIRONMENT: &str = "sandbox";

impl ProductView {
    /// Whether changes to this product may reach production. Only the spec's `sandbox` says
    /// no; an absent or unknown environment (`prod`, `uat`, …) is read as production, so the
    /// console asks before it changes such a product.
    pub fn may_be_production(&self) -> bool {
        self.environment.as_deref() != Some(SANDBOX_ENVIRONMENT)
    }

    /// The best name to show: listing name, else name, else id.
    pub fn display_name(&self) -> &str {
        self.listing_name
            .as_deref()
            .or(self.name.as_deref())
            .unwrap_or(&self.id)
    }
}

fn text_or_missing(text: Option<&str>) -> SortValue<'_> {
    text.map_or(SortValue::Missing, SortValue::Text)
}

fn instant_or_missing(at: Option<DateTime<Utc>>) -> SortValue<'static> {
    at.map_or(SortValue::Missing, SortValue::Instant)
}

impl Sortable for ProductView {
    const SORT_KEYS: &'static [&'static str] = <crate::Product as Sortable>::SORT_KEYS;

    fn sort_value(&self, key: &str) -> SortValue<'_> {
        match key {
            "listingName" => text_or_missing(self.listing_name.as_deref()),
            "name" => text_or_missing(self.name.as_deref()),
            "status" => text_or_missing(self.status.as_deref()),
            "created" => instant_or_missing(self.created),
            "updated" => instant_or_missing(self.updated),
            _ => SortValue::Missing,
        }
    }
}

// ---- transactions and events --------------------------------------------------------------

/// `product` of a transaction as read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductRefView {
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub partner_id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub name: Option<String>,
}

/// `entityRef` of a transaction as read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntityRefView {
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub entity_id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub entity_type: Option<String>,
}

/// `request` of a transaction as read; the free objects stay JSON.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    #[serde(rename = "type")]
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub request_type: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub options: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub loan: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub resources: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub requesting_party: Option<Value>,
}

impl RequestView {
    /// `requestingParty.name`, where there is one.
    pub fn requesting_party_name(&self) -> Option<&str> {
        self.requesting_party.as_ref()?.get("name")?.as_str()
    }
}

/// `response` of a transaction as read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseView {
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub status: Option<Open<ResponseStatus>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub partner_status: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub reference_number: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub responding_party: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub loan: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub resources: Option<Value>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub errors: Option<Value>,
}

/// A transaction as read: an `id`; the spec shows no other field.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionView {
    pub id: String,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub status: Option<Open<TransactionStatus>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub client_id: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub environment: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub created: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub created_by: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub updated: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub updated_by: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub product: Option<ProductRefView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub entity_ref: Option<EntityRefView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub request: Option<RequestView>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub response: Option<ResponseView>,
}

impl TransactionView {
    /// Whether a response the client knows to be final has locked request and response.
    pub fn is_locked(&self) -> bool {
        self.response_status()
            .and_then(Open::known)
            .is_some_and(ResponseStatus::is_final)
    }

    /// Whether the transaction may be locked: a final response status, or one the client does
    /// not know (which may be final). The console asks before answering such a transaction.
    pub fn may_be_locked(&self) -> bool {
        self.response_status().is_some_and(Open::may_be_final)
    }

    pub fn response_status(&self) -> Option<&Open<ResponseStatus>> {
        self.response.as_ref()?.status.as_ref()
    }

    pub fn request_type(&self) -> Option<&str> {
        self.request.as_ref()?.request_type.as_deref()
    }

    pub fn product_id(&self) -> Option<&str> {
        self.product.as_ref()?.id.as_deref()
    }

    pub fn product_name(&self) -> Option<&str> {
        self.product.as_ref()?.name.as_deref()
    }

    /// The latest instant the transaction says it changed: `updated`, else `created`.
    pub fn last_change(&self) -> Option<DateTime<Utc>> {
        self.updated.or(self.created)
    }
}

impl Sortable for TransactionView {
    const SORT_KEYS: &'static [&'static str] = <crate::Transaction as Sortable>::SORT_KEYS;

    fn sort_value(&self, key: &str) -> SortValue<'_> {
        match key {
            "id" => SortValue::Text(&self.id),
            "status" => text_or_missing(self.status.as_ref().map(Open::as_str)),
            "created" => instant_or_missing(self.created),
            "updated" => instant_or_missing(self.updated),
            "requestType" => text_or_missing(self.request_type()),
            _ => SortValue::Missing,
        }
    }
}

/// A transaction event as read: an `id`; the spec shows no other field.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    pub id: String,
    /// A URN: a system type or a sender's own; any is kept as sent.
    #[serde(rename = "type")]
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub event_type: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub text: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub from: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub sent: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    pub comments: Option<String>,
    #[serde(default, deserialize_with = "tolerant", skip_serializing_if = "absent")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub details: Option<Value>,
}

/// The order of a client-side sort where a field may be absent: present values by the spec's
/// rule (ascending or descending), absent ones last either way.
pub fn compare_absent_last(
    a: &SortValue<'_>,
    b: &SortValue<'_>,
    descending: bool,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (SortValue::Missing, SortValue::Missing) => Ordering::Equal,
        (SortValue::Missing, _) => Ordering::Greater,
        (_, SortValue::Missing) => Ordering::Less,
        _ if descending => b.cmp(a),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_product_needs_only_its_id() {
        let product: Document<ProductView> =
            Document::read(json!({"id": "p1", "name": "acme"})).expect("a minimal product");
        assert_eq!(product.id, "p1");
        assert_eq!(product.created, None);
        assert!(product.webhooks.is_empty());
        assert!(product.may_be_production(), "no environment: cautious");
        assert!(Document::<ProductView>::read(json!({"name": "no id"})).is_err());
    }

    #[test]
    fn unknown_values_and_fields_are_kept_as_sent() {
        let raw = json!({
            "id": "p2", "status": "approved-pending", "environment": "prod",
            "extensionLimit": "0", "interfaceUrl": null, "created": "2026-11-26T10:00:00.123+01:00",
            "webhooks": [{"subscriptionId": "s", "events": ["created", "archived"],
                          "resource": "urn:svc:partner:document"}],
            "region": "eu"
        });
        let product: Document<ProductView> = Document::read(raw.clone()).expect("reads");
        assert_eq!(product.status.as_deref(), Some("approved-pending"));
        assert_eq!(product.extension_limit, Some(0));
        assert_eq!(product.interface_url, None);
        assert_eq!(
            product.created,
            parse_instant("2026-11-26T09:00:00.123Z"),
            "the offset is applied"
        );
        let webhook = &product.webhooks[0];
        assert_eq!(webhook.events[1], Open::Other("archived".into()));
        assert_eq!(webhook.events[1].to_string(), "archived");
        assert_eq!(
            webhook.resource.as_ref().map(Open::as_str),
            Some("urn:svc:partner:document")
        );
        assert_eq!(serde_json::to_value(&product).expect("serialises"), raw);
        assert_eq!(
            serde_json::to_value(&webhook.events).expect("serialises"),
            json!(["created", "archived"])
        );
    }

    #[test]
    fn an_unknown_response_status_may_be_final() {
        let tx: TransactionView = serde_json::from_value(json!({
            "id": "t", "status": "on-hold", "response": {"status": "partiallyCompleted"}
        }))
        .expect("reads");
        assert!(!tx.is_locked());
        assert!(tx.may_be_locked());
        assert_eq!(tx.status.as_ref().map(Open::as_str), Some("on-hold"));
        let done: TransactionView =
            serde_json::from_value(json!({"id": "t", "response": {"status": "canceled"}}))
                .expect("reads");
        assert!(done.is_locked() && done.may_be_locked());
        let open: TransactionView =
            serde_json::from_value(json!({"id": "t", "response": {"status": "processing"}}))
                .expect("reads");
        assert!(!open.may_be_locked());
    }

    #[test]
    fn instants_in_any_offset_and_fraction() {
        let utc = parse_instant("2026-11-26T09:00:00Z").expect("utc");
        for text in [
            "2026-11-26T10:00:00+01:00",
            "2026-11-26T10:00:00.000+01:00",
            "2026-11-26 09:00:00Z",
            "2026-11-26T09:00:00",
            "2026-11-26T10:00:00+0100",
        ] {
            assert_eq!(parse_instant(text), Some(utc), "{text}");
        }
        assert_eq!(parse_instant("yesterday"), None);
    }

    /// What the tolerant reading accepts, one field of each kind: this test was run against
    /// the field-by-field readers it replaced (`lenient::text`, `integer`, `boolean`, …) and
    /// passed there too.
    #[test]
    fn every_kind_of_field_reads_tolerantly() {
        let product: ProductView = serde_json::from_value(json!({
            "id": "p",
            "name": 42, "partnerId": true, "listingName": {"not": "text"}, "status": null,
            "extensionLimit": "7", "requestTypes": ["A", 1, null, {"x": 1}],
            "created": "2026-11-26 10:00:00+0100", "updated": 1700000000,
            "tags": "not an object",
            "credentials": [{"id": 5, "minimum": 8.0, "maximum": "x", "secret": "TRUE",
                             "required": "no", "type": "secret-string"}, "junk", null],
            "webhooks": {"not": "a list"},
        }))
        .expect("reads");
        assert_eq!(product.name.as_deref(), Some("42"));
        assert_eq!(product.partner_id.as_deref(), Some("true"));
        assert_eq!(product.listing_name, None);
        assert_eq!(product.status, None);
        assert_eq!(product.extension_limit, Some(7));
        assert_eq!(product.request_types, ["A", "1"]);
        assert_eq!(product.created, parse_instant("2026-11-26T09:00:00Z"));
        assert_eq!(product.updated, None, "a number is not an instant");
        assert_eq!(product.tags, None);
        assert!(product.webhooks.is_empty());
        assert_eq!(
            product.credentials.len(),
            1,
            "elements that do not read are left out"
        );
        let credential = &product.credentials[0];
        assert_eq!(credential.id.as_deref(), Some("5"));
        assert_eq!(credential.minimum, Some(8), "a whole float is an integer");
        assert_eq!(credential.maximum, None);
        assert_eq!(credential.secret, Some(true));
        assert_eq!(credential.required, None);
        assert_eq!(credential.kind.as_deref(), Some("secret-string"));
        assert_eq!(
            serde_json::to_value(credential).expect("serialises"),
            json!({"id": "5", "type": "secret-string", "minimum": 8, "secret": true}),
            "absent fields are left out, but a credential's id is always written"
        );
        assert_eq!(
            serde_json::to_value(CredentialView {
                id: None,
                kind: None,
                title: None,
                pattern: None,
                minimum: None,
                maximum: None,
                secret: None,
                scope: None,
                required: None,
            })
            .expect("serialises"),
            json!({"id": null})
        );

        let tx: TransactionView = serde_json::from_value(json!({
            "id": "t", "status": 3, "product": "p1", "entityRef": null,
            "request": {"type": 7, "options": null, "loan": {"n": 1}, "resources": []},
            "response": {"status": ["x"], "partnerStatus": false, "errors": 0},
        }))
        .expect("reads");
        assert_eq!(tx.status, None, "an open value is a string");
        assert_eq!(tx.product, None);
        assert_eq!(tx.entity_ref, None);
        let request = tx.request.as_ref().expect("a request");
        assert_eq!(request.request_type.as_deref(), Some("7"));
        assert_eq!(request.options, None);
        assert_eq!(request.loan, Some(json!({"n": 1})));
        assert_eq!(request.resources, Some(json!([])));
        let response = tx.response.as_ref().expect("a response");
        assert_eq!(response.status, None);
        assert_eq!(response.partner_status.as_deref(), Some("false"));
        assert_eq!(response.errors, Some(json!(0)));

        let webhook: SubscriptionView = serde_json::from_value(json!({
            "events": ["created", 1, "archived"], "resource": "urn:x", "url": null,
        }))
        .expect("reads");
        assert_eq!(
            webhook.events,
            [
                Open::Known(EventType::Created),
                Open::Other("archived".into())
            ]
        );
        assert_eq!(webhook.resource, Some(Open::Other("urn:x".into())));
        assert_eq!(webhook.url, None);
        let tags: TagsView =
            serde_json::from_value(json!({"workflows": "x", "categories": [true]})).expect("reads");
        assert!(tags.workflows.is_empty() && tags.applications.is_empty());
        assert_eq!(tags.categories, ["true"]);
    }

    #[test]
    fn absent_sorts_last_either_way() {
        use std::cmp::Ordering;
        let a = SortValue::Text("a");
        assert_eq!(
            compare_absent_last(&SortValue::Missing, &a, false),
            Ordering::Greater
        );
        assert_eq!(
            compare_absent_last(&SortValue::Missing, &a, true),
            Ordering::Greater
        );
        assert_eq!(
            compare_absent_last(&a, &SortValue::Text("b"), true),
            Ordering::Greater
        );
    }
}

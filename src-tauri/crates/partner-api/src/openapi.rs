//! The rules of this crate as OpenAPI schemas, built from the same constants the checks use.
//!
//! utoipa's derive takes only literals for lengths and patterns, so a field whose rule lives in
//! a constant (`NAME_MAX`, the signing-key pattern, `MAX_LIMIT`) names one of these functions
//! with `#[schema(schema_with = ...)]` instead: the served document then states exactly what
//! the server enforces, and changing the constant changes both. The constants themselves are in
//! `constraints`, below this module and the wire types alike: the wire types name these
//! functions, so this module must not need the wire types back. (The token forms' schemas are in
//! `token`, beside the forms and the grant type they are built from.)

pub use crate::constraints::white_space_class;
use crate::constraints::{
    event_type_pattern, sort_pattern, CALLBACK_URL_PATTERN, CREDENTIAL_ID_MAX, DEFAULT_LIMIT,
    DEFAULT_START, EVENT_COMMENTS_MAX, EVENT_TEXT_MAX, EVENT_TYPE_MAX, INTEGRATION_TYPE_MAX,
    LISTING_NAME_MAX, MAX_LIMIT, MAX_WEBHOOKS, NAME_MAX, REQUEST_TYPES, RESPONSE_TEXT_MAX,
    WEB_URL_PATTERN,
};
use crate::notification::EventType;
use crate::signing_key;
use utoipa::openapi::schema::{
    AdditionalProperties, AllOf, AllOfBuilder, AnyOfBuilder, ArrayBuilder, KnownFormat, Object,
    ObjectBuilder, Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::PartialSchema;

/// The pattern of required text (`name`, `listingName`, ...): at least one character that is
/// not white space, as `str::trim` sees it.
pub fn not_blank_pattern() -> String {
    format!("[^{}]", white_space_class())
}

/// A string of `min..=max` characters matching `pattern` (when given).
pub fn text(min: usize, max: Option<usize>, pattern: Option<&str>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(max)
        .pattern(pattern)
}

/// The same schema, also admitting `null` (an optional field sent as `null` means "absent").
pub fn or_null(builder: ObjectBuilder) -> Object {
    let mut object = builder.build();
    object.schema_type = match std::mem::take(&mut object.schema_type) {
        SchemaType::Type(one) => SchemaType::Array(vec![one, Type::Null]),
        SchemaType::Array(mut many) => {
            many.push(Type::Null);
            SchemaType::Array(many)
        }
        SchemaType::AnyValue => SchemaType::AnyValue,
    };
    object
}

fn strings_of(values: &[&str]) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
}

/// `name`: required text of at most `NAME_MAX` characters.
pub fn product_name() -> Object {
    text(1, Some(NAME_MAX), Some(&not_blank_pattern())).build()
}

/// `listingName`: required text of at most `LISTING_NAME_MAX` characters.
pub fn listing_name() -> Object {
    text(1, Some(LISTING_NAME_MAX), Some(&not_blank_pattern())).build()
}

/// `requestTypes`: at least one, each a known request type.
pub fn request_types() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(strings_of(REQUEST_TYPES))
        .min_items(Some(1))
        .into()
}

/// `interfaceUrl`, `adminInterfaceUrl`: an http(s) address, or absent.
pub fn optional_web_url() -> Object {
    or_null(text(1, None, Some(WEB_URL_PATTERN)))
}

/// `integrationType`: 1 to `INTEGRATION_TYPE_MAX` characters, or absent.
pub fn optional_integration_type() -> Object {
    or_null(text(
        1,
        Some(INTEGRATION_TYPE_MAX),
        Some(&not_blank_pattern()),
    ))
}

/// A credential definition's `id`.
pub fn credential_id() -> Object {
    text(1, Some(CREDENTIAL_ID_MAX), Some(&not_blank_pattern())).build()
}

/// `extensionLimit` on input: a non-negative integer, or absent.
pub fn optional_extension_limit() -> Object {
    or_null(
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(0)),
    )
}

/// A webhook callback `url`.
pub fn callback_url() -> Object {
    text(1, None, Some(CALLBACK_URL_PATTERN)).build()
}

/// A callback `url`, or absent.
pub fn optional_callback_url() -> Object {
    or_null(text(1, None, Some(CALLBACK_URL_PATTERN)))
}

fn event_types_array() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(EventType::schema())
        .min_items(Some(1))
        .max_items(Some(EventType::ALL.len()))
        .unique_items(true)
}

/// A subscription's `events`: one or both event types, none twice.
pub fn event_types() -> RefOr<Schema> {
    event_types_array().into()
}

/// `events`, or absent.
pub fn optional_event_types() -> RefOr<Schema> {
    event_types_array()
        .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
        .into()
}

fn signing_key_text() -> ObjectBuilder {
    text(
        signing_key::MIN_LEN,
        Some(signing_key::MAX_LEN),
        Some(signing_key::PATTERN),
    )
    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Password)))
    .write_only(Some(true))
}

/// A webhook `signingkey`: the spec's complexity rule, written as its own pattern.
pub fn signing_key() -> Object {
    signing_key_text().build()
}

/// `signingkey`, or absent (keeps the subscription's key).
pub fn optional_signing_key() -> Object {
    or_null(signing_key_text())
}

/// `webhooks` of a new product.
pub fn new_webhooks() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
            "NewWebhookSubscription",
        )))
        .max_items(Some(MAX_WEBHOOKS))
        .into()
}

/// `partnerStatus`, `referenceNumber` of a response: at most `RESPONSE_TEXT_MAX`, or absent.
pub fn optional_response_text() -> Object {
    or_null(text(0, Some(RESPONSE_TEXT_MAX), None))
}

/// A custom event's `type`: a URN of the sender's own.
pub fn custom_event_type() -> Object {
    text(5, Some(EVENT_TYPE_MAX), Some(&event_type_pattern())).build()
}

/// A custom event's `text`.
pub fn event_text() -> Object {
    text(1, Some(EVENT_TEXT_MAX), Some(&not_blank_pattern())).build()
}

/// A custom event's `comments`, or absent.
pub fn optional_event_comments() -> Object {
    or_null(text(0, Some(EVENT_COMMENTS_MAX), None))
}

/// A free JSON object, or absent.
pub fn optional_object() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Object, Type::Null]))
        .build()
}

/// `start` of a list request.
pub fn list_start() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(0))
        .default(Some(DEFAULT_START.into()))
        .build()
}

/// `limit` of a list request.
pub fn list_limit() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
        .minimum(Some(0))
        .maximum(Some(MAX_LIMIT))
        .default(Some(DEFAULT_LIMIT.into()))
        .build()
}

/// `sort` of a list request over `keys`: comma-separated keys, each at most once, `-` for
/// descending; empty for the natural order.
pub fn list_sort(keys: &[&str]) -> Object {
    text(0, None, Some(&sort_pattern(keys))).build()
}

/// A field that may only be `null` (a server-assigned id on create).
pub fn null_only() -> Object {
    ObjectBuilder::new().schema_type(Type::Null).build()
}

/// `credentials` in a PATCH: the whole new list, or `null` for none.
pub fn optional_credentials() -> RefOr<Schema> {
    ArrayBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
        .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
            "CredentialDefinition",
        )))
        .into()
}

/// `tags` in a PATCH: merged key by key, `null` empties a list (or all of them).
pub fn optional_tags_patch() -> Object {
    let list = || {
        ArrayBuilder::new()
            .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
            .items(ObjectBuilder::new().schema_type(Type::String))
    };
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Object, Type::Null]))
        .property("workflows", list())
        .property("categories", list())
        .property("applications", list())
        .build()
}

/// `webhooks` in a PATCH: the whole new list (`null` for none), each entry a change to an
/// existing subscription or a new one.
pub fn optional_patch_webhooks() -> RefOr<Schema> {
    ArrayBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
        .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
            "WebhookSubscriptionInput",
        )))
        .max_items(Some(MAX_WEBHOOKS))
        .into()
}

/// A transaction's `requestType`: one of the request types products may take.
pub fn request_type() -> Object {
    strings_of(REQUEST_TYPES).build()
}

/// The lender's update of a transaction: `loan`, `options` or both as objects; `null` (or
/// leaving one out) keeps it, and at least one of them must be an object.
pub fn transaction_update() -> AllOf {
    let one_object = |field: &str| {
        ObjectBuilder::new()
            .property(field, ObjectBuilder::new().schema_type(Type::Object))
            .required(field)
    };
    let fields = ObjectBuilder::new()
        .property("loan", optional_object())
        .property("options", optional_object())
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let at_least_one = AnyOfBuilder::new()
        .item(one_object("loan"))
        .item(one_object("options"));
    AllOfBuilder::new().item(fields).item(at_least_one).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_white_space_class_is_what_trim_removes() {
        let class = white_space_class();
        assert!(
            class.starts_with("\\u0009-\\u000D\\u0020\\u0085\\u00A0"),
            "{class}"
        );
        assert!(
            !class.contains("FEFF") && !class.contains("001C"),
            "{class}"
        );
        assert_eq!(not_blank_pattern(), format!("[^{class}]"));
    }
}

//! Products (the service's "product configurations") and their webhook subscriptions.
//!
//! Signing keys are write-only: [`WebhookSubscriptionInput`] carries one to the server, and
//! [`WebhookSubscription`], what the server answers with, has no field for it at all.

pub use crate::constraints::{
    CALLBACK_URL_PATTERN, CREDENTIAL_ID_MAX, INTEGRATION_TYPE_MAX, LISTING_NAME_MAX, MAX_WEBHOOKS,
    NAME_MAX, REQUEST_TYPES, WEB_URL_PATTERN,
};
use crate::list::{SortValue, Sortable};
use crate::notification::{EventType, ResourceType};
use crate::secret::Secret;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Checks an `http(s)://` address by the documented grammar: `scheme://host[:port][/path]
/// [?query][#fragment]`, the host a DNS name (labels of letters, digits and inner hyphens, up
/// to 63 characters, the last starting with a letter) or a dotted IPv4 address, the port at
/// most 65535, and path, query and fragment of URL characters (no spaces, no user info).
pub fn check_web_address(raw: &str, schemes: &[&str]) -> Result<(), String> {
    let rest = schemes
        .iter()
        .find_map(|scheme| raw.strip_prefix(scheme).and_then(|r| r.strip_prefix("://")))
        .ok_or_else(|| format!("must start with {}://", schemes.join(":// or ")))?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    if !(is_dns_name(host) || is_ipv4(host)) {
        return Err("the host must be a DNS name or an IPv4 address".into());
    }
    if let Some(port) = port {
        let digits_ok =
            !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
        if !digits_ok || port.parse::<u32>().map_or(true, |p| p > 65_535) {
            return Err("the port must be a number up to 65535".into());
        }
    }
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (tail, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (before_fragment, None),
    };
    let url_text = |text: &str, extra: &str| {
        text.chars().all(|c| {
            c.is_ascii_alphanumeric() || "._~!$&'()*+,;=:@%/-".contains(c) || extra.contains(c)
        })
    };
    if !url_text(path, "")
        || !query.is_none_or(|q| url_text(q, "?"))
        || !fragment.is_none_or(|f| url_text(f, "?"))
    {
        return Err("the path, query and fragment may hold only URL characters".into());
    }
    Ok(())
}

fn is_dns_name(host: &str) -> bool {
    let labels: Vec<&str> = host.split('.').collect();
    let label_ok = |label: &&str| {
        let bytes = label.as_bytes();
        (1..=63).contains(&bytes.len())
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
            && bytes[0] != b'-'
            && bytes[bytes.len() - 1] != b'-'
    };
    labels.iter().all(label_ok)
        && labels
            .last()
            .is_some_and(|last| last.as_bytes()[0].is_ascii_alphabetic())
}

fn is_ipv4(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|part| {
            !part.is_empty()
                && part.len() <= 3
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part.len() == 1 || !part.starts_with('0'))
                && part.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// Fields a partner may not send when creating a product.
pub const READ_ONLY_ON_CREATE: &[&str] = &[
    "id",
    "partnerId",
    "status",
    "environment",
    "created",
    "createdBy",
    "updated",
    "updatedBy",
];
/// Fields a partner may not change with PATCH.
pub const READ_ONLY_ON_PATCH: &[&str] = &[
    "id",
    "name",
    "partnerId",
    "environment",
    "status",
    "created",
    "createdBy",
    "updated",
    "updatedBy",
];

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialDefinition {
    /// Unique within the product.
    #[schema(schema_with = crate::openapi::credential_id)]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::integer::optional"
    )]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub minimum: Option<i64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::integer::optional"
    )]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub maximum: Option<i64>,
    #[serde(default)]
    pub secret: bool,
    /// `user` or `company`.
    pub scope: String,
    #[serde(default)]
    pub required: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductTags {
    #[serde(default)]
    pub workflows: Vec<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    #[serde(default)]
    pub applications: Vec<String>,
}

/// A subscription as the server shows it: never with its signing key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSubscription {
    pub subscription_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub resource: ResourceType,
}

/// A subscription as a partner sends it, in a create or a PATCH. With a `subscriptionId` it
/// updates that subscription (an omitted `signingkey` keeps the current key); without one it
/// creates a subscription and needs every field.
///
/// Its schema is the one of a PATCH entry: either a change to an existing subscription
/// ([`SubscriptionChange`]) or a new one ([`NewWebhookSubscription`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSubscriptionInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventType>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceType>,
    #[serde(
        rename = "signingkey",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "Secret::serialize_exposed_opt"
    )]
    pub signing_key: Option<Secret>,
}

impl utoipa::PartialSchema for WebhookSubscriptionInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::OneOfBuilder;
        use utoipa::openapi::Ref;
        OneOfBuilder::new()
            .item(Ref::from_schema_name("SubscriptionChange"))
            .item(Ref::from_schema_name("NewWebhookSubscription"))
            .into()
    }
}

impl ToSchema for WebhookSubscriptionInput {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            "SubscriptionChange".into(),
            <SubscriptionChange as utoipa::PartialSchema>::schema(),
        ));
        schemas.push((
            "NewWebhookSubscription".into(),
            <NewWebhookSubscription as utoipa::PartialSchema>::schema(),
        ));
        <SubscriptionChange as ToSchema>::schemas(schemas);
        <NewWebhookSubscription as ToSchema>::schemas(schemas);
    }
}

/// A new webhook subscription, as a create (or a PATCH entry without `subscriptionId`) sends
/// it: every field is required.
// The document's shape of `WebhookSubscriptionInput` without an id.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWebhookSubscription {
    /// The server assigns the id; it may only be sent as `null`.
    #[serde(default)]
    #[schema(schema_with = crate::openapi::null_only)]
    pub subscription_id: Option<()>,
    /// The HTTPS callback address.
    #[schema(schema_with = crate::openapi::callback_url)]
    pub url: String,
    #[schema(schema_with = crate::openapi::event_types)]
    pub events: Vec<EventType>,
    pub resource: ResourceType,
    /// The shared secret notifications are signed with (the spec's complexity rule); never
    /// shown again.
    #[serde(rename = "signingkey")]
    #[schema(schema_with = crate::openapi::signing_key)]
    pub signing_key: Secret,
}

/// A change to an existing subscription in a PATCH: fields left out (or `null`) keep their
/// values, so a lone `subscriptionId` keeps the subscription as it is.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubscriptionChange {
    /// One of the product's subscriptions (another is a 400).
    pub subscription_id: String,
    #[serde(default)]
    #[schema(schema_with = crate::openapi::optional_callback_url)]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_event_types)]
    pub events: Option<Vec<EventType>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceType>,
    /// A new signing key (rotation); left out, the key stays.
    #[serde(
        rename = "signingkey",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(schema_with = crate::openapi::optional_signing_key)]
    pub signing_key: Option<Secret>,
}

impl WebhookSubscriptionInput {
    /// The entry that keeps an existing subscription exactly as it is.
    pub fn keep(subscription: &WebhookSubscription) -> Self {
        Self {
            subscription_id: Some(subscription.subscription_id.clone()),
            ..Self::default()
        }
    }
}

/// The body of `POST /partner/v2/products`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewProduct {
    /// Unique among the partner's products (a duplicate is a 409).
    #[schema(schema_with = crate::openapi::product_name)]
    pub name: String,
    #[schema(schema_with = crate::openapi::listing_name)]
    pub listing_name: String,
    #[schema(schema_with = crate::openapi::request_types)]
    pub request_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_web_url)]
    pub interface_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_web_url)]
    pub admin_interface_url: Option<String>,
    /// `ASYNC` when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_integration_type)]
    pub integration_type: Option<String>,
    /// Credential ids are unique within the product.
    #[serde(default)]
    pub credentials: Vec<CredentialDefinition>,
    #[serde(default)]
    pub tags: ProductTags,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::integer::optional"
    )]
    #[schema(schema_with = crate::openapi::optional_extension_limit)]
    pub extension_limit: Option<i64>,
    #[serde(default)]
    #[schema(schema_with = crate::openapi::new_webhooks)]
    pub webhooks: Vec<WebhookSubscriptionInput>,
}

/// The body of `PATCH /partner/v2/products/{id}` (a JSON merge patch, RFC 7396): the fields of
/// NewProduct to change, `null` for an optional one to drop. `webhooks`, when present, is the
/// whole new list. `name` and the server's fields may be sent only with their current values.
// Only the document uses this type; the server merges the patch into the product and checks
// the result as a `NewProduct`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProductPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::listing_name)]
    pub listing_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::request_types)]
    pub request_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_web_url)]
    pub interface_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_web_url)]
    pub admin_interface_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_integration_type)]
    pub integration_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_credentials)]
    pub credentials: Option<Vec<CredentialDefinition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_tags_patch)]
    pub tags: Option<ProductTags>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::integer::optional"
    )]
    #[schema(schema_with = crate::openapi::optional_extension_limit)]
    pub extension_limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::optional_patch_webhooks)]
    pub webhooks: Option<Vec<WebhookSubscriptionInput>>,
}

/// A product configuration as the server shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    pub id: String,
    pub partner_id: String,
    pub name: String,
    pub listing_name: String,
    pub request_types: Vec<String>,
    pub environment: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_interface_url: Option<String>,
    pub integration_type: String,
    #[serde(default)]
    pub credentials: Vec<CredentialDefinition>,
    #[serde(default)]
    pub tags: ProductTags,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub extension_limit: i64,
    #[serde(default)]
    pub webhooks: Vec<WebhookSubscription>,
    pub created: DateTime<Utc>,
    pub created_by: String,
    pub updated: DateTime<Utc>,
    pub updated_by: String,
}

impl Sortable for Product {
    const SORT_KEYS: &'static [&'static str] =
        &["listingName", "name", "status", "created", "updated"];

    fn sort_value(&self, key: &str) -> SortValue<'_> {
        match key {
            "listingName" => SortValue::Text(&self.listing_name),
            "name" => SortValue::Text(&self.name),
            "status" => SortValue::Text(&self.status),
            "created" => SortValue::Instant(self.created),
            "updated" => SortValue::Instant(self.updated),
            _ => SortValue::Missing,
        }
    }
}

/// Checks a product name: required, at most 64 characters.
pub fn check_name(name: &str) -> Result<(), String> {
    check_text("name", name, NAME_MAX)
}

/// Checks a listing name: required, at most 256 characters.
pub fn check_listing_name(listing_name: &str) -> Result<(), String> {
    check_text("listingName", listing_name, LISTING_NAME_MAX)
}

fn check_text(field: &str, value: &str, max: usize) -> Result<(), String> {
    let length = value.chars().count();
    if value.trim().is_empty() {
        Err(format!("{field} is required"))
    } else if length > max {
        Err(format!(
            "{field} may have at most {max} characters, got {length}"
        ))
    } else {
        Ok(())
    }
}

/// Checks request types: at least one, each a known kind.
pub fn check_request_types(request_types: &[String]) -> Result<(), String> {
    if request_types.is_empty() {
        return Err("requestTypes needs at least one request type".into());
    }
    for kind in request_types {
        if !REQUEST_TYPES.contains(&kind.as_str()) {
            let shown: String = kind.chars().take(40).collect();
            return Err(format!(
                "requestTypes: `{shown}` is not a known request type (known: {})",
                REQUEST_TYPES.join(", ")
            ));
        }
    }
    Ok(())
}

/// The spec wants callbacks on `https://`. `allow_http_loopback` also admits `http://` to a
/// loopback host, for local demos and tests.
pub fn check_callback_url(raw: &str, allow_http_loopback: bool) -> Result<(), String> {
    let url = url::Url::parse(raw).map_err(|e| format!("url is not a valid URL ({e})"))?;
    match url.scheme() {
        "https" => check_web_address(raw, &["https"]).map_err(|e| format!("url: {e}")),
        "http" if allow_http_loopback && is_loopback(&url) => Ok(()),
        "http" if allow_http_loopback => {
            Err("url must use https:// (http:// is allowed only to a loopback address)".into())
        }
        _ => Err("url must be an https:// address".into()),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_input_serialises_the_key_only_when_set() {
        let keep = WebhookSubscriptionInput {
            subscription_id: Some("s1".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&keep).unwrap(),
            r#"{"subscriptionId":"s1"}"#
        );
        let rotate = WebhookSubscriptionInput {
            subscription_id: Some("s1".into()),
            signing_key: Some(Secret::new("k")),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&rotate).unwrap(),
            r#"{"subscriptionId":"s1","signingkey":"k"}"#
        );
        assert!(!format!("{rotate:?}").contains("\"k\""));
    }

    #[test]
    fn callback_urls() {
        assert!(check_callback_url("https://example.test/hook", false).is_ok());
        assert!(check_callback_url("http://127.0.0.1:9000/hook", false).is_err());
        assert!(check_callback_url("http://127.0.0.1:9000/hook", true).is_ok());
        assert!(check_callback_url("http://[::1]:9000/hook", true).is_ok());
        assert!(check_callback_url("http://localhost/hook", true).is_ok());
        assert!(check_callback_url("http://example.test/hook", true).is_err());
        assert!(check_callback_url("ftp://example.test", true).is_err());
        assert!(check_callback_url("not a url", true).is_err());
    }

    #[test]
    fn web_addresses_follow_the_documented_grammar() {
        let web = |raw| check_web_address(raw, &["http", "https"]);
        for good in [
            "https://acme.example/order",
            "http://A",
            "http://0.A:65535/a/b?c=d&e#f",
            "https://10.0.0.255:8443/",
            "https://x-y.example?q",
        ] {
            assert!(web(good).is_ok(), "{good}");
        }
        for bad in [
            "http://A*",
            "https://a..b/",
            "https://-a.example/",
            "https://1.2.3.4.5/",
            "https://256.0.0.1/",
            "https://example.123/",
            "https://a:65536/",
            "https://a:/",
            "https://user@a/",
            "https://a/b c",
            "ftp://a/",
            "https://",
            "https://[::1]/",
        ] {
            assert!(web(bad).is_err(), "{bad}");
        }
        assert!(check_callback_url("https://hooks.example/x", false).is_ok());
        assert!(check_callback_url("https://hooks*.example/x", false).is_err());
    }

    #[test]
    fn names() {
        assert!(check_name("acme").is_ok());
        assert!(check_name(" ").is_err());
        assert!(check_name(&"n".repeat(65)).is_err());
        assert!(check_listing_name(&"n".repeat(256)).is_ok());
        assert!(check_request_types(&["NEW_REQUEST".into()]).is_ok());
        assert!(check_request_types(&[]).is_err());
        assert!(check_request_types(&["OTHER".into()]).is_err());
    }
}

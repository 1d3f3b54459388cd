//! The spec's lengths, counts and text patterns, as plain constants and pattern builders.
//!
//! Two sides are built from the same numbers: the checks (`product`, `transaction`, `list`,
//! `token`) and the OpenAPI document (`openapi`), whose schema functions the wire types name in
//! `#[schema(schema_with = ...)]`. Kept here, below both, the wire types can use `openapi` while
//! `openapi` reads these values, and no file needs one that needs it back. Each owner re-exports
//! its own (`product::NAME_MAX`, `list::MAX_LIMIT`, ...), so they are still named where the rule
//! is checked.

use std::sync::OnceLock;

/// Unicode White_Space, what `char::is_whitespace` and `str::trim` go by, as the inside of a
/// regex character class of `\uXXXX` escapes, made from `char::is_whitespace` itself. Patterns
/// use it instead of `\s`, on which ECMA-262, Python and Rust disagree (U+FEFF, U+0085,
/// U+001C..U+001F).
pub fn white_space_class() -> &'static str {
    static CLASS: OnceLock<String> = OnceLock::new();
    CLASS.get_or_init(|| {
        let mut class = String::new();
        let mut chars = (0..=0xFFFF_u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .peekable();
        while let Some(first) = chars.next() {
            let mut last = first;
            while let Some(&next) = chars.peek() {
                if next as u32 != last as u32 + 1 {
                    break;
                }
                last = next;
                chars.next();
            }
            class.push_str(&format!("\\u{:04X}", first as u32));
            if last != first {
                class.push_str(&format!("-\\u{:04X}", last as u32));
            }
        }
        class
    })
}

// The list endpoints (`list`).

pub const DEFAULT_START: u64 = 0;
pub const DEFAULT_LIMIT: u32 = 25;
pub const MAX_LIMIT: u32 = 50;

/// The OpenAPI pattern of a `sort` over `keys`, matching exactly what [`SortSpec::parse`]
/// accepts: empty or blank for no sort, otherwise comma-separated keys, each one of `keys`
/// with an optional leading `-`, none twice, with white space around them ignored. `\s` here is
/// Unicode White_Space, as `str::trim` removes it.
///
/// [`SortSpec::parse`]: crate::list::SortSpec::parse
pub fn sort_pattern(keys: &[&str]) -> String {
    let key = keys.join("|");
    let s = format!("[{}]", white_space_class());
    format!(
        r"^{s}*$|^(?![\s\S]*\b({key})\b[\s\S]*\b\1\b){s}*-?{s}*({key}){s}*(,{s}*-?{s}*({key}){s}*)*$"
    )
}

// Products (`product`).

/// The most characters of a product's `name`.
pub const NAME_MAX: usize = 64;
/// The most characters of a product's `listingName`.
pub const LISTING_NAME_MAX: usize = 256;
/// `integrationType`, when sent, is 1 to 32 characters.
pub const INTEGRATION_TYPE_MAX: usize = 32;
/// A credential definition's `id` is 1 to 64 characters, unique within the product.
pub const CREDENTIAL_ID_MAX: usize = 64;
/// The most webhook subscriptions one product may carry.
pub const MAX_WEBHOOKS: usize = 20;
/// Request types a product may accept.
pub const REQUEST_TYPES: &[&str] = &["NEW_REQUEST"];

/// The OpenAPI pattern of `interfaceUrl` and `adminInterfaceUrl`: [`check_web_address`]'s
/// grammar as a regular expression (a test holds the two together).
///
/// [`check_web_address`]: crate::product::check_web_address
pub const WEB_URL_PATTERN: &str = r"^https?://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?(#[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$";
/// The OpenAPI pattern of a webhook callback `url`: as [`WEB_URL_PATTERN`], `https://` only
/// (the sandbox's `--allow-http-callbacks` also admits `http://` to a loopback host).
pub const CALLBACK_URL_PATTERN: &str = r"^https://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?(#[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$";

// Transactions and their events (`transaction`).

/// The most characters of a response's `partnerStatus` and `referenceNumber`.
pub const RESPONSE_TEXT_MAX: usize = 256;
/// The most characters of a custom event's `type`, `text` and `comments`.
pub const EVENT_TYPE_MAX: usize = 200;
pub const EVENT_TEXT_MAX: usize = 512;
pub const EVENT_COMMENTS_MAX: usize = 4096;
/// The system's own event types start with this; a custom event may not.
pub const SYSTEM_EVENT_TYPE_PREFIX: &str = "urn:svc:partner:transaction";
/// The OpenAPI pattern of a custom event's `type`: `urn:` and at least one more character, no
/// white space or control character, and not one of the system's own names.
pub fn event_type_pattern() -> String {
    format!(
        r"^(?!{SYSTEM_EVENT_TYPE_PREFIX})urn:[^\u0000-\u001F\u007F-\u009F{}]+$",
        white_space_class()
    )
}

// Tokens (`token`).

/// The OpenAPI pattern of the issuance form's `scope`: `pc` and `pcapi`, in any order, each any
/// number of times, separated by white space (as `split_whitespace` reads it). Exactly what
/// [`check_grant`] accepts.
///
/// [`check_grant`]: crate::token::check_grant
pub fn scope_pattern() -> String {
    let s = format!("[{}]", white_space_class());
    format!(r"^{s}*(pc({s}+pc)*{s}+pcapi|pcapi({s}+pcapi)*{s}+pc)({s}+(pc|pcapi))*{s}*$")
}

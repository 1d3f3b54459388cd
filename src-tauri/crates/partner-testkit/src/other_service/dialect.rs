//! What the other service chose where the spec is silent ([`Dialect`], its switches combining:
//! fields left out or added, error bodies, sort sets, rate limits, compression), and how a
//! dialect writes a date. Every other file asks the dialect rather than deciding alone.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

/// How an API error body looks (the spec does not show one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorShape {
    /// RFC 7807 `application/problem+json`: `{type, title, detail, status}`.
    #[default]
    Problem,
    /// `{"message": "..."}`.
    Message,
    /// `{"errors": ["...", {"message": "..."}]}`.
    Errors,
    /// `text/plain`.
    PlainText,
    /// An HTML page, as a gateway in front of the service answers.
    Html,
    /// No body at all.
    Empty,
}

/// How a rate-limited answer says when to come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    Seconds(u64),
    /// An HTTP date this many seconds ahead.
    HttpDate(u64),
}

/// Every `every`-th call of the partner API is refused with `status` (429 or 503) and a
/// `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub every: u64,
    pub status: u16,
    pub retry_after: RetryAfter,
}

/// A `Content-Encoding` the service uses when the request accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Brotli,
    Deflate,
}

impl Compression {
    pub(super) fn token(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Brotli => "br",
            Compression::Deflate => "deflate",
        }
    }
}

/// What this implementation chose where the spec is silent. The switches combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dialect {
    /// Only the spec's product-table fields (no `created`, `createdBy`, `updated`,
    /// `updatedBy`), optional fields left out, transactions with `id` and a few fields.
    pub minimal: bool,
    /// Unknown fields and enum values everywhere, dates with offsets and fractions, numbers
    /// as strings, `null` for absent values.
    pub extra: bool,
    /// The shape of API error bodies (token endpoints always answer as OAuth 2.0 does).
    pub errors: ErrorShape,
    /// Sorting by `listingName` only on products and `created` only on transactions.
    pub narrow_sorts: bool,
    /// Neither `listingName` on products nor `created` on transactions is a sort key (the
    /// console's default sorts, `listingName` and `-created`): a `sort` naming one is a 400 in
    /// the dialect's error shape, as any key this service does not sort by. The field notes say
    /// the real service sorts products by `listingName`; nothing says every deployment does.
    pub refuses_default_sorts: bool,
    pub rate_limit: Option<RateLimit>,
    pub compression: Option<Compression>,
    /// Bodies sent in small chunks (`Transfer-Encoding: chunked`, no `Content-Length`).
    pub chunked: bool,
    /// No `subscriptionId` on a product's `webhooks` (the spec shows none): a PATCH entry is
    /// matched to a subscription by `url` and `resource` (a new pair is a new subscription, a
    /// `subscriptionId` in it is refused), rotating keeps the subscription's id, and the id is
    /// sent only in `Svc-SubscriptionId` on its notifications.
    pub no_subscription_ids: bool,
}

impl Dialect {
    pub fn minimal() -> Self {
        Self {
            minimal: true,
            ..Self::default()
        }
    }

    pub fn extra() -> Self {
        Self {
            extra: true,
            ..Self::default()
        }
    }

    pub fn errors(shape: ErrorShape) -> Self {
        Self {
            errors: shape,
            ..Self::default()
        }
    }

    pub fn narrow_sorts() -> Self {
        Self {
            narrow_sorts: true,
            ..Self::default()
        }
    }

    pub fn without_subscription_ids() -> Self {
        Self {
            no_subscription_ids: true,
            ..Self::default()
        }
    }

    pub fn refusing_default_sorts() -> Self {
        Self {
            refuses_default_sorts: true,
            ..Self::default()
        }
    }

    pub fn rate_limited(every: u64, status: u16, retry_after: RetryAfter) -> Self {
        Self {
            rate_limit: Some(RateLimit {
                every,
                status,
                retry_after,
            }),
            ..Self::default()
        }
    }

    pub fn compressed(compression: Compression) -> Self {
        Self {
            compression: Some(compression),
            chunked: true,
            ..Self::default()
        }
    }

    /// Everything a service may do that makes a client work harder, at once: only one sort
    /// key per listing, RFC 7807 problem details for errors, a 429 with `Retry-After: 1` on
    /// every 7th call, and gzip bodies sent in chunks.
    pub fn demanding() -> Self {
        Self {
            errors: ErrorShape::Problem,
            narrow_sorts: true,
            rate_limit: Some(RateLimit {
                every: 7,
                status: 429,
                retry_after: RetryAfter::Seconds(1),
            }),
            compression: Some(Compression::Gzip),
            chunked: true,
            ..Self::default()
        }
    }

    pub(super) fn product_sorts(&self) -> &'static [&'static str] {
        match (self.narrow_sorts, self.refuses_default_sorts) {
            (true, false) => &["listingName"],
            (false, false) => &["listingName", "name", "status"],
            (true, true) => &["name"],
            (false, true) => &["name", "status"],
        }
    }

    pub(super) fn transaction_sorts(&self) -> &'static [&'static str] {
        match (self.narrow_sorts, self.refuses_default_sorts) {
            (true, false) => &["created"],
            (false, false) => &["id", "created", "updated", "status"],
            (true, true) => &["updated"],
            (false, true) => &["id", "updated", "status"],
        }
    }
}

/// A date as this dialect writes it: UTC with `Z`, or (extra) an offset and a fraction.
pub(super) fn date(dialect: Dialect, at: DateTime<Utc>) -> Value {
    if dialect.extra {
        let plus_one = chrono::FixedOffset::east_opt(3600).expect("a one-hour offset");
        Value::String(
            at.with_timezone(&plus_one)
                .to_rfc3339_opts(SecondsFormat::Millis, false),
        )
    } else {
        Value::String(at.to_rfc3339_opts(SecondsFormat::Secs, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    #[test]
    fn dates_in_the_extra_dialect_carry_an_offset_and_a_fraction() {
        let at = Utc
            .with_ymd_and_hms(2026, 11, 26, 9, 0, 0)
            .single()
            .expect("a date");
        assert_eq!(
            date(Dialect::extra(), at),
            json!("2026-11-26T10:00:00.000+01:00")
        );
        assert_eq!(date(Dialect::default(), at), json!("2026-11-26T09:00:00Z"));
    }
}

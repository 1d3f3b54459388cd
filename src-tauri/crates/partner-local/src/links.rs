//! `partner-console://` links: a transaction (or one of its events) or a product on a connection,
//! to paste in a ticket or a chat. The app opens them (Tauri's deep-link plugin, the scheme
//! registered by the package's desktop entry) and makes them ("Copy link"); the CLI prints them
//! (`partner link`). One home for the shape, so what one makes the other reads.
//!
//! The shape: `partner-console://open/transactions/<id>[/events/<event id>]?connection=<id>` or
//! `partner-console://open/products/<id>?connection=<id>`, each segment percent-encoded. The
//! connection is named by the id the settings keep for it (`embedded-sandbox` for the embedded
//! sandbox), never by anything secret.

use url::Url;

/// The URL scheme the console registers.
pub const SCHEME: &str = "partner-console";

/// What a link opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    Transaction {
        transaction_id: String,
        event_id: Option<String>,
    },
    Product {
        product_id: String,
    },
}

/// A link: what to open, on which connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub connection: String,
    pub target: LinkTarget,
}

/// Why a text is not a console link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("{0} is not a link (partner-console://open/…)")]
    NotALink(String),
    #[error("the link names no connection (…?connection=<id>)")]
    NoConnection,
    #[error("the link {0} names neither a transaction nor a product")]
    UnknownTarget(String),
}

impl Link {
    pub fn transaction(connection: &str, transaction_id: &str, event_id: Option<&str>) -> Self {
        Self {
            connection: connection.to_owned(),
            target: LinkTarget::Transaction {
                transaction_id: transaction_id.to_owned(),
                event_id: event_id.map(str::to_owned),
            },
        }
    }

    pub fn product(connection: &str, product_id: &str) -> Self {
        Self {
            connection: connection.to_owned(),
            target: LinkTarget::Product {
                product_id: product_id.to_owned(),
            },
        }
    }

    /// The link as text.
    pub fn to_url(&self) -> String {
        let segments: Vec<&str> = match &self.target {
            LinkTarget::Transaction {
                transaction_id,
                event_id: None,
            } => vec!["transactions", transaction_id],
            LinkTarget::Transaction {
                transaction_id,
                event_id: Some(event_id),
            } => vec!["transactions", transaction_id, "events", event_id],
            LinkTarget::Product { product_id } => vec!["products", product_id],
        };
        // A constant that parses: the `else` is never taken.
        let Ok(mut url) = Url::parse(&format!("{SCHEME}://open/")) else {
            return String::new();
        };
        if let Ok(mut path) = url.path_segments_mut() {
            path.clear().extend(segments);
        }
        url.query_pairs_mut()
            .append_pair("connection", &self.connection);
        url.to_string()
    }

    /// Reads a link (surrounding blanks ignored).
    pub fn parse(text: &str) -> Result<Self, LinkError> {
        let text = text.trim();
        let not_a_link = || LinkError::NotALink(text.to_owned());
        let url = Url::parse(text).map_err(|_| not_a_link())?;
        if url.scheme() != SCHEME || url.host_str() != Some("open") {
            return Err(not_a_link());
        }
        let connection = url
            .query_pairs()
            .find(|(name, _)| name == "connection")
            .map(|(_, value)| value.into_owned())
            .filter(|value| !value.is_empty())
            .ok_or(LinkError::NoConnection)?;
        let segments: Vec<String> = url
            .path_segments()
            .map(|parts| parts.map(decode).collect())
            .unwrap_or_default();
        let unknown = || LinkError::UnknownTarget(text.to_owned());
        let target = match segments
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["transactions", id] if !id.is_empty() => LinkTarget::Transaction {
                transaction_id: (*id).to_owned(),
                event_id: None,
            },
            ["transactions", id, "events", event] if !id.is_empty() && !event.is_empty() => {
                LinkTarget::Transaction {
                    transaction_id: (*id).to_owned(),
                    event_id: Some((*event).to_owned()),
                }
            }
            ["products", id] if !id.is_empty() => LinkTarget::Product {
                product_id: (*id).to_owned(),
            },
            _ => return Err(unknown()),
        };
        Ok(Self { connection, target })
    }
}

/// A percent-encoded path segment, decoded (an undecodable one is kept as it is).
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or_default() * 16 + hex(l).unwrap_or_default()) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_read_back_what_they_say() {
        for link in [
            Link::transaction("embedded-sandbox", "t-1", None),
            Link::transaction("c 2/x", "t/1 ü", Some("e?#%")),
            Link::product("conn", "p-1"),
        ] {
            let text = link.to_url();
            assert!(text.starts_with("partner-console://open/"), "{text}");
            assert_eq!(
                Link::parse(&format!("  {text}\n")).expect("parses"),
                link,
                "{text}"
            );
        }
        assert_eq!(
            Link::transaction("embedded-sandbox", "t-1", Some("e-2")).to_url(),
            "partner-console://open/transactions/t-1/events/e-2?connection=embedded-sandbox"
        );
    }

    #[test]
    fn what_is_not_a_console_link_says_why() {
        assert!(matches!(
            Link::parse("https://example.com/x"),
            Err(LinkError::NotALink(_))
        ));
        assert!(matches!(
            Link::parse("not a link"),
            Err(LinkError::NotALink(_))
        ));
        assert_eq!(
            Link::parse("partner-console://open/transactions/t"),
            Err(LinkError::NoConnection)
        );
        assert!(matches!(
            Link::parse("partner-console://open/webhooks/1?connection=c"),
            Err(LinkError::UnknownTarget(_))
        ));
        assert!(matches!(
            Link::parse("partner-console://open/transactions/?connection=c"),
            Err(LinkError::UnknownTarget(_))
        ));
    }
}

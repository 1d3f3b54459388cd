//! One page of a listing: what the caller asks for and what comes back.
//!
//! [`PageRequest`] is checked against the spec's rules (`partner_api::list`) before anything is
//! sent: limit at most 50, a well-formed sort (no empty key, none twice), and `start` not past
//! the total when the caller knows the total (from an earlier page). Which keys a service
//! sorts by is not in the spec, so the client sends any well-formed key; refusing the sandbox's
//! unknown keys before sending is the caller's choice (`partner_api::ServiceSorts`), and any
//! other service's refusal comes back in its own words.

use crate::error::{ClientError, Result};
use partner_api::read;
use partner_api::{
    ListRuleError, PageParams, Product, ServiceSorts, SortSpec, Sortable, Transaction,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A resource served by a list endpoint, as the view a page's documents are read into.
///
/// The tolerant views of [`partner_api::read`] are what a client of any faithful service
/// should list. The sandbox's strict records ([`Product`], [`Transaction`]) are listed too,
/// for callers not yet moved to the views (the app's shell): reading them fails on a service
/// that leaves out a field the sandbox always sends.
pub trait Listed: Sortable + DeserializeOwned + Send + Sync + 'static {
    /// The path segment under `/partner/v2`.
    const PATH: &'static str;
}

impl Listed for read::ProductView {
    const PATH: &'static str = "products";
}

impl Listed for read::TransactionView {
    const PATH: &'static str = "transactions";
}

impl Listed for Product {
    const PATH: &'static str = "products";
}

impl Listed for Transaction {
    const PATH: &'static str = "transactions";
}

/// `start`, `limit` and a typed multi-key sort, plus the total if an earlier page told it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageRequest {
    pub page: PageParams,
    pub sort: SortSpec,
    /// The `X-Total-Count` of an earlier page, so `start` can be checked before sending.
    pub known_total: Option<u64>,
}

impl PageRequest {
    /// Checks `limit` now; the sort and `start` are checked when the request is sent.
    pub fn new(start: u64, limit: u64) -> Result<Self, ListRuleError> {
        Ok(Self {
            page: PageParams::new(start, limit)?,
            ..Self::default()
        })
    }

    pub fn sorted(mut self, sort: SortSpec) -> Self {
        self.sort = sort;
        self
    }

    pub fn with_known_total(mut self, total: u64) -> Self {
        self.known_total = Some(total);
        self
    }

    /// Every rule of the spec this request must meet for a listing of `T` on any service
    /// (which keys it sorts by is not one: see [`ServiceSorts`]).
    pub fn check<T: Sortable>(&self) -> Result<(), ListRuleError> {
        PageParams::new(self.page.start, u64::from(self.page.limit))?;
        ServiceSorts::Unknown.check::<T>(&self.sort)?;
        if let Some(total) = self.known_total {
            self.page.check_start(total)?;
        }
        Ok(())
    }

    pub(crate) fn query(&self) -> Vec<(&'static str, String)> {
        let mut query = vec![
            ("start", self.page.start.to_string()),
            ("limit", self.page.limit.to_string()),
        ];
        if !self.sort.is_empty() {
            query.push(("sort", self.sort.to_string()));
        }
        query
    }
}

/// One page: its items, the listing's total (`X-Total-Count`), and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
    pub start: u64,
    pub limit: u32,
}

impl<T> Page<T> {
    /// Whether items follow this page.
    pub fn has_more(&self) -> bool {
        self.start.saturating_add(self.items.len() as u64) < self.total
    }
}

pub(crate) fn total_from(headers: &reqwest::header::HeaderMap, status: u16) -> Result<u64> {
    let raw = headers
        .get("x-total-count")
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    raw.and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| ClientError::Server {
            status,
            message: match raw {
                None => "the list response has no X-Total-Count header".into(),
                Some(v) => format!(
                    "X-Total-Count `{}` is not a non-negative integer",
                    v.chars().take(32).collect::<String>()
                ),
            },
            raw_body: None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_api::SortKey;

    #[test]
    fn rules_are_checked_in_words() {
        assert!(matches!(
            PageRequest::new(0, 51),
            Err(ListRuleError::LimitTooLarge { limit: 51, max: 50 })
        ));
        let mut request = PageRequest::new(0, 10).unwrap();
        request.page.limit = 99; // fields are public: check() looks again
        assert!(request.check::<Transaction>().is_err());

        let bad_sort =
            SortSpec::new(vec![SortKey::asc("listingName")], Product::SORT_KEYS).unwrap();
        let request = PageRequest::new(0, 10).unwrap().sorted(bad_sort);
        assert!(request.check::<Product>().is_ok());
        // Which keys a service takes is not the client's to refuse: the service says.
        assert!(request.check::<Transaction>().is_ok());
        let twice = PageRequest::new(0, 10)
            .unwrap()
            .sorted(SortSpec::parse_any("created,-created").unwrap_or_default());
        assert!(twice.sort.is_empty(), "refused when parsed");
        let mut twice = PageRequest::new(0, 10).unwrap();
        twice.sort = SortSpec::parse("created", Transaction::SORT_KEYS).unwrap();
        assert!(twice.check::<Transaction>().is_ok());

        let past = PageRequest::new(11, 5).unwrap().with_known_total(10);
        assert!(matches!(
            past.check::<Product>(),
            Err(ListRuleError::StartPastTotal {
                start: 11,
                total: 10
            })
        ));
        assert!(PageRequest::new(10, 5)
            .unwrap()
            .with_known_total(10)
            .check::<Product>()
            .is_ok());
    }

    #[test]
    fn query_carries_the_sort_as_written() {
        let sort = SortSpec::parse("status,-created", Transaction::SORT_KEYS).unwrap();
        let query = PageRequest::new(5, 5).unwrap().sorted(sort).query();
        assert_eq!(
            query,
            vec![
                ("start", "5".to_string()),
                ("limit", "5".to_string()),
                ("sort", "status,-created".to_string())
            ]
        );
    }
}

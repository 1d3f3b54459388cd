//! The list endpoints' rules: `start`, `limit` and the multi-key `sort`.
//!
//! The server parses query strings with these functions and the client builds requests with the
//! same types, so a request the client lets through is one the server accepts. Ordering follows
//! the spec: keys in the order listed, `-` for descending, strings A to Z, numbers by magnitude,
//! ISO 8601 date-times as instants. Ties keep the listing's natural order (a stable sort).

pub use crate::constraints::{sort_pattern, DEFAULT_LIMIT, DEFAULT_START, MAX_LIMIT};
use chrono::{DateTime, Utc};
use std::cmp::Ordering;
use std::fmt;
use thiserror::Error;

/// A list request's parameter that breaks a rule of the spec, said in words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ListRuleError {
    #[error("start must be a non-negative integer, got `{0}`")]
    StartNotAnInteger(String),
    #[error("limit must be a non-negative integer, got `{0}`")]
    LimitNotAnInteger(String),
    #[error("limit must be at most {max}, got {limit}")]
    LimitTooLarge { limit: u64, max: u32 },
    #[error("start {start} is past the end of the list ({total} items)")]
    StartPastTotal { start: u64, total: u64 },
    #[error("sort has an empty key (at position {position}); write keys like `name,-created`")]
    EmptySortKey { position: usize },
    #[error("`{key}` cannot be sorted on; sortable keys are {}", .allowed.join(", "))]
    UnknownSortKey { key: String, allowed: Vec<String> },
    #[error(
        "`{key}` is not a property name; a sort key is letters, digits and `_`, like `created`"
    )]
    MalformedSortKey { key: String },
    #[error("sort names `{key}` more than once")]
    DuplicateSortKey { key: String },
}

impl ListRuleError {
    /// The query parameter at fault.
    pub fn parameter(&self) -> &'static str {
        match self {
            ListRuleError::StartNotAnInteger(_) | ListRuleError::StartPastTotal { .. } => "start",
            ListRuleError::LimitNotAnInteger(_) | ListRuleError::LimitTooLarge { .. } => "limit",
            _ => "sort",
        }
    }
}

/// `start` and `limit` of one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageParams {
    pub start: u64,
    pub limit: u32,
}

impl Default for PageParams {
    fn default() -> Self {
        Self {
            start: DEFAULT_START,
            limit: DEFAULT_LIMIT,
        }
    }
}

impl PageParams {
    /// Checks `limit` (at most 50). `start` can only be checked against a total: see
    /// [`PageParams::check_start`].
    pub fn new(start: u64, limit: u64) -> Result<Self, ListRuleError> {
        if limit > u64::from(MAX_LIMIT) {
            return Err(ListRuleError::LimitTooLarge {
                limit,
                max: MAX_LIMIT,
            });
        }
        Ok(Self {
            start,
            limit: limit as u32,
        })
    }

    /// Parses the query's raw `start` and `limit`; absent ones take the defaults.
    pub fn parse(start: Option<&str>, limit: Option<&str>) -> Result<Self, ListRuleError> {
        let start = match start {
            None => DEFAULT_START,
            Some(raw) => parse_non_negative(raw)
                .ok_or_else(|| ListRuleError::StartNotAnInteger(excerpt(raw)))?,
        };
        let limit = match limit {
            None => u64::from(DEFAULT_LIMIT),
            Some(raw) => parse_non_negative(raw)
                .ok_or_else(|| ListRuleError::LimitNotAnInteger(excerpt(raw)))?,
        };
        Self::new(start, limit)
    }

    /// `start` may equal the total (an empty page at the end) but not exceed it.
    pub fn check_start(&self, total: u64) -> Result<(), ListRuleError> {
        if self.start > total {
            return Err(ListRuleError::StartPastTotal {
                start: self.start,
                total,
            });
        }
        Ok(())
    }

    /// The index range of this page in a list of `total` items.
    pub fn range(&self, total: u64) -> std::ops::Range<usize> {
        let start = self.start.min(total);
        let end = start.saturating_add(u64::from(self.limit)).min(total);
        start as usize..end as usize
    }
}

fn parse_non_negative(raw: &str) -> Option<u64> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // All digits but too large for u64 is still "a non-negative integer": saturate, and the
    // limit or start check says what is wrong with it.
    Some(trimmed.parse::<u64>().unwrap_or(u64::MAX))
}

fn excerpt(raw: &str) -> String {
    let mut text: String = raw.chars().filter(|c| !c.is_control()).take(32).collect();
    if raw.chars().count() > 32 {
        text.push('…');
    }
    text
}

/// One key of a sort: a property name and its direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    pub field: String,
    pub descending: bool,
}

impl SortKey {
    pub fn asc(field: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            descending: false,
        }
    }

    pub fn desc(field: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            descending: true,
        }
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.descending {
            write!(f, "-{}", self.field)
        } else {
            f.write_str(&self.field)
        }
    }
}

/// A multi-key sort such as `status,-created`. Empty means the listing's natural order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SortSpec {
    keys: Vec<SortKey>,
}

impl SortSpec {
    /// Builds a sort from keys, checking them against the resource's sortable keys.
    pub fn new(keys: Vec<SortKey>, allowed: &[&str]) -> Result<Self, ListRuleError> {
        for (i, key) in keys.iter().enumerate() {
            if key.field.is_empty() {
                return Err(ListRuleError::EmptySortKey { position: i + 1 });
            }
            if !allowed.contains(&key.field.as_str()) {
                return Err(ListRuleError::UnknownSortKey {
                    key: excerpt(&key.field),
                    allowed: allowed.iter().map(|s| s.to_string()).collect(),
                });
            }
            if keys[..i].iter().any(|k| k.field == key.field) {
                return Err(ListRuleError::DuplicateSortKey {
                    key: key.field.clone(),
                });
            }
        }
        Ok(Self { keys })
    }

    /// Parses `A,-B,C`. Spaces around keys are ignored; an empty string is no sort.
    pub fn parse(raw: &str, allowed: &[&str]) -> Result<Self, ListRuleError> {
        Self::new(Self::split(raw), allowed)
    }

    /// Builds a sort from keys by the syntax rules alone (any key a property name could be:
    /// letters, digits, `_`, `.`, `$`, `@`; none empty, none twice), for a service whose
    /// sortable keys are not known ([`ServiceSorts::Unknown`]).
    pub fn well_formed(keys: Vec<SortKey>) -> Result<Self, ListRuleError> {
        for (i, key) in keys.iter().enumerate() {
            if key.field.is_empty() {
                return Err(ListRuleError::EmptySortKey { position: i + 1 });
            }
            if !key
                .field
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '@'))
            {
                return Err(ListRuleError::MalformedSortKey {
                    key: excerpt(&key.field),
                });
            }
            if keys[..i].iter().any(|k| k.field == key.field) {
                return Err(ListRuleError::DuplicateSortKey {
                    key: key.field.clone(),
                });
            }
        }
        Ok(Self { keys })
    }

    /// Parses `A,-B,C` by the syntax rules alone (see [`SortSpec::well_formed`]).
    pub fn parse_any(raw: &str) -> Result<Self, ListRuleError> {
        Self::well_formed(Self::split(raw))
    }

    fn split(raw: &str) -> Vec<SortKey> {
        if raw.trim().is_empty() {
            return Vec::new();
        }
        raw.split(',')
            .map(|part| {
                let part = part.trim();
                match part.strip_prefix('-') {
                    Some(field) => SortKey::desc(field.trim()),
                    None => SortKey::asc(part),
                }
            })
            .collect()
    }

    pub fn keys(&self) -> &[SortKey] {
        &self.keys
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Orders two items by every key in turn.
    pub fn compare<T: Sortable>(&self, a: &T, b: &T) -> Ordering {
        self.first_difference(
            self.keys
                .iter()
                .map(|key| a.sort_value(&key.field).cmp(&b.sort_value(&key.field))),
        )
    }

    /// The first of the per-key orderings (in key order) that is not equal, turned round for a
    /// descending key: the one rule both [`SortSpec::compare`] and
    /// [`SortSpec::compare_values`] order by. Lazy, so later keys are only looked at on a tie.
    fn first_difference(&self, per_key: impl Iterator<Item = Ordering>) -> Ordering {
        self.keys
            .iter()
            .zip(per_key)
            .map(|(key, ordering)| {
                if key.descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            })
            .find(|ordering| *ordering != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }

    /// The value of each key of this sort for one item, in key order. A large sort computes
    /// these once per item and compares them with [`SortSpec::compare_values`], instead of
    /// looking every key up again in every comparison.
    pub fn values_of<'a, T: Sortable>(&self, item: &'a T) -> Vec<SortValue<'a>> {
        self.keys
            .iter()
            .map(|key| item.sort_value(&key.field))
            .collect()
    }

    /// Orders two [`SortSpec::values_of`] results exactly as [`SortSpec::compare`] orders
    /// the items they came from.
    pub fn compare_values(&self, a: &[SortValue<'_>], b: &[SortValue<'_>]) -> Ordering {
        self.first_difference(a.iter().zip(b).map(|(a, b)| a.cmp(b)))
    }

    /// Sorts in place; ties keep their order.
    pub fn sort<T: Sortable>(&self, items: &mut [T]) {
        if !self.is_empty() {
            items.sort_by(|a, b| self.compare(a, b));
        }
    }
}

impl fmt::Display for SortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.keys.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{key}")?;
        }
        Ok(())
    }
}

/// Which sort keys a service is known to take: the one home of the decision whether a key is
/// refused before it is sent.
///
/// Why: the spec says how `sort` is written and how values order, but not which keys a service
/// supports (issue #23). Our sandbox's keys are ours to know ([`Sortable::SORT_KEYS`]); any other
/// service's are not, so a well-formed key is sent and the service judges it (its refusal is
/// shown in its own words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceSorts {
    /// Our sandbox: exactly the resource's [`Sortable::SORT_KEYS`].
    Sandbox,
    /// Any other service: every well-formed key.
    Unknown,
}

impl ServiceSorts {
    /// Parses `A,-B,C` for a listing of `T` as this service is known to sort it: the syntax
    /// rules always (no empty key, none twice, a key a property name), the sandbox's keys only
    /// for the sandbox.
    pub fn parse<T: Sortable>(self, raw: &str) -> Result<SortSpec, ListRuleError> {
        let spec = SortSpec::parse_any(raw)?;
        self.check::<T>(&spec)?;
        Ok(spec)
    }

    /// Checks an already built sort the same way as [`ServiceSorts::parse`].
    pub fn check<T: Sortable>(self, spec: &SortSpec) -> Result<(), ListRuleError> {
        match self {
            ServiceSorts::Sandbox => SortSpec::new(spec.keys.clone(), T::SORT_KEYS).map(drop),
            ServiceSorts::Unknown => SortSpec::well_formed(spec.keys.clone()).map(drop),
        }
    }
}

/// A property's value as the ordering rule sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum SortValue<'a> {
    /// An absent property sorts before any value.
    Missing,
    Number(f64),
    Text(&'a str),
    Instant(DateTime<Utc>),
}

impl SortValue<'_> {
    fn rank(&self) -> u8 {
        match self {
            SortValue::Missing => 0,
            SortValue::Number(_) => 1,
            SortValue::Instant(_) => 2,
            SortValue::Text(_) => 3,
        }
    }
}

impl Eq for SortValue<'_> {}

impl PartialOrd for SortValue<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SortValue<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (SortValue::Number(a), SortValue::Number(b)) => a.total_cmp(b),
            (SortValue::Instant(a), SortValue::Instant(b)) => a.cmp(b),
            (SortValue::Text(a), SortValue::Text(b)) => compare_text(a, b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// Alphabetical, A to Z: letters compare without regard to case (`apple` before `Banana`), and
/// only strings equal but for case fall back to their exact characters, so the order is total.
pub fn compare_text(a: &str, b: &str) -> Ordering {
    // Fast paths with the same result: equal strings, and ASCII text, where folding a
    // character is `to_ascii_lowercase` (sorting 100,000 items makes millions of calls).
    if a == b {
        return Ordering::Equal;
    }
    if a.is_ascii() && b.is_ascii() {
        let folded = a
            .bytes()
            .map(|c| c.to_ascii_lowercase())
            .cmp(b.bytes().map(|c| c.to_ascii_lowercase()));
        return folded.then_with(|| a.cmp(b));
    }
    let folded = a
        .chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase));
    folded.then_with(|| a.cmp(b))
}

/// A resource that a list endpoint can sort.
pub trait Sortable {
    /// The keys `sort` accepts for this resource.
    const SORT_KEYS: &'static [&'static str];

    /// The value of one of [`Sortable::SORT_KEYS`]; any other key is [`SortValue::Missing`].
    fn sort_value(&self, key: &str) -> SortValue<'_>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &["name", "size", "when"];

    struct Item {
        name: &'static str,
        size: f64,
        when: &'static str,
    }

    impl Sortable for Item {
        const SORT_KEYS: &'static [&'static str] = KEYS;
        fn sort_value(&self, key: &str) -> SortValue<'_> {
            match key {
                "name" => SortValue::Text(self.name),
                "size" => SortValue::Number(self.size),
                "when" => SortValue::Instant(self.when.parse().unwrap()),
                _ => SortValue::Missing,
            }
        }
    }

    #[test]
    fn page_defaults_and_limits() {
        assert_eq!(
            PageParams::parse(None, None).unwrap(),
            PageParams {
                start: 0,
                limit: 25
            }
        );
        assert_eq!(
            PageParams::parse(Some("5"), Some("50")).unwrap(),
            PageParams {
                start: 5,
                limit: 50
            }
        );
        assert_eq!(PageParams::parse(Some("0"), Some("0")).unwrap().limit, 0);
        assert!(matches!(
            PageParams::parse(None, Some("51")),
            Err(ListRuleError::LimitTooLarge { limit: 51, max: 50 })
        ));
        assert!(matches!(
            PageParams::parse(Some("-1"), None),
            Err(ListRuleError::StartNotAnInteger(_))
        ));
        assert!(matches!(
            PageParams::parse(None, Some("2.5")),
            Err(ListRuleError::LimitNotAnInteger(_))
        ));
        assert!(matches!(
            PageParams::parse(None, Some("")),
            Err(ListRuleError::LimitNotAnInteger(_))
        ));
        assert!(matches!(
            PageParams::parse(None, Some("99999999999999999999999")),
            Err(ListRuleError::LimitTooLarge { .. })
        ));
    }

    #[test]
    fn the_spec_example_of_ten_items() {
        let first = PageParams::parse(Some("0"), Some("5")).unwrap();
        let second = PageParams::parse(Some("5"), Some("5")).unwrap();
        assert_eq!(first.range(10), 0..5);
        assert_eq!(second.range(10), 5..10);
        assert!(PageParams::new(10, 5).unwrap().check_start(10).is_ok());
        assert_eq!(PageParams::new(10, 5).unwrap().range(10), 10..10);
        assert!(matches!(
            PageParams::new(11, 5).unwrap().check_start(10),
            Err(ListRuleError::StartPastTotal {
                start: 11,
                total: 10
            })
        ));
    }

    #[test]
    fn sort_parses_and_prints_back() {
        let spec = SortSpec::parse("name, -size ,when", KEYS).unwrap();
        assert_eq!(
            spec.keys(),
            &[
                SortKey::asc("name"),
                SortKey::desc("size"),
                SortKey::asc("when")
            ]
        );
        assert_eq!(spec.to_string(), "name,-size,when");
        assert!(SortSpec::parse("", KEYS).unwrap().is_empty());
    }

    #[test]
    fn sort_rejects_bad_keys_in_words() {
        let err = SortSpec::parse("name,colour", KEYS).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`colour` cannot be sorted on; sortable keys are name, size, when"
        );
        assert!(matches!(
            SortSpec::parse("name,,size", KEYS),
            Err(ListRuleError::EmptySortKey { position: 2 })
        ));
        assert!(matches!(
            SortSpec::parse("-", KEYS),
            Err(ListRuleError::EmptySortKey { .. })
        ));
        assert!(matches!(
            SortSpec::parse("name,-name", KEYS),
            Err(ListRuleError::DuplicateSortKey { .. })
        ));
        assert_eq!(err.parameter(), "sort");
    }

    #[test]
    fn ordering_rule_of_the_spec() {
        let mut items = vec![
            Item {
                name: "beta",
                size: 10.0,
                when: "2024-01-01T00:00:00Z",
            },
            Item {
                name: "Alpha",
                size: -3.5,
                when: "2024-01-01T01:00:00+01:00",
            },
            Item {
                name: "alpha",
                size: 2.0,
                when: "2023-12-31T23:30:00Z",
            },
            Item {
                name: "beta",
                size: 9.0,
                when: "2024-06-01T00:00:00Z",
            },
        ];
        // Numbers by magnitude, negative first.
        SortSpec::parse("size", KEYS).unwrap().sort(&mut items);
        assert_eq!(
            items.iter().map(|i| i.size).collect::<Vec<_>>(),
            vec![-3.5, 2.0, 9.0, 10.0]
        );
        // Instants, not strings: 01:00+01:00 is the same instant as 00:00Z, so those two tie
        // and keep the order the size sort gave them (-3.5 before 10).
        SortSpec::parse("when", KEYS).unwrap().sort(&mut items);
        assert_eq!(
            items.iter().map(|i| i.size).collect::<Vec<_>>(),
            vec![2.0, -3.5, 10.0, 9.0]
        );
        // Ascending name (A-Z, case folded), then descending size.
        SortSpec::parse("name,-size", KEYS)
            .unwrap()
            .sort(&mut items);
        let order: Vec<_> = items.iter().map(|i| (i.name, i.size)).collect();
        assert_eq!(
            order,
            vec![
                ("Alpha", -3.5),
                ("alpha", 2.0),
                ("beta", 10.0),
                ("beta", 9.0)
            ]
        );
    }

    #[test]
    fn precomputed_values_order_like_compare() {
        let items = [
            Item {
                name: "beta",
                size: 1.0,
                when: "2024-01-01T00:00:00Z",
            },
            Item {
                name: "Alpha",
                size: 1.0,
                when: "2024-01-02T00:00:00Z",
            },
            Item {
                name: "alpha",
                size: -2.0,
                when: "2023-01-01T00:00:00Z",
            },
            Item {
                name: "beta",
                size: 3.0,
                when: "2024-01-01T00:00:00Z",
            },
        ];
        for raw in ["name", "-size,name", "when,-name", "size,-when,name"] {
            let spec = SortSpec::parse(raw, KEYS).unwrap();
            for a in &items {
                for b in &items {
                    assert_eq!(
                        spec.compare_values(&spec.values_of(a), &spec.values_of(b)),
                        spec.compare(a, b),
                        "{raw}"
                    );
                }
            }
        }
    }

    #[test]
    fn text_is_alphabetical_and_total() {
        // The ASCII fast path agrees with the general rule.
        let words = [
            "apple", "Apple", "APPLE", "banana", "Banana", "a", "", "zoo", "Zoo", "a-b", "a_b",
            "é", "Éclair",
        ];
        for a in words {
            for b in words {
                let general = a
                    .chars()
                    .flat_map(char::to_lowercase)
                    .cmp(b.chars().flat_map(char::to_lowercase))
                    .then_with(|| a.cmp(b));
                assert_eq!(compare_text(a, b), general, "{a} {b}");
            }
        }
        assert_eq!(compare_text("apple", "Banana"), Ordering::Less);
        assert_eq!(compare_text("Zoo", "apple"), Ordering::Greater);
        assert_ne!(compare_text("a", "A"), Ordering::Equal);
        assert_eq!(compare_text("same", "same"), Ordering::Equal);
    }

    #[test]
    fn the_sandbox_s_keys_are_known_and_any_other_service_s_are_not() {
        let sandbox = ServiceSorts::Sandbox.parse::<Item>("colour").unwrap_err();
        assert!(matches!(sandbox, ListRuleError::UnknownSortKey { .. }));
        let other = ServiceSorts::Unknown.parse::<Item>("colour,-size").unwrap();
        assert_eq!(other.to_string(), "colour,-size");
        for (raw, wanted) in [
            ("a,,b", "empty key"),
            ("a,-a", "more than once"),
            ("a b", "not a property name"),
            ("a;drop", "not a property name"),
        ] {
            let error = ServiceSorts::Unknown.parse::<Item>(raw).unwrap_err();
            assert!(error.to_string().contains(wanted), "{raw}: {error}");
            assert_eq!(error.parameter(), "sort");
        }
        assert!(ServiceSorts::Unknown.parse::<Item>("").unwrap().is_empty());
        let spec = SortSpec::parse_any("name").unwrap();
        assert!(ServiceSorts::Sandbox.check::<Item>(&spec).is_ok());
    }

    #[test]
    fn missing_values_sort_first() {
        assert!(SortValue::Missing < SortValue::Number(-1e300));
        assert!(SortValue::Missing < SortValue::Text(""));
    }
}

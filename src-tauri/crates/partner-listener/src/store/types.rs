//! The store's values as its callers see them: what a query, a count, an export or a clear
//! covers ([`CaptureFilter`], [`CaptureQuery`]), what comes back ([`CapturePage`], [`Facets`],
//! ...), and how a store is opened and what it keeps ([`StoreOptions`], [`Retention`]).
//!
//! Plain data, below every other part of the store: the writer, the query planner and modules
//! outside the store (`facet_counts`, `export`, `evidence`) use these types without needing the
//! store's machinery, so none of them has to reach back into a file that reaches them.

use crate::capture::Capture;
use crate::verdict::Verdict;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How much the store keeps: at most `max_count` captures, `max_bytes` of them (a capture's
/// size is its body and its headers as stored, [`super::sizes`]), none older than
/// `max_age`. Past a limit, junk goes first, within a share of its own, then notifications of
/// subscriptions without a key, then signed ones, oldest first in each
/// ([`crate::classes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    pub max_count: Option<u64>,
    #[serde(default)]
    pub max_bytes: Option<u64>,
    #[serde(default, with = "optional_seconds")]
    pub max_age: Option<Duration>,
}

/// What the tables hold of one retention class, and what the retention pruned of it since the
/// store was opened.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassSizes {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub captures: u64,
    /// Bytes of their bodies and headers as stored.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// Captures of the class the retention deleted since this writer opened the store.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub pruned: u64,
}

/// The store's holdings by retention class ([`crate::classes::RetentionClass`]).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionSizes {
    pub junk: ClassSizes,
    pub unverified: ClassSizes,
    pub signed: ClassSizes,
}

impl RetentionSizes {
    pub fn captures(&self) -> u64 {
        self.junk.captures + self.unverified.captures + self.signed.captures
    }

    pub fn bytes(&self) -> u64 {
        self.junk.bytes + self.unverified.bytes + self.signed.bytes
    }
}

/// Which captures a query, a count or an export covers. Empty fields match everything. The one
/// filter of captures: the store's queries, `partner listen` and the desktop app's inspector
/// (its UI sends this type as it is) all take it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct CaptureFilter {
    /// Only these captures (a selection in the inspector).
    #[cfg_attr(feature = "ts", ts(type = "Array<number>"))]
    pub ids: Vec<i64>,
    /// Only captures up to this id: what was stored when the user looked (a clear confirmed
    /// later leaves the captures that arrived meanwhile).
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub max_id: Option<i64>,
    pub verdicts: Vec<Verdict>,
    pub event_type: Option<String>,
    pub resource_type: Option<String>,
    pub subscription_id: Option<String>,
    /// Received at or after (RFC 3339; blank is none).
    #[serde(deserialize_with = "instant")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub since: Option<DateTime<Utc>>,
    /// Received before (RFC 3339; blank is none).
    #[serde(deserialize_with = "instant")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub until: Option<DateTime<Utc>>,
    /// A search: words in the body or a header value, or a substring of an id (see
    /// [`crate::search`] for exactly what it means).
    pub text: Option<String>,
}

impl CaptureFilter {
    /// The filter as a person typed it, tidied: names and words trimmed, blank ones none.
    pub fn tidied(mut self) -> Self {
        fn tidy(value: Option<String>) -> Option<String> {
            value
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        }
        self.event_type = tidy(self.event_type);
        self.resource_type = tidy(self.resource_type);
        self.subscription_id = tidy(self.subscription_id);
        self.text = tidy(self.text);
        self
    }
}

/// A filter's time: RFC 3339 with any offset, blank or `null` for none; anything else is an
/// error that quotes what was given (a person typed it).
fn instant<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    let text: Option<String> = Option::deserialize(deserializer)?;
    match text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| {
                serde::de::Error::custom(format!(
                    "the time {text:?} is not a date and time (RFC 3339, e.g. 2026-11-24T09:30:00Z)"
                ))
            }),
    }
}

/// How [`StoreReader::page`](super::StoreReader::page) lists captures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Grouping {
    /// Every capture is a row.
    #[default]
    EveryAttempt,
    /// One row per notification: its newest attempt that matches the filter (a capture that
    /// names no notification is a row of its own).
    ByNotification,
}

/// How far [`StoreReader::page`](super::StoreReader::page) counts when its count has to walk the
/// hits (a text search, a grouped listing); other counts are exact and cheap, and always made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HitCount {
    /// On past the page, up to [`COUNT_CAP`] or [`COUNT_TIME_BUDGET`]: `partner listen
    /// captures` prints "1-50 of 10,000+".
    #[default]
    UpToCap,
    /// Through the page and one hit more: `total` is the rows up to the page's end and
    /// `total_capped` says whether more follow. For a caller that counts the same hits elsewhere:
    /// the inspector reads [`StoreReader::facets`](super::StoreReader::facets) beside every new
    /// search, which walks them again (at a million captures, counting a word every capture has
    /// costs about 30 ms, and the page alone under 2).
    ThroughPage,
}

/// A page the inspector asks for: which captures, how grouped, which rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CaptureQuery {
    pub filter: CaptureFilter,
    pub grouping: Grouping,
    /// Rows (or groups) to skip, newest first.
    pub offset: u64,
    /// Rows (or groups) to return, at most [`MAX_PAGE_LIMIT`].
    pub limit: u64,
    /// How far a walked count goes.
    pub count: HitCount,
}

/// Most rows one page returns.
pub const MAX_PAGE_LIMIT: u64 = 1000;
/// Counts that have to walk search hits or groups stop here (see [`CapturePage::total_capped`]).
pub const COUNT_CAP: u64 = 10_000;
/// How long such a walk goes on counting once the page is filled (the facets: once the first
/// hit is found): a common word under a narrow
/// filter (every capture has the word, one in 25 the verdict) reads 250,000 hits to count
/// 10,000 (`benches/query.rs`, "search + verdict": 195 ms at p50 on a million captures), and
/// only time bounds what SQLite reads to find each match.
pub const COUNT_TIME_BUDGET: std::time::Duration = std::time::Duration::from_millis(40);

/// A row of a page: a capture and, grouped, how many attempts of its notification match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedCapture {
    #[serde(flatten)]
    pub capture: Capture,
    /// Captures of its notification matching the filter (1 listing every attempt).
    pub group_attempts: u32,
}

/// One page of [`StoreReader::page`](super::StoreReader::page), newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapturePage {
    pub items: Vec<ListedCapture>,
    /// Rows (or groups) matching, over all pages; a lower bound when `total_capped`.
    pub total: u64,
    /// The count stopped early: at least `total` match, and likely more ("10,000+"). Only a
    /// text search or a grouped listing is counted by walking its hits; the walk stops at
    /// [`COUNT_CAP`] matches (or at the page asked for, when that is further), or when
    /// [`COUNT_TIME_BUDGET`] has passed since the page was filled: counting a word every
    /// capture has would read them all.
    pub total_capped: bool,
    /// Captures the search did not look at yet: the index is catching up (after an import of
    /// an older store, or a migration) and a search scans only the newest of the captures not
    /// indexed yet (`TAIL_SCAN_LIMIT` in [`crate::search`]). 0 for a complete answer.
    #[serde(default)]
    pub unsearched: u64,
}

/// What the inspector's filter controls offer and count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    /// Captures per verdict under the filter without its verdicts (so every pill has its
    /// count); verdicts with none left out.
    pub verdicts: BTreeMap<Verdict, u64>,
    /// Every event type, resource type and subscription id in the store, sorted.
    pub event_types: Vec<String>,
    pub resource_types: Vec<String>,
    pub subscriptions: Vec<String>,
    /// Captures matching the whole filter.
    pub total: u64,
    /// A text search's counts stopped early ([`COUNT_CAP`] captures counted or
    /// [`COUNT_TIME_BUDGET`] spent): they are lower bounds.
    pub capped: bool,
    /// Captures a text search did not look at yet (see [`CapturePage::unsearched`]).
    #[serde(default)]
    pub unsearched: u64,
}

/// A notification that reached the listener, as
/// [`StoreReader::arrived_since`](super::StoreReader::arrived_since) tells it: the fields that
/// identify it for its subscription, as they arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrivedNotification {
    /// `$.meta.resourceType` as sent.
    pub resource_type: String,
    pub event_id: String,
    pub first_received_at: DateTime<Utc>,
}

/// Captures as [`StoreReader::query`](super::StoreReader::query) lists them, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureList {
    pub items: Vec<Capture>,
    /// Captures matching the filter, over all pages.
    pub total: u64,
}

/// How many captures an import added and how many it skipped because their id was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub imported: u64,
    pub skipped: u64,
    /// The import was cancelled; the captures counted above were imported and stay.
    #[serde(default)]
    pub cancelled: bool,
}

/// How hard a commit tries to reach the disk before the listener answers 2xx.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Durability {
    /// `synchronous=FULL`: every commit fsyncs the WAL. An acknowledged capture survives a
    /// `kill -9`, an OS crash and a power cut. One fsync per batch, not per capture.
    #[default]
    Full,
    /// `synchronous=NORMAL` (in WAL mode): a commit is written to the WAL in the OS's page cache
    /// before the answer, so it survives `kill -9` and any crash of the process; only an OS crash
    /// or power cut in the following moments could lose it. The WAL is fsynced at checkpoints.
    Normal,
}

/// The data key a store is encrypted with at rest, and where it lives (named in the error a
/// store that does not open with it gives, and in the store's key note; never the key).
#[derive(Clone, PartialEq, Eq)]
pub struct StoreKey {
    pub key: partner_seal::DataKey,
    /// Where the key lives, as a user reads it ("the key file /…/data.key").
    pub home: String,
}

impl StoreKey {
    pub fn new(key: partner_seal::DataKey, home: impl Into<String>) -> Self {
        Self {
            key,
            home: home.into(),
        }
    }
}

impl std::fmt::Debug for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreKey({}, {})", self.key.fingerprint(), self.home)
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    pub retention: Retention,
    pub durability: Durability,
    /// What this program calls itself in the store's lock file, so a second writer's refusal
    /// can name it ("partner listen", "Partner Console app"). Empty: the executable's name.
    pub holder: &'static str,
    /// How long a notification's redeliveries are linked to it; `None`:
    /// [`REDELIVERY_WINDOW`](crate::REDELIVERY_WINDOW).
    pub redelivery_window: Option<std::time::Duration>,
    /// The data key the store is encrypted with (SQLCipher for the tables and their WAL, sealed
    /// records for the journal); a store written unencrypted is encrypted with it as it opens.
    /// `None`: an unencrypted store (tests and benchmarks only; every program passes its key,
    /// from `partner_local::data_key`).
    pub key: Option<StoreKey>,
}

mod optional_seconds {
    use chrono::Duration;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_i64(d.num_seconds()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(Duration::seconds))
    }
}

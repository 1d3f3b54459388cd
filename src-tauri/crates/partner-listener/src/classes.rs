//! Which captures the store lets go first: the retention classes, made from the verdicts, in
//! one place (the tables' accounting, the prune's order, the partial indexes a prune walks and
//! the flood summary of the server all read them from here).
//!
//! Why classes: a public tunnel URL is scanned within minutes, and when every capture counted
//! alike, 3,000 junk requests under a limit of 500 pruned the real notifications oldest first to
//! make room for the junk (issue #46). So a capture's class says how likely it is to be the
//! service's, and the store prunes the least likely first:
//! - [`RetentionClass::Junk`]: not a notification the service sent (another path or method, a
//!   failed or absent signature, a body too large or cut off). It has a bounded share of the
//!   store of its own ([`JUNK_SHARE_PERCENT`]) and is pruned first; past a rate, it is summarised
//!   rather than stored in full (`server`, [`crate::server::ListenerConfig::junk_rate`]).
//! - [`RetentionClass::Unverified`]: a notification for a subscription the listener has no key
//!   for. It may be real (a subscription made elsewhere, one whose id the service only names in
//!   its notifications), so it goes after the junk.
//! - [`RetentionClass::Signed`]: signed with a subscription's key (valid, or signed but not a
//!   notification): the service's own, pruned last.
//!
//! Only the verdict decides, so a class can be told in SQL (`verdict IN (...)`) as well as in
//! memory, and a store of any age needs no new column to be classed.

use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// How likely a capture is to be the service's; the store prunes in this order (see the
/// module's notes).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetentionClass {
    /// Not a notification of the service: pruned first, within a share of its own.
    Junk,
    /// A notification for a subscription without a key here: next.
    Unverified,
    /// Signed with a subscription's key: last.
    Signed,
}

/// The share of the count limit and of the byte budget junk may hold, in percent.
pub const JUNK_SHARE_PERCENT: u64 = 10;

impl RetentionClass {
    /// Every class, in the order the store prunes them.
    pub const ALL: [RetentionClass; 3] = [
        RetentionClass::Junk,
        RetentionClass::Unverified,
        RetentionClass::Signed,
    ];

    /// The class rule: a capture's class by its verdict.
    pub fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Valid | Verdict::MalformedBody => RetentionClass::Signed,
            Verdict::UnknownSubscription => RetentionClass::Unverified,
            Verdict::InvalidSignature
            | Verdict::MissingSignature
            | Verdict::TooLarge
            | Verdict::Incomplete
            | Verdict::WrongPath
            | Verdict::WrongMethod => RetentionClass::Junk,
        }
    }

    /// How much of a limit (a count or a byte budget) junk may hold: [`JUNK_SHARE_PERCENT`].
    pub fn junk_share(limit: u64) -> u64 {
        limit / 100 * JUNK_SHARE_PERCENT + limit % 100 * JUNK_SHARE_PERCENT / 100
    }

    /// The class's place in [`Self::ALL`] (and in the store's tally of sizes).
    pub fn index(self) -> usize {
        match self {
            RetentionClass::Junk => 0,
            RetentionClass::Unverified => 1,
            RetentionClass::Signed => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RetentionClass::Junk => "junk",
            RetentionClass::Unverified => "unverified",
            RetentionClass::Signed => "signed",
        }
    }

    /// The verdicts of this class.
    pub fn verdicts(self) -> impl Iterator<Item = Verdict> {
        Verdict::ALL
            .into_iter()
            .filter(move |verdict| Self::of(*verdict) == self)
    }

    /// The class as an SQL condition on the `verdict` column (verdict names are fixed ASCII
    /// words, so they are written in as literals: a partial index is used only by a query whose
    /// condition is the index's own, literal for literal).
    pub fn sql_condition(self) -> String {
        let names: Vec<String> = self
            .verdicts()
            .map(|verdict| format!("'{}'", verdict.as_str()))
            .collect();
        format!("verdict IN ({})", names.join(", "))
    }
}

impl Verdict {
    /// The verdict's retention class ([`RetentionClass::of`]).
    pub fn retention_class(self) -> RetentionClass {
        RetentionClass::of(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_has_one_class_and_the_classes_cover_them_all() {
        let classed: usize = RetentionClass::ALL
            .into_iter()
            .map(|class| class.verdicts().count())
            .sum();
        assert_eq!(classed, Verdict::ALL.len());
        assert_eq!(
            RetentionClass::Signed.sql_condition(),
            "verdict IN ('valid', 'malformed-body')"
        );
        for (index, class) in RetentionClass::ALL.into_iter().enumerate() {
            assert_eq!(class.index(), index);
        }
    }
}

//! An incremental walk: the items of a listing changed at or after a point in time, newest
//! first, through the pager (`sort=-updated`, pages of at most 50, a few in flight), stopping at
//! the first item older than that point. The console's check for notifications that never
//! arrived uses it on transactions; an index kept up to date locally can use it the same way.
//!
//! Why shaped so:
//! - The listing is read newest first and the walk stops at the first older item, so a walk
//!   costs the pages of what changed, not of the whole listing. The pages already in flight past
//!   that point are dropped (aborted) with the stream.
//! - A listing changes while it is walked, and `start`/`limit` paging is by position. Under
//!   `-updated` a change moves its item to the front: an item not reached yet when it changed
//!   is then never reached, and the items it passed shift back by one, so one is seen twice.
//!   So the walk remembers what it yielded (id and `updated`) and skips a repeat, and once it
//!   reaches `since` it walks the front again down to the newest stamp the previous pass
//!   started from, yielding what changed meanwhile, until a pass finds nothing new (at most
//!   [`MAX_PASSES`]). An item changed twice is yielded once per version seen, newest last.
//! - Sorting by `updated` is not in the spec: a service may refuse it (a 400 on the first
//!   page). The walk then says so ([`WalkProgress::fallback`], the service's words) and falls
//!   back to a full walk in the listing's own order, handing over every item changed at or
//!   after `since` (and every item without a stamp): slower, never partial.
//! - Tokens, retries and the page rules are the client's, as for every listing.
//! - Progress is told per item (how far back in time the walk has come); a
//!   [`CancellationToken`] ends it between items, with what was yielded so far.

use crate::client::PartnerClient;
use crate::error::Result;
use crate::page::Listed;
use crate::pager::PagerOptions;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use partner_api::read::{self, Document};
use partner_api::{SortKey, SortSpec};
use std::collections::HashSet;
use std::ops::ControlFlow;
use tokio_util::sync::CancellationToken;

/// Passes over the front of the listing at most (the first one included).
pub const MAX_PASSES: u32 = 4;

/// A listed resource with an id and, where the service gives one, an `updated` stamp,
/// sortable by `updated`.
pub trait Updated: Listed {
    fn id(&self) -> &str;
    /// `updated`; `None` when the service does not give it (the spec shows no such field),
    /// and the walk cannot place the item in time (`created` would not do: the listing is
    /// sorted by `updated`, and an item without it sorts last whatever its `created`).
    fn updated(&self) -> Option<DateTime<Utc>>;
}

impl Updated for read::TransactionView {
    fn id(&self) -> &str {
        &self.id
    }
    fn updated(&self) -> Option<DateTime<Utc>> {
        self.updated
    }
}

// The sandbox's strict records, for callers not yet on the views (see `Listed`).
impl Updated for partner_api::Transaction {
    fn id(&self) -> &str {
        &self.id
    }
    fn updated(&self) -> Option<DateTime<Utc>> {
        Some(self.updated)
    }
}

impl Updated for partner_api::Product {
    fn id(&self) -> &str {
        &self.id
    }
    fn updated(&self) -> Option<DateTime<Utc>> {
        Some(self.updated)
    }
}

impl Updated for read::ProductView {
    fn id(&self) -> &str {
        &self.id
    }
    fn updated(&self) -> Option<DateTime<Utc>> {
        self.updated
    }
}

/// How far a walk has come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkProgress {
    /// The walk's lower bound.
    pub since: DateTime<Utc>,
    /// The newest `updated` stamp seen (the front of the listing when the walk began).
    pub newest: Option<DateTime<Utc>>,
    /// The `updated` stamp of the item last read: the walk has covered `[reached, newest]`.
    pub reached: Option<DateTime<Utc>>,
    /// Items read, repeats included.
    pub read: u64,
    /// Items handed to the caller.
    pub yielded: u64,
    /// 1 for the first pass.
    pub pass: u32,
    /// Set when the service refused `sort=-updated` and the walk reads every item instead:
    /// why, in the service's words.
    pub fallback: Option<String>,
}

impl WalkProgress {
    /// The sentence a progress line shows for a fallback: "the service does not sort by
    /// `updated` (…); reading every item instead".
    pub fn fallback_note(&self) -> Option<String> {
        self.fallback.as_ref().map(|why| {
            format!("the service does not sort by `updated` ({why}); reading every item instead")
        })
    }
}

impl WalkProgress {
    /// The share of `[since, newest]` covered, 0 to 1 (1 when the span is empty).
    pub fn fraction(&self) -> f64 {
        let (Some(newest), Some(reached)) = (self.newest, self.reached) else {
            return 0.0;
        };
        let span = (newest - self.since).num_milliseconds();
        if span <= 0 {
            return 1.0;
        }
        ((newest - reached).num_milliseconds() as f64 / span as f64).clamp(0.0, 1.0)
    }
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkEnd {
    /// Every item changed at or after `since` was handed over.
    Complete,
    /// The cancellation token fired; what was handed over so far stands.
    Cancelled,
    /// The caller's `on_item` asked to stop.
    Stopped,
}

/// What a walk did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkSummary {
    pub end: WalkEnd,
    pub progress: WalkProgress,
}

/// The pager options of a walk by default: full pages, two in flight (a walk usually stops
/// within its first pages, and pages in flight past that point are wasted).
pub const WALK_PAGER: PagerOptions = PagerOptions {
    page_size: partner_api::list::MAX_LIMIT,
    concurrency: 2,
};

/// Whether `error`, on the first page of the first pass, is the service refusing the sort:
/// a 400 to a request whose only choice was `sort=-updated` (`start=0`, a valid limit).
fn refused_the_sort(error: &crate::error::ClientError, state: &WalkProgress) -> bool {
    state.pass == 1
        && state.read == 0
        && matches!(
            error,
            crate::error::ClientError::InvalidRequest { status: 400, .. }
        )
}

/// Hands `item` over to the caller and counts it; when the caller asks to stop, the summary
/// of a walk stopped there (after telling `progress` where it stands).
fn hand_over<T>(
    state: &mut WalkProgress,
    item: Document<T>,
    on_item: &mut impl FnMut(Document<T>) -> ControlFlow<()>,
    progress: &mut impl FnMut(&WalkProgress),
) -> Option<WalkSummary> {
    state.yielded += 1;
    if on_item(item).is_continue() {
        return None;
    }
    progress(state);
    Some(WalkSummary {
        end: WalkEnd::Stopped,
        progress: state.clone(),
    })
}

impl PartnerClient {
    /// The fallback of [`PartnerClient::walk_updated_since`] when the service does not sort by
    /// `updated`: every item in the listing's own order, handing over those changed at or
    /// after `since` and those without a stamp, each (id, stamp) once.
    async fn walk_everything<T: Updated>(
        &self,
        mut state: WalkProgress,
        options: PagerOptions,
        cancel: &CancellationToken,
        mut progress: impl FnMut(&WalkProgress),
        mut on_item: impl FnMut(Document<T>) -> ControlFlow<()>,
    ) -> Result<WalkSummary> {
        progress(&state);
        let mut seen: HashSet<(String, Option<DateTime<Utc>>)> = HashSet::new();
        let mut items = self.pager::<T>(SortSpec::default(), options)?;
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    return Ok(WalkSummary { end: WalkEnd::Cancelled, progress: state });
                }
                next = items.next() => next,
            };
            let Some(item) = next else { break };
            let item = item?;
            state.read += 1;
            let updated = item.updated();
            if let Some(updated) = updated {
                state.newest = Some(state.newest.map_or(updated, |n| n.max(updated)));
            }
            let changed = updated.is_none_or(|updated| updated >= state.since);
            if changed && seen.insert((item.id().to_owned(), updated)) {
                if let Some(stopped) = hand_over(&mut state, item, &mut on_item, &mut progress) {
                    return Ok(stopped);
                }
            }
            progress(&state);
        }
        state.reached = Some(state.since);
        progress(&state);
        Ok(WalkSummary {
            end: WalkEnd::Complete,
            progress: state,
        })
    }

    /// Whether the listing of `T` in `sort` ends with an item without an `updated` stamp
    /// (two requests of one item: the total, then the last).
    async fn ends_undated<T: Updated>(&self, sort: &SortSpec) -> Result<bool> {
        let one = |start: u64| {
            crate::page::PageRequest::new(start, 1)
                .map(|r| r.sorted(sort.clone()))
                .map_err(crate::error::RuleError::from)
        };
        let first = self.list::<T>(&one(0)?).await?;
        if first.total == 0 {
            return Ok(false);
        }
        let last = self
            .list::<T>(&one(first.total - 1)?.with_known_total(first.total))
            .await?;
        Ok(last
            .items
            .first()
            .is_some_and(|item| item.updated().is_none()))
    }

    /// Hands every item of the listing of `T` whose `updated` is at or after `since` to
    /// `on_item`, newest first (see the module's notes for the passes and repeats), telling
    /// `progress` after each item read. Ends early when `cancel` fires or `on_item` breaks.
    pub async fn walk_updated_since<T: Updated>(
        &self,
        since: DateTime<Utc>,
        options: PagerOptions,
        cancel: &CancellationToken,
        mut progress: impl FnMut(&WalkProgress),
        mut on_item: impl FnMut(Document<T>) -> ControlFlow<()>,
    ) -> Result<WalkSummary> {
        let sort = SortSpec::well_formed(vec![SortKey::desc("updated")])
            .map_err(crate::error::RuleError::from)?;
        let mut seen: HashSet<(String, DateTime<Utc>)> = HashSet::new();
        // Items without a stamp cannot be placed in time: each is handed over once, as one
        // that may have changed, and never moves the walk's floor.
        let mut undated: HashSet<String> = HashSet::new();
        let mut state = WalkProgress {
            since,
            newest: None,
            reached: None,
            read: 0,
            yielded: 0,
            pass: 0,
            fallback: None,
        };
        // Each pass walks down to `floor`: `since` first, then the newest stamp the previous
        // pass began with.
        let mut floor = since;
        let mut tail_undated: Option<bool> = None;
        while state.pass < MAX_PASSES {
            state.pass += 1;
            let mut pass_newest: Option<DateTime<Utc>> = None;
            let mut found_new = false;
            let mut items = self.pager::<T>(sort.clone(), options)?;
            loop {
                let next = tokio::select! {
                    biased;
                    () = cancel.cancelled() => {
                        return Ok(WalkSummary { end: WalkEnd::Cancelled, progress: state });
                    }
                    next = items.next() => next,
                };
                let Some(item) = next else { break };
                let item = match item {
                    Err(refused) if refused_the_sort(&refused, &state) => {
                        drop(items);
                        state.fallback = Some(refused.to_string());
                        return self
                            .walk_everything(state, options, cancel, progress, on_item)
                            .await;
                    }
                    item => item?,
                };
                state.read += 1;
                let Some(updated) = item.updated() else {
                    if undated.insert(item.id().to_owned()) {
                        if let Some(stopped) =
                            hand_over(&mut state, item, &mut on_item, &mut progress)
                        {
                            return Ok(stopped);
                        }
                    }
                    progress(&state);
                    continue;
                };
                pass_newest.get_or_insert(updated);
                state.newest = Some(state.newest.map_or(updated, |n| n.max(updated)));
                if updated < floor {
                    // Items without `updated` sort last: if the listing ends with one, the
                    // walk reads on to the end for them (handing over only those), rather than
                    // stop before items it cannot place in time.
                    if state.pass == 1 && tail_undated.is_none() {
                        tail_undated = Some(self.ends_undated::<T>(&sort).await?);
                    }
                    if tail_undated != Some(true) || state.pass > 1 {
                        break;
                    }
                    progress(&state);
                    continue;
                }
                if state.pass == 1 {
                    state.reached = Some(updated);
                }
                let fresh = seen.insert((item.id().to_owned(), updated));
                if fresh {
                    found_new = true;
                    if let Some(stopped) = hand_over(&mut state, item, &mut on_item, &mut progress)
                    {
                        return Ok(stopped);
                    }
                }
                progress(&state);
            }
            drop(items);
            if state.pass == 1 {
                // Everything down to `since` is covered.
                state.reached = Some(since);
                progress(&state);
            }
            // Nothing changed during a later pass, or the listing is empty: done.
            let Some(pass_newest) = pass_newest else {
                break;
            };
            if state.pass > 1 && !found_new {
                break;
            }
            // Never below `since`: a first item older than it was not handed over.
            floor = pass_newest.max(since);
        }
        Ok(WalkSummary {
            end: WalkEnd::Complete,
            progress: state,
        })
    }
}

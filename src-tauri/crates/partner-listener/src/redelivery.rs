//! Which notification an arriving capture is an attempt of, without an index at random places.
//!
//! Why in memory: redeliveries repeat (subscription, resource type, eventId), and the service's
//! eventIds are random UUIDs. An SQLite index on them puts every new capture's entry at a random
//! leaf, so each capture dirtied a page of its own, and every group commit wrote one whole page
//! to the WAL (and later to the database) per capture on top of the capture itself: measured
//! with UUID eventIds, 24.6 KB written per 2 KiB capture with the index, 10.5 KB without
//! (BENCHMARKS.md, listener). So the writer keeps the map from a notification's key to its first
//! capture and attempt count in memory, and the store keeps the same facts in the append-only
//! table `notifications` (a row per first attempt, in id order; a redelivery updates one of the
//! newest rows), from which the map is rebuilt when the store opens. A capture carries its
//! notification's id, and `captures (notification_id)` is indexed in arrival order too.
//!
//! The key is a 128-bit digest of the three fields, so the map costs tens of bytes per
//! notification however long the fields are.
//!
//! **Only the notifications of the redelivery window are kept.** The spec starts every attempt
//! of a notification within 100 seconds of the first (three attempts, 20 seconds apart, each
//! waiting 30 seconds at most), so the map holds the notifications first captured within
//! [`REDELIVERY_WINDOW`] (six hours) and lets the older ones go: at open it reads the
//! `notifications` rows from the first capture received within the window on, and while the
//! listener runs the writer notes its next capture id as it commits ([`RedeliveryWindow`]); the
//! next merge drops what has passed. So the map follows the rate of notifications, not the size
//! of the store. A capture of a notification past the window (no faithful service sends one) is
//! stored as a new notification; the rows of the old ones stay in the table, and a store opened
//! with a wider window (`StoreOptions::redelivery_window`) reads them again.
//!
//! Why not a hash map: a flood inside the window (or a store opened with a wide one) puts a
//! million notifications in the map, and then it is the largest thing the listener keeps. A `HashMap<key, Seen>` costs 32 bytes
//! an entry plus a control byte per bucket, in a power of two of buckets at most 7/8 full: 2^20
//! buckets (34.6 MB) for the 793,029 notifications of a 1,000,000-capture store, 2^21 (69 MB)
//! from 917,505 notifications on, and both tables at once while it grows. [`Redeliveries`]
//! keeps instead:
//! - the bulk as one array sorted by key of 21-byte entries (the key, the first capture id as a
//!   `u32`, the attempts as a `u8`: no padding, no empty buckets), built at open with the exact
//!   capacity (the rows are counted first) and sorted once, its attempts updated in place;
//! - a [`PrefixIndex`] over it: where the keys of each leading-bits prefix start, 4 bytes per
//!   8 to 16 notifications (256 KiB at a million), so a lookup bisects one bucket of ~16
//!   entries instead of the whole array;
//! - the notifications added since the array was last merged in a small hash map, merged into
//!   the array (one backward pass that moves each run of entries once) when it holds 1/64 of
//!   the array's entries (at least [`MIN_MERGE`]; 2^15 buckets, 1.1 MB, at its fullest at a
//!   million): a new notification costs a lookup, an insert and an amortised move of 64
//!   entries (~1.3 KB);
//! - the facts that do not fit the narrow fields (a capture id above `u32::MAX` or negative, 255
//!   attempts or more) in a side map, their entry in the array marked as such: exact for every
//!   value, and empty in practice (ids count captures from 1).
//!
//! Measured (2026-11-24, 2 cores shared with builds, mimalloc as in the app):
//! - a 1,000,000-capture store (793,029 notifications) opens in 123 ms instead of 190
//!   (medians of 5, `examples/open_store.rs`) and the process holds 30.5 MiB instead of 86.5
//!   with it open (`VmRSS` = `VmHWM`; 8.4 before opening). The map is 16.9 MB instead of 34.6,
//!   and loading it leaves nothing behind: the tables a growing `HashMap` outgrew were freed
//!   but still resident (with `MIMALLOC_PURGE_DELAY=0`: 47 MiB held, 68 at the peak, before);
//! - with 1,093,029 notifications (1.3 million captures) 34.4 MiB instead of 154.5, 82 with
//!   `MIMALLOC_PURGE_DELAY=0` (peak 118), opened in 195 ms instead of 250-480;
//! - at a million notifications (`map_costs_at_a_million` below, against the `HashMap` it
//!   replaces, 3 runs): 21.3 MB instead of 69; built in 49-76 ms instead of 145-166; a lookup
//!   that hits 98-124 ns against 115-197; a redelivery (hit, update) 293-325 ns against
//!   268-410; a new notification (miss, insert) 344-383 ns against 134-137, most of the
//!   difference the merges (one takes 2.6 ms at 1.2 million, the writer holding the map's lock
//!   meanwhile, as it held it for a whole rehash when a `HashMap` grew);
//! - the writer's CPU per capture adding 50,000 captures to that store (`benches/store.rs` with
//!   `STORE_FILE`, 3 alternated runs): 16.6 / 17.0 / 16.4 µs against 16.4 / 16.6 / 15.8 µs.
//!
//! A replay (`Svc-Replay: 1`, sent by the console, [`crate::Listener::replay`]) is not an
//! attempt of the service ([`crate::Capture::notification_of`]): it is stored as a capture of its own (attempt
//! 1, no notification id) and neither takes an attempt number of its notification nor adds to
//! the attempts the next real redelivery is numbered after. Otherwise replaying a notification
//! twice would make the service's next retry look like its attempt 4, and the test mode's
//! "fail the first N attempts" would count the user's replays.

use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

/// The digest of (subscription, resource type, eventId) that names a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct NotificationKey([u8; 16]);

impl NotificationKey {
    pub(crate) fn of(subscription_id: &str, resource_type: &str, event_id: &str) -> Self {
        let mut hasher = Sha256::new();
        // Lengths first, so no two different triples hash the same bytes.
        for part in [subscription_id, resource_type, event_id] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        let digest = hasher.finalize();
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        Self(key)
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Some(Self(bytes.try_into().ok()?))
    }
}

/// What the store knows of one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The id of its first capture (the notification's id).
    pub first_id: i64,
    /// How many of its captures were stored.
    pub attempts: u32,
}

/// The recent part is merged into the sorted array once it holds this many entries, or 1/64
/// of the array's (whichever is more): small stores merge rarely, a large one keeps its recent
/// map at most ~1/64 of its size (about a byte a notification at its fullest) and moves ~64
/// entries per insert.
const MIN_MERGE: usize = 4096;
/// See [`MIN_MERGE`].
const MERGE_FRACTION: usize = 64;
/// A merge that needs room grows the array by at least 1/16 of its length, so it is
/// reallocated every few merges, not at each, and wastes at most that much.
const GROWTH_FRACTION: usize = 16;

/// `attempts` of a [`Compact`] whose facts are in [`Redeliveries::wide`].
const WIDE: u8 = u8::MAX;

/// A notification in the sorted array: 21 bytes, alignment 1, so no padding.
#[derive(Debug, Clone, Copy)]
struct Compact {
    key: [u8; 16],
    /// The first capture id, a `u32` in little-endian bytes (unless `attempts` is [`WIDE`]).
    first_id: [u8; 4],
    attempts: u8,
}

impl Compact {
    /// `seen` in the narrow fields, or None when it does not fit them.
    fn narrow(key: &NotificationKey, seen: Seen) -> Option<Self> {
        let first_id = u32::try_from(seen.first_id).ok()?;
        let attempts = u8::try_from(seen.attempts).ok().filter(|&a| a != WIDE)?;
        Some(Self {
            key: key.0,
            first_id: first_id.to_le_bytes(),
            attempts,
        })
    }

    /// An entry whose facts are kept in the wide map.
    fn wide(key: &NotificationKey) -> Self {
        Self {
            key: key.0,
            first_id: [0; 4],
            attempts: WIDE,
        }
    }

    /// Its facts, or None when they are in the wide map.
    fn seen(&self) -> Option<Seen> {
        (self.attempts != WIDE).then(|| Seen {
            first_id: i64::from(u32::from_le_bytes(self.first_id)),
            attempts: u32::from(self.attempts),
        })
    }

    /// Its facts, from the wide map when they are kept there.
    fn resolve(&self, wide: &HashMap<NotificationKey, Seen>) -> Option<Seen> {
        self.seen()
            .or_else(|| wide.get(&NotificationKey(self.key)).copied())
    }

    /// `seen` for `key`, narrow when it fits, else in `wide`.
    fn store(key: &NotificationKey, seen: Seen, wide: &mut HashMap<NotificationKey, Seen>) -> Self {
        match Self::narrow(key, seen) {
            Some(narrow) => narrow,
            None => {
                wide.insert(*key, seen);
                Self::wide(key)
            }
        }
    }
}

/// About how many entries of the sorted array share a bucket of its [`PrefixIndex`].
const ENTRIES_PER_BUCKET: usize = 16;
/// The most leading bits the index buckets by (2^24 buckets at 268 million notifications).
const MAX_PREFIX_BITS: u32 = 24;

/// Where each run of keys sharing their leading `bits` bits starts in the sorted array. The
/// keys are digests, spread evenly, so a lookup bisects the ~16 entries of one bucket (a cache
/// line or few) instead of the whole array (20 steps at a million, most of them cache
/// misses), for 4 bytes per 8 to 16 notifications. A bucket made crowded on purpose (keys
/// ground to share a prefix) only makes its lookups a bisection of it.
#[derive(Debug, Default)]
struct PrefixIndex {
    /// 0: no index (the array is bisected whole).
    bits: u32,
    /// `starts[b]` is the position of the first key whose prefix is `b` or above; then the
    /// array's length.
    starts: Vec<u32>,
}

impl PrefixIndex {
    fn of(sorted: &[Compact]) -> Self {
        let Ok(len) = u32::try_from(sorted.len()) else {
            return Self::default();
        };
        let bits = Self::bits_for(sorted.len());
        if bits == 0 {
            return Self::default();
        }
        let buckets = 1usize << bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut at = 0usize;
        for bucket in 0..buckets {
            while at < sorted.len() && prefix(&sorted[at].key, bits) < bucket {
                at += 1;
            }
            starts.push(u32::try_from(at).unwrap_or(len));
        }
        starts.push(len);
        Self { bits, starts }
    }

    /// How many leading bits to bucket `len` entries by (0 for none).
    fn bits_for(len: usize) -> u32 {
        if u32::try_from(len).is_err() {
            return 0;
        }
        (len / ENTRIES_PER_BUCKET)
            .checked_ilog2()
            .map_or(0, |log| log + 1)
            .min(MAX_PREFIX_BITS)
    }

    /// This index once the keys `incoming` (sorted, none of them in the array) were merged
    /// into the array it indexes, which is now `sorted`: each start moves up by the incoming
    /// keys below its bucket, without reading the array (made anew when the bucket size
    /// changes).
    fn merged(self, incoming: &[(NotificationKey, Seen)], sorted: &[Compact]) -> Self {
        if self.bits == 0 || Self::bits_for(sorted.len()) != self.bits {
            return Self::of(sorted);
        }
        let mut starts = self.starts;
        let mut below = 0usize;
        for (bucket, start) in starts.iter_mut().enumerate() {
            while incoming
                .get(below)
                .is_some_and(|(key, _)| prefix(&key.0, self.bits) < bucket)
            {
                below += 1;
            }
            // At most the array's length, which fits (`bits_for`).
            *start += below as u32;
        }
        Self {
            bits: self.bits,
            starts,
        }
    }

    /// The part of the sorted array (of `len` entries) where `key` is, if it is there.
    fn range(&self, key: &[u8; 16], len: usize) -> std::ops::Range<usize> {
        if self.bits == 0 {
            return 0..len;
        }
        let bucket = prefix(key, self.bits);
        let start = |b: usize| self.starts.get(b).map_or(len, |&at| at as usize);
        start(bucket)..start(bucket + 1)
    }
}

/// The order of keys, as one number: the same as their bytes' (big-endian), compared in an
/// instruction or two instead of a `memcmp` call (the sort at open compares ~20 million times).
fn order(key: &[u8; 16]) -> u128 {
    u128::from_be_bytes(*key)
}

/// The leading `bits` bits of `key` (1 to 32).
fn prefix(key: &[u8; 16], bits: u32) -> usize {
    let leading = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    leading.checked_shr(32 - bits).unwrap_or(0) as usize
}

/// The notifications of the store by key (see the module note for its layout).
///
/// Invariants: `sorted` is sorted by key with no key twice, and `index` is its index; no key
/// of `recent` is in `sorted`; `wide` holds exactly the keys of the entries of `sorted` marked
/// [`WIDE`].
#[derive(Debug, Default)]
pub(crate) struct Redeliveries {
    sorted: Vec<Compact>,
    index: PrefixIndex,
    recent: HashMap<NotificationKey, Seen>,
    wide: HashMap<NotificationKey, Seen>,
    /// Notifications whose first capture id is below this are past the redelivery window and
    /// are let go at the next merge ([`Self::pass_window`]).
    horizon: i64,
    /// The horizon the entries were last filtered by.
    applied_horizon: i64,
}

impl Redeliveries {
    pub(crate) fn get(&self, key: &NotificationKey) -> Option<Seen> {
        if let Some(seen) = self.recent.get(key) {
            return Some(*seen);
        }
        let at = self.position(key)?;
        self.sorted[at].resolve(&self.wide)
    }

    /// Records `seen` for `key` (a first attempt, or one more attempt of a known notification).
    pub(crate) fn set(&mut self, key: NotificationKey, seen: Seen) {
        if let Some(recent) = self.recent.get_mut(&key) {
            *recent = seen;
            return;
        }
        if let Some(at) = self.position(&key) {
            if !self.wide.is_empty() {
                self.wide.remove(&key);
            }
            self.sorted[at] = Compact::store(&key, seen, &mut self.wide);
            return;
        }
        self.recent.insert(key, seen);
        if self.recent.len() >= MIN_MERGE.max(self.sorted.len() / MERGE_FRACTION) {
            self.merge();
        }
    }

    /// Lets the notifications first captured below id `first_kept` go at the next merge: they
    /// are past the redelivery window ([`RedeliveryWindow`]). Lookups may still find them until
    /// then; the window is a floor, not an exact age.
    pub(crate) fn pass_window(&mut self, first_kept: i64) {
        self.horizon = self.horizon.max(first_kept);
    }

    /// Forgets notifications whose first capture id is below `oldest_kept`.
    pub(crate) fn forget_before(&mut self, oldest_kept: i64) {
        self.retain(|seen| seen.first_id >= oldest_kept);
    }

    /// Forgets the notifications whose first capture id is in `first_ids`.
    pub(crate) fn forget(&mut self, first_ids: &HashSet<i64>) {
        self.retain(|seen| !first_ids.contains(&seen.first_id));
    }

    /// Forgets every notification, and gives their memory back.
    pub(crate) fn clear(&mut self) {
        let horizon = self.horizon;
        *self = Self::default();
        self.horizon = horizon;
        self.applied_horizon = horizon;
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sorted.len() + self.recent.len()
    }

    /// Where `key` is in the sorted array.
    fn position(&self, key: &NotificationKey) -> Option<usize> {
        let range = self.index.range(&key.0, self.sorted.len());
        let start = range.start;
        let bucket = self.sorted.get(range)?;
        let wanted = order(&key.0);
        let at = bucket
            .binary_search_by(|entry| order(&entry.key).cmp(&wanted))
            .ok()?;
        Some(start + at)
    }

    /// Keeps the notifications whose facts `keep` accepts, in both parts.
    fn retain(&mut self, keep: impl Fn(&Seen) -> bool) {
        let Self {
            sorted,
            index,
            recent,
            wide,
            ..
        } = self;
        recent.retain(|_, seen| keep(seen));
        sorted.retain(|entry| entry.resolve(wide).is_some_and(|seen| keep(&seen)));
        if !wide.is_empty() {
            wide.retain(|_, seen| keep(seen));
        }
        // Most of it forgotten (a prune after the retention was lowered, a large clear): give
        // the room back, as the next captures would take long to fill it.
        if sorted.capacity() / 2 > sorted.len() {
            sorted.shrink_to_fit();
        }
        *index = PrefixIndex::of(sorted);
    }

    /// Moves the recent part into the sorted array: the recent entries in key order, then one
    /// pass from the back that moves each run of older entries once, to its final place.
    fn merge(&mut self) {
        if self.horizon > self.applied_horizon {
            let horizon = self.horizon;
            self.applied_horizon = horizon;
            self.retain(|seen| seen.first_id >= horizon);
            // What is left of the recent part may be below the threshold now: merged anyway,
            // as the caller asked for it.
        }
        let mut incoming: Vec<(NotificationKey, Seen)> = self.recent.drain().collect();
        incoming.sort_unstable_by_key(|(key, _)| order(&key.0));
        let old_len = self.sorted.len();
        let new_len = old_len + incoming.len();
        if self.sorted.capacity() < new_len {
            self.sorted
                .reserve_exact(incoming.len().max(old_len / GROWTH_FRACTION));
        }
        self.sorted.resize(
            new_len,
            Compact {
                key: [0; 16],
                first_id: [0; 4],
                attempts: 0,
            },
        );
        // Entries below `unmoved` are the older ones not moved yet; from `filled` on, the
        // array is final.
        let mut unmoved = old_len;
        let mut filled = new_len;
        for &(key, seen) in incoming.iter().rev() {
            // The index still describes the entries not moved yet.
            let bucket = self.index.range(&key.0, old_len);
            let (start, end) = (bucket.start.min(unmoved), bucket.end.min(unmoved));
            let wanted = order(&key.0);
            let above =
                start + self.sorted[start..end].partition_point(|entry| order(&entry.key) < wanted);
            let run = unmoved - above;
            self.sorted.copy_within(above..unmoved, filled - run);
            filled -= run + 1;
            unmoved = above;
            self.sorted[filled] = Compact::store(&key, seen, &mut self.wide);
        }
        self.index = std::mem::take(&mut self.index).merged(&incoming, &self.sorted);
    }
}

/// Builds [`Redeliveries`] from the rows of `notifications`, in any order: appended, then
/// sorted once.
#[derive(Debug)]
pub(crate) struct RedeliveriesLoader {
    sorted: Vec<Compact>,
    wide: HashMap<NotificationKey, Seen>,
    /// The rows read start at this id (the redelivery window's horizon at open).
    horizon: i64,
}

impl RedeliveriesLoader {
    /// For `rows` notifications (then the array is allocated once, at its size).
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Self {
            sorted: Vec::with_capacity(rows),
            wide: HashMap::new(),
            horizon: 0,
        }
    }

    /// For the `rows` notifications first captured at or above id `horizon` (those below it
    /// are past the redelivery window, and not read).
    pub(crate) fn from_horizon(horizon: i64, rows: usize) -> Self {
        Self {
            horizon,
            ..Self::with_capacity(rows)
        }
    }

    pub(crate) fn push(&mut self, key: NotificationKey, seen: Seen) {
        let entry = match Compact::narrow(&key, seen) {
            Some(narrow) => narrow,
            None => {
                // Two wide rows of one key: the later notification wins, as below.
                let later = self
                    .wide
                    .get(&key)
                    .is_some_and(|known| known.first_id > seen.first_id);
                if !later {
                    self.wide.insert(key, seen);
                }
                Compact::wide(&key)
            }
        };
        self.sorted.push(entry);
    }

    /// Sorts by key; where a key has more than one row (a store migrated from version 1 may
    /// have them), the notification with the highest id wins, as when the rows were read in
    /// id order into a map.
    pub(crate) fn finish(self) -> Redeliveries {
        let Self {
            mut sorted,
            mut wide,
            horizon,
        } = self;
        let first_id = |entry: &Compact| entry.resolve(&wide).map(|seen| seen.first_id);
        sort_by_key(&mut sorted, |a, b| first_id(b).cmp(&first_id(a)));
        sorted.dedup_by(|later, kept| later.key == kept.key);
        if !wide.is_empty() {
            // A key whose winner is narrow has no wide facts.
            wide.retain(|key, _| {
                sorted
                    .binary_search_by(|entry| order(&entry.key).cmp(&order(&key.0)))
                    .is_ok_and(|at| sorted[at].attempts == WIDE)
            });
        }
        Redeliveries {
            index: PrefixIndex::of(&sorted),
            sorted,
            recent: HashMap::new(),
            wide,
            horizon,
            applied_horizon: horizon,
        }
    }
}

/// Sorts `entries` by key, and entries of one key by `tie`: into 256 buckets by their leading
/// byte, in place (an American flag sort: each entry is moved once, next to one of 256 write
/// positions that stay in the cache; the keys are digests, so the buckets are even), each
/// bucket likewise by the second byte, then each of those (~12 entries at 800,000) by a
/// comparison sort. Measured at open with 793,029 notifications: 68-74 ms for
/// `sort_unstable_by` on the whole array (its 21-byte entries are slow to move around in it),
/// 25-34 ms for this (2 shared cores, busy).
fn sort_by_key(entries: &mut [Compact], tie: impl Fn(&Compact, &Compact) -> std::cmp::Ordering) {
    /// Below this many entries a bucket is sorted by comparison, not split further.
    const SPLIT_FROM: usize = 256;
    let by_key =
        |a: &Compact, b: &Compact| order(&a.key).cmp(&order(&b.key)).then_with(|| tie(a, b));
    if entries.len() < SPLIT_FROM {
        entries.sort_unstable_by(by_key);
        return;
    }
    let outer = split_by_byte(entries, 0);
    for bucket in outer.windows(2) {
        let bucket = &mut entries[bucket[0]..bucket[1]];
        if bucket.len() < SPLIT_FROM {
            bucket.sort_unstable_by(by_key);
            continue;
        }
        let inner = split_by_byte(bucket, 1);
        for part in inner.windows(2) {
            bucket[part[0]..part[1]].sort_unstable_by(by_key);
        }
    }
}

/// Puts `entries` in order of their key's byte `byte`, in place; returns where each of the 256
/// values' run starts, then the length.
fn split_by_byte(entries: &mut [Compact], byte: usize) -> [usize; 257] {
    let mut starts = [0usize; 257];
    for entry in entries.iter() {
        starts[usize::from(entry.key[byte]) + 1] += 1;
    }
    for value in 0..256 {
        starts[value + 1] += starts[value];
    }
    // The first place of each run not holding an entry of it yet.
    let mut next = starts;
    for value in 0..256 {
        while next[value] < starts[value + 1] {
            let belongs = usize::from(entries[next[value]].key[byte]);
            if belongs == value {
                next[value] += 1;
            } else {
                entries.swap(next[value], next[belongs]);
                next[belongs] += 1;
            }
        }
    }
    starts
}

/// The map changes of one write transaction, applied to [`Redeliveries`] only once it commits,
/// so a failed commit leaves no notification behind that the store does not hold.
#[derive(Debug, Default)]
pub(crate) struct PendingChanges {
    changes: HashMap<NotificationKey, Seen>,
}

impl PendingChanges {
    /// The notification `key` names as of this transaction.
    pub(crate) fn get(&self, committed: &Redeliveries, key: &NotificationKey) -> Option<Seen> {
        self.changes
            .get(key)
            .copied()
            .or_else(|| committed.get(key))
    }

    pub(crate) fn set(&mut self, key: NotificationKey, seen: Seen) {
        self.changes.insert(key, seen);
    }

    pub(crate) fn apply(self, committed: &mut Redeliveries) {
        for (key, seen) in self.changes {
            committed.set(key, seen);
        }
    }
}

/// How long after a notification's first capture the store still links a capture of the same
/// (subscription, resource type, eventId) to it as a redelivery. The spec makes every attempt of a
/// notification start within 100 seconds of the first (three attempts, 20 seconds apart, each
/// waiting 30 seconds at most for an answer; the sandbox sends so too); six hours is over two
/// hundred times that, for a service whose retries fall behind, so a faithful service's
/// redelivery is always linked.
pub const REDELIVERY_WINDOW: Duration = Duration::from_secs(6 * 60 * 60);

/// Tells the writer which notifications have passed the redelivery window: it notes, as it
/// commits, the next capture id at most every 1/64 of the window, and a note older than the
/// window says every capture below its id was stored before the window began. Monotonic time,
/// so a change of the wall clock moves nothing. Captures imported with their own ids (lower
/// than the live ones) count as stored when the ids around them were: an old import's
/// notifications are let go early, which only matters if the service redelivered them now.
#[derive(Debug)]
pub(crate) struct RedeliveryWindow {
    window: Duration,
    notes: VecDeque<(Instant, i64)>,
}

impl RedeliveryWindow {
    /// A window of `window`, begun at `opened` with `next_id` the next capture id then: the
    /// captures stored before (already cut by their receipt time at open) count as stored then.
    pub(crate) fn new(window: Duration, opened: Instant, next_id: i64) -> Self {
        Self {
            window,
            notes: VecDeque::from([(opened, next_id)]),
        }
    }

    /// Notes that the next capture id is `next_id` at `now`; returns the new horizon (the first
    /// capture id still inside the window) when a note has passed the window.
    pub(crate) fn note(&mut self, now: Instant, next_id: i64) -> Option<i64> {
        let every = self.window / 64;
        let due = self
            .notes
            .back()
            .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= every);
        if due {
            self.notes.push_back((now, next_id));
        }
        let mut horizon = None;
        while let Some(&(at, id)) = self.notes.front() {
            if now.saturating_duration_since(at) < self.window {
                break;
            }
            horizon = Some(id);
            self.notes.pop_front();
        }
        horizon
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn key(n: u64) -> NotificationKey {
        NotificationKey::of("sub", "urn:t", &format!("ev-{n}"))
    }

    fn seen(first_id: i64, attempts: u32) -> Seen {
        Seen { first_id, attempts }
    }

    /// A store opened with notifications 1..=count (first id n, attempts 1), all in the
    /// sorted part.
    fn loaded(count: u64) -> Redeliveries {
        let mut loader = RedeliveriesLoader::with_capacity(count as usize);
        for n in 1..=count {
            loader.push(key(n), seen(n as i64, 1));
        }
        let map = loader.finish();
        assert_eq!((map.sorted.len(), map.recent.len()), (count as usize, 0));
        map
    }

    /// Past the window, the notifications below the horizon go at the next merge (found until
    /// then); the others, loaded or merged, stay; a lower horizon later moves nothing back.
    #[test]
    fn a_passed_window_lets_notifications_go_at_the_next_merge() {
        let mut map = loaded(10_000);
        map.pass_window(5_001);
        map.pass_window(3);
        assert_eq!(map.get(&key(1)), Some(seen(1, 1)), "not merged yet");
        let new = MIN_MERGE as u64;
        for n in 10_001..=10_000 + new {
            map.set(key(n), seen(n as i64, 1));
        }
        assert_eq!(map.recent.len(), 0, "merged");
        assert_eq!(map.get(&key(1)), None);
        assert_eq!(map.get(&key(5_000)), None);
        assert_eq!(map.get(&key(5_001)), Some(seen(5_001, 1)));
        assert_eq!(
            map.get(&key(10_000 + new)),
            Some(seen(10_000 + new as i64, 1))
        );
        assert_eq!(map.len(), 5_000 + new as usize);
        assert_sorted_and_apart(&map);
        // A redelivery of a notification let go is a first attempt again.
        map.set(key(2), seen(20_000, 1));
        assert_eq!(map.get(&key(2)), Some(seen(20_000, 1)));
    }

    /// Read from a horizon at open, the map keeps it: a lower one later lets nothing go, a
    /// higher one lets go what is below it at the next merge.
    #[test]
    fn a_map_loaded_from_a_horizon_keeps_it() {
        let mut loader = RedeliveriesLoader::from_horizon(501, 500);
        for n in 501..=1_000 {
            loader.push(key(n), seen(n as i64, 2));
        }
        let mut map = loader.finish();
        map.pass_window(100);
        for n in 1_001..=1_000 + MIN_MERGE as u64 {
            map.set(key(n), seen(n as i64, 1));
        }
        assert_eq!(map.len(), 500 + MIN_MERGE);
        assert_eq!(map.get(&key(501)), Some(seen(501, 2)));
        map.pass_window(800);
        let next = 1_001 + MIN_MERGE as u64;
        for n in next..next + MIN_MERGE as u64 {
            map.set(key(n), seen(n as i64, 1));
        }
        assert_eq!(map.get(&key(799)), None);
        assert_eq!(map.get(&key(800)), Some(seen(800, 2)));
        assert_eq!(map.len(), 201 + 2 * MIN_MERGE);
        assert_sorted_and_apart(&map);
    }

    /// The window's notes: one at most every 1/64 of it; a note older than the window gives the
    /// horizon, the newest such note when several passed (after a quiet hour).
    #[test]
    fn the_window_says_which_ids_have_passed_it() {
        let start = Instant::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        let mut window = RedeliveryWindow::new(Duration::from_secs(640), start, 1);
        assert_eq!(window.note(at(5), 50), None, "not due: 10 s between notes");
        assert_eq!(window.note(at(10), 100), None);
        assert_eq!(window.note(at(20), 200), None);
        assert_eq!(window.note(at(639), 900), None);
        assert_eq!(window.note(at(640), 950), Some(1), "the open's note passed");
        assert_eq!(window.note(at(645), 960), None);
        assert_eq!(window.note(at(650), 970), Some(100));
        assert_eq!(
            window.note(at(5_000), 1_000),
            Some(970),
            "all passed but the newest"
        );
        assert_eq!(window.note(at(5_001), 1_001), None);
    }

    fn assert_sorted_and_apart(map: &Redeliveries) {
        assert!(
            map.sorted.windows(2).all(|pair| pair[0].key < pair[1].key),
            "the array is sorted, no key twice"
        );
        for (at, entry) in map.sorted.iter().enumerate() {
            let key = NotificationKey(entry.key);
            assert_eq!(map.position(&key), Some(at), "the index finds every entry");
        }
        for key in map.recent.keys() {
            assert_eq!(map.position(key), None, "a recent key is not in the array");
        }
        let marked = map.sorted.iter().filter(|e| e.attempts == WIDE).count();
        assert_eq!(
            marked,
            map.wide.len(),
            "the wide map holds the marked entries"
        );
    }

    #[test]
    fn keys_differ_when_any_field_differs_or_the_fields_split_differently() {
        let base = NotificationKey::of("sub", "urn:t", "ev-1");
        assert_eq!(base, NotificationKey::of("sub", "urn:t", "ev-1"));
        assert_ne!(base, NotificationKey::of("sub2", "urn:t", "ev-1"));
        assert_ne!(base, NotificationKey::of("sub", "urn:t:event", "ev-1"));
        assert_ne!(base, NotificationKey::of("sub", "urn:t", "ev-2"));
        // The same bytes split into fields differently.
        assert_ne!(
            NotificationKey::of("ab", "c", "d"),
            NotificationKey::of("a", "bc", "d")
        );
        assert_eq!(
            NotificationKey::from_bytes(base.as_bytes()),
            Some(base),
            "round trip through the table"
        );
        assert_eq!(NotificationKey::from_bytes(&[1, 2, 3]), None);
    }

    #[test]
    fn an_entry_of_the_sorted_array_takes_21_bytes() {
        assert_eq!(std::mem::size_of::<Compact>(), 21);
    }

    #[test]
    fn pending_changes_are_seen_inside_the_transaction_and_kept_only_when_applied() {
        let mut committed = Redeliveries::default();
        let key = NotificationKey::of("s", "r", "e");
        let mut pending = PendingChanges::default();
        assert_eq!(pending.get(&committed, &key), None);
        pending.set(key, seen(7, 1));
        assert_eq!(pending.get(&committed, &key).map(|s| s.first_id), Some(7));
        drop(pending);
        assert_eq!(
            committed.get(&key),
            None,
            "a rolled-back batch leaves nothing"
        );

        let mut pending = PendingChanges::default();
        pending.set(key, seen(7, 2));
        pending.apply(&mut committed);
        assert_eq!(committed.get(&key).map(|s| s.attempts), Some(2));
        committed.forget_before(8);
        assert_eq!(committed.len(), 0);
    }

    #[test]
    fn a_rolled_back_batch_leaves_both_parts_as_they_were() {
        let mut committed = loaded(5_000);
        committed.set(key(5_001), seen(5_001, 1));
        assert_eq!(committed.recent.len(), 1);
        let mut pending = PendingChanges::default();
        // One more attempt of a notification in the array, one of a recent one, and enough
        // new ones to merge if they were kept.
        pending.set(key(3), seen(3, 2));
        pending.set(key(5_001), seen(5_001, 2));
        for n in 10_001..10_001 + MIN_MERGE as u64 {
            pending.set(key(n), seen(n as i64, 1));
        }
        assert_eq!(pending.get(&committed, &key(3)), Some(seen(3, 2)));
        assert_eq!(pending.get(&committed, &key(10_001)), Some(seen(10_001, 1)));
        drop(pending);
        assert_eq!(committed.get(&key(3)), Some(seen(3, 1)));
        assert_eq!(committed.get(&key(5_001)), Some(seen(5_001, 1)));
        assert_eq!(committed.get(&key(10_001)), None);
        assert_eq!((committed.sorted.len(), committed.recent.len()), (5_000, 1));

        let mut pending = PendingChanges::default();
        pending.set(key(3), seen(3, 2));
        pending.set(key(5_001), seen(5_001, 2));
        for n in 10_001..10_001 + MIN_MERGE as u64 {
            pending.set(key(n), seen(n as i64, 1));
        }
        pending.apply(&mut committed);
        assert_eq!(committed.get(&key(3)), Some(seen(3, 2)));
        assert_eq!(committed.get(&key(5_001)), Some(seen(5_001, 2)));
        assert_eq!(committed.get(&key(10_001)), Some(seen(10_001, 1)));
        assert_eq!(committed.len(), 5_001 + MIN_MERGE);
        assert!(committed.recent.len() < MIN_MERGE, "applying it merged");
        assert_sorted_and_apart(&committed);
    }

    #[test]
    fn lookups_and_updates_agree_across_the_merge_boundary() {
        let mut map = loaded(10_000);
        // New notifications go to the recent part until it is due for a merge.
        let first_new = 20_001u64;
        let last_before_merge = first_new + MIN_MERGE as u64 - 2;
        for n in first_new..=last_before_merge {
            map.set(key(n), seen(n as i64, 1));
        }
        assert_eq!(map.recent.len(), MIN_MERGE - 1);
        assert_eq!(map.sorted.len(), 10_000);
        // More attempts of one in each part.
        map.set(key(17), seen(17, 2));
        map.set(key(first_new), seen(first_new as i64, 2));
        assert_eq!(map.recent.len(), MIN_MERGE - 1, "an update adds nothing");
        for (n, attempts) in [(17, 2), (18, 1), (first_new, 2), (first_new + 1, 1)] {
            assert_eq!(map.get(&key(n)), Some(seen(n as i64, attempts)));
        }
        assert_eq!(map.get(&key(15_000)), None);
        assert_eq!(map.get(&key(last_before_merge + 1)), None);

        // One more: merged.
        map.set(
            key(last_before_merge + 1),
            seen(last_before_merge as i64 + 1, 1),
        );
        assert_eq!(map.recent.len(), 0);
        assert_eq!(map.sorted.len(), 10_000 + MIN_MERGE);
        assert_sorted_and_apart(&map);
        for n in (1..=10_000).chain(first_new..=last_before_merge + 1) {
            let attempts = if n == 17 || n == first_new { 2 } else { 1 };
            assert_eq!(map.get(&key(n)), Some(seen(n as i64, attempts)), "{n}");
        }
        assert_eq!(map.get(&key(15_000)), None);
        // Updated in place after the merge.
        map.set(key(first_new), seen(first_new as i64, 3));
        assert_eq!(map.get(&key(first_new)), Some(seen(first_new as i64, 3)));
        assert_eq!(map.recent.len(), 0);
    }

    #[test]
    fn a_forgotten_notification_added_again_starts_afresh_in_either_part() {
        let mut map = loaded(100);
        map.set(key(101), seen(101, 1));
        map.set(key(102), seen(102, 3));
        // Prune: 1..=49 go, from the array; then clear 60, 101 (one in each part).
        map.forget_before(50);
        assert_eq!(map.len(), 53);
        assert_eq!(map.get(&key(49)), None);
        assert_eq!(map.get(&key(50)), Some(seen(50, 1)));
        map.forget(&HashSet::from([60, 101]));
        assert_eq!(map.len(), 51);
        for n in [60, 101] {
            assert_eq!(map.get(&key(n)), None);
        }
        assert_eq!(map.get(&key(102)), Some(seen(102, 3)));
        // They come again: new notifications with new ids.
        for (n, id) in [(10, 200), (60, 201), (101, 202)] {
            map.set(key(n), seen(id, 1));
            assert_eq!(map.get(&key(n)), Some(seen(id, 1)));
        }
        assert_sorted_and_apart(&map);
        map.clear();
        assert_eq!(map.len(), 0);
        assert_eq!(map.sorted.capacity(), 0, "a clear gives the memory back");
        assert_eq!(map.get(&key(50)), None);
        map.set(key(50), seen(300, 1));
        assert_eq!(map.get(&key(50)), Some(seen(300, 1)));
    }

    #[test]
    fn facts_too_wide_for_the_array_are_kept_exactly() {
        let mut map = loaded(10);
        let wide_id = i64::from(u32::MAX) + 5;
        let cases = [
            (1_000, seen(wide_id, 1)),
            (1_001, seen(-3, 1)),
            (1_002, seen(40, 255)),
            (1_003, seen(41, u32::MAX)),
            (1_004, seen(i64::from(u32::MAX), 254)),
        ];
        for (n, facts) in cases {
            map.set(key(n), facts);
        }
        map.merge();
        assert_eq!(map.recent.len(), 0);
        assert_eq!(map.wide.len(), 4, "all but the last fit nowhere narrow");
        for (n, facts) in cases {
            assert_eq!(map.get(&key(n)), Some(facts));
        }
        // A narrow entry of the array outgrows it, and back.
        map.set(key(3), seen(3, 300));
        assert_eq!(map.get(&key(3)), Some(seen(3, 300)));
        assert_eq!(map.wide.len(), 5);
        map.set(key(3), seen(3, 7));
        assert_eq!(map.get(&key(3)), Some(seen(3, 7)));
        assert_eq!(map.wide.len(), 4);
        assert_sorted_and_apart(&map);
        // Forgetting goes by the full id.
        map.forget_before(0);
        assert_eq!(map.get(&key(1_001)), None);
        map.forget(&HashSet::from([wide_id, 40]));
        assert_eq!(map.get(&key(1_000)), None);
        assert_eq!(map.get(&key(1_002)), None);
        assert_eq!(map.get(&key(1_003)), Some(seen(41, u32::MAX)));
        assert_eq!(map.wide.len(), 1);
        assert_sorted_and_apart(&map);
    }

    #[test]
    fn the_loader_keeps_the_latest_notification_of_a_key_as_reading_rows_in_id_order_did() {
        let wide_id = i64::from(u32::MAX) + 1;
        let mut loader = RedeliveriesLoader::with_capacity(8);
        loader.push(key(1), seen(5, 1));
        loader.push(key(1), seen(9, 2));
        loader.push(key(2), seen(wide_id, 1));
        loader.push(key(2), seen(12, 1));
        loader.push(key(3), seen(13, 1));
        loader.push(key(3), seen(wide_id + 1, 300));
        loader.push(key(4), seen(14, 300));
        loader.push(key(4), seen(15, 1));
        let map = loader.finish();
        assert_eq!(map.get(&key(1)), Some(seen(9, 2)));
        assert_eq!(map.get(&key(2)), Some(seen(wide_id, 1)));
        assert_eq!(map.get(&key(3)), Some(seen(wide_id + 1, 300)));
        assert_eq!(map.get(&key(4)), Some(seen(15, 1)));
        assert_eq!(map.len(), 4);
        assert_eq!(
            map.wide.len(),
            2,
            "the wide facts of key 4 lost to a later row"
        );
        assert_sorted_and_apart(&map);
    }

    #[test]
    fn the_sort_at_open_orders_as_a_comparison_sort_does() {
        let mut rng = StdRng::seed_from_u64(11);
        // Enough for buckets split by the second byte too; some keys twice, some bytes alike.
        let mut entries: Vec<Compact> = (0..100_000u32)
            .map(|id| {
                let mut key = [0u8; 16];
                rng.fill(&mut key[..]);
                if id % 7 == 0 {
                    key[1..].fill(0);
                }
                Compact {
                    key,
                    first_id: id.to_le_bytes(),
                    attempts: 1,
                }
            })
            .collect();
        for id in 0..1_000usize {
            let mut twin = entries[id * 50];
            twin.first_id = (200_000 + id as u32).to_le_bytes();
            entries.push(twin);
        }
        let first_id = |entry: &Compact| u32::from_le_bytes(entry.first_id);
        let mut expected = entries.clone();
        expected.sort_unstable_by(|a, b| {
            a.key
                .cmp(&b.key)
                .then_with(|| first_id(b).cmp(&first_id(a)))
        });
        sort_by_key(&mut entries, |a, b| first_id(b).cmp(&first_id(a)));
        let identity = |entries: &[Compact]| -> Vec<([u8; 16], u32)> {
            entries.iter().map(|e| (e.key, first_id(e))).collect()
        };
        assert_eq!(identity(&entries), identity(&expected));
    }

    /// The map answers as a `HashMap` does through any sequence of the store's operations,
    /// merges included.
    #[test]
    fn answers_as_a_hash_map_does_under_random_operations() {
        const KEYS: usize = 30_000;
        let keys: Vec<NotificationKey> = (0..KEYS as u64).map(key).collect();
        let mut rng = StdRng::seed_from_u64(0x5eed);
        let mut model: HashMap<NotificationKey, Seen> = HashMap::new();
        let mut loader = RedeliveriesLoader::with_capacity(3_000);
        for (id, key) in (1..).zip(&keys[..3_000]) {
            loader.push(*key, seen(id, 1));
            model.insert(*key, seen(id, 1));
        }
        let mut map = loader.finish();
        let mut next_id = 3_001i64;
        let mut merges = 0;
        for step in 0..60_000u32 {
            let key = keys[rng.random_range(0..KEYS)];
            match rng.random_range(0..10_000u32) {
                // A capture: a new notification or one more attempt.
                0..=9_879 => {
                    let facts = match model.get(&key) {
                        Some(known) => seen(known.first_id, known.attempts + 1),
                        None => {
                            next_id += 1;
                            seen(next_id, 1)
                        }
                    };
                    assert_eq!(map.get(&key), model.get(&key).copied());
                    let recent_before = map.recent.len();
                    map.set(key, facts);
                    model.insert(key, facts);
                    if map.recent.len() < recent_before {
                        merges += 1;
                    }
                }
                // An import, with facts of any width.
                9_880..=9_979 => {
                    let facts = seen(
                        rng.random_range(-10..i64::from(u32::MAX) * 2),
                        rng.random_range(0..600),
                    );
                    map.set(key, facts);
                    model.insert(key, facts);
                }
                9_980..=9_989 => {
                    let oldest_kept = next_id - rng.random_range(5_000..40_000);
                    map.forget_before(oldest_kept);
                    model.retain(|_, seen| seen.first_id >= oldest_kept);
                }
                9_990..=9_998 => {
                    let ids: HashSet<i64> = model
                        .values()
                        .map(|seen| seen.first_id)
                        .filter(|_| rng.random_range(0..50) == 0)
                        .collect();
                    map.forget(&ids);
                    model.retain(|_, seen| !ids.contains(&seen.first_id));
                }
                _ => {
                    map.clear();
                    model.clear();
                }
            }
            if step % 3_000 == 0 {
                assert_sorted_and_apart(&map);
                assert_eq!(map.len(), model.len());
                for key in &keys {
                    assert_eq!(map.get(key), model.get(key).copied());
                }
            }
        }
        assert!(merges >= 5, "{merges} merges");
    }

    /// What each operation costs at a million notifications, next to the `HashMap` the
    /// store kept before, and what each holds. Run:
    /// `cargo test --release -p partner-listener --lib map_costs_at_a_million -- --ignored
    /// --nocapture`.
    #[test]
    #[ignore = "a measurement: run it in release, alone"]
    fn map_costs_at_a_million() {
        use std::time::Instant;
        let count: u64 = std::env::var("MAP_ENTRIES")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(1_000_000);
        let new_count = 200_000u64;
        let keys: Vec<NotificationKey> = (1..=count + new_count).map(key).collect();
        let (known, new) = keys.split_at(count as usize);
        let per_op = |started: Instant, ops: u64| started.elapsed().as_nanos() as f64 / ops as f64;

        // Built as the store opens: from the rows, in id order.
        let started = Instant::now();
        let mut hash_map = HashMap::new();
        for (id, key) in (1..).zip(known) {
            hash_map.insert(*key, seen(id, 1));
        }
        let hash_build = started.elapsed();
        let started = Instant::now();
        let mut loader = RedeliveriesLoader::with_capacity(known.len());
        for (id, key) in (1..).zip(known) {
            loader.push(*key, seen(id, 1));
        }
        let mut map = loader.finish();
        let map_build = started.elapsed();

        // Lookups of known notifications, in a random order.
        let mut rng = StdRng::seed_from_u64(7);
        let probes: Vec<&NotificationKey> = (0..1_000_000)
            .map(|_| &known[rng.random_range(0..known.len())])
            .collect();
        let started = Instant::now();
        let hash_hits: u64 = probes
            .iter()
            .map(|key| u64::from(hash_map.get(*key).map_or(0, |s| s.attempts)))
            .sum();
        let hash_hit = per_op(started, probes.len() as u64);
        let started = Instant::now();
        let map_hits: u64 = probes
            .iter()
            .map(|key| u64::from(map.get(key).map_or(0, |s| s.attempts)))
            .sum();
        let map_hit = per_op(started, probes.len() as u64);
        assert_eq!(
            (hash_hits, map_hits),
            (probes.len() as u64, probes.len() as u64)
        );

        // A new notification: a lookup that misses, then an insert (merges included).
        let started = Instant::now();
        for (id, key) in (count as i64 + 1..).zip(new) {
            assert!(!hash_map.contains_key(key));
            hash_map.insert(*key, seen(id, 1));
        }
        let hash_new = per_op(started, new_count);
        let started = Instant::now();
        for (id, key) in (count as i64 + 1..).zip(new) {
            assert!(map.get(key).is_none());
            map.set(*key, seen(id, 1));
        }
        let map_new = per_op(started, new_count);
        // A redelivery: a lookup that hits, then an update.
        let started = Instant::now();
        for key in &probes[..200_000] {
            let known = hash_map.get(*key).copied().unwrap_or(seen(0, 0));
            hash_map.insert(**key, seen(known.first_id, known.attempts + 1));
        }
        let hash_again = per_op(started, 200_000);
        let started = Instant::now();
        for key in &probes[..200_000] {
            let known = map.get(key).unwrap_or(seen(0, 0));
            map.set(**key, seen(known.first_id, known.attempts + 1));
        }
        let map_again = per_op(started, 200_000);
        for key in &keys {
            assert_eq!(map.get(key), hash_map.get(key).copied());
        }
        // One merge at its largest, as the writer makes it (holding the map's lock).
        let extra: Vec<NotificationKey> = (0..map.sorted.len() as u64 / MERGE_FRACTION as u64)
            .map(|n| key(u64::MAX - n))
            .collect();
        for (id, key) in (1..).zip(&extra[..extra.len() - 1]) {
            map.set(*key, seen(2_000_000 + id, 1));
        }
        let started = Instant::now();
        map.merge();
        let merge_ms = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(map.get(&extra[0]), Some(seen(2_000_001, 1)));
        assert!(map.wide.is_empty());

        let hash_bytes = hash_map.capacity().next_power_of_two() * (8 * 4 + 1);
        let map_bytes = map.sorted.capacity() * std::mem::size_of::<Compact>()
            + (map.recent.capacity() + 1).next_power_of_two() * (8 * 4 + 1);
        println!(
            "{count} notifications (+{new_count} new):\n\
             HashMap:      build {:.1} ms, hit {hash_hit:.0} ns, miss+insert {hash_new:.0} ns, \
             hit+update {hash_again:.0} ns, ~{:.1} MB (at {} entries)\n\
             Redeliveries: build {:.1} ms, hit {map_hit:.0} ns, miss+insert {map_new:.0} ns, \
             hit+update {map_again:.0} ns, ~{:.1} MB (at {} entries), \
             one merge {merge_ms:.1} ms",
            hash_build.as_secs_f64() * 1e3,
            hash_bytes as f64 / 1e6,
            hash_map.len(),
            map_build.as_secs_f64() * 1e3,
            map_bytes as f64 / 1e6,
            map.len(),
        );
    }
}

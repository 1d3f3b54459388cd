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
//! A replay (`Svc-Replay: 1`, sent by the console, [`crate::Listener::replay`]) is not an
//! attempt of the service ([`counts_as_attempt`]): it is stored as a capture of its own (attempt
//! 1, no notification id) and neither takes an attempt number of its notification nor adds to
//! the attempts the next real redelivery is numbered after. Otherwise replaying a notification
//! twice would make the service's next retry look like its attempt 4, and the test mode's
//! "fail the first N attempts" would count the user's replays.

use crate::capture::Capture;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The digest of (subscription, resource type, eventId) that names a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// Whether `capture` is an attempt of the service's notification it names (a replay is not).
pub(crate) fn counts_as_attempt(capture: &Capture) -> bool {
    !capture.replay
}

/// What the store knows of one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The id of its first capture (the notification's id).
    pub first_id: i64,
    /// How many of its captures were stored.
    pub attempts: u32,
}

/// The notifications of the store by key.
#[derive(Debug, Default)]
pub(crate) struct Redeliveries {
    by_key: HashMap<NotificationKey, Seen>,
}

impl Redeliveries {
    pub(crate) fn get(&self, key: &NotificationKey) -> Option<Seen> {
        self.by_key.get(key).copied()
    }

    /// Records `seen` for `key` (a first attempt, or one more attempt of a known notification).
    pub(crate) fn set(&mut self, key: NotificationKey, seen: Seen) {
        self.by_key.insert(key, seen);
    }

    /// Forgets notifications whose first capture id is below `oldest_kept`.
    pub(crate) fn forget_before(&mut self, oldest_kept: i64) {
        self.by_key.retain(|_, seen| seen.first_id >= oldest_kept);
    }

    /// Forgets the notifications whose first capture id is in `first_ids`.
    pub(crate) fn forget(&mut self, first_ids: &std::collections::HashSet<i64>) {
        self.by_key
            .retain(|_, seen| !first_ids.contains(&seen.first_id));
    }

    pub(crate) fn clear(&mut self) {
        self.by_key.clear();
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn pending_changes_are_seen_inside_the_transaction_and_kept_only_when_applied() {
        let mut committed = Redeliveries::default();
        let key = NotificationKey::of("s", "r", "e");
        let mut pending = PendingChanges::default();
        assert_eq!(pending.get(&committed, &key), None);
        pending.set(
            key,
            Seen {
                first_id: 7,
                attempts: 1,
            },
        );
        assert_eq!(pending.get(&committed, &key).map(|s| s.first_id), Some(7));
        drop(pending);
        assert_eq!(
            committed.get(&key),
            None,
            "a rolled-back batch leaves nothing"
        );

        let mut pending = PendingChanges::default();
        pending.set(
            key,
            Seen {
                first_id: 7,
                attempts: 2,
            },
        );
        pending.apply(&mut committed);
        assert_eq!(committed.get(&key).map(|s| s.attempts), Some(2));
        committed.forget_before(8);
        assert_eq!(committed.len(), 0);
    }
}

//! The acknowledgement journal: a capture is acknowledged once it is appended here and synced,
//! and written into the store's tables behind the acknowledgement.
//!
//! Why: a commit of one capture into SQLite writes a WAL frame for every page it changes (the
//! row's, three indexes', the notification's: 5–6 frames of 8 KiB for a 2 KiB notification) and
//! binds 27 columns, in the one thread every acknowledgement waits for. Appending the capture's
//! bytes to a file and syncing it is the least a durable listener can do on this disk
//! (BENCHMARKS.md, listener: the append floor). So the writer appends each group of captures
//! here, syncs once and answers them, and the tables thread writes them into the tables behind,
//! in larger transactions (cheaper per capture), at a quiet moment or sooner when the journal
//! fills, the writer waits or a reader asks ([`AckProgress`], [`super::tables`]). An acknowledged capture is therefore always in the journal or in the tables,
//! and the store's reads in this process wait for the tables to hold every capture acknowledged
//! before they began (read your acknowledgements), so nothing a caller was told is stored is
//! missing from what it reads next.
//!
//! The tables thread takes the records it writes in from memory when it can: the writer hands
//! it each group's plaintext once the group is synced ([`HandOver`], a sixteenth of the
//! journal's size at most), so an encrypted store's records are not read back and opened
//! again; what the hand-over has no room for, and everything after a restart, is read back
//! from the file. The file is written the same either way, so recovery and readers of other
//! processes see no difference.
//!
//! The file is a ring, written from its start again whenever everything in it is in the
//! tables, so it stays as small as the largest backlog it held and a sync overwrites blocks
//! that exist (no new file size to record, as SQLite's restarted WAL). It grows in zero-filled
//! steps of [`GROW`] up to [`CAPACITY`]; a group that would overwrite a capture not yet in the
//! tables waits for them to be written first.
//!
//! Each record: magic, the capture's id, the payload's length, a CRC-32 of the three, then the
//! capture in a fixed binary layout ([`encode`]). In an encrypted store (every store a program
//! opens with its data key, [`super::encryption`]) the payload is that layout sealed with the
//! key ([`partner_seal::seal`], AES-256-GCM-SIV) under a context naming the journal and the
//! record's capture id, so a record moved to another id or into another kind of file does not
//! open; its magic says so ([`MAGIC_SEALED`]), and such a journal takes no plain record. The
//! CRC still tells a torn record (never acknowledged) from a whole one; a whole record that does
//! not open is damaged, as one whose capture cannot be read was. Ids only grow (the store never hands one out
//! twice), so after a crash the records to write are those past the last id the tables hold
//! (kept with the tables, in `acks_applied`, in the same transaction as the rows). The first of
//! them lies where that one ended or at the file's start (the ring starts over there whenever
//! the tables hold everything): of the two, the one with the lower id past the mark, since a
//! later record of a lap that started over can lie exactly where the mark ended (records of one
//! size do; reading from there alone once lost the two captures before it). From there each next
//! record must have a higher id than the one before, else the next one is looked for at the
//! file's start (where the ring came round), else the journal ends there. A record left over from an earlier lap always has a lower id than the one written before
//! it in this lap, so it is never taken for a new one. A group torn by a crash was never
//! acknowledged; whatever of it is whole is kept (its sender will retry: a redelivery).

use super::positioned::{read_exact_at, write_all_at};
use crate::capture::{Capture, Header, ResponseRecord};
use crate::verdict::{MatchedKey, NotificationFields, Verdict};
use crate::{Error, Result};
use partner_seal::DataKey;
use rusqlite::{Connection, OptionalExtension};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The journal's file name is the store's with this appended (beside SQLite's `-wal`).
pub(super) const FILE_SUFFIX: &str = "-acks";
/// Most bytes of captures acknowledged and not yet in the tables (about 25,000 signed 2 KiB
/// notifications). Beyond the hand-over ([`HandOver`], half of it at most) the backlog is
/// read back from the file when the tables take it, so it holds no memory meanwhile (held in
/// memory as fresh allocations, 25,000 captures' worth of new pages cost the acknowledgements
/// more than the whole journal: the kernel zeroing them; the hand-over reuses its buffers).
pub(crate) const CAPACITY: u64 = 64 << 20;
/// The file grows in zero-filled steps of this size, so most syncs overwrite existing blocks.
const GROW: u64 = 1 << 20;
const MAGIC: u32 = 0x5043_4a31;
/// The magic of a sealed record (an encrypted store's journal).
const MAGIC_SEALED: u32 = 0x5043_4a32;
const HEADER: usize = 20;

/// The magic a journal under `key` writes and reads.
fn magic_for(key: Option<&DataKey>) -> u32 {
    if key.is_some() {
        MAGIC_SEALED
    } else {
        MAGIC
    }
}

/// What a record's seal is bound to besides its key: the journal and the record's capture id.
fn seal_context(id: i64) -> [u8; 30] {
    let mut context = [0u8; 30];
    context[..22].copy_from_slice(b"partner-listener acks\0");
    context[22..].copy_from_slice(&id.to_le_bytes());
    context
}

/// The capture in a record's payload: opened with `key` first in a sealed journal.
fn capture_of(key: Option<&DataKey>, id: i64, payload: &[u8]) -> Option<Capture> {
    match key {
        Some(key) => decode(&partner_seal::open(key, &seal_context(id), payload).ok()?),
        None => decode(payload),
    }
}

/// The table that says which journal records are in the tables already.
pub(super) const APPLIED_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS acks_applied (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id INTEGER NOT NULL,
    end_offset INTEGER NOT NULL
);";

/// The last journal record written into the tables: its capture id and where it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct AppliedMark {
    pub(super) id: i64,
    pub(super) end: u64,
}

impl AppliedMark {
    pub(super) fn read(conn: &Connection) -> Result<Self> {
        Ok(conn
            .query_row(
                "SELECT id, end_offset FROM acks_applied WHERE one = 1",
                [],
                |row| {
                    Ok(Self {
                        id: row.get(0)?,
                        end: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    /// Records the mark inside the transaction that wrote its captures.
    pub(super) fn write(self, conn: &Connection) -> Result<()> {
        conn.prepare_cached(
            "INSERT INTO acks_applied (one, id, end_offset) VALUES (1, ?1, ?2) \
             ON CONFLICT (one) DO UPDATE SET id = excluded.id, end_offset = excluded.end_offset",
        )?
        .execute(rusqlite::params![
            self.id,
            i64::try_from(self.end).unwrap_or(i64::MAX)
        ])?;
        Ok(())
    }
}

/// The journal's path for the store at `store`.
pub(super) fn path_of(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_os_string();
    name.push(FILE_SUFFIX);
    PathBuf::from(name)
}

/// One record's place in the ring.
#[derive(Debug, Clone, Copy)]
struct Span {
    id: i64,
    start: u64,
    end: u64,
    /// When its group was appended: the tables take a backlog older than [`MAX_LAG`].
    appended: Instant,
}

/// The open journal, shared by the writer thread (which appends and acknowledges) and the
/// tables thread (which reads the backlog back and lets it go once the tables hold it). The
/// file is read and written with positioned calls, so neither holds the ring's lock while it
/// waits for the disk: the writer syncs a group while the tables thread reads older records.
pub(super) struct Journal {
    path: PathBuf,
    file: File,
    /// Sync each group before it is acknowledged (`Durability::Full`).
    sync: bool,
    capacity: u64,
    /// Seals and opens the records (an encrypted store); `None`: plain records.
    key: Option<DataKey>,
    ring: Mutex<Ring>,
    /// Told whenever records leave the ring or the tables refuse them: the writer waits on it
    /// for room, and for an empty ring before a job.
    room: Condvar,
    /// The plaintext of the groups the writer made durable, waiting for the tables thread,
    /// which takes its records from here instead of the file when they are here.
    hand_over: Mutex<HandOver>,
    /// Most bytes the hand-over holds; a group that does not fit is read back from the file.
    hand_over_capacity: usize,
    /// The group the tables thread is taking records from (only that thread locks it).
    taking: Mutex<Option<PlainGroup>>,
    /// Records the tables took from the hand-over, and from the file (how well it works).
    from_memory: AtomicU64,
    from_file: AtomicU64,
}

/// The records the writer just made durable, in order, as plaintext (their layout before a
/// seal), handed to the tables thread in memory so that it neither reads them back from the
/// file nor opens their seals again.
///
/// Why: in an encrypted store, reading each record back and opening it again cost the tables
/// thread about 20,000 instructions a capture (callgrind, the ack bench: 309,000 of its
/// instructions a capture went to 289,000; BENCHMARKS.md, listener). Bounded
/// (`hand_over_capacity`, a sixteenth of the journal's: 4 MiB), so a flood longer than it
/// holds no more memory than that: a group that does not fit is not handed over, and the
/// tables read it from the file as before. Half the journal's (32 MiB, about as much as the
/// tables fall behind in a burst) was the bound at first; its memory is new to the process in
/// every burst that fills it, and on a machine where new memory is dear (this VM hands its free
/// pages back to its host, and the kernel's zeroing of a page taken again cost 8–18 % of the ack
/// bench's CPU in most of its runs), the writer paid more for it than the tables saved; with 4 MiB
/// the bench no longer has such runs (BENCHMARKS.md, listener, "The hand-over's memory kept").
/// After a restart the
/// hand-over starts empty and the tables read what the file holds. The file stays what every
/// capture's durability, a restart's recovery and a reader of another process
/// ([`super::catch_up`]) rely on; the hand-over only saves reading it back, and the ring's
/// spans alone say which records the tables take, so a record is taken once whichever way it
/// comes.
///
/// Its memory is reused, not asked of the allocator for each group: a group's plaintext is
/// copied (about 0.1 µs a capture) into a buffer the hand-over keeps (`spare`), one with room
/// for it, and the tables give the buffer back once they have taken its records. Every buffer
/// is kept while the spares stay within the hand-over's bound, so no more are made than a full
/// hand-over holds, and a buffer never grows. Why: new pages for every group were what made an
/// earlier in-memory backlog cost more than the file (see [`CAPACITY`]); and when the writer
/// gave its own buffers away (swapping in a spare, nothing copied) and only four spares were
/// kept, the buffers were made again for most groups of a burst (the tables give a backlog
/// back in large steps), grown again as each group was written, and their pages, new to the
/// process each time, zeroed by the kernel: up to 10 % of the ack bench's CPU, 8–15 µs a
/// capture on the writer's thread (BENCHMARKS.md, listener, "The hand-over's memory kept").
/// Once the tables have taken everything, the spares beyond a few are freed, so a listener
/// holds that memory only through a burst.
#[derive(Default)]
struct HandOver {
    groups: VecDeque<PlainGroup>,
    /// The bytes of `groups`.
    bytes: usize,
    /// Emptied groups, for the writer's next ones.
    spare: Vec<PlainGroup>,
    /// The memory `spare`'s buffers hold.
    spare_bytes: usize,
    /// Buffers made so far (how well they are reused).
    made: u64,
}

impl HandOver {
    /// A kept, emptied group with room for `bytes` bytes and `records` records, if there is one
    /// (the smallest such).
    fn take_spare(&mut self, bytes: usize, records: usize) -> Option<PlainGroup> {
        let (at, _) = self
            .spare
            .iter()
            .enumerate()
            .filter(|(_, spare)| {
                spare.bytes.capacity() >= bytes && spare.records.capacity() >= records
            })
            .min_by_key(|(_, spare)| spare.bytes.capacity())?;
        let spare = self.spare.swap_remove(at);
        self.spare_bytes = self.spare_bytes.saturating_sub(spare.held());
        Some(spare)
    }

    /// Keeps `done` for the writer's next groups while the spares stay within `bound`, in place
    /// of a smaller spare when it does not fit beside them; what is not kept is returned, to be
    /// freed outside the lock.
    fn keep_spare(&mut self, mut done: PlainGroup, bound: usize) -> Option<PlainGroup> {
        let held = done.held();
        if done.bytes.capacity() > SPARE_LARGEST || held > bound {
            return Some(done);
        }
        done.clear();
        let mut dropped = None;
        if self.spare_bytes + held > bound {
            let smallest = self
                .spare
                .iter()
                .enumerate()
                .min_by_key(|(_, spare)| spare.held())
                .map(|(at, spare)| (at, spare.held()));
            match smallest {
                Some((at, smaller))
                    if smaller < held && self.spare_bytes - smaller + held <= bound =>
                {
                    let out = self.spare.swap_remove(at);
                    self.spare_bytes -= smaller;
                    dropped = Some(out);
                }
                _ => return Some(done),
            }
        }
        self.spare_bytes += held;
        self.spare.push(done);
        dropped
    }
}

/// The least room a buffer of the hand-over is made with: groups of a few captures share the
/// sizes of their buffers, so one kept fits the next.
const LEAST_ROOM: usize = 64 << 10;
/// The least records a buffer of the hand-over is made for, likewise.
const LEAST_RECORDS: usize = 256;

/// Emptied groups kept for reuse once the tables have taken everything, and the largest group
/// ever kept.
const SPARE_GROUPS: usize = 4;
const SPARE_LARGEST: usize = 4 << 20;

/// One group's records as plaintext layouts ([`encode`]).
#[derive(Default)]
struct PlainGroup {
    bytes: Vec<u8>,
    /// (id, start, end) of each record's layout within `bytes`, in order.
    records: Vec<(i64, usize, usize)>,
    /// The first record not taken yet.
    next: usize,
}

impl PlainGroup {
    /// The memory its buffers hold.
    fn held(&self) -> usize {
        self.bytes.capacity() + self.records.capacity() * std::mem::size_of::<(i64, usize, usize)>()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
        self.next = 0;
    }
}

/// Where the records are; changed under the journal's lock.
#[derive(Debug, Default)]
struct Ring {
    /// Where the next group goes.
    position: u64,
    /// The file's length: written blocks (zeros or records), so writes below it allocate
    /// nothing. Only the writer grows it.
    length: u64,
    /// The records not yet in the tables, oldest first.
    live: VecDeque<Span>,
    /// Their bytes, headers included.
    live_bytes: u64,
    /// The writer waits for the tables (for room, or for all of them before a job): the tables
    /// thread writes without waiting for a quiet moment.
    hurry: bool,
    /// Why the tables refused the backlog (a full disk, say), while they do: the writer stops
    /// waiting for room, and a job on the captures is refused in these words.
    refused: Option<String>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ring = self.lock();
        f.debug_struct("Journal")
            .field("position", &ring.position)
            .field("length", &ring.length)
            .field("live", &ring.live.len())
            .finish()
    }
}

/// The longest a capture waits in the journal before the tables take it, however busy the
/// listener is. Why: a reader in another process (`partner listen export`, `missed`, the app
/// beside `partner listen`) cannot ask this process's tables to hurry; it waits until they hold
/// what the journal held when it opened ([`super::catch_up`]). Without a bound, a flood the ring
/// could hold kept its captures out of the tables (and out of those readers' answers) for as
/// long as it lasted.
pub(super) const MAX_LAG: Duration = Duration::from_secs(1);

/// How long the writer waits for the tables between two looks at whether they refused.
const ROOM_WAIT: Duration = Duration::from_millis(100);

impl Journal {
    /// Opens (creating) the unencrypted journal at `path`.
    #[cfg(test)]
    pub(super) fn open(path: &Path, sync: bool, capacity: u64) -> Result<Self> {
        Self::open_sealed(path, sync, capacity, None)
    }

    /// Opens (creating) the journal at `path`, its records sealed with `key` (plain without);
    /// its records must all be in the tables already ([`recover`] first).
    pub(super) fn open_sealed(
        path: &Path,
        sync: bool,
        capacity: u64,
        key: Option<DataKey>,
    ) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| io_error(path, source))?;
        let length = file
            .metadata()
            .map_err(|source| io_error(path, source))?
            .len();
        let hand_over_capacity = usize::try_from(capacity.max(GROW) / 16).unwrap_or(usize::MAX);
        #[cfg(test)]
        let hand_over_capacity = tests::HAND_OVER
            .with(std::cell::Cell::get)
            .unwrap_or(hand_over_capacity);
        Ok(Self {
            path: path.to_path_buf(),
            file,
            sync,
            capacity: capacity.max(GROW),
            key,
            ring: Mutex::new(Ring {
                length,
                ..Ring::default()
            }),
            room: Condvar::new(),
            hand_over: Mutex::default(),
            hand_over_capacity,
            taking: Mutex::default(),
            from_memory: AtomicU64::new(0),
            from_file: AtomicU64::new(0),
        })
    }

    /// The journal with a hand-over of at most `bytes` (0: none, every record read back).
    #[cfg(test)]
    pub(super) fn with_hand_over(mut self, bytes: usize) -> Self {
        self.hand_over_capacity = bytes;
        self
    }

    /// How many buffers the hand-over has made, and how many it keeps spare.
    #[cfg(test)]
    fn hand_over_buffers(&self) -> (u64, usize) {
        let hand_over = lock_or_recover(&self.hand_over);
        (hand_over.made, hand_over.spare.len())
    }

    /// How many records the tables took from the hand-over, and from the file.
    pub(super) fn taken(&self) -> (u64, u64) {
        (
            self.from_memory.load(Ordering::Relaxed),
            self.from_file.load(Ordering::Relaxed),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.ring
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a group of `len` bytes fits now; when not, the tables must take some first (the
    /// tests ask; the writer waits for room instead).
    #[cfg(test)]
    pub(super) fn has_room(&self, len: usize) -> bool {
        self.lock().place(len as u64, self.capacity).is_some()
    }

    /// Waits until a group of `len` bytes fits, having `nudge` the tables thread; `false` when
    /// the tables refuse the backlog (the group cannot go in until they take it).
    pub(super) fn wait_for_room(&self, len: usize, nudge: impl Fn()) -> bool {
        self.wait_until(nudge, |ring| {
            ring.place(len as u64, self.capacity).is_some()
        })
    }

    /// Waits until the tables hold every record, having `nudge` the tables thread; `false` when
    /// they refuse the backlog.
    pub(super) fn wait_until_empty(&self, nudge: impl Fn()) -> bool {
        self.wait_until(nudge, |ring| ring.live.is_empty())
    }

    fn wait_until(&self, nudge: impl Fn(), done: impl Fn(&Ring) -> bool) -> bool {
        let mut ring = self.lock();
        if done(&ring) {
            return true;
        }
        ring.hurry = true;
        drop(ring);
        nudge();
        let mut ring = self.lock();
        loop {
            if done(&ring) {
                ring.hurry = false;
                return true;
            }
            if ring.refused.is_some() {
                ring.hurry = false;
                return false;
            }
            ring = self
                .room
                .wait_timeout(ring, ROOM_WAIT)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }

    /// Whether the tables should take the backlog now rather than at a quiet moment: the
    /// writer waits for them, all but the last eighth of the ring is taken, or the oldest
    /// record has waited [`MAX_LAG`]. A burst the ring
    /// can hold is acknowledged without the tables competing for the cores; a longer one finds
    /// them at work before the writer has to wait for room (the last eighth, 8 MiB, is 3,000
    /// captures of 2 KiB: a tenth of a second at the listener's pace). Half the ring, tried
    /// first, kept the same pace under a minute's flood and made bursts of 30,000 pay for the
    /// tables' share inside the burst (BENCHMARKS.md, listener, first section).
    pub(super) fn pressed(&self) -> bool {
        let ring = self.lock();
        ring.hurry
            || ring.live_bytes >= self.capacity - self.capacity / 8
            || ring
                .live
                .front()
                .is_some_and(|oldest| oldest.appended.elapsed() >= MAX_LAG)
    }

    /// Tells the writer the tables refused the backlog, and why (`Some`), or took some again
    /// (`None`).
    pub(super) fn set_refused(&self, refused: Option<String>) {
        let mut ring = self.lock();
        if ring.refused.is_some() != refused.is_some() {
            self.room.notify_all();
        }
        ring.refused = refused;
    }

    /// Why the tables refuse the backlog, while they do.
    pub(super) fn refusal(&self) -> Option<String> {
        self.lock().refused.clone()
    }

    /// Writes a group made by [`GroupBuffer`] and syncs it, then hands its plaintext to the
    /// tables thread when the hand-over has room (copied into a buffer the hand-over keeps).
    /// The caller (the one writer) waited for room
    /// ([`Journal::wait_for_room`]); only the tables thread changes the ring meanwhile, and it
    /// only frees room.
    pub(super) fn append(&self, group: &GroupBuffer) -> Result<()> {
        let len = group.bytes.len() as u64;
        let (start, length) = {
            let ring = self.lock();
            let start = ring
                .place(len, self.capacity)
                .ok_or_else(|| Error::Commit("the acknowledgement journal has no room".into()))?;
            (start, ring.length)
        };
        let failed = |source| io_error(&self.path, source);
        let end = start + len;
        let mut grown = length;
        if end > length {
            // Zeros first, in steps, so the syncs after this one overwrite allocated blocks.
            grown = end.div_ceil(GROW) * GROW;
            // From one static block of zeros: a new zeroed buffer for each step was new memory
            // for the kernel to clear, every time.
            static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
            let mut at = length;
            while at < grown {
                let step =
                    usize::try_from(grown - at).map_or(ZEROS.len(), |left| left.min(ZEROS.len()));
                write_all_at(&self.file, &ZEROS[..step], at).map_err(failed)?;
                at += step as u64;
            }
        }
        write_all_at(&self.file, &group.bytes, start).map_err(failed)?;
        if self.sync {
            self.file.sync_data().map_err(failed)?;
        }
        let appended = Instant::now();
        // Before the spans join the ring: whenever the tables see a record, its plaintext is
        // in the hand-over already if it is to be there at all.
        self.hand_over(group);
        let mut ring = self.lock();
        ring.length = ring.length.max(grown);
        ring.position = end;
        ring.live_bytes += len;
        ring.live
            .extend(group.records.iter().map(|&(id, from, to)| Span {
                id,
                start: start + from as u64,
                end: start + to as u64,
                appended,
            }));
        Ok(())
    }

    /// Forgets the records through `id` (now in the tables); returns the mark to keep with them.
    pub(super) fn applied_through(&self, id: i64) -> Option<AppliedMark> {
        let mut ring = self.lock();
        let mut last = None;
        while ring.live.front().is_some_and(|span| span.id <= id) {
            last = ring.live.pop_front();
            if let Some(span) = last {
                ring.live_bytes -= span.end - span.start;
            }
        }
        self.room.notify_all();
        last.map(|span| AppliedMark {
            id: span.id,
            end: span.end,
        })
    }

    /// How many records are not yet in the tables.
    pub(super) fn backlog(&self) -> usize {
        self.lock().live.len()
    }

    /// Hands `group`'s plaintext to the tables thread, if it fits ([`HandOver`]): copied into
    /// a buffer the hand-over keeps, the group's own buffers left to the writer.
    fn hand_over(&self, group: &GroupBuffer) {
        if self.hand_over_capacity == 0 || group.plain_records.is_empty() {
            return;
        }
        let plain = match group.key {
            Some(_) => &group.plain,
            None => &group.bytes,
        };
        let records = &group.plain_records;
        let mut hand_over = lock_or_recover(&self.hand_over);
        if hand_over.bytes + plain.len() > self.hand_over_capacity {
            return;
        }
        let spare = hand_over.take_spare(plain.len(), records.len());
        hand_over.made += u64::from(spare.is_none());
        drop(hand_over);
        // Copied outside the lock the tables take; only this thread adds to the hand-over, so
        // the room seen above is still there.
        let mut handed = spare.unwrap_or_else(|| PlainGroup {
            bytes: Vec::with_capacity(plain.len().next_power_of_two().max(LEAST_ROOM)),
            records: Vec::with_capacity(records.len().next_power_of_two().max(LEAST_RECORDS)),
            next: 0,
        });
        handed.bytes.extend_from_slice(plain);
        handed.records.extend_from_slice(records);
        let mut hand_over = lock_or_recover(&self.hand_over);
        hand_over.bytes += handed.bytes.len();
        hand_over.groups.push_back(handed);
    }

    /// The capture of record `id` from the hand-over, if it is there; passes over the records
    /// before it (taken from the file, or already in the tables) and keeps those after it.
    fn handed_over(&self, taking: &mut Option<PlainGroup>, id: i64) -> Option<Capture> {
        loop {
            if let Some(group) = taking.as_mut() {
                while group
                    .records
                    .get(group.next)
                    .is_some_and(|&(at, _, _)| at < id)
                {
                    group.next += 1;
                }
                match group.records.get(group.next) {
                    Some(&(at, _, _)) if at > id => return None,
                    Some(&(_, start, end)) => {
                        group.next += 1;
                        // Not what was written (never expected): the file has it.
                        return decode(&group.bytes[start..end]).filter(|c| c.id == id);
                    }
                    None => {}
                }
            }
            // The group is taken: back to the writer, and the next one.
            let mut hand_over = lock_or_recover(&self.hand_over);
            let freed = taking
                .take()
                .and_then(|done| hand_over.keep_spare(done, self.hand_over_capacity));
            let next = hand_over.groups.pop_front();
            if let Some(next) = &next {
                hand_over.bytes -= next.bytes.len();
            }
            drop(hand_over);
            // Freed outside the lock the writer takes.
            drop(freed);
            *taking = Some(next?);
        }
    }

    /// Frees the spare buffers beyond a few ([`SPARE_GROUPS`]), once the tables have taken
    /// everything: the memory a burst's hand-over held goes back when it is over.
    pub(super) fn trim_spares(&self) {
        let mut hand_over = lock_or_recover(&self.hand_over);
        if !hand_over.groups.is_empty() || hand_over.spare.len() <= SPARE_GROUPS {
            return;
        }
        let freed = hand_over.spare.split_off(SPARE_GROUPS);
        let freed_bytes: usize = freed.iter().map(PlainGroup::held).sum();
        hand_over.spare_bytes = hand_over.spare_bytes.saturating_sub(freed_bytes);
        drop(hand_over);
        drop(freed);
    }

    /// The oldest `count` records not yet in the tables: from the hand-over when they are
    /// there, else read back from the file (from the page cache: they were just written) and
    /// opened, so a backlog past the hand-over takes no memory of its own while it waits.
    pub(super) fn oldest(&self, count: usize, buffer: &mut Vec<u8>) -> Result<Vec<Capture>> {
        let spans: Vec<Span> = self.lock().live.iter().take(count).copied().collect();
        let mut found: Vec<Option<Capture>> = {
            let mut taking = lock_or_recover(&self.taking);
            spans
                .iter()
                .map(|span| self.handed_over(&mut taking, span.id))
                .collect()
        };
        let in_memory = found.iter().filter(|capture| capture.is_some()).count();
        self.from_memory
            .fetch_add(in_memory as u64, Ordering::Relaxed);
        self.from_file
            .fetch_add((spans.len() - in_memory) as u64, Ordering::Relaxed);
        let mut next = 0;
        while next < spans.len() {
            if found[next].is_some() {
                next += 1;
                continue;
            }
            // One read for each run of records not handed over that follow each other in the
            // file.
            let mut last = next;
            while last + 1 < spans.len()
                && found[last + 1].is_none()
                && spans[last + 1].start == spans[last].end
            {
                last += 1;
            }
            let (from, to) = (spans[next].start, spans[last].end);
            buffer.resize(usize::try_from(to - from).unwrap_or(0), 0);
            read_exact_at(&self.file, buffer, from)
                .map_err(|source| io_error(&self.path, source))?;
            for (span, slot) in spans[next..=last].iter().zip(&mut found[next..=last]) {
                let at = usize::try_from(span.start - from).unwrap_or(0) + HEADER;
                let until = usize::try_from(span.end - from).unwrap_or(0);
                let capture = capture_of(self.key.as_ref(), span.id, &buffer[at..until])
                    .ok_or_else(|| Error::JournalDamaged {
                        path: self.path.clone(),
                        reason: format!("the record at byte {} is not a capture", span.start),
                    })?;
                *slot = Some(capture);
            }
            next = last + 1;
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// The mark the tables will have once the oldest `count` records are in them.
    pub(super) fn mark_after(&self, count: usize) -> Option<AppliedMark> {
        let ring = self.lock();
        let span = ring.live.get(count.checked_sub(1)?)?;
        Some(AppliedMark {
            id: span.id,
            end: span.end,
        })
    }

    /// After a clean stop with everything in the tables: gives back a file a burst grew.
    pub(super) fn shrink(&self) {
        let mut ring = self.lock();
        if ring.live.is_empty() && ring.length > GROW && self.file.set_len(GROW).is_ok() {
            ring.length = GROW;
        }
    }
}

impl Ring {
    /// Where a group of `len` bytes can go without overwriting a record not yet in the tables.
    fn place(&self, len: u64, capacity: u64) -> Option<u64> {
        let Some(oldest) = self.live.front() else {
            // Everything is in the tables: start over (a group larger than the ring still goes).
            return Some(0);
        };
        // With records waiting, the write position equals the oldest's start only when the ring
        // has come round to it (full), never when nothing lies between them.
        if self.position > oldest.start {
            if self.position + len <= capacity {
                Some(self.position)
            } else if len <= oldest.start {
                Some(0)
            } else {
                None
            }
        } else if self.position + len <= oldest.start {
            Some(self.position)
        } else {
            None
        }
    }
}

/// A group of records being made for one append.
#[derive(Default)]
pub(super) struct GroupBuffer {
    bytes: Vec<u8>,
    /// (id, start, end) of each record within `bytes`.
    records: Vec<(i64, usize, usize)>,
    /// Seals each record (an encrypted store's journal, as [`Journal::open_sealed`]).
    key: Option<DataKey>,
    /// The records' layouts before they are sealed (sealed records only; plain ones are their
    /// layout, in `bytes`), for the hand-over.
    plain: Vec<u8>,
    /// (id, start, end) of each record's layout within `plain` (sealed) or `bytes` (plain).
    plain_records: Vec<(i64, usize, usize)>,
}

impl GroupBuffer {
    /// A group whose records are sealed with `key` (plain without).
    pub(super) fn sealed_with(key: Option<DataKey>) -> Self {
        Self {
            key,
            ..Self::default()
        }
    }

    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
        self.plain.clear();
        self.plain_records.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Adds `capture` as a record.
    pub(super) fn push(&mut self, capture: &Capture) {
        let start = self.bytes.len();
        self.bytes.resize(start + HEADER, 0);
        match &self.key {
            Some(key) => {
                let from = self.plain.len();
                encode(capture, &mut self.plain);
                let sealed =
                    partner_seal::seal(key, &seal_context(capture.id), &self.plain[from..]);
                self.bytes.extend_from_slice(&sealed);
                self.plain_records
                    .push((capture.id, from, self.plain.len()));
            }
            None => {
                encode(capture, &mut self.bytes);
                self.plain_records
                    .push((capture.id, start + HEADER, self.bytes.len()));
            }
        }
        let payload_len = u32::try_from(self.bytes.len() - start - HEADER).unwrap_or(u32::MAX);
        let mut header = [0u8; HEADER];
        header[0..4].copy_from_slice(&magic_for(self.key.as_ref()).to_le_bytes());
        header[4..12].copy_from_slice(&capture.id.to_le_bytes());
        header[12..16].copy_from_slice(&payload_len.to_le_bytes());
        let crc = checksum(&header[4..16], &self.bytes[start + HEADER..]);
        header[16..20].copy_from_slice(&crc.to_le_bytes());
        self.bytes[start..start + HEADER].copy_from_slice(&header);
        self.records.push((capture.id, start, self.bytes.len()));
    }
}

/// Moves a damaged journal out of the way (beside it, with the time in its name); returns where.
pub(super) fn keep_aside(path: &Path) -> Result<PathBuf> {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(
        ".damaged-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S")
    ));
    let aside = PathBuf::from(name);
    std::fs::rename(path, &aside).map_err(|source| io_error(path, source))?;
    Ok(aside)
}

fn lock_or_recover<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Journal {
        path: path.to_path_buf(),
        source,
    }
}

fn checksum(id_and_len: &[u8], payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(id_and_len);
    hasher.update(payload);
    hasher.finalize()
}

/// What recovery found in a journal.
#[derive(Debug, Default)]
pub(super) struct Recovered {
    /// The records past the mark, in order.
    pub(super) captures: Vec<Capture>,
    /// Where the last of them ends.
    pub(super) end: u64,
}

/// Reads the records written after `mark` (see the module's notes), sealed with `key` (plain
/// without). A record whose checksum holds but whose capture cannot be read (or, sealed, does
/// not open) is a journal this code did not write: an error, so the caller keeps the file aside.
pub(super) fn recover(path: &Path, mark: AppliedMark, key: Option<&DataKey>) -> Result<Recovered> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Recovered::default())
        }
        Err(source) => return Err(io_error(path, source)),
    };
    let length = file
        .metadata()
        .map_err(|source| io_error(path, source))?
        .len();
    let mut found = Recovered {
        captures: Vec::new(),
        end: mark.end,
    };
    // The first record past the mark lies where the mark's record ended, or at the file's start
    // when the ring went on there (it starts over whenever the tables hold everything, and
    // comes round when the end has no room). Both places may hold a record newer than the
    // mark: at its end there may lie a later record of the lap that started over (records of
    // one size put one exactly there), so the one with the lower id is the first.
    let first_at = |at: u64| -> Result<Option<i64>> {
        Ok(read_record(path, &file, length, at, mark.id, key)?.map(|(capture, _)| capture.id))
    };
    let mut at = mark.end;
    if mark.end != 0 {
        if let Some(at_start) = first_at(0)? {
            if first_at(mark.end)?.is_none_or(|id| at_start < id) {
                at = 0;
            }
        }
    }
    let mut last_id = mark.id;
    // Started at the file's start, the records run on to the end of the lap: the ring comes
    // round to its start only past a record the tables took, and this one they did not.
    let mut jumped = at == 0;
    loop {
        match read_record(path, &file, length, at, last_id, key)? {
            Some((capture, end)) => {
                last_id = capture.id;
                found.captures.push(capture);
                found.end = end;
                at = end;
                jumped = false;
            }
            None if !jumped => {
                at = 0;
                jumped = true;
            }
            None => return Ok(found),
        }
    }
}

/// The record at `at` if it is whole and newer than `after`.
fn read_record(
    path: &Path,
    file: &File,
    length: u64,
    at: u64,
    after: i64,
    key: Option<&DataKey>,
) -> Result<Option<(Capture, u64)>> {
    if at + HEADER as u64 > length {
        return Ok(None);
    }
    let mut header = [0u8; HEADER];
    read_exact_at(file, &mut header, at).map_err(|source| io_error(path, source))?;
    let mut fields = Reader(&header);
    let (Some(magic), Some(id), Some(len), Some(crc)) =
        (fields.u32(), fields.i64(), fields.u32(), fields.u32())
    else {
        return Ok(None);
    };
    let end = at + HEADER as u64 + u64::from(len);
    if magic != magic_for(key) || id <= after || end > length {
        return Ok(None);
    }
    let mut payload = vec![0u8; len as usize];
    read_exact_at(file, &mut payload, at + HEADER as u64)
        .map_err(|source| io_error(path, source))?;
    if checksum(&header[4..16], &payload) != crc {
        return Ok(None);
    }
    let damaged = |reason: String| Error::JournalDamaged {
        path: path.to_path_buf(),
        reason,
    };
    let capture = capture_of(key, id, &payload).ok_or_else(|| {
        damaged(match key {
            Some(_) => format!("the record at byte {at} does not open with the store's key"),
            None => format!("the record at byte {at} is not a capture"),
        })
    })?;
    if capture.id != id {
        return Err(damaged(format!("the record at byte {at} names two ids")));
    }
    Ok(Some((capture, end)))
}

/// How far the tables have caught up with the acknowledgements, shared by the writer and the
/// tables thread (which move it) and the store's readers (which wait on it).
#[derive(Debug, Default)]
pub(crate) struct AckProgress {
    /// The newest capture id acknowledged.
    acknowledged: AtomicI64,
    /// The newest capture id in the tables (of those acknowledged through the journal).
    applied: Mutex<i64>,
    caught_up: Condvar,
    /// A reader waits: the tables thread writes the whole backlog into the tables.
    wanted: AtomicBool,
}

/// How long a read waits for the tables to take the acknowledged captures before it reads what
/// they hold: as long as a reader of another process waits for them (`catch_up::WAIT` is this),
/// so that no reader gives a shorter answer sooner than another. A calm machine waits
/// milliseconds; a burst of 600 captures of 20 KB under Wine took more than the 2 s this was.
pub(super) const READ_WAIT: Duration = Duration::from_secs(15);

impl AckProgress {
    pub(super) fn new(applied: i64) -> Self {
        Self {
            acknowledged: AtomicI64::new(applied),
            applied: Mutex::new(applied),
            caught_up: Condvar::new(),
            wanted: AtomicBool::new(false),
        }
    }

    pub(super) fn acknowledged(&self, id: i64) {
        self.acknowledged.fetch_max(id, Ordering::Release);
    }

    /// The newest capture id the tables hold (of those acknowledged through the journal).
    pub(super) fn applied_id(&self) -> i64 {
        *self
            .applied
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn applied(&self, id: i64) {
        let mut applied = self
            .applied
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *applied = (*applied).max(id);
        self.caught_up.notify_all();
    }

    /// Whether a reader is waiting for the tables (clears the request).
    pub(super) fn take_wanted(&self) -> bool {
        self.wanted.swap(false, Ordering::AcqRel)
    }

    /// Waits until the tables hold every capture acknowledged before this call (at most
    /// [`READ_WAIT`]); returns whether they do.
    pub(crate) fn wait_for_acknowledged(&self) -> bool {
        let target = self.acknowledged.load(Ordering::Acquire);
        let mut applied = self
            .applied
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if *applied >= target {
            return true;
        }
        self.wanted.store(true, Ordering::Release);
        let deadline = std::time::Instant::now() + READ_WAIT;
        while *applied < target {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                tracing::warn!(
                    waited_ms = READ_WAIT.as_millis() as u64,
                    "a read went ahead before the store's tables held every acknowledged capture"
                );
                return false;
            }
            applied = self
                .caught_up
                .wait_timeout(applied, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
            self.wanted.store(true, Ordering::Release);
        }
        true
    }
}

/// Writes `capture` in the journal's layout (every field, in declaration order; the
/// destructuring makes a new field a compile error here until it is written).
fn encode(capture: &Capture, out: &mut Vec<u8>) {
    let Capture {
        id,
        received_at,
        method,
        path,
        headers,
        body,
        body_size,
        peer,
        verdict,
        matched_key,
        subscription_id,
        fields,
        attempt,
        notification_id,
        response,
        processing_micros,
        replay,
    } = capture;
    let NotificationFields {
        event_id,
        event_time,
        event_type,
        instance_id,
        resource_id,
        resource_type,
        resource_ref,
    } = fields;
    let ResponseRecord {
        status,
        body: response_body,
        from_test_mode,
        delay_ms,
    } = response;
    let mut w = Writer(out);
    w.i64(*id);
    w.i64(received_at.timestamp_micros());
    w.str(method);
    w.str(path);
    w.u32(u32::try_from(headers.len()).unwrap_or(u32::MAX));
    for header in headers {
        w.str(&header.name);
        w.str(&header.value);
    }
    w.opt_bytes(body.as_deref());
    w.u64(*body_size);
    w.opt_str(peer.as_deref());
    w.str(verdict.as_str());
    w.opt_str(matched_key.map(MatchedKey::as_str));
    w.opt_str(subscription_id.as_deref());
    for field in [
        event_id,
        event_time,
        event_type,
        instance_id,
        resource_id,
        resource_type,
        resource_ref,
    ] {
        w.opt_str(field.as_deref());
    }
    w.u32(*attempt);
    match notification_id {
        Some(first) => {
            w.u8(1);
            w.i64(*first);
        }
        None => w.u8(0),
    }
    w.u32(u32::from(*status));
    w.str(response_body);
    w.u8(u8::from(*from_test_mode));
    w.u64(*delay_ms);
    w.u64(*processing_micros);
    w.u8(u8::from(*replay));
}

/// Reads what [`encode`] wrote; `None` when the bytes are not such a capture.
fn decode(bytes: &[u8]) -> Option<Capture> {
    let mut r = Reader(bytes);
    let id = r.i64()?;
    let received_at = chrono::DateTime::from_timestamp_micros(r.i64()?)?;
    let method = r.string()?;
    let path = r.string()?;
    let header_count = r.u32()?;
    let mut headers = Vec::with_capacity(header_count.min(1024) as usize);
    for _ in 0..header_count {
        headers.push(Header::new(r.string()?, r.string()?));
    }
    let body = r.opt_bytes()?;
    let body_size = r.u64()?;
    let peer = r.opt_string()?;
    let verdict = Verdict::parse(&r.string()?)?;
    let matched_key = match r.opt_string()? {
        Some(text) => Some(MatchedKey::parse(&text)?),
        None => None,
    };
    let subscription_id = r.opt_string()?;
    let fields = NotificationFields {
        event_id: r.opt_string()?,
        event_time: r.opt_string()?,
        event_type: r.opt_string()?,
        instance_id: r.opt_string()?,
        resource_id: r.opt_string()?,
        resource_type: r.opt_string()?,
        resource_ref: r.opt_string()?,
    };
    let attempt = r.u32()?;
    let notification_id = match r.u8()? {
        0 => None,
        1 => Some(r.i64()?),
        _ => return None,
    };
    let status = u16::try_from(r.u32()?).ok()?;
    let response = ResponseRecord {
        status,
        body: r.string()?,
        from_test_mode: r.flag()?,
        delay_ms: r.u64()?,
    };
    let processing_micros = r.u64()?;
    let replay = r.flag()?;
    if !r.0.is_empty() {
        return None;
    }
    Some(Capture {
        id,
        received_at,
        method,
        path,
        headers,
        body,
        body_size,
        peer,
        verdict,
        matched_key,
        subscription_id,
        fields,
        attempt,
        notification_id,
        response,
        processing_micros,
        replay,
    })
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u8(&mut self, value: u8) {
        self.0.push(value);
    }
    fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }
    fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }
    fn i64(&mut self, value: i64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }
    fn bytes(&mut self, value: &[u8]) {
        self.u32(u32::try_from(value.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(value);
    }
    fn str(&mut self, value: &str) {
        self.bytes(value.as_bytes());
    }
    fn opt_bytes(&mut self, value: Option<&[u8]>) {
        match value {
            Some(bytes) => {
                self.u8(1);
                self.bytes(bytes);
            }
            None => self.u8(0),
        }
    }
    fn opt_str(&mut self, value: Option<&str>) {
        self.opt_bytes(value.map(str::as_bytes));
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn flag(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let len = self.u32()? as usize;
        self.take(len).map(<[u8]>::to_vec)
    }
    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }
    fn opt_bytes(&mut self) -> Option<Option<Vec<u8>>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.bytes().map(Some),
            _ => None,
        }
    }
    fn opt_string(&mut self) -> Option<Option<String>> {
        match self.opt_bytes()? {
            None => Some(None),
            Some(bytes) => String::from_utf8(bytes).ok().map(Some),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    thread_local! {
        /// The hand-over of journals opened on this thread, when a test sets it.
        pub(in crate::store) static HAND_OVER: std::cell::Cell<Option<usize>> =
            const { std::cell::Cell::new(None) };
    }

    use super::*;
    use crate::verdict::Verdict;
    use std::sync::Arc;

    fn capture(id: i64, body_size: usize) -> Capture {
        Capture {
            id,
            received_at: chrono::DateTime::from_timestamp_micros(1_700_000_000_123_456).unwrap(),
            method: "POST".into(),
            path: "/webhooks".into(),
            headers: vec![Header::new("content-type", "application/json")],
            body: Some(vec![b'x'; body_size]),
            body_size: body_size as u64,
            peer: Some("127.0.0.1:5000".into()),
            verdict: Verdict::Valid,
            matched_key: None,
            subscription_id: Some("sub-a".into()),
            fields: NotificationFields {
                event_id: Some(format!("ev-{id}")),
                ..NotificationFields::default()
            },
            attempt: 1,
            notification_id: Some(id),
            response: ResponseRecord {
                status: 200,
                body: "ok\n".into(),
                from_test_mode: false,
                delay_ms: 0,
            },
            processing_micros: 12,
            replay: false,
        }
    }

    /// Appends groups of `group_size(round)` records of `body(round)` bytes, the tables taking
    /// `take(round)` of the oldest whenever the next group does not fit, and checks every
    /// record read back is the one written there, in order.
    fn ring_round_trip(
        group_size: impl Fn(usize) -> usize,
        body: impl Fn(usize) -> usize,
        take: impl Fn(usize) -> usize,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("j"), false, GROW).unwrap();
        ring_round_trip_in(journal, None, group_size, body, take);
    }

    /// [`ring_round_trip`] in `journal`, its records sealed with `key` (plain without);
    /// returns how many records came from the hand-over and how many from the file.
    fn ring_round_trip_in(
        journal: Journal,
        key: Option<&DataKey>,
        group_size: impl Fn(usize) -> usize,
        body: impl Fn(usize) -> usize,
        take: impl Fn(usize) -> usize,
    ) -> (u64, u64) {
        let mut group = GroupBuffer::sealed_with(key.cloned());
        let mut buffer = Vec::new();
        let (mut next, mut applied) = (1i64, 0i64);
        let mut check_oldest = |journal: &Journal, count: usize| {
            let count = count.min(journal.backlog());
            let read = journal.oldest(count, &mut buffer).unwrap();
            let ids: Vec<i64> = read.iter().map(|c| c.id).collect();
            let want: Vec<i64> = (applied + 1..=applied + count as i64).collect();
            assert_eq!(ids, want);
            for capture in &read {
                assert_eq!(
                    capture,
                    &super::tests::capture(capture.id, capture.body_size as usize)
                );
            }
            let mark = journal.mark_after(count).unwrap();
            applied = journal.applied_through(mark.id).unwrap().id;
        };
        for round in 0..600usize {
            group.clear();
            for _ in 0..group_size(round) {
                group.push(&capture(next, body(round)));
                next += 1;
            }
            while !journal.has_room(group.len()) {
                check_oldest(&journal, take(round));
            }
            journal.append(&group).unwrap();
            assert!(journal.lock().length <= GROW, "the file grew past the ring");
        }
        while journal.backlog() > 0 {
            check_oldest(&journal, 50);
        }
        assert_eq!(applied, next - 1);
        let (memory, file) = journal.taken();
        assert_eq!(memory + file, applied as u64, "every record taken once");
        (memory, file)
    }

    #[test]
    fn the_tables_take_every_record_once_in_order_from_the_hand_over_or_the_file() {
        let key = DataKey::generate();
        for key in [None, Some(&key)] {
            for hand_over in [0, 40_000, usize::MAX] {
                let dir = tempfile::tempdir().unwrap();
                let journal =
                    Journal::open_sealed(&dir.path().join("j"), false, GROW, key.cloned())
                        .unwrap()
                        .with_hand_over(hand_over);
                // Bursts of groups the tables take in chunks of another size, with a hand-over
                // smaller than the ring's backlog: some records come from memory, the others
                // (past the hand-over's room) from the file.
                let (memory, file) = ring_round_trip_in(
                    journal,
                    key,
                    |r| r % 7 + 1,
                    |r| 3000 + r * 13 % 5000,
                    |r| r % 5 + 1,
                );
                match hand_over {
                    0 => assert_eq!(memory, 0, "no hand-over: all from the file"),
                    usize::MAX => assert_eq!(file, 0, "a hand-over larger than the ring"),
                    _ => assert!(memory > 0 && file > 0, "both ways: {memory} and {file}"),
                }
            }
        }
    }

    #[test]
    fn the_hand_over_reuses_its_buffers_and_frees_the_spares_after_a_burst() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("j"), false, GROW)
            .unwrap()
            .with_hand_over(1 << 20);
        let (mut group, mut buffer) = (GroupBuffer::default(), Vec::new());
        let mut id = 0;
        // 300 groups of 1 to 12 records, the tables taking what waits after every tenth: ten
        // buffers in flight at most.
        for round in 0..300 {
            group.clear();
            for _ in 0..=(round % 12) {
                id += 1;
                group.push(&capture(id, 3000));
            }
            journal.append(&group).unwrap();
            if round % 10 == 9 {
                let taken = journal.oldest(usize::MAX, &mut buffer).unwrap();
                journal.applied_through(taken.last().unwrap().id);
            }
        }
        assert_eq!(
            journal.taken(),
            (u64::try_from(id).unwrap(), 0),
            "all from memory"
        );
        let (made, spare) = journal.hand_over_buffers();
        assert!(made <= 16, "{made} buffers made for 300 groups");
        assert!(spare > SPARE_GROUPS, "the burst's buffers kept: {spare}");
        journal.trim_spares();
        assert_eq!(
            journal.hand_over_buffers().1,
            SPARE_GROUPS,
            "a few kept after it"
        );
    }

    #[test]
    fn the_hand_over_passes_over_records_the_tables_took_from_the_file() {
        // Taken without the hand-over's group (as after one that did not fit), then with it.
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(&dir.path().join("j"), false, GROW)
            .unwrap()
            .with_hand_over(10_000);
        let mut group = GroupBuffer::default();
        let mut buffer = Vec::new();
        // Group 1 (ids 1-2) fits the hand-over, group 2 (3-5) does not, group 3 (6) does once
        // the tables took group 1 from it.
        for ids in [1..=2, 3..=5] {
            group.clear();
            for id in ids {
                group.push(&capture(id, 3000));
            }
            journal.append(&group).unwrap();
        }
        let first: Vec<i64> = journal
            .oldest(3, &mut buffer)
            .unwrap()
            .iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(first, [1, 2, 3]);
        assert_eq!(journal.taken(), (2, 1));
        journal.applied_through(3);
        group.clear();
        group.push(&capture(6, 3000));
        journal.append(&group).unwrap();
        let rest = journal.oldest(3, &mut buffer).unwrap();
        assert_eq!(rest.iter().map(|c| c.id).collect::<Vec<_>>(), [4, 5, 6]);
        assert_eq!(rest[2], capture(6, 3000));
        assert_eq!(journal.taken(), (3, 3));
        journal.applied_through(6);
        assert_eq!(journal.backlog(), 0);
    }

    #[test]
    fn the_ring_never_overwrites_a_record_the_tables_have_not_taken() {
        // Groups and records of many sizes.
        ring_round_trip(|r| r % 7 + 1, |r| 3000 + r * 13 % 5000, |r| r % 5 + 1);
        // Equal records taken one at a time: the ring fills exactly up to its oldest record.
        ring_round_trip(|_| 1, |_| 4000, |_| 1);
        ring_round_trip(|_| 3, |_| 2000, |_| 3);
    }

    #[test]
    fn a_capture_comes_back_from_its_record_exactly() {
        let mut full = capture(7, 2048);
        full.matched_key = Some(crate::verdict::MatchedKey::Previous);
        full.fields = NotificationFields {
            event_id: Some("e".into()),
            event_time: Some("t".into()),
            event_type: Some("created".into()),
            instance_id: Some("i".into()),
            resource_id: Some("r".into()),
            resource_type: Some("Transaction".into()),
            resource_ref: Some("/x".into()),
        };
        full.response.from_test_mode = true;
        full.response.delay_ms = 30;
        full.replay = true;
        let mut bare = capture(8, 0);
        bare.body = None;
        bare.peer = None;
        bare.subscription_id = None;
        bare.notification_id = None;
        bare.headers.clear();
        bare.verdict = Verdict::Incomplete;
        for original in [full, bare] {
            let mut bytes = Vec::new();
            encode(&original, &mut bytes);
            assert_eq!(decode(&bytes).as_ref(), Some(&original));
            // Cut anywhere, or with a byte more, it is not a capture.
            for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
                assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
            }
            bytes.push(0);
            assert_eq!(decode(&bytes), None);
        }
    }

    /// Writes `captures` as a journal at `path` from its start, as a writer that stopped
    /// before the tables took them would have left it.
    pub(in crate::store) fn leave_journal(path: &Path, captures: &[Capture]) -> Vec<u8> {
        let mut group = GroupBuffer::default();
        for capture in captures {
            group.push(capture);
        }
        let bytes = group.bytes.clone();
        let journal = Journal::open(path, true, CAPACITY).unwrap();
        journal.append(&group).unwrap();
        bytes
    }

    /// [`leave_journal`] for an encrypted store: the records sealed with `key`.
    pub(in crate::store) fn leave_sealed_journal(
        path: &Path,
        captures: &[Capture],
        key: &DataKey,
    ) -> Vec<u8> {
        let mut group = GroupBuffer::sealed_with(Some(key.clone()));
        for capture in captures {
            group.push(capture);
        }
        let bytes = group.bytes.clone();
        let journal = Journal::open_sealed(path, true, CAPACITY, Some(key.clone())).unwrap();
        journal.append(&group).unwrap();
        bytes
    }

    /// One record as [`GroupBuffer::push`] makes it (sealed with `key`, plain without).
    pub(in crate::store) fn record_of(capture: &Capture, key: Option<&DataKey>) -> Vec<u8> {
        let mut group = GroupBuffer::sealed_with(key.cloned());
        group.push(capture);
        group.bytes
    }

    pub(in crate::store) fn linked(id: i64, first: i64, attempt: u32, event: &str) -> Capture {
        let mut capture = capture(id, 100);
        // Within the redelivery window, so the store links a redelivery of it.
        capture.received_at =
            chrono::DateTime::from_timestamp_micros(chrono::Utc::now().timestamp_micros()).unwrap();
        capture.fields.event_id = Some(event.into());
        capture.fields.resource_type = Some("Transaction".into());
        capture.notification_id = Some(first);
        capture.attempt = attempt;
        capture
    }

    /// A journal file made of `records` (id, offset) of one size, as a ring leaves them.
    fn ring_file(path: &Path, records: &[(i64, u64)], key: Option<&DataKey>) -> u64 {
        let len = record_of(&linked(1, 1, 1, "ev"), key).len() as u64;
        let mut bytes = vec![0u8; 8 * len as usize];
        for &(id, slot) in records {
            let record = record_of(&linked(id, id, 1, "ev"), key);
            assert_eq!(record.len() as u64, len, "records of one size");
            let at = (slot * len) as usize;
            bytes[at..at + record.len()].copy_from_slice(&record);
        }
        std::fs::write(path, bytes).unwrap();
        len
    }

    fn ids(found: &Recovered) -> Vec<i64> {
        found.captures.iter().map(|capture| capture.id).collect()
    }

    #[test]
    fn recovery_finds_a_lap_that_started_over_when_a_later_record_lies_where_the_mark_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let key = DataKey::generate();
        for key in [None, Some(&key)] {
            // 1 and 2 taken by the tables (the mark ends after 2); the ring started over at the
            // file's start with 3 to 6, so 5 lies exactly where the mark ended (the listener
            // once read from there alone and lost 3 and 4 after a kill -9).
            let len = ring_file(&path, &[(3, 0), (4, 1), (5, 2), (6, 3)], key);
            let mark = AppliedMark {
                id: 2,
                end: 2 * len,
            };
            let found = recover(&path, mark, key).unwrap();
            assert_eq!(ids(&found), [3, 4, 5, 6]);
            assert_eq!(found.end, 4 * len);
            // Not started over: 3 and 4 follow the mark and the ring came round to the start
            // with 5; 1 at the file's end is an earlier lap's.
            ring_file(&path, &[(5, 0), (3, 2), (4, 3), (1, 4)], key);
            let found = recover(&path, mark, key).unwrap();
            assert_eq!(ids(&found), [3, 4, 5]);
            assert_eq!(found.end, len);
            // Everything taken: the lap's records are all at or below the mark.
            ring_file(&path, &[(1, 0), (2, 1)], key);
            assert_eq!(ids(&recover(&path, mark, key).unwrap()), Vec::<i64>::new());
        }
    }

    #[tokio::test]
    async fn captures_acknowledged_before_a_crash_are_in_the_store_when_it_opens_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        drop(crate::Store::open(&db, crate::Retention::default()).unwrap());
        // Acknowledged, not in the tables: a first attempt, its redelivery, another, and the
        // start of a record a crash cut short (never acknowledged).
        let journal = path_of(&db);
        let left = [
            linked(1, 1, 1, "ev-a"),
            linked(2, 1, 2, "ev-a"),
            linked(3, 3, 1, "ev-b"),
        ];
        let mut bytes = leave_journal(&journal, &left);
        let mut torn = GroupBuffer::default();
        torn.push(&linked(4, 4, 1, "ev-c"));
        bytes.extend_from_slice(&torn.bytes[..torn.bytes.len() / 2]);
        std::fs::write(&journal, &bytes).unwrap();

        let store = crate::Store::open(&db, crate::Retention::default()).unwrap();
        for capture in &left {
            assert_eq!(&store.get(capture.id).unwrap(), capture);
        }
        assert!(store.get(4).is_err(), "a torn record is not a capture");
        assert_eq!(store.count(&crate::CaptureFilter::default()).unwrap(), 3);
        // The map of notifications knows them: a redelivery of ev-a is its third attempt, and
        // the next capture takes the next id.
        let again = store.insert(linked(0, 0, 0, "ev-a")).await.unwrap();
        assert_eq!(
            (again.id, again.attempt, again.notification_id),
            (4, 3, Some(1))
        );
        drop(store);
        // Opened once more: nothing is written twice.
        let store = crate::Store::open(&db, crate::Retention::default()).unwrap();
        assert_eq!(store.count(&crate::CaptureFilter::default()).unwrap(), 4);
    }

    #[tokio::test]
    async fn a_damaged_journal_is_kept_aside_and_the_store_opens_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        drop(crate::Store::open(&db, crate::Retention::default()).unwrap());
        let journal = path_of(&db);
        let mut bytes = leave_journal(&journal, &[linked(1, 1, 1, "ev-a")]);
        // A whole record (its checksum holds) whose capture is not one this code wrote.
        let payload = b"not a capture".to_vec();
        let mut header = [0u8; HEADER];
        header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        header[4..12].copy_from_slice(&2i64.to_le_bytes());
        header[12..16].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        let crc = checksum(&header[4..16], &payload);
        header[16..20].copy_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&payload);
        std::fs::write(&journal, &bytes).unwrap();

        let store = crate::Store::open(&db, crate::Retention::default()).unwrap();
        let kept: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("s.db-acks.damaged-"))
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(
            std::fs::read(dir.path().join(&kept[0])).unwrap(),
            bytes,
            "kept as it was"
        );
        // It still takes captures, numbered after what the tables hold.
        let stored = store.insert(linked(0, 0, 0, "ev-z")).await.unwrap();
        assert_eq!(stored.id, 1);
    }

    /// A ring of one step holding records of 4 KiB, one group each: `records` of them, or as
    /// many as fit. Returns the journal, the next group and how many it holds.
    fn filled_ring(dir: &Path, records: i64) -> (Journal, GroupBuffer, i64) {
        let journal = Journal::open(&dir.join("j"), false, GROW).unwrap();
        let mut group = GroupBuffer::default();
        let mut id = 1;
        loop {
            group.clear();
            group.push(&capture(id, 4000));
            if id > records || !journal.has_room(group.len()) {
                return (journal, group, id - 1);
            }
            journal.append(&group).unwrap();
            id += 1;
        }
    }

    /// How long a test gives the journal's waits before it fails instead of hanging.
    const TEST_DEADLINE: Duration = Duration::from_secs(10);

    /// Waits until the writer says it waits for the tables (`hurry`), as the tables thread is
    /// told; fails the test past [`TEST_DEADLINE`].
    fn until_hurried(journal: &Journal) {
        let deadline = std::time::Instant::now() + TEST_DEADLINE;
        while !journal.lock().hurry {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer never said it waits"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Runs `tables` (what the tables thread does) on a thread beside `wait` (the writer's
    /// wait) and returns what the wait returned; fails the test rather than hang when the wait
    /// has not ended within [`TEST_DEADLINE`] or the tables' part failed.
    fn beside_the_tables<T: Send + 'static>(
        journal: &Arc<Journal>,
        tables: impl FnOnce(&Journal) + Send + 'static,
        wait: impl FnOnce(&Journal) -> T + Send + 'static,
    ) -> T {
        let tables_thread = {
            let journal = journal.clone();
            std::thread::spawn(move || tables(&journal))
        };
        let (done, answer) = std::sync::mpsc::channel();
        {
            let journal = journal.clone();
            std::thread::spawn(move || {
                let _ = done.send(wait(&journal));
            });
        }
        let waited = answer
            .recv_timeout(TEST_DEADLINE)
            .expect("the writer's wait did not end");
        tables_thread.join().expect("the tables' part");
        waited
    }

    #[test]
    fn the_writer_waits_for_room_until_the_tables_take_records_and_hurries_them() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, group, _) = filled_ring(dir.path(), i64::MAX);
        let journal = Arc::new(journal);
        let len = group.len();
        assert!(!journal.has_room(len));
        assert!(journal.pressed(), "the ring is full");
        let nudged = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let told = nudged.clone();
        let room = beside_the_tables(
            &journal,
            |journal| {
                // The tables thread: takes the oldest once the writer says it waits.
                until_hurried(journal);
                assert!(journal.pressed());
                // Two: the next record's id is a digit longer than the first's.
                journal.applied_through(2);
            },
            move |journal| journal.wait_for_room(len, || told.store(true, Ordering::SeqCst)),
        );
        assert!(room);
        assert!(nudged.load(Ordering::SeqCst), "the tables thread was told");
        assert!(journal.has_room(len));
        assert!(!journal.lock().hurry, "no longer waiting");
    }

    #[test]
    fn the_writer_stops_waiting_when_the_tables_refuse_the_backlog() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, group, held) = filled_ring(dir.path(), i64::MAX);
        let journal = Arc::new(journal);
        let len = group.len();
        let room = beside_the_tables(
            &journal,
            |journal| {
                until_hurried(journal);
                journal.set_refused(Some("the disk is full".into()));
            },
            move |journal| journal.wait_for_room(len, || {}),
        );
        assert!(!room);
        assert!(
            journal.append(&group).is_err(),
            "no room: the group is refused"
        );
        // Taken again: the next wait is answered.
        journal.set_refused(None);
        journal.applied_through(held);
        assert!(journal.wait_until_empty(|| {}));
        assert_eq!(journal.backlog(), 0);
    }

    #[test]
    fn a_job_waits_until_the_tables_hold_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, _, held) = filled_ring(dir.path(), 10);
        let journal = Arc::new(journal);
        assert_eq!(held, 10);
        assert!(!journal.pressed(), "a small part of the ring");
        let emptied = beside_the_tables(
            &journal,
            |journal| {
                for id in 1..=10 {
                    until_hurried(journal);
                    journal.applied_through(id);
                }
            },
            |journal| journal.wait_until_empty(|| {}),
        );
        assert!(emptied);
        assert_eq!(journal.backlog(), 0);
    }

    /// Captures in the journal may link to a notification whose captures in the tables a prune
    /// deletes: the notification stays known until the tables hold the link.
    #[tokio::test]
    async fn a_prune_keeps_the_notifications_captures_in_the_journal_link_to() {
        use super::super::schema::{load_redeliveries, open_connection};
        use super::super::writer::Retained;
        use crate::redelivery::NotificationKey;
        use std::sync::Mutex;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        {
            let store = crate::Store::open(&db, crate::Retention::default()).unwrap();
            for event in ["ev-old", "ev-1", "ev-2", "ev-3", "ev-4", "ev-5"] {
                store.insert(linked(0, 0, 0, event)).await.unwrap();
            }
        }
        let old = NotificationKey::of("sub-a", "Transaction", "ev-old");
        let keep_three = crate::Retention {
            max_count: Some(3),
            ..crate::Retention::default()
        };
        for (links, kept) in [(vec![(7, 1)], true), (vec![], false)] {
            let copy = dir.path().join(format!("copy-{kept}.db"));
            std::fs::copy(&db, &copy).unwrap();
            let mut conn = open_connection(&copy, crate::Durability::Full).unwrap();
            let map = load_redeliveries(&mut conn, 0).unwrap();
            assert!(map.get(&old).is_some());
            let retained = Retained {
                policy: Mutex::new(keep_three),
                redeliveries: Arc::new(Mutex::new(map)),
                // Capture 7, a redelivery of ev-old, acknowledged and not in the tables yet.
                journal_links: Mutex::new(links.into()),
                highest_deleted: 0.into(),
                captures: Mutex::new(None),
                pruned: Default::default(),
            };
            assert_eq!(retained.prune(&mut conn, keep_three, 6).unwrap(), 3);
            let row: Option<i64> = conn
                .query_row("SELECT id FROM notifications WHERE id = 1", [], |row| {
                    row.get(0)
                })
                .optional()
                .unwrap();
            assert_eq!(
                row.is_some(),
                kept,
                "its row, linked from the journal: {kept}"
            );
            assert_eq!(
                retained.redeliveries.lock().unwrap().get(&old).is_some(),
                kept
            );
        }
    }
}

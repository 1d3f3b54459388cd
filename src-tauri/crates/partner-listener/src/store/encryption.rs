//! The store at rest: its tables (and so their WAL) are a SQLCipher database keyed with the data
//! key first thing on every connection, and its journal's records are sealed with the same key
//! ([`super::journal`]); a store written before that is encrypted in place as it opens.
//!
//! Why SQLCipher for the tables: it encrypts each page (and each WAL frame) as SQLite writes it,
//! so the store's reads, indexes and WAL stay what they were, on every OS; the key is raw (32
//! bytes, `PRAGMA key = "x'…'"`, no passphrase derivation), so opening a connection costs
//! microseconds. Settings, chosen by measuring (BENCHMARKS.md, listener, data at rest):
//! - `cipher_page_size` = the store's 8 KiB pages ([`PAGE_SIZE`]): SQLCipher's header is
//!   encrypted, so the page size is given with the key on every connection;
//! - `cipher_hmac_algorithm` = HMAC-SHA256 (SQLCipher's default is HMAC-SHA512): SHA-256 has
//!   CPU instructions of its own, and the page MAC was most of the tables thread's added cost;
//! - `cipher_memory_security = OFF`: SQLCipher would otherwise wipe and lock every buffer it
//!   frees, a cost on every page for memory that holds the same captures the process handles
//!   anyway; the key itself is still kept apart and wiped.
//!
//! A file that does not open with the key is an error naming the key tried and the one its key
//! note says it needs (fingerprints and where they live, never a key), and it is left as it is:
//! it may be the only copy of what someone needs. The key note (`<store>-key`, plain text) is
//! written beside the store when it is first opened with its key: one line saying which key
//! (fingerprint, home) opens it.
//!
//! The migration of an unencrypted store ([`encrypt_in_place`]), under the writer lock, before
//! anything else opens it: the journal's plain records are written into the tables first (so a
//! capture acknowledged before the upgrade is kept), the journal is removed (everything in it is
//! in the tables, whose mark now points at the start of the new, sealed journal), the tables are
//! copied into a new file encrypted with the key (`ATTACH … KEY` and `sqlcipher_export`), which
//! is synced and checked (it opens with the key, its check passes and it holds as many captures
//! as the plain one), and only then renamed over the plain file (atomic: a crash before the
//! rename leaves the plain store, which the next open encrypts again; after it, the encrypted
//! one).

use super::journal;
use super::keying::{apply_key, sibling, write_note, HMAC};
use super::schema::{open_connection_keyed, PAGE_SIZE, SCHEMA};
use super::types::{Durability, StoreKey};
use crate::{facet_counts, search};
use crate::{Error, Result};
use rusqlite::Connection;
use std::path::Path;
use zeroize::Zeroizing;

/// The encrypted copy being made, the store's name with this appended.
const ENCRYPTING_SUFFIX: &str = "-encrypting";

/// Encrypts the unencrypted store at `path` with `key`, in place, without losing a capture (see
/// the module's notes). The caller holds the store's writer lock.
pub(super) fn encrypt_in_place(path: &Path, key: &StoreKey, durability: Durability) -> Result<()> {
    let failed = |reason: String| Error::EncryptStore {
        path: path.to_path_buf(),
        reason,
    };
    let encrypting = sibling(path, ENCRYPTING_SUFFIX);
    // A crash during an earlier attempt may have left a copy: it is made again.
    remove_if_there(&encrypting)?;
    let journal_path = journal::path_of(path);
    let mut plain = open_connection_keyed(path, durability, None)?;
    // What a writer's open makes before it writes the journal in.
    plain.execute_batch(SCHEMA)?;
    plain.execute_batch(search::SEARCH_SCHEMA)?;
    plain.execute_batch(facet_counts::FACET_SCHEMA)?;
    plain.execute_batch(journal::APPLIED_SCHEMA)?;
    // Captures acknowledged before the upgrade and not yet in the tables go in first, read
    // from the journal's plain records.
    super::catch_up::apply_journal(&mut plain, &journal_path, None)?;
    // Everything the journal held is in the tables: the next journal (sealed) starts at its
    // beginning, and the mark says so.
    plain.execute("UPDATE acks_applied SET end_offset = 0", [])?;
    plain.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    remove_if_there(&journal_path)?;
    sync_folder(path);
    let version: i64 = plain.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let held = count_of(&plain)?;

    let target = encrypting
        .to_str()
        .ok_or_else(|| failed("its path is not UTF-8".into()))?;
    let raw = Zeroizing::new(format!("x'{}'", key.key.to_hex().as_str()));
    plain.execute(
        "ATTACH DATABASE ?1 AS encrypted KEY ?2",
        rusqlite::params![target, raw.as_str()],
    )?;
    let exported = plain
        .execute_batch(&format!(
            "PRAGMA encrypted.cipher_page_size = {PAGE_SIZE};
             PRAGMA encrypted.cipher_hmac_algorithm = {HMAC};
             SELECT sqlcipher_export('encrypted');
             PRAGMA encrypted.user_version = {version};"
        ))
        .map_err(|e| failed(format!("the encrypted copy could not be written: {e}")));
    plain.execute_batch("DETACH DATABASE encrypted")?;
    exported?;
    // The plain connection closes (its WAL, checkpointed, goes with it) before the rename.
    drop(plain);
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&encrypting, meta.permissions());
    }
    // Opened for writing: Windows flushes a file only through a handle that may write to it
    // (FlushFileBuffers refuses a read-only one, "Access denied").
    std::fs::OpenOptions::new()
        .write(true)
        .open(&encrypting)
        .and_then(|file| file.sync_all())
        .map_err(|e| failed(format!("the encrypted copy could not be synced: {e}")))?;
    // Checked before it replaces the plain store.
    {
        let check = Connection::open(&encrypting)?;
        apply_key(&check, Some(key), &encrypting, PAGE_SIZE)?;
        let verdict: String = check.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
        let copied = count_of(&check)?;
        if verdict != "ok" || copied != held {
            return Err(failed(format!(
                "the encrypted copy did not check out ({verdict}; {} of {} captures, newest {} \
                 against {}); it was removed",
                copied.0, held.0, copied.1, held.1
            )))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&encrypting);
            });
        }
    }
    std::fs::rename(&encrypting, path)
        .map_err(|e| failed(format!("the encrypted copy could not replace it: {e}")))?;
    sync_folder(path);
    write_note(path, key);
    tracing::warn!(
        captures = held.0,
        "encrypted the capture store at rest (it was written by an earlier version)"
    );
    Ok(())
}

fn count_of(conn: &Connection) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM captures",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?)
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::EncryptStore {
            path: path.to_path_buf(),
            reason: format!("{} could not be removed: {e}", path.display()),
        }),
    }
}

/// Makes a rename or removal in the store's folder durable (Unix; Windows has no folder sync).
fn sync_folder(path: &Path) {
    #[cfg(unix)]
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(dir) = std::fs::File::open(folder) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::capture::Header;
    use crate::store::journal::tests::{leave_journal, leave_sealed_journal, linked, record_of};
    use crate::store::keying::{is_plain, note_path};
    use crate::store::{Store, StoreOptions, StoreReader};
    use crate::{CaptureFilter, Retention};
    use partner_seal::DataKey;
    use std::path::PathBuf;

    const BODY_MARK: &[u8] = b"BORROWER-BODY-MARK";
    const HEADER_MARK: &str = "BORROWER-HEADER-MARK";

    fn key(home: &str) -> StoreKey {
        StoreKey::new(DataKey::generate(), home)
    }

    fn options(key: &StoreKey) -> StoreOptions {
        StoreOptions {
            key: Some(key.clone()),
            ..StoreOptions::default()
        }
    }

    fn marked(event: &str) -> crate::Capture {
        let mut capture = linked(0, 0, 0, event);
        let mut body = BODY_MARK.to_vec();
        body.extend_from_slice(event.as_bytes());
        capture.body_size = body.len() as u64;
        capture.body = Some(body);
        capture.headers.push(Header::new("x-borrower", HEADER_MARK));
        capture
    }

    /// Every file of `dir` (the store, its WAL, its journal, ...) by name, with its bytes.
    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut found: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap())
            .filter(|entry| entry.file_type().unwrap().is_file())
            .map(|entry| {
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    std::fs::read(entry.path()).unwrap(),
                )
            })
            .collect();
        found.sort();
        found
    }

    fn holds(bytes: &[u8], needle: &[u8]) -> bool {
        bytes.windows(needle.len()).any(|window| window == needle)
    }

    fn assert_no_plaintext(dir: &Path, marks: &[&[u8]]) {
        for (name, bytes) in files(dir) {
            for mark in marks {
                assert!(
                    !holds(&bytes, mark),
                    "{name} holds {:?}",
                    String::from_utf8_lossy(mark)
                );
            }
        }
    }

    #[tokio::test]
    async fn the_tables_their_wal_and_the_journal_hold_no_capture_text() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let key = key("the key file /k");
        let store = Store::open_with(&db, options(&key)).unwrap();
        for round in 0..40 {
            store.insert(marked(&format!("ev-{round}"))).await.unwrap();
        }
        // Some in the tables (and their WAL, not yet checkpointed), the newest maybe still in
        // the journal only: every file is read while the store is open.
        assert!(store.wait_for_tables());
        for round in 40..45 {
            store.insert(marked(&format!("ev-{round}"))).await.unwrap();
        }
        let names: Vec<String> = files(dir.path()).into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"s.db-wal".to_string()), "{names:?}");
        assert!(names.contains(&"s.db-acks".to_string()), "{names:?}");
        assert_no_plaintext(dir.path(), &[BODY_MARK, HEADER_MARK.as_bytes(), b"ev-4"]);
        assert!(!holds(&std::fs::read(&db).unwrap(), b"SQLite format 3"));
        // The key note names the key by fingerprint and home, never the key.
        let note = std::fs::read_to_string(note_path(&db)).unwrap();
        assert!(note.contains(&key.key.fingerprint()), "{note}");
        assert!(!note.contains(&key.key.to_hex()[..16]), "{note}");
        drop(store);
        assert_no_plaintext(dir.path(), &[BODY_MARK, HEADER_MARK.as_bytes()]);

        // It reads back with the key, in a writer and in a reader apart.
        let store = Store::open_with(&db, options(&key)).unwrap();
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 45);
        drop(store);
        let reader = StoreReader::open_keyed(&db, Some(key.clone())).unwrap();
        let first = reader.get(1).unwrap();
        assert!(holds(first.body.as_deref().unwrap(), BODY_MARK));
        assert!(first.headers.iter().any(|h| h.value == HEADER_MARK));
    }

    #[tokio::test]
    async fn a_wrong_key_is_refused_naming_both_keys_and_the_file_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let right = key("the key file /right/data.key");
        let store = Store::open_with(&db, options(&right)).unwrap();
        store.insert(marked("ev-a")).await.unwrap();
        drop(store);
        let before = files(dir.path());
        let wrong = key("the PARTNER_DATA_KEY variable");
        for refused in [
            Store::open_with(&db, options(&wrong))
                .map(drop)
                .unwrap_err(),
            StoreReader::open_keyed(&db, Some(wrong.clone()))
                .map(drop)
                .unwrap_err(),
        ] {
            assert!(matches!(refused, Error::StoreKey { .. }), "{refused}");
            let message = refused.to_string();
            for said in [
                wrong.key.fingerprint(),
                right.key.fingerprint(),
                "the key file /right/data.key".into(),
                "the PARTNER_DATA_KEY variable".into(),
            ] {
                assert!(message.contains(&said), "{said} in {message}");
            }
            for secret in [&right.key.to_hex(), &wrong.key.to_hex()] {
                assert!(!message.contains(&secret[..16]), "{message}");
            }
        }
        // Unencrypted, it does not open either.
        assert!(Store::open(&db, Retention::default()).is_err());
        let after: Vec<_> = files(dir.path())
            .into_iter()
            .filter(|(name, _)| !name.ends_with(".lock"))
            .collect();
        let before: Vec<_> = before
            .into_iter()
            .filter(|(name, _)| !name.ends_with(".lock"))
            .collect();
        assert!(before == after, "the files were changed");
        // The right key still opens it.
        let store = Store::open_with(&db, options(&right)).unwrap();
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 1);
    }

    #[tokio::test]
    async fn after_a_crash_the_sealed_journal_is_written_in_and_a_torn_record_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let key = key("the key file /k");
        drop(Store::open_with(&db, options(&key)).unwrap());
        let journal = journal::path_of(&db);
        let left = [
            linked(1, 1, 1, "ev-a"),
            linked(2, 1, 2, "ev-a"),
            linked(3, 3, 1, "ev-b"),
        ];
        let mut bytes = leave_sealed_journal(&journal, &left, &key.key);
        assert!(!holds(&bytes, b"ev-a"), "sealed");
        let torn = record_of(&linked(4, 4, 1, "ev-c"), Some(&key.key));
        bytes.extend_from_slice(&torn[..torn.len() / 2]);
        std::fs::write(&journal, &bytes).unwrap();

        // A reader apart writes them in (no writer holds the store).
        let reader = StoreReader::open_keyed(&db, Some(key.clone())).unwrap();
        assert_eq!(reader.count(&CaptureFilter::default()).unwrap(), 3);
        drop(reader);
        let store = Store::open_with(&db, options(&key)).unwrap();
        for capture in &left {
            assert_eq!(&store.get(capture.id).unwrap(), capture);
        }
        assert!(store.get(4).is_err(), "a torn record is not a capture");
        let again = store.insert(linked(0, 0, 0, "ev-a")).await.unwrap();
        assert_eq!((again.id, again.attempt), (4, 3));
    }

    #[tokio::test]
    async fn a_whole_record_another_key_sealed_or_a_plain_one_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let key = key("the key file /k");
        drop(Store::open_with(&db, options(&key)).unwrap());
        let journal = journal::path_of(&db);
        // A plain record where sealed ones are read: not a record of this journal, so the
        // journal ends there.
        leave_journal(&journal, &[linked(1, 1, 1, "ev-plain")]);
        let store = Store::open_with(&db, options(&key)).unwrap();
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 0);
        drop(store);
        // A whole record sealed with another key: damaged, kept aside, the store opens.
        let other = DataKey::generate();
        let bytes = leave_sealed_journal(&journal, &[linked(1, 1, 1, "ev-other")], &other);
        let store = Store::open_with(&db, options(&key)).unwrap();
        assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 0);
        let kept: Vec<_> = files(dir.path())
            .into_iter()
            .filter(|(name, _)| name.starts_with("s.db-acks.damaged-"))
            .collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].1[..bytes.len()], bytes[..]);
    }

    /// The fixture: a store written by `partner listen` of main before data at rest
    /// (`d31a9a1`), 30 signed notifications, killed with `kill -9` right after the last was
    /// acknowledged in a burst, so captures 20 to 30 are in its journal and not in its tables
    /// (tests/fixtures/README.md).
    fn fixture_store(dir: &Path) -> PathBuf {
        let archive = std::fs::File::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/store-before-encryption.tar.gz"
        ))
        .unwrap();
        tar::Archive::new(flate2::read::GzDecoder::new(archive))
            .unpack(dir)
            .unwrap();
        dir.join("captures.sqlite3")
    }

    const FIXTURE_CAPTURES: i64 = 30;
    const FIXTURE_MARKS: [&[u8]; 2] = [b"FIXTURE-BODY-MARKER", b"FIXTURE-HEADER-MARKER"];

    /// The fixture's 30 captures are all there, and `total` in all.
    fn assert_fixture_complete(reader: &StoreReader, total: i64) {
        assert_eq!(
            reader.count(&CaptureFilter::default()).unwrap(),
            total as u64
        );
        // Senders on four connections: ids in arrival order, events 1 to 30 each once.
        let mut events = std::collections::BTreeSet::new();
        for id in 1..=FIXTURE_CAPTURES {
            let capture = reader.get(id).unwrap();
            let event = capture.fields.event_id.clone().unwrap();
            let n: i64 = event.strip_prefix("ev-fixture-").unwrap().parse().unwrap();
            assert_eq!(capture.verdict, crate::Verdict::Valid);
            let body = capture.body.unwrap();
            assert!(holds(&body, format!("FIXTURE-BODY-MARKER-{n} ").as_bytes()));
            events.insert(n);
        }
        assert_eq!(events, (1..=FIXTURE_CAPTURES).collect());
    }

    #[tokio::test]
    async fn a_store_written_before_encryption_is_encrypted_with_every_capture_journaled_ones_too()
    {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture_store(dir.path());
        // As today's main left it: plain tables holding 19, a journal holding 20 to 30 too.
        assert!(is_plain(&db).unwrap());
        let in_tables: i64 = Connection::open(&db)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM captures", [], |row| row.get(0))
            .unwrap();
        assert_eq!(in_tables, 19);
        let key = key("the key file /k");
        let store = Store::open_with(&db, options(&key)).unwrap();
        assert!(!is_plain(&db).unwrap());
        assert_fixture_complete(&store, FIXTURE_CAPTURES);
        // Searchable and countable as before.
        let found = store
            .count(&CaptureFilter {
                text: Some("ev-fixture-27".into()),
                ..CaptureFilter::default()
            })
            .unwrap();
        assert_eq!(found, 1);
        let next = store.insert(marked("ev-after")).await.unwrap();
        assert_eq!(next.id, FIXTURE_CAPTURES + 1);
        assert!(store.wait_for_tables());
        assert_no_plaintext(dir.path(), &FIXTURE_MARKS);
        drop(store);
        assert_no_plaintext(dir.path(), &FIXTURE_MARKS);
        assert!(!dir.path().join("captures.sqlite3-encrypting").exists());
        // Opened again (by a reader apart): all there, nothing encrypted twice.
        let reader = StoreReader::open_keyed(&db, Some(key.clone())).unwrap();
        assert_fixture_complete(&reader, FIXTURE_CAPTURES + 1);
        drop(reader);
        assert_fixture_complete(
            &Store::open_with(&db, options(&key)).unwrap(),
            FIXTURE_CAPTURES + 1,
        );
    }

    #[test]
    fn a_reader_encrypts_an_old_store_too_and_a_copy_left_by_a_crash_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture_store(dir.path());
        // A crash during an earlier migration left a half-made copy beside the plain store.
        std::fs::write(dir.path().join("captures.sqlite3-encrypting"), b"half").unwrap();
        let key = key("the key file /k");
        let reader = StoreReader::open_keyed(&db, Some(key.clone())).unwrap();
        assert_fixture_complete(&reader, FIXTURE_CAPTURES);
        drop(reader);
        assert!(!is_plain(&db).unwrap());
        assert!(!dir.path().join("captures.sqlite3-encrypting").exists());
        assert_no_plaintext(dir.path(), &FIXTURE_MARKS);
    }

    /// A burst larger than the journal's hand-over: the tables take part of it from memory and
    /// the rest back from the sealed file, and every acknowledged capture is in the tables once,
    /// as it was sent, before and after a restart.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_past_the_hand_over_reaches_the_tables_whole_from_memory_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let key = key("a burst");
        // Room for the small captures (a few hundred bytes each, sent one at a time), never
        // for one of the bursts' (20 KB each): those are read back from the file.
        crate::store::journal::tests::HAND_OVER.with(|set| set.set(Some(8_000)));
        let store = Store::open_with(&db, options(&key)).unwrap();
        crate::store::journal::tests::HAND_OVER.with(|set| set.set(None));
        let mut sent = Vec::new();
        for round in 0..6 {
            sent.push(store.insert(marked(&format!("ev-{round}"))).await.unwrap());
            let burst: Vec<_> = (0..100)
                .map(|n| {
                    let store = store.clone();
                    let mut capture = marked(&format!("ev-{round}-{n}"));
                    capture.body = Some(vec![b'x'; 20_000]);
                    capture.body_size = 20_000;
                    tokio::spawn(async move { store.insert(capture).await.unwrap() })
                })
                .collect();
            for stored in burst {
                sent.push(stored.await.unwrap());
            }
        }
        sent.sort_by_key(|capture| capture.id);
        let ids: Vec<i64> = sent.iter().map(|capture| capture.id).collect();
        assert_eq!(
            ids,
            (1..=606).collect::<Vec<_>>(),
            "ids handed out once each"
        );
        let check = |store: &StoreReader| {
            assert_eq!(store.count(&CaptureFilter::default()).unwrap(), 606);
            for capture in &sent {
                assert_eq!(&store.get(capture.id).unwrap(), capture);
            }
        };
        check(&store);
        let (memory, file) = store.journal_taken();
        assert_eq!(memory + file, 606, "each taken once");
        assert!(
            memory > 0 && file > 0,
            "both ways: {memory} from memory, {file} from the file"
        );
        drop(store);
        let store = Store::open_with(&db, options(&key)).unwrap();
        check(&store);
        assert_eq!(
            store.journal_taken(),
            (0, 0),
            "nothing left to take at a restart"
        );
    }
}

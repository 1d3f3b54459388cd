//! The persistent mode (`SandboxConfig::data_file`, `partner sandbox --data FILE`): the
//! sandbox's data in one SQLite file, loaded whole at start and written through on every
//! change.
//!
//! Why shaped so:
//! - **Memory stays the database the routes read.** The list call's fast paths (the sorted
//!   index cache, each transaction's ready JSON; see `store`) are untouched: at start every row
//!   is loaded into the same structures an in-memory sandbox builds, and the file is only ever
//!   written, never read, while serving.
//! - **Write-through, acknowledged after the commit.** A write changes memory under the
//!   store's lock and, still under it, hands its rows to the [`Journal`] (so the file sees
//!   changes in the order memory did); then it releases the lock and waits for the commit
//!   before it answers. One writer thread takes every batch that queued up while it was
//!   committing the last one and commits them together (group commit; WAL,
//!   `synchronous=FULL`: the commit is fsynced, so an acknowledged write survives a `kill -9`
//!   and a power cut). Readers never wait for an fsync; concurrent writers share one.
//!   The price: a reader can see a change a moment before it is durable (and, if the process
//!   dies in that moment, the change is gone, unacknowledged). If a commit ever fails, the
//!   journal fails for good: every later write is refused (a 500) before it changes anything,
//!   since memory would otherwise drift from the file unnoticed.
//! - **Checked before it is touched.** An existing file is opened read-only first and loaded
//!   whole (schema version, every row parsed); only a file that passes is reopened for
//!   writing. A file that is not SQLite, has a bad row, or was written by a newer schema
//!   (`PRAGMA user_version` above [`SCHEMA_VERSION`]) is refused at start, naming the file and
//!   the problem, with its bytes untouched. An older version would be migrated at the reopen
//!   (there is none yet).
//! - **Encrypted at rest.** The file is a SQLCipher database keyed with the console's data key
//!   (`SandboxConfig::data_key`, a raw 256-bit key: `PRAGMA key = "x'…'"` first thing on every
//!   connection, as the support index does), so its pages and its WAL hold no signing key and
//!   no partner data in the clear. Why the whole file and not the signing-key column alone: the
//!   products, transactions and delivery bodies are lenders' and borrowers' data too, and
//!   SQLCipher costs the write path one page encryption per page written. A file that does not
//!   open with the key is refused at start, naming the key's fingerprint (never the key), and
//!   left as it is; "Reset sandbox" (or another `--data` file) is the way on.
//! - **A plain file is migrated once.** A file written before encryption (it starts with
//!   SQLite's plain header) is checked as any file is, its WAL folded in, then copied whole
//!   into `FILE.encrypting` (`ATTACH … KEY` and `sqlcipher_export`), which is fsynced and
//!   renamed over it. A crash before the rename leaves the plain file whole (the copy is made
//!   again at the next start); after it, the encrypted one.
//! - **One sandbox per file.** The writer holds the file with `locking_mode=EXCLUSIVE` (which
//!   also keeps SQLite's shared-memory index off: one connection needs none), so a second
//!   sandbox on the same file is refused at start ("in use") instead of interleaving writes.
//!
//! What is in the file: clients (id, partner id, and a salted SHA-256 digest of the secret:
//! never the secret), products with their subscriptions and each subscription's signing key
//! (the sandbox *is* the service, and signs with them), transactions with their events,
//! delivery records (with the signed body and signature of a delivery still pending, so it is
//! resumed after a restart: the service promised retries), and the clock's offset. Not in it:
//! tokens (a restart signs every client out), the simulated latency, and the sort cache.

use crate::delivery_record::DeliveryRecord;
use crate::error::Error;
use crate::store::{Change, ProductRecord, Store, TransactionRecord};
use crate::tokens::{Client, SecretDigest};
use bytes::Bytes;
use partner_api::{ApiError, ErrorCode, Product, Secret, Transaction, TransactionEvent};
use partner_seal::DataKey;
use rusqlite::{params, Connection, ErrorCode as SqliteCode, OpenFlags, OptionalExtension};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// The schema version (`PRAGMA user_version`) this code reads and writes.
pub const SCHEMA_VERSION: i64 = 1;

/// How long opening waits for a lock another process holds before calling the file in use.
const BUSY_TIMEOUT: Duration = Duration::from_millis(500);

/// The WAL is cut back to this size after a checkpoint (seeding 100,000 demo transactions
/// writes a WAL as big as the data, ~240 MB, which would otherwise stay on disk).
const WAL_SIZE_LIMIT: i64 = 16 * 1024 * 1024;

/// Most rows the writer puts in one transaction (a batch is never split).
const MAX_BATCH_ROWS: usize = 8192;

const SCHEMA: &str = "
CREATE TABLE settings (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE clients (
    client_id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL,
    secret_salt BLOB NOT NULL,
    secret_digest BLOB NOT NULL
);
CREATE TABLE products (id TEXT PRIMARY KEY, product TEXT NOT NULL);
CREATE TABLE signing_keys (
    product_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL,
    signing_key TEXT NOT NULL,
    PRIMARY KEY (product_id, subscription_id)
);
CREATE TABLE transactions (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    transaction_json TEXT NOT NULL
);
CREATE TABLE events (seq INTEGER PRIMARY KEY, position INTEGER NOT NULL, event TEXT NOT NULL);
CREATE TABLE deliveries (seq INTEGER PRIMARY KEY, record TEXT NOT NULL, body BLOB, signature TEXT);
";

const CLOCK_OFFSET: &str = "clock_offset_ms";

/// One change to the file. Built by the caller (serialising included), so the writer thread
/// only binds values.
pub(crate) enum Row {
    Client {
        client_id: String,
        partner_id: String,
        secret: SecretDigest,
    },
    /// A product and the signing keys of its subscriptions (replacing the ones it had).
    Product {
        id: String,
        product: String,
        signing_keys: Vec<(String, Secret)>,
    },
    Transaction {
        position: u32,
        id: String,
        json: Box<[u8]>,
    },
    Event {
        position: u32,
        event: String,
    },
    /// A new delivery record, with the body and signature it is sent with.
    NewDelivery {
        sequence: u64,
        record: String,
        /// Body and signature, while the notification is still to be sent.
        pending: Option<(Bytes, String)>,
    },
    /// A changed delivery record; a finished one drops its body and signature.
    DeliveryChanged {
        sequence: u64,
        record: String,
        finished: bool,
    },
    /// Records older than the oldest one kept.
    DeliveriesBefore(u64),
    ClockOffset(i64),
}

/// A delivery record read back from a file, with what a pending one is sent with.
#[derive(Debug)]
pub(crate) struct StoredDelivery {
    pub sequence: u64,
    pub record: DeliveryRecord,
    pub pending: Option<(Bytes, String)>,
}

/// Everything a file held.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// In the order they were first stored.
    pub clients: Vec<Client>,
    /// In creation order.
    pub products: Vec<ProductRecord>,
    /// In creation order, each with its events.
    pub transactions: Vec<TransactionRecord>,
    /// Oldest first.
    pub deliveries: Vec<StoredDelivery>,
    pub clock_offset_ms: i64,
}

impl Loaded {
    /// No products and no transactions (clients alone are not data: `--demo` still seeds).
    pub fn holds_no_data(&self) -> bool {
        self.products.is_empty() && self.transactions.is_empty()
    }
}

/// A file opened for writing, with what it held.
pub(crate) struct Opened {
    path: PathBuf,
    conn: Connection,
    pub loaded: Loaded,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened").field("path", &self.path).finish()
    }
}

fn unusable(path: &Path, problem: impl Into<String>) -> Error {
    Error::DataFile {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// SQLite's failure in words a user can act on.
fn describe(error: &rusqlite::Error) -> String {
    match error.sqlite_error_code() {
        Some(SqliteCode::NotADatabase) => {
            "it is not a SQLite database (corrupt, or some other kind of file)".into()
        }
        Some(SqliteCode::DatabaseCorrupt) => format!("the database is corrupt ({error})"),
        Some(SqliteCode::DatabaseBusy | SqliteCode::DatabaseLocked) => {
            "it is in use by another process (is another sandbox running on it?)".into()
        }
        Some(SqliteCode::CannotOpen) => format!("it cannot be opened ({error})"),
        Some(SqliteCode::ReadOnly | SqliteCode::PermissionDenied) => {
            format!("it cannot be written ({error})")
        }
        _ => error.to_string(),
    }
}

/// Creates a new data file readable by its owner alone: it holds the service's copy of the
/// subscriptions' signing keys (the sandbox must sign with them after a restart) and partners'
/// data. SQLite gives the `-wal` and `-shm` files the database file's permissions. On Windows
/// no mode is set: the file inherits the ACL of the data folder under the user's profile, which
/// grants it to the user, the administrators and SYSTEM alone.
fn create_owner_only(path: &Path) -> Result<(), Error> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options
            .open(path)
            .map_err(|e| unusable(path, format!("it cannot be created ({e})")))?;
        // An empty file left by an earlier attempt keeps the mode it was made with.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| unusable(path, format!("its permissions cannot be set ({e})")))?;
    }
    #[cfg(not(unix))]
    options
        .open(path)
        .map_err(|e| unusable(path, format!("it cannot be created ({e})")))?;
    Ok(())
}

/// The first 16 bytes of a plain SQLite file (an encrypted one starts with its random salt).
const PLAIN_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Whether `path` starts as a plain (unencrypted) SQLite file.
fn is_plain(path: &Path) -> Result<bool, Error> {
    use std::io::Read as _;
    let mut header = [0u8; 16];
    let read = std::fs::File::open(path).and_then(|mut file| file.read(&mut header));
    match read {
        Ok(n) => Ok(n == header.len() && &header == PLAIN_HEADER),
        Err(e) => Err(unusable(path, format!("it cannot be read ({e})"))),
    }
}

/// Keys `conn` with `key` as a raw key, first thing, and checks that the file opens with it.
fn apply_key(conn: &Connection, key: &DataKey, path: &Path) -> Result<(), Error> {
    let statement =
        zeroize::Zeroizing::new(format!("PRAGMA key = {};", key.sqlcipher_key().as_str()));
    conn.execute_batch(&statement)
        .map_err(|e| unusable(path, describe(&e)))?;
    let cipher: Option<String> = conn
        .query_row("PRAGMA cipher_version", [], |row| row.get(0))
        .optional()
        .map_err(|e| unusable(path, describe(&e)))?;
    if cipher.is_none() {
        return Err(unusable(
            path,
            "this build's SQLite has no SQLCipher, so the file would not be encrypted; refusing to write signing keys in the clear",
        ));
    }
    // The first read of a page tells whether the key is right.
    match conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| {
        row.get::<_, i64>(0)
    }) {
        Ok(_) => Ok(()),
        Err(e) if e.sqlite_error_code() == Some(SqliteCode::NotADatabase) => {
            Err(Error::DataFileKey {
                path: path.to_path_buf(),
                fingerprint: key.fingerprint(),
            })
        }
        Err(e) => Err(unusable(path, describe(&e))),
    }
}

fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Makes a rename in `path`'s folder durable (Unix; elsewhere the rename is the file system's
/// to keep).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Encrypts the plain data file at `path` with `key`: checked and loaded as any file is (so a
/// file the sandbox would refuse is refused here, untouched), its WAL folded in, copied into
/// `FILE.encrypting` with `sqlcipher_export`, fsynced, and renamed over it. Blocking.
fn encrypt_plain(path: &Path, key: &DataKey) -> Result<(), Error> {
    let target = companion(path, ".encrypting");
    for leftover in [target.clone(), companion(&target, "-journal")] {
        match std::fs::remove_file(&leftover) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(unusable(
                    path,
                    format!(
                        "the unfinished copy {} cannot be removed ({e})",
                        leftover.display()
                    ),
                ))
            }
        }
    }
    let sqlite = |e: rusqlite::Error| unusable(path, describe(&e));
    {
        let plain = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;
        plain.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        // Held alone from here to the close: a sandbox of an earlier version on it is "in use".
        plain
            .pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(sqlite)?;
        let version = check_version(&plain).map_err(|problem| unusable(path, problem))?;
        if version > 0 {
            load(&plain).map_err(|problem| unusable(path, problem))?;
        }
        plain
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(sqlite)?;
        create_owner_only(&target)?;
        let hex = key.to_hex();
        let raw = zeroize::Zeroizing::new(format!("x'{}'", hex.as_str()));
        let target_text = target
            .to_str()
            .ok_or_else(|| unusable(path, "its path is not UTF-8"))?;
        plain
            .execute(
                "ATTACH DATABASE ?1 AS encrypted KEY ?2",
                params![target_text, raw.as_str()],
            )
            .map_err(sqlite)?;
        let exported = (|| {
            plain.query_row("SELECT sqlcipher_export('encrypted')", [], |_| Ok(()))?;
            plain.pragma_update(
                Some(rusqlite::DatabaseName::Attached("encrypted")),
                "user_version",
                version,
            )?;
            plain.execute_batch("DETACH DATABASE encrypted")
        })();
        exported.map_err(sqlite)?;
        // Closing the last connection folds the WAL into the plain file and removes it.
        plain.close().map_err(|(_, e)| sqlite(e))?;
    }
    // Opened for writing: Windows flushes a file only through a handle that may write to it
    // (FlushFileBuffers refuses a read-only one, "Access denied").
    std::fs::OpenOptions::new()
        .write(true)
        .open(&target)
        .and_then(|file| file.sync_all())
        .map_err(|e| unusable(path, format!("its encrypted copy cannot be synced ({e})")))?;
    // A plain WAL left beside the encrypted file would be read into it.
    for suffix in ["-wal", "-shm"] {
        let left = companion(path, suffix);
        match std::fs::metadata(&left) {
            Ok(meta) if suffix == "-wal" && meta.len() > 0 => {
                return Err(unusable(
                    path,
                    "its WAL could not be folded into it before it is encrypted; start a sandbox of the earlier version on it once, or use another file",
                ))
            }
            Ok(_) => std::fs::remove_file(&left)
                .map_err(|e| unusable(path, format!("its {suffix} file cannot be removed ({e})")))?,
            Err(_) => {}
        }
    }
    std::fs::rename(&target, path).map_err(|e| {
        unusable(
            path,
            format!("its encrypted copy cannot take its place ({e})"),
        )
    })?;
    sync_parent(path);
    tracing::info!(path = %path.display(), "the sandbox data file was encrypted with the data key");
    Ok(())
}

/// Opens `path` for the sandbox, encrypted with `key`: a plain file (written before
/// encryption) is encrypted first; an existing file is checked and loaded read-only, then
/// reopened for writing (created with the schema when new or empty). Blocking.
pub(crate) fn open(path: &Path, key: &DataKey) -> Result<Opened, Error> {
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(unusable(path, "it is a directory")),
        Ok(meta) => meta.len() > 0,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(error) => return Err(unusable(path, format!("it cannot be read ({error})"))),
    };
    if existing && is_plain(path)? {
        encrypt_plain(path, key)?;
    }
    let (version, loaded) = if existing {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| unusable(path, describe(&e)))?;
        apply_key(&conn, key, path)?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| unusable(path, describe(&e)))?;
        let version = check_version(&conn).map_err(|problem| unusable(path, problem))?;
        let loaded = if version == 0 {
            Loaded::default()
        } else {
            load(&conn).map_err(|problem| unusable(path, problem))?
        };
        (version, loaded)
    } else {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| unusable(path, format!("its folder cannot be created ({e})")))?;
        }
        create_owner_only(path)?;
        (0, Loaded::default())
    };
    let mut conn = Connection::open(path).map_err(|e| unusable(path, describe(&e)))?;
    apply_key(&conn, key, path)?;
    let prepared = (|| -> Result<(), String> {
        let sqlite = |e: rusqlite::Error| describe(&e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(sqlite)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)
            .map_err(sqlite)?;
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
            .map_err(sqlite)?;
        let now: i64 = tx
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(sqlite)?;
        if now != version {
            return Err(format!(
                "its schema version changed while it was being opened ({version} → {now})"
            ));
        }
        migrate(&tx, version).map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    })();
    prepared.map_err(|problem| unusable(path, problem))?;
    Ok(Opened {
        path: path.to_path_buf(),
        conn,
        loaded,
    })
}

/// Brings a file of `from` (0: new) to [`SCHEMA_VERSION`]. Version 1 is the first; a later
/// version adds its step here.
fn migrate(tx: &rusqlite::Transaction<'_>, from: i64) -> rusqlite::Result<()> {
    if from < 1 {
        tx.execute_batch(SCHEMA)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
}

/// The file's schema version; 0 for an empty database. Refuses a newer version and a database
/// of something else.
fn check_version(conn: &Connection) -> Result<i64, String> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| describe(&e))?;
    if version > SCHEMA_VERSION {
        return Err(format!(
            "it was written by a newer sandbox (schema version {version}; this one knows up \
             to {SCHEMA_VERSION}): use a newer sandbox, or another file"
        ));
    }
    if version < 0 {
        return Err(format!(
            "its schema version {version} is not one of the sandbox's"
        ));
    }
    if version == 0 {
        let tables: Vec<String> = (|| {
            let mut statement =
                conn.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")?;
            let names = statement.query_map([], |row| row.get(0))?;
            names.collect::<rusqlite::Result<Vec<String>>>()
        })()
        .map_err(|e| describe(&e))?;
        if !tables.is_empty() {
            return Err(format!(
                "it is a SQLite database but not a sandbox data file (schema version 0, tables: {})",
                tables.join(", ")
            ));
        }
    }
    Ok(version)
}

fn bad_row(table: &str, key: impl fmt::Display, problem: impl fmt::Display) -> String {
    format!("bad row in table `{table}` ({key}): {problem}")
}

fn sql(table: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("table `{table}` cannot be read: {}", describe(&e))
}

/// Reads and checks every row.
fn load(conn: &Connection) -> Result<Loaded, String> {
    let mut loaded = Loaded::default();

    let offset: Option<i64> = conn
        .query_row(
            "SELECT value FROM settings WHERE key = ?1",
            [CLOCK_OFFSET],
            |row| row.get(0),
        )
        .optional()
        .map_err(sql("settings"))?;
    loaded.clock_offset_ms = match offset {
        Some(ms) if ms < 0 => {
            return Err(bad_row("settings", CLOCK_OFFSET, "a negative clock offset"))
        }
        Some(ms) => ms,
        None => 0,
    };

    {
        let mut statement = conn
            .prepare(
                "SELECT client_id, partner_id, secret_salt, secret_digest FROM clients ORDER BY rowid",
            )
            .map_err(sql("clients"))?;
        let mut rows = statement.query([]).map_err(sql("clients"))?;
        while let Some(row) = rows.next().map_err(sql("clients"))? {
            let (id, partner, salt, digest): (String, String, Vec<u8>, Vec<u8>) = (
                row.get(0).map_err(sql("clients"))?,
                row.get(1).map_err(sql("clients"))?,
                row.get(2).map_err(sql("clients"))?,
                row.get(3).map_err(sql("clients"))?,
            );
            let secret = SecretDigest::from_parts(&salt, &digest).ok_or_else(|| {
                bad_row(
                    "clients",
                    format_args!("client `{id}`"),
                    "the secret digest has the wrong length",
                )
            })?;
            loaded.clients.push(Client::new(id, partner, secret));
        }
    }

    let mut keys: HashMap<String, HashMap<String, Secret>> = HashMap::new();
    {
        let mut statement = conn
            .prepare("SELECT product_id, subscription_id, signing_key FROM signing_keys")
            .map_err(sql("signing_keys"))?;
        let mut rows = statement.query([]).map_err(sql("signing_keys"))?;
        while let Some(row) = rows.next().map_err(sql("signing_keys"))? {
            let product_id: String = row.get(0).map_err(sql("signing_keys"))?;
            let subscription_id: String = row.get(1).map_err(sql("signing_keys"))?;
            let key: String = row.get(2).map_err(sql("signing_keys"))?;
            keys.entry(product_id)
                .or_default()
                .insert(subscription_id, Secret::new(key));
        }
    }
    {
        let mut statement = conn
            .prepare("SELECT id, product FROM products ORDER BY rowid")
            .map_err(sql("products"))?;
        let mut rows = statement.query([]).map_err(sql("products"))?;
        while let Some(row) = rows.next().map_err(sql("products"))? {
            let id: String = row.get(0).map_err(sql("products"))?;
            let text: String = row.get(1).map_err(sql("products"))?;
            let key = format_args!("product `{id}`").to_string();
            let product: Product = serde_json::from_str(&text)
                .map_err(|e| bad_row("products", &key, format_args!("not a product ({e})")))?;
            if product.id != id {
                return Err(bad_row("products", &key, "the product has another id"));
            }
            let mut own_keys = keys.remove(&id).unwrap_or_default();
            let mut signing_keys = HashMap::new();
            for subscription in &product.webhooks {
                let secret = own_keys
                    .remove(&subscription.subscription_id)
                    .ok_or_else(|| {
                        bad_row(
                            "products",
                            &key,
                            format_args!(
                                "subscription `{}` has no signing key",
                                subscription.subscription_id
                            ),
                        )
                    })?;
                signing_keys.insert(subscription.subscription_id.clone(), secret);
            }
            loaded
                .products
                .push(ProductRecord::restored(product, signing_keys));
        }
    }
    if let Some(product_id) = keys.keys().next() {
        return Err(bad_row(
            "signing_keys",
            format_args!("product `{product_id}`"),
            "no such product",
        ));
    }

    {
        let mut statement = conn
            .prepare("SELECT position, id, transaction_json FROM transactions ORDER BY position")
            .map_err(sql("transactions"))?;
        let mut rows = statement.query([]).map_err(sql("transactions"))?;
        while let Some(row) = rows.next().map_err(sql("transactions"))? {
            let position: i64 = row.get(0).map_err(sql("transactions"))?;
            let id: String = row.get(1).map_err(sql("transactions"))?;
            let text: String = row.get(2).map_err(sql("transactions"))?;
            let key = format!("transaction `{id}`");
            if usize::try_from(position).ok() != Some(loaded.transactions.len()) {
                return Err(bad_row(
                    "transactions",
                    &key,
                    format_args!(
                        "position {position} where {} was expected (positions run from 0 without gaps)",
                        loaded.transactions.len()
                    ),
                ));
            }
            let transaction: Transaction = serde_json::from_str(&text).map_err(|e| {
                bad_row(
                    "transactions",
                    &key,
                    format_args!("not a transaction ({e})"),
                )
            })?;
            if transaction.id != id {
                return Err(bad_row(
                    "transactions",
                    &key,
                    "the transaction has another id",
                ));
            }
            loaded.transactions.push(TransactionRecord {
                transaction,
                json: text.into_bytes().into_boxed_slice(),
                events: Vec::new(),
            });
        }
    }
    {
        let mut statement = conn
            .prepare("SELECT seq, position, event FROM events ORDER BY seq")
            .map_err(sql("events"))?;
        let mut rows = statement.query([]).map_err(sql("events"))?;
        while let Some(row) = rows.next().map_err(sql("events"))? {
            let seq: i64 = row.get(0).map_err(sql("events"))?;
            let position: i64 = row.get(1).map_err(sql("events"))?;
            let text: String = row.get(2).map_err(sql("events"))?;
            let key = format!("event {seq}");
            let event: TransactionEvent = serde_json::from_str(&text)
                .map_err(|e| bad_row("events", &key, format_args!("not an event ({e})")))?;
            let record = usize::try_from(position)
                .ok()
                .and_then(|p| loaded.transactions.get_mut(p))
                .ok_or_else(|| {
                    bad_row(
                        "events",
                        &key,
                        format_args!("no transaction at position {position}"),
                    )
                })?;
            record.events.push(event);
        }
    }

    {
        let mut statement = conn
            .prepare("SELECT seq, record, body, signature FROM deliveries ORDER BY seq")
            .map_err(sql("deliveries"))?;
        let mut rows = statement.query([]).map_err(sql("deliveries"))?;
        while let Some(row) = rows.next().map_err(sql("deliveries"))? {
            let seq: i64 = row.get(0).map_err(sql("deliveries"))?;
            let text: String = row.get(1).map_err(sql("deliveries"))?;
            let body: Option<Vec<u8>> = row.get(2).map_err(sql("deliveries"))?;
            let signature: Option<String> = row.get(3).map_err(sql("deliveries"))?;
            let key = format!("delivery {seq}");
            let sequence = u64::try_from(seq)
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(|| bad_row("deliveries", &key, "not a positive sequence number"))?;
            if let Some(previous) = loaded.deliveries.last() {
                if previous.sequence + 1 != sequence {
                    return Err(bad_row(
                        "deliveries",
                        &key,
                        format_args!(
                            "follows delivery {} (records run without gaps)",
                            previous.sequence
                        ),
                    ));
                }
            }
            let record: DeliveryRecord = serde_json::from_str(&text).map_err(|e| {
                bad_row(
                    "deliveries",
                    &key,
                    format_args!("not a delivery record ({e})"),
                )
            })?;
            let pending = match (body, signature) {
                (Some(body), Some(signature)) => Some((Bytes::from(body), signature)),
                (None, None) => None,
                _ => {
                    return Err(bad_row(
                        "deliveries",
                        &key,
                        "a body without a signature or a signature without a body",
                    ))
                }
            };
            loaded.deliveries.push(StoredDelivery {
                sequence,
                record,
                pending,
            });
        }
    }
    Ok(loaded)
}

fn json<T: serde::Serialize>(what: &str, value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("{what} could not be serialised ({e})"))
}

/// The rows of a product (created or changed).
pub(crate) fn product_rows(record: &ProductRecord) -> Result<Vec<Row>, String> {
    Ok(vec![Row::Product {
        id: record.product.id.clone(),
        product: json("the product", &record.product)?,
        signing_keys: record
            .signing_keys()
            .map(|(id, key)| (id.clone(), key.clone()))
            .collect(),
    }])
}

/// The rows a transaction change wrote: the transaction itself when it changed, and each new
/// event.
pub(crate) fn change_rows(store: &Store, change: &Change) -> Result<Vec<Row>, String> {
    let (position, record) = store
        .position_of(&change.transaction_id)
        .ok_or_else(|| format!("transaction `{}` vanished", change.transaction_id))?;
    let mut rows = Vec::with_capacity(change.new_events.len() + 1);
    if change.transaction_notice.is_some() {
        rows.push(Row::Transaction {
            position,
            id: record.transaction.id.clone(),
            json: record.json.clone(),
        });
    }
    for event in &change.new_events {
        rows.push(Row::Event {
            position,
            event: json("an event", event)?,
        });
    }
    Ok(rows)
}

/// Every product, transaction and event of `store` (a seeded demo).
pub(crate) fn store_rows(store: &Store) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for record in store.product_records() {
        rows.extend(product_rows(record)?);
    }
    for (position, record) in (0u32..).zip(store.transactions()) {
        rows.push(Row::Transaction {
            position,
            id: record.transaction.id.clone(),
            json: record.json.clone(),
        });
        for event in &record.events {
            rows.push(Row::Event {
                position,
                event: json("an event", event)?,
            });
        }
    }
    Ok(rows)
}

pub(crate) fn client_row(client: &Client) -> Row {
    Row::Client {
        client_id: client.client_id.clone(),
        partner_id: client.partner_id.clone(),
        secret: client.secret_digest().clone(),
    }
}

fn write_row(tx: &rusqlite::Transaction<'_>, row: &Row) -> rusqlite::Result<()> {
    match row {
        Row::Client {
            client_id,
            partner_id,
            secret,
        } => {
            tx.prepare_cached(
                "INSERT INTO clients (client_id, partner_id, secret_salt, secret_digest)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (client_id) DO UPDATE SET
                     secret_salt = excluded.secret_salt, secret_digest = excluded.secret_digest",
            )?
            .execute(params![
                client_id,
                partner_id,
                secret.salt(),
                secret.digest()
            ])?;
        }
        Row::Product {
            id,
            product,
            signing_keys,
        } => {
            tx.prepare_cached(
                "INSERT INTO products (id, product) VALUES (?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET product = excluded.product",
            )?
            .execute(params![id, product])?;
            tx.prepare_cached("DELETE FROM signing_keys WHERE product_id = ?1")?
                .execute([id])?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO signing_keys (product_id, subscription_id, signing_key) VALUES (?1, ?2, ?3)",
            )?;
            for (subscription_id, key) in signing_keys {
                insert.execute(params![id, subscription_id, key.expose()])?;
            }
        }
        Row::Transaction { position, id, json } => {
            let text = std::str::from_utf8(json)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
            tx.prepare_cached(
                "INSERT INTO transactions (position, id, transaction_json) VALUES (?1, ?2, ?3)
                 ON CONFLICT (position) DO UPDATE SET transaction_json = excluded.transaction_json",
            )?
            .execute(params![position, id, text])?;
        }
        Row::Event { position, event } => {
            tx.prepare_cached("INSERT INTO events (position, event) VALUES (?1, ?2)")?
                .execute(params![position, event])?;
        }
        Row::NewDelivery {
            sequence,
            record,
            pending,
        } => {
            let (body, signature) = match pending {
                Some((body, signature)) => (Some(&body[..]), Some(signature)),
                None => (None, None),
            };
            tx.prepare_cached(
                "INSERT OR REPLACE INTO deliveries (seq, record, body, signature) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![sequence, record, body, signature])?;
        }
        Row::DeliveryChanged {
            sequence,
            record,
            finished,
        } => {
            let sql = if *finished {
                "UPDATE deliveries SET record = ?2, body = NULL, signature = NULL WHERE seq = ?1"
            } else {
                "UPDATE deliveries SET record = ?2 WHERE seq = ?1"
            };
            tx.prepare_cached(sql)?.execute(params![sequence, record])?;
        }
        Row::DeliveriesBefore(sequence) => {
            tx.prepare_cached("DELETE FROM deliveries WHERE seq < ?1")?
                .execute([sequence])?;
        }
        Row::ClockOffset(ms) => {
            tx.prepare_cached(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = MAX(value, excluded.value)",
            )?
            .execute(params![CLOCK_OFFSET, ms])?;
        }
    }
    Ok(())
}

fn write_batch<'a>(
    conn: &mut Connection,
    rows: impl IntoIterator<Item = &'a Row>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for row in rows {
        write_row(&tx, row)?;
    }
    tx.commit()
}

impl Opened {
    /// Writes `rows` in one transaction, before serving (the clients of this run, a seeded
    /// demo). Blocking.
    pub fn write(&mut self, rows: &[Row]) -> Result<(), Error> {
        write_batch(&mut self.conn, rows).map_err(|e| unusable(&self.path, describe(&e)))?;
        // A seeded demo goes through the WAL whole (~240 MB for 100,000 transactions): fold
        // it into the file and cut the WAL back now, not at the first write of the run.
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| unusable(&self.path, describe(&e)))
    }

    /// Hands the connection to the journal's writer thread.
    pub fn into_journal(self) -> Result<Journal, Error> {
        let Opened { path, mut conn, .. } = self;
        let (sender, receiver) = mpsc::channel::<(u64, Vec<Row>)>();
        let (progress, _) = watch::channel(Progress::default());
        let progress = Arc::new(progress);
        let thread = std::thread::Builder::new()
            .name("sandbox-data-file".into())
            .spawn({
                let progress = progress.clone();
                let path = path.clone();
                move || run_writer(&mut conn, &receiver, &progress, &path)
            })
            .map_err(|e| unusable(&path, format!("its writer thread cannot start ({e})")))?;
        Ok(Journal {
            inner: Some(Arc::new(JournalInner {
                path,
                queue: Mutex::new(Queue {
                    next: 0,
                    sender: Some(sender),
                }),
                progress,
                thread: Mutex::new(Some(thread)),
            })),
        })
    }
}

/// The writer's side: batches in, commits, `committed` out.
fn run_writer(
    conn: &mut Connection,
    receiver: &mpsc::Receiver<(u64, Vec<Row>)>,
    progress: &watch::Sender<Progress>,
    path: &Path,
) {
    let mut failed = false;
    let mut batch: Vec<(u64, Vec<Row>)> = Vec::new();
    while let Ok(first) = receiver.recv() {
        let mut rows = first.1.len();
        batch.push(first);
        while rows < MAX_BATCH_ROWS {
            match receiver.try_recv() {
                Ok(next) => {
                    rows += next.1.len();
                    batch.push(next);
                }
                Err(_) => break,
            }
        }
        let last = batch.last().map_or(0, |(sequence, _)| *sequence);
        if !failed {
            match write_batch(conn, batch.iter().flat_map(|(_, rows)| rows)) {
                Ok(()) => progress.send_modify(|p| p.committed = last),
                Err(error) => {
                    failed = true;
                    let problem = describe(&error);
                    tracing::error!(
                        path = %path.display(),
                        %problem,
                        "the sandbox's data file could not be written; every later change is refused"
                    );
                    progress.send_modify(|p| p.failure = Some(Arc::from(problem.as_str())));
                }
            }
        }
        batch.clear();
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Progress {
    /// Every batch up to this number is durable.
    committed: u64,
    /// Why the journal stopped writing, once it has.
    failure: Option<Arc<str>>,
}

struct Queue {
    next: u64,
    /// `None` once closed.
    sender: Option<mpsc::Sender<(u64, Vec<Row>)>>,
}

struct JournalInner {
    path: PathBuf,
    /// Numbering and sending under one lock, so batch numbers reach the writer in order.
    queue: Mutex<Queue>,
    progress: Arc<watch::Sender<Progress>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The write-through side of a data file; without one (in-memory mode) every call is a no-op
/// whose ticket is ready at once. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Journal {
    inner: Option<Arc<JournalInner>>,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            None => f.write_str("Journal(in memory)"),
            Some(inner) => f
                .debug_struct("Journal")
                .field("path", &inner.path)
                .field("committed", &inner.progress.borrow().committed)
                .finish_non_exhaustive(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a write answers when the data file has failed (the details are in the log).
fn not_saved() -> ApiError {
    ApiError::new(
        ErrorCode::Internal,
        "the sandbox could not save this change to its data file",
    )
    .with_details(
        "the data file cannot be written (see the sandbox's log); the sandbox refuses changes \
         until it is restarted",
    )
}

impl Journal {
    /// In-memory mode: nothing is written.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn is_persistent(&self) -> bool {
        self.inner.is_some()
    }

    /// Refuses a write up front once the file has failed.
    pub fn check_writable(&self) -> Result<(), ApiError> {
        match &self.inner {
            Some(inner) if inner.progress.borrow().failure.is_some() => Err(not_saved()),
            _ => Ok(()),
        }
    }

    /// Queues `rows`; never blocks on the disk. Call it under the lock that ordered the
    /// change, so the file sees changes in memory's order.
    /// `rows` is only called in the persistent mode (an in-memory sandbox builds no rows).
    pub fn submit(&self, rows: impl FnOnce() -> Result<Vec<Row>, String>) -> Ticket {
        let Some(inner) = &self.inner else {
            return Ticket::Ready;
        };
        let rows = match rows() {
            Ok(rows) => rows,
            Err(problem) => {
                tracing::error!(path = %inner.path.display(), %problem, "a change could not be written to the data file");
                inner
                    .progress
                    .send_modify(|p| p.failure = Some(Arc::from(problem.as_str())));
                return Ticket::Failed;
            }
        };
        if rows.is_empty() {
            return self.sync_point();
        }
        let mut queue = lock(&inner.queue);
        if inner.progress.borrow().failure.is_some() {
            return Ticket::Failed;
        }
        let Some(sender) = &queue.sender else {
            return Ticket::Failed;
        };
        let sequence = queue.next + 1;
        if sender.send((sequence, rows)).is_err() {
            return Ticket::Failed;
        }
        queue.next = sequence;
        Ticket::Pending(sequence, inner.progress.subscribe())
    }

    /// A ticket for everything queued so far.
    pub fn sync_point(&self) -> Ticket {
        let Some(inner) = &self.inner else {
            return Ticket::Ready;
        };
        let sequence = lock(&inner.queue).next;
        Ticket::Pending(sequence, inner.progress.subscribe())
    }

    /// Stops the writer once it has written everything queued, and closes the file (SQLite
    /// then checkpoints the WAL into it).
    pub async fn close(&self) {
        let Some(inner) = &self.inner else {
            return;
        };
        lock(&inner.queue).sender = None;
        let thread = lock(&inner.thread).take();
        if let Some(thread) = thread {
            let joined = tokio::task::spawn_blocking(move || thread.join()).await;
            if !matches!(joined, Ok(Ok(()))) {
                tracing::error!(path = %inner.path.display(), "the data file's writer thread failed");
            }
        }
    }
}

/// A wait for a write to be durable.
#[derive(Debug, Clone)]
pub(crate) enum Ticket {
    /// Nothing to wait for (in-memory mode).
    Ready,
    /// The file has failed (or is closed): the write is not kept.
    Failed,
    /// Durable once batch `n` is committed.
    Pending(u64, watch::Receiver<Progress>),
}

impl Ticket {
    /// Resolves once the write is durable; an error when it never will be.
    pub async fn durable(self) -> Result<(), ApiError> {
        let (sequence, mut progress) = match self {
            Ticket::Ready => return Ok(()),
            Ticket::Failed => return Err(not_saved()),
            Ticket::Pending(sequence, progress) => (sequence, progress),
        };
        loop {
            {
                let now = progress.borrow_and_update();
                if now.committed >= sequence {
                    return Ok(());
                }
                if now.failure.is_some() {
                    return Err(not_saved());
                }
            }
            if progress.changed().await.is_err() {
                return Err(not_saved());
            }
        }
    }
}

/// Moves the data file at `path` aside so the next start with it begins empty (and seeds the
/// demo again when asked): the app's "Reset sandbox". Call it with the sandbox stopped.
///
/// Nothing is deleted: the file becomes `FILE.reset-<UTC time>` (its `-wal` and `-shm`
/// companions move with it), which a sandbox can open again with `--data`. Returns that path,
/// or `None` when there was no file. A file another process holds (a running sandbox) is
/// refused and left in place.
pub fn reset_data_file(path: &Path) -> Result<Option<PathBuf>, Error> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(unusable(path, "it is a directory")),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(unusable(path, format!("it cannot be read ({error})"))),
    }
    // Fold the WAL into the file first, so the file moved aside is whole by itself. A file
    // SQLite cannot read (corrupt) is moved as it is; one in use is left alone.
    if let Ok(conn) = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE) {
        let checkpoint = conn
            .busy_timeout(BUSY_TIMEOUT)
            .and_then(|()| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())));
        if let Err(error) = &checkpoint {
            if matches!(
                error.sqlite_error_code(),
                Some(SqliteCode::DatabaseBusy | SqliteCode::DatabaseLocked)
            ) {
                return Err(unusable(path, describe(error)));
            }
        }
        drop(conn);
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut aside = PathBuf::from(format!("{}.reset-{stamp}", path.display()));
    let mut n = 1;
    while aside.exists() {
        aside = PathBuf::from(format!("{}.reset-{stamp}-{n}", path.display()));
        n += 1;
    }
    std::fs::rename(path, &aside)
        .map_err(|e| unusable(path, format!("it cannot be moved aside ({e})")))?;
    for suffix in ["-wal", "-shm"] {
        let companion = PathBuf::from(format!("{}{suffix}", path.display()));
        if companion.exists() {
            let target = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&companion, &target).map_err(|e| {
                unusable(
                    path,
                    format!("its {suffix} file cannot be moved aside ({e})"),
                )
            })?;
        }
    }
    tracing::info!(path = %path.display(), aside = %aside.display(), "sandbox data file moved aside");
    Ok(Some(aside))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> DataKey {
        DataKey::generate()
    }

    fn holds(path: &Path, needle: &str) -> bool {
        let mut bytes = std::fs::read(path).unwrap();
        if let Ok(wal) = std::fs::read(companion(path, "-wal")) {
            bytes.extend(wal);
        }
        bytes
            .windows(needle.len())
            .any(|window| window == needle.as_bytes())
    }

    fn client(id: &str) -> Row {
        Row::Client {
            client_id: id.into(),
            partner_id: "partner-1".into(),
            secret: SecretDigest::of(&Secret::new("client-secret")),
        }
    }

    /// A plain file as an earlier version left it after a `kill -9`: the schema, a client and
    /// the clock's offset, the last commit still in the WAL.
    fn plain_file(path: &Path) {
        let live = path.with_extension("live");
        let mut conn = Connection::open(&live).unwrap();
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        {
            let tx = conn.transaction().unwrap();
            migrate(&tx, 0).unwrap();
            tx.commit().unwrap();
        }
        write_batch(&mut conn, &[client("plain-client-xyz")]).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        write_batch(&mut conn, &[Row::ClockOffset(42_000)]).unwrap();
        // The process dies here: the file and its WAL as they are on disk.
        std::fs::copy(&live, path).unwrap();
        std::fs::copy(companion(&live, "-wal"), companion(path, "-wal")).unwrap();
        drop(conn);
        assert!(holds(path, "plain-client-xyz"));
        assert!(is_plain(path).unwrap());
    }

    #[test]
    fn a_plain_file_is_encrypted_in_place_without_loss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.sqlite3");
        plain_file(&path);
        // An unfinished copy of an earlier attempt is made again.
        std::fs::write(companion(&path, ".encrypting"), b"half a copy").unwrap();
        let key = key();
        let opened = open(&path, &key).unwrap();
        assert_eq!(opened.loaded.clock_offset_ms, 42_000);
        assert_eq!(opened.loaded.clients.len(), 1);
        assert_eq!(opened.loaded.clients[0].client_id, "plain-client-xyz");
        drop(opened);
        assert!(!is_plain(&path).unwrap());
        assert!(!holds(&path, "plain-client-xyz"));
        assert!(!companion(&path, ".encrypting").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // And it opens again, encrypted, with everything.
        let again = open(&path, &key).unwrap();
        assert_eq!(again.loaded.clock_offset_ms, 42_000);
        assert_eq!(again.loaded.clients.len(), 1);
    }

    #[tokio::test]
    async fn a_file_under_another_key_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.sqlite3");
        let journal = open(&path, &key()).unwrap().into_journal().unwrap();
        journal
            .submit(|| Ok(vec![Row::ClockOffset(7_000)]))
            .durable()
            .await
            .unwrap();
        journal.close().await;
        let bytes = std::fs::read(&path).unwrap();
        let other = key();
        let error = open(&path, &other).unwrap_err();
        match &error {
            Error::DataFileKey { fingerprint, .. } => assert_eq!(fingerprint, &other.fingerprint()),
            other => panic!("{other:?}"),
        }
        let message = error.to_string();
        assert!(message.contains(&other.fingerprint()), "{message}");
        assert!(!message.contains(&other.to_hex()[..16]), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    fn event_row() -> Row {
        Row::Event {
            position: 0,
            event: "{}".into(),
        }
    }

    #[tokio::test]
    async fn a_committed_write_is_there_when_the_file_is_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.sqlite3");
        let key = key();
        let journal = open(&path, &key).unwrap().into_journal().unwrap();
        let ticket = journal.submit(|| Ok(vec![Row::ClockOffset(42_000)]));
        ticket.durable().await.unwrap();
        journal.close().await;
        let loaded = open(&path, &key).unwrap().loaded;
        assert_eq!(loaded.clock_offset_ms, 42_000);
    }

    #[tokio::test]
    async fn a_failed_commit_fails_the_journal_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.sqlite3");
        let opened = open(&path, &key()).unwrap();
        // A table gone under the writer: its next commit fails.
        opened.conn.execute_batch("DROP TABLE events").unwrap();
        let journal = opened.into_journal().unwrap();
        assert!(journal.check_writable().is_ok());
        let failed = journal.submit(|| Ok(vec![event_row()])).durable().await;
        let error = failed.unwrap_err();
        assert_eq!(error.error_code, ErrorCode::Internal);
        assert!(journal.check_writable().is_err());
        // Later writes are refused at once, even ones that would have worked.
        let later = journal.submit(|| Ok(vec![Row::ClockOffset(1)]));
        assert!(matches!(later, Ticket::Failed));
        assert!(later.durable().await.is_err());
        journal.close().await;
    }

    #[tokio::test]
    async fn rows_that_cannot_be_built_fail_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let journal = open(&dir.path().join("data.sqlite3"), &key())
            .unwrap()
            .into_journal()
            .unwrap();
        let ticket = journal.submit(|| Err("could not serialise".into()));
        assert!(ticket.durable().await.is_err());
        assert!(journal.check_writable().is_err());
        journal.close().await;
    }

    #[tokio::test]
    async fn in_memory_builds_no_rows_and_never_waits() {
        let journal = Journal::none();
        let ticket = journal.submit(|| panic!("rows are not built in memory"));
        assert!(ticket.durable().await.is_ok());
        assert!(journal.sync_point().durable().await.is_ok());
    }
}

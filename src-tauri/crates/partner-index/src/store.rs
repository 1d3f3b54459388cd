//! The file: where it is, how it is opened and keyed, what it holds, and how it goes away.
//!
//! Why shaped so:
//! - One file per connection, named by an id derived from the service's base URL and the
//!   client id ([`index_id`]): the data a connection sees is fixed by exactly those two, so the
//!   app and the CLI find the same file whatever the connection is called locally.
//! - SQLCipher with a raw 256-bit key (`PRAGMA key = "x'…'"`, no passphrase derivation, so
//!   opening costs microseconds) issued first thing on the connection. The key is made once per
//!   index from the OS's randomness and lives only in the keychain ([`SecretSlot::IndexKey`]).
//!   A build without SQLCipher is refused rather than writing borrower data in the clear.
//! - The file is created by us with mode 0600 before SQLite opens it (SQLite gives its `-wal`
//!   and `-shm` files the database file's mode), in a folder of mode 0700.
//! - A file that does not open with its key, or whose key is gone, is an error and is left as
//!   it is: it may be the only copy of what someone needs, and [`forget`] is the way to drop it.
//! - Each transaction is one narrow row of the columns questions filter and sort on, each
//!   indexed, and under the same rowid its JSON as the service sent it (in a table of its own,
//!   so a filter that must scan reads kilobytes, not megabytes) and the words of its request
//!   and response in a contentless FTS5 table (the text is not stored twice). Times are
//!   microseconds since the epoch, so ranges and "newest first" are integer comparisons.
//! - SQLCipher decrypts a page each time it is read from the file, so the page cache is large
//!   (64 MiB): the pages questions use stay decrypted in memory.
//! - A mutex around one connection: writes are batched (a page or more per SQL transaction), and
//!   a question takes milliseconds, so one connection is enough for the app and the CLI.

use crate::columns::Columns;
use crate::error::{Error, Result};
use chrono::{DateTime, TimeZone, Utc};
use partner_api::read::{self, Document};
use partner_api::Secret;
use partner_client::{SecretSlot, SecretStore};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// 2: every column but `id` may be empty (a faithful service may send a transaction with only
/// its `id`), and the words of fields outside request and response are searchable too.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS transactions (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    status TEXT,
    product_id TEXT,
    product_name TEXT,
    request_type TEXT,
    response_status TEXT,
    partner_status TEXT,
    reference_number TEXT,
    requesting_party TEXT,
    loan_number TEXT,
    loan TEXT,
    created INTEGER,
    updated INTEGER
);
CREATE TABLE IF NOT EXISTS transaction_bodies (
    rowid INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    events TEXT
);
CREATE INDEX IF NOT EXISTS transactions_created ON transactions(created, rowid);
CREATE INDEX IF NOT EXISTS transactions_updated ON transactions(updated);
CREATE INDEX IF NOT EXISTS transactions_status ON transactions(status, created);
CREATE INDEX IF NOT EXISTS transactions_product ON transactions(product_id, created);
CREATE INDEX IF NOT EXISTS transactions_request_type ON transactions(request_type, created);
CREATE INDEX IF NOT EXISTS transactions_response_status ON transactions(response_status, created);
CREATE INDEX IF NOT EXISTS transactions_partner_status ON transactions(partner_status COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS transactions_reference ON transactions(reference_number COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS transactions_loan_number ON transactions(loan_number COLLATE NOCASE);
CREATE VIRTUAL TABLE IF NOT EXISTS transactions_text USING fts5(
    request, response, other, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS products (
    id TEXT PRIMARY KEY,
    name TEXT,
    updated INTEGER,
    body TEXT NOT NULL
);
";

/// An index written by schema 1 (every field the sandbox sends required) is a copy of the
/// service and nothing else: it is emptied and refilled by the next sync rather than migrated.
const DROP_SCHEMA_1: &str = "
DROP TABLE IF EXISTS transactions_text;
DROP TABLE IF EXISTS transaction_bodies;
DROP TABLE IF EXISTS transactions;
DROP TABLE IF EXISTS products;
DELETE FROM meta;
";

/// The id of the index of the connection to `base_url` as `client_id`: a UUID (v5) of the two,
/// so it is the same in the app and the CLI and can name a file.
pub fn index_id(base_url: &url::Url, client_id: &str) -> String {
    let name = format!(
        "{}|{}",
        base_url.as_str().trim_end_matches('/'),
        client_id.trim()
    );
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, name.as_bytes()).to_string()
}

/// `<data_dir>/index/<id>.sqlite3`; `id` must be letters, digits, `-` or `_`, so it cannot
/// name a file elsewhere.
pub fn index_path(data_dir: &Path, id: &str) -> Result<PathBuf> {
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(Error::Invalid(
            "an index id is 1 to 128 letters, digits, `-` or `_`".into(),
        ));
    }
    Ok(data_dir.join("index").join(format!("{id}.sqlite3")))
}

fn key_slot(id: &str) -> SecretSlot {
    SecretSlot::IndexKey {
        index_id: id.to_string(),
    }
}

/// What the index holds and how far its sync has come.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexState {
    /// When the last sync or refresh completed (this machine's clock): answers are "as of" it.
    pub as_of: Option<DateTime<Utc>>,
    /// Whether the first fill has gone through the whole listing.
    pub filled: bool,
    /// Where the next fill resumes (items of the `created` ascending listing already stored).
    pub fill_position: u64,
    /// The listing's total when the fill last looked.
    pub fill_total: Option<u64>,
    /// Everything changed at or after this `updated` stamp is still to be walked by a refresh.
    pub watermark: Option<DateTime<Utc>>,
    pub transactions: u64,
    pub products: u64,
}

/// A connection's local index. Cheap to clone: clones share the open file.
#[derive(Debug, Clone)]
pub struct Index {
    id: String,
    path: PathBuf,
    connection: Arc<Mutex<Connection>>,
}

impl Index {
    /// Opens the index `id` under `data_dir`, creating it (and its key in `secrets`) when there
    /// is no file yet. An existing file whose key is missing or wrong is an error, untouched.
    pub fn open(data_dir: &Path, id: &str, secrets: &dyn SecretStore) -> Result<Self> {
        let path = index_path(data_dir, id)?;
        let exists = path.try_exists().map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let key = match secrets.get(&key_slot(id))? {
            Some(key) => key,
            None if exists => return Err(Error::KeyMissing { path }),
            None => {
                let key = new_key();
                secrets.set(&key_slot(id), &key)?;
                key
            }
        };
        if !exists {
            create_private_file(&path)?;
        }
        let connection = Connection::open(&path)?;
        apply_key(&connection, &key, &path)?;
        connection.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;
             PRAGMA temp_store = MEMORY;",
        )?;
        let written_by: Option<i64> = connection
            .query_row(
                "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema'",
                [],
                |r| r.get(0),
            )
            .optional()
            .unwrap_or(None);
        if written_by.is_some_and(|v| v < SCHEMA_VERSION) {
            tracing::info!(index = %id, "an index of an older schema is emptied; the next sync refills it");
            connection.execute_batch(DROP_SCHEMA_1)?;
        }
        connection.execute_batch(SCHEMA)?;
        connection.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS pending_text (
                rowid INTEGER PRIMARY KEY, request TEXT NOT NULL, response TEXT NOT NULL,
                other TEXT NOT NULL
            );",
        )?;
        connection.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?1)",
            params![SCHEMA_VERSION.to_string()],
        )?;
        tracing::debug!(index = %id, "local index opened");
        Ok(Self {
            id: id.to_string(),
            path,
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one SQL transaction.
    pub(crate) fn write<R>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R>,
    ) -> Result<R> {
        let mut connection = self.lock();
        let tx = connection.transaction()?;
        let result = f(&tx)?;
        flush_text(&tx)?;
        tx.commit()?;
        Ok(result)
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        let connection = self.lock();
        Ok(connection
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// What the index holds and how far its sync has come.
    pub fn state(&self) -> Result<IndexState> {
        let connection = self.lock();
        let meta = |key: &str| -> Result<Option<String>> {
            Ok(connection
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?)
        };
        let time = |key: &str| -> Result<Option<DateTime<Utc>>> {
            Ok(meta(key)?
                .and_then(|v| v.parse::<i64>().ok())
                .and_then(from_micros))
        };
        let number = |key: &str| -> Result<Option<u64>> {
            Ok(meta(key)?.and_then(|v| v.parse::<u64>().ok()))
        };
        let count = |table: &str| -> Result<u64> {
            let n: i64 =
                connection.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
            Ok(n.max(0) as u64)
        };
        Ok(IndexState {
            as_of: time(meta_keys::AS_OF)?,
            filled: meta(meta_keys::FILLED)?.as_deref() == Some("1"),
            fill_position: number(meta_keys::FILL_POSITION)?.unwrap_or(0),
            fill_total: number(meta_keys::FILL_TOTAL)?,
            watermark: time(meta_keys::WATERMARK)?,
            transactions: count("transactions")?,
            products: count("products")?,
        })
    }

    /// One transaction by id, as last stored: the service's document with its view.
    pub fn transaction(&self, id: &str) -> Result<Option<Document<read::TransactionView>>> {
        let connection = self.lock();
        let body: Option<String> = connection
            .query_row(
                "SELECT b.body FROM transactions t JOIN transaction_bodies b ON b.rowid = t.rowid
                 WHERE t.id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        body.map(|b| decode_transaction(&b)).transpose()
    }

    /// A transaction's events as last fetched by [`crate::refresh_one`] (`None`: never fetched).
    pub fn events(&self, id: &str) -> Result<Option<Vec<Document<read::EventView>>>> {
        let connection = self.lock();
        let events: Option<Option<String>> = connection
            .query_row(
                "SELECT b.events FROM transactions t JOIN transaction_bodies b ON b.rowid = t.rowid
                 WHERE t.id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        match events.flatten() {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text).map(Some).map_err(Error::json),
        }
    }

    /// Every product, by name (those without one last), each as the service sent it.
    pub fn products(&self) -> Result<Vec<Document<read::ProductView>>> {
        let connection = self.lock();
        let mut statement =
            connection.prepare("SELECT body FROM products ORDER BY name IS NULL, name, id")?;
        let rows = statement.query_map([], |r| r.get::<_, String>(0))?;
        let mut products = Vec::new();
        for body in rows {
            products.push(serde_json::from_str(&body?).map_err(Error::json)?);
        }
        Ok(products)
    }

    /// Closes the file and deletes it, its WAL and shared-memory files, and its key.
    pub fn forget(self, secrets: &dyn SecretStore) -> Result<()> {
        let Self {
            id,
            path,
            connection,
        } = self;
        drop(connection);
        forget_at(&path, &id, secrets)
    }
}

/// Deletes the index `id` under `data_dir` (file, WAL, shared memory) and its key, whether or
/// not it opens: the way out of a file whose key is lost. Absent pieces are not an error.
pub fn forget(data_dir: &Path, id: &str, secrets: &dyn SecretStore) -> Result<()> {
    let path = index_path(data_dir, id)?;
    forget_at(&path, id, secrets)
}

fn forget_at(path: &Path, id: &str, secrets: &dyn SecretStore) -> Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = PathBuf::from(name);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(Error::Io { path: file, source }),
        }
    }
    secrets.delete(&key_slot(id))?;
    tracing::info!(index = %id, "local index forgotten");
    Ok(())
}

fn new_key() -> Secret {
    let bytes: [u8; 32] = rand::random();
    Secret::new(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn apply_key(connection: &Connection, key: &Secret, path: &Path) -> Result<()> {
    let hex = key.expose();
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::WrongKey {
            path: path.to_path_buf(),
        });
    }
    connection.execute_batch(&format!("PRAGMA key = \"x'{hex}'\";"))?;
    let cipher: Option<String> = connection
        .query_row("PRAGMA cipher_version", [], |r| r.get(0))
        .optional()?;
    if cipher.is_none() {
        return Err(Error::Sqlite(
            "this build's SQLite has no SQLCipher, so the index would not be encrypted; refusing to store it".into(),
        ));
    }
    // The first read of a page tells whether the key is right.
    match connection.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    }) {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::NotADatabase =>
        {
            Err(Error::WrongKey {
                path: path.to_path_buf(),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Creates the index's file readable by its owner alone (its folder too): modes 0700 and 0600
/// on Unix. On Windows no mode is set: the file and folder inherit the ACL of the data folder
/// under the user's profile, which grants them to the user, the administrators and SYSTEM.
fn create_private_file(path: &Path) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
        // Owner-only on Unix. On Windows nothing is set: the index lives in the data folder
        // under the user's profile, whose ACL (the user, administrators, SYSTEM) it inherits.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    // The file as its folder above: owner-only on Unix, the profile's ACL on Windows.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map_err(io)?;
    Ok(())
}

/// The keys of the marks a sync keeps beside the copy (the same in every store).
pub mod meta_keys {
    pub const AS_OF: &str = "as_of";
    pub const FILLED: &str = "filled";
    pub const FILL_POSITION: &str = "fill_position";
    pub const FILL_TOTAL: &str = "fill_total";
    pub const WATERMARK: &str = "watermark";
    /// The sort the fill walks in (`created,id`, or empty: the service's own order).
    pub const FILL_ORDER: &str = "fill_order";
}

pub(crate) fn set_meta(tx: &rusqlite::Transaction<'_>, key: &str, value: &str) -> Result<()> {
    tx.prepare_cached("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")?
        .execute(params![key, value])?;
    Ok(())
}

pub(crate) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

pub(crate) fn from_micros(micros: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_micros(micros).single()
}

pub(crate) fn decode_transaction(body: &str) -> Result<Document<read::TransactionView>> {
    serde_json::from_str(body).map_err(Error::json)
}

/// The stored `updated` stamp and JSON of a transaction, to tell whether a listed one changed.
pub(crate) fn stored_version(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
) -> Result<Option<(Option<i64>, String)>> {
    Ok(tx
        .prepare_cached(
            "SELECT t.updated, b.body FROM transactions t JOIN transaction_bodies b ON b.rowid = t.rowid
             WHERE t.id = ?1",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// Stores `transaction` as the service sent it (and its events' JSON array when given;
/// otherwise the events stored stay). Every field but `id` may be absent: its column is then
/// empty (and sorts and filters as empty); values the console does not know are kept as sent.
pub(crate) fn upsert_transaction(
    tx: &rusqlite::Transaction<'_>,
    transaction: &Document<read::TransactionView>,
    events: Option<&str>,
) -> Result<()> {
    let body = serde_json::to_string(transaction).map_err(Error::json)?;
    let row = Columns::of(transaction);
    let existed = tx
        .prepare_cached("SELECT 1 FROM transactions WHERE id = ?1")?
        .exists([&row.id])?;
    let rowid: i64 = tx
        .prepare_cached(
            "INSERT INTO transactions(id, status, product_id, product_name, request_type,
                response_status, partner_status, reference_number, requesting_party, loan_number,
                loan, created, updated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT(id) DO UPDATE SET status = excluded.status,
                product_id = excluded.product_id, product_name = excluded.product_name,
                request_type = excluded.request_type, response_status = excluded.response_status,
                partner_status = excluded.partner_status,
                reference_number = excluded.reference_number,
                requesting_party = excluded.requesting_party, loan_number = excluded.loan_number,
                loan = excluded.loan, created = excluded.created, updated = excluded.updated
             RETURNING rowid",
        )?
        .query_row(
            params![
                row.id,
                row.status,
                row.product_id,
                row.product_name,
                row.request_type,
                row.response_status,
                row.partner_status,
                row.reference_number,
                row.requesting_party,
                row.loan_number,
                row.loan,
                row.created.map(micros),
                row.updated.map(micros),
            ],
            |r| r.get(0),
        )?;
    tx.prepare_cached(
        "INSERT INTO transaction_bodies(rowid, body, events) VALUES (?1, ?2, ?3)
         ON CONFLICT(rowid) DO UPDATE SET body = excluded.body,
            events = COALESCE(excluded.events, transaction_bodies.events)",
    )?
    .execute(params![rowid, body, events])?;
    if existed {
        tx.prepare_cached("DELETE FROM transactions_text WHERE rowid = ?1")?
            .execute([rowid])?;
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO temp.pending_text(rowid, request, response, other)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        rowid,
        row.request_words,
        row.response_words,
        row.other_words
    ])?;
    Ok(())
}

/// Moves the words staged by [`upsert_transaction`] into the FTS5 table in one statement.
/// FTS5 writes out its in-memory terms at every statement that touches it, so a row at a time
/// would merge the index once per transaction stored; one statement per batch merges once.
pub(crate) fn flush_text(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO transactions_text(rowid, request, response, other)
         SELECT rowid, request, response, other FROM temp.pending_text",
    )?
    .execute([])?;
    tx.prepare_cached("DELETE FROM temp.pending_text")?
        .execute([])?;
    Ok(())
}

/// Replaces every product, each as the service sent it.
pub(crate) fn replace_products(
    tx: &rusqlite::Transaction<'_>,
    products: &[Document<read::ProductView>],
) -> Result<()> {
    tx.execute("DELETE FROM products", [])?;
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO products(id, name, updated, body) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for product in products {
        let body = serde_json::to_string(product).map_err(Error::json)?;
        insert.execute(params![
            product.id,
            product.name,
            product.updated.map(micros),
            body
        ])?;
    }
    Ok(())
}

//! The listener's one error type. Messages name what failed and never carry a key, a header
//! value or a body: they may reach a log line or the UI.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the capture store failed: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("the capture store at {path} could not be opened: {source}")]
    OpenStore {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// Another writer holds the store's lock (see `writer_lock`).
    #[error(
        "the capture store {} is in use by another listener, {holder}: stop that one first, \
         or give this one a store of its own (partner listen --db FILE)",
        path.display()
    )]
    StoreInUse { path: PathBuf, holder: String },
    #[error("could not take the capture store's writer lock {}: {source}", path.display())]
    LockStore {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no capture store at {} (nothing has been captured there yet)", .0.display())]
    NoStore(PathBuf),
    #[error("{} is not a capture store (it has no captures table)", .0.display())]
    NotAStore(PathBuf),
    #[error("committing captures failed: {0}")]
    Commit(String),
    /// Writing or reading the acknowledgement journal (`store::journal`) failed.
    #[error("the acknowledgement journal {} failed: {source}", path.display())]
    Journal {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store is encrypted and does not open with the data key given (`store::encryption`):
    /// nothing was read or written. Names the keys by fingerprint and home, never the key.
    #[error(
        "the capture store {} does not open with the data key {given} from {home}{needs}: it \
         was left as it is. Give the key it was encrypted with (PARTNER_DATA_KEY_FILE=FILE or \
         PARTNER_DATA_KEY, or the data.key file of the folder it came from)",
        path.display()
    )]
    StoreKey {
        path: PathBuf,
        /// The fingerprint of the key tried.
        given: String,
        /// Where that key came from.
        home: String,
        /// What the store's key note says it needs ("; it needs the key 1a2b3c4d, kept in …"),
        /// empty when there is no note.
        needs: String,
    },
    /// Encrypting a store written before data at rest failed; the unencrypted store is left as
    /// it was and still opens (`store::encryption`).
    #[error("the capture store {} could not be encrypted ({reason}); it was left as it was", path.display())]
    EncryptStore { path: PathBuf, reason: String },
    /// A record of the acknowledgement journal passed its checksum and is still not a capture.
    #[error("the acknowledgement journal {} is damaged: {reason}", path.display())]
    JournalDamaged { path: PathBuf, reason: String },
    /// A reader opened beside a writer whose tables did not take, within the reader's wait,
    /// the captures its journal held (`store::catch_up`): nothing was read.
    #[error(
        "{captures} captures that {holder} acknowledged are still in the journal of the capture \
         store {}, not yet in its tables, after waiting {waited_secs} s: nothing was read (the \
         answer would have left them out). Try again in a moment; if this repeats, stop {holder} \
         (its captures are written in when it stops, or by this command then)",
        path.display()
    )]
    JournalPending {
        path: PathBuf,
        holder: String,
        captures: usize,
        waited_secs: u64,
    },
    /// A reader found acknowledged captures in the journal, no writer running, and could not
    /// write them into the tables itself (`store::catch_up`): nothing was read.
    #[error(
        "{captures} captures a listener acknowledged are in the journal of the capture store {}, \
         not yet in its tables, and they could not be written in ({reason}): nothing was read \
         (the answer would have left them out). Run `partner listen --db {}` once as the \
         store's owner (it writes them in as it starts), then try again",
        path.display(),
        path.display()
    )]
    JournalUnapplied {
        path: PathBuf,
        captures: usize,
        reason: String,
    },
    #[error("the capture store's writer has stopped")]
    WriterStopped,
    /// A change to the captures waited for the tables to hold every capture acknowledged before
    /// it, and they refused them: it was not made (an import, say, could have taken their ids).
    #[error(
        "the capture store could not write the {waiting} captures acknowledged before this into \
         its tables ({reason}); they are kept in its journal and written as soon as it can, and \
         nothing was changed: free space on its disk (or stop what holds it), then try again"
    )]
    TablesBehind { waiting: usize, reason: String },
    #[error("no capture with id {0}")]
    NoSuchCapture(i64),
    #[error("could not bind or accept on the listening address: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    InvalidInput(String),
    #[error("the request to {url} failed: {reason}")]
    Outbound { url: String, reason: String },
    #[error("line {line} of the import is not a capture: {reason}")]
    Import { line: usize, reason: String },
    #[error("could not encode the export: {0}")]
    Encode(#[from] serde_json::Error),
    /// The evidence bundle's last check found a known secret that masking missed; nothing was
    /// written. Names the form (raw, Base64...), never the secret.
    #[error("the evidence {file} would still hold a secret ({form} form) after redaction, so it was not written")]
    SecretInEvidence { file: &'static str, form: String },
}

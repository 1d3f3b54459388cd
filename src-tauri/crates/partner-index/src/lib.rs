//! A connection's transactions and products kept on this machine, so that every question a
//! support desk asks ("everything that failed yesterday for product X", a loan number, a
//! borrower's name) is answered locally in milliseconds instead of by a walk over every page of
//! a listing that offers only `start`, `limit` and `sort`.
//!
//! - [`Index`]: one SQLite file per connection, `<data dir>/index/<index id>.sqlite3`,
//!   encrypted at rest with SQLCipher (the key, 32 random bytes, in the OS keychain through
//!   [`partner_client::SecretStore`], never in a file or a log), created with permissions 0600.
//!   A file that does not open with its key is an error and is never overwritten.
//! - [`sync`]: the first fill is one walk through the pager, resumable where it stopped; after
//!   it, a refresh walks `sort=-updated` through [`partner_client::PartnerClient::walk_updated_since`]
//!   (the same walker as the missed-notification check) and stops where the index is already
//!   up to date. [`refresh_one`] takes one transaction and its events (a captured notification
//!   names it). Products are relisted whole (a partner has a handful).
//! - [`SyncStore`]: what a sync asks of the store that keeps the copy, so the same walks fill
//!   this machine's file and a team workspace's database (`partner-server`).
//! - [`Filter`] and [`Index::find`], [`Index::counts`], [`Index::export`]: questions answered
//!   from the index, never a page walk; the CSV export has the listing export's shape
//!   ([`partner_client::listing_export::write_csv`]).
//!
//! No Tauri here: the desktop app and the `partner transactions sync|find|forget` commands are
//! thin layers over this crate. Nothing of a transaction (borrower data) goes into a log line
//! or an error message: errors name ids, paths and counts only.

pub mod columns;
pub mod error;
pub mod query;
pub mod store;
pub mod sync;
pub mod sync_store;

pub use columns::Columns;
pub use error::{Error, Result};
pub use query::{
    search_words, write_export, Counts, Export, Filter, Found, LoanField, MAX_FIND_LIMIT, NO_VALUE,
};
pub use store::{forget, index_id, index_path, meta_keys, Index, IndexState};
pub use sync::{
    refresh_one, sync, sync_with, Change, ChangeKind, SyncEnd, SyncPhase, SyncProgress, SyncReport,
};
pub use sync_store::{Mark, SyncStore};

//! `partner server`: a team's workspace on PostgreSQL (issue #50).
//!
//! One laptop's console keeps its captures, index and audit log to itself. A team server keeps
//! them once for everyone: it takes the team's webhooks (judged by the local listener's own
//! verdict, acknowledged once committed), holds the subscriptions' signing keys sealed with a
//! server key, knows the members and their roles, and serves the workspace's calls over HTTP to
//! every console that joins it, each call checked against the caller's role and each write
//! audited under their name.
//!
//! - [`database`]: connecting, the embedded migrations, `init` (the first admin);
//! - [`members`], [`tokens`], [`roles`], [`failed_logins`]: who calls, and what they may do;
//! - [`server_key`], [`signing_keys`]: the secrets kept sealed in the database;
//! - [`intake`], [`capture_writer`], [`retention`]: the webhook endpoint, its batched, durable
//!   commits, and how much of it is kept; [`import`]: captures another listener exported, added;
//! - [`captures`], [`capture_pages`], [`notes`], [`audit`], [`evidence`]: what the workspace
//!   answers ([`capture_pages`]: a page of captures and its count, planned for a million);
//! - [`service`], [`support_index`], [`index_sync`]: the service connection the servers call
//!   with for everyone, and the support index they sync once for every console
//!   ([`support_filter`]: a support desk question in SQL, and its count; [`common_words`]: a
//!   quick lower bound of that count for several words);
//! - [`missed`]: the missed-notification check (partner-local's, over the workspace's captures)
//!   and the recovery of what it found;
//! - [`products`]: the service's products, and subscribing or rotating a key through the
//!   connection, the key kept by the servers;
//! - [`live`]: what one server hears from the others (LISTEN/NOTIFY);
//! - [`api`], [`server`]: the HTTP API and one running server; [`tls`]: its HTTPS, when it has a
//!   certificate.
//!
//! No Tauri here; the `partner` command's `server` subcommand drives it.

pub mod api;
pub mod audit;
pub mod capture_pages;
pub mod capture_writer;
pub mod captures;
pub mod common_words;
pub mod database;
pub mod error;
pub mod evidence;
pub mod failed_logins;
pub mod import;
pub mod index_sync;
pub mod intake;
pub mod live;
pub mod members;
pub mod missed;
pub mod notes;
pub mod products;
pub mod retention;
/// The roles' rule lives with the consoles' client, which shows it before a call is made; the
/// server enforces the same rule from there.
pub use partner_workspace::roles;
pub mod server;
pub mod server_key;
pub mod service;
pub mod signing_keys;
pub mod support_filter;
pub mod support_index;
pub mod tls;
pub mod tokens;

pub use error::{Error, Result};
pub use members::Member;
pub use roles::{Action, Role};
pub use server::{start, RunningServer, ServerConfig};

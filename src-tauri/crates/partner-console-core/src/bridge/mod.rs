//! The shapes that cross the Tauri bridge and are not already wire types of `partner-api`.
//!
//! Every type here derives `ts_rs::TS`; `ui/src/bindings/` is generated from them (and from the
//! `partner-api` resources they contain) by `cargo test -p partner-console-core bindings`, which also
//! fails when the committed files drift from the Rust. No secret value is ever a field here except
//! [`ShownOnceKey::key`], the one showing of a signing key the user just set.
//!
//! One file per service area, each holding the views of that service; all are re-exported here,
//! so `crate::bridge::X` names any of them.

/// What "send again" did to each capture: the library's own type (`partner listen replay`'s).
pub use partner_listener::bulk::{SendReport, SentCapture};
/// The listener's verdict on a notification: the library's own type, one home for its words.
pub use partner_listener::{CaptureFilter, Verdict};
/// Sandbox or production: shown as a colour everywhere (kept in the settings file).
pub use partner_local::Environment;

mod audit;
mod calls;
mod captures;
mod connection_check;
mod connections;
mod deliveries;
mod demo;
mod evidence;
mod jobs;
mod listener;
mod listings;
mod missed;
mod notes;
mod picture;
mod products;
mod receiver_check;
mod scenarios;
mod status;
mod support;
mod token;
mod transaction_notifications;
mod transactions;
mod tunnel;
mod workspace;

pub use audit::*;
pub use calls::*;
pub use captures::*;
pub use connection_check::*;
pub use connections::*;
pub use deliveries::*;
pub use demo::*;
pub use evidence::*;
pub use jobs::*;
pub use listener::*;
pub use listings::*;
pub use missed::*;
pub use notes::*;
pub use picture::*;
pub use products::*;
pub use receiver_check::*;
pub use scenarios::*;
pub use status::*;
pub use support::*;
pub use token::*;
pub use transaction_notifications::*;
pub use transactions::*;
pub use tunnel::*;
pub use workspace::*;

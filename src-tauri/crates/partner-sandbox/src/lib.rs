//! The partner API service as a library: the whole service of the spec, the lender side that a
//! partner never sees, and the webhook dispatcher, behind [`serve`] (or [`Sandbox::start`] for
//! an embedded sandbox) taking a pre-bound listener, so tests and the desktop app start the
//! real thing on a port of their choosing.
//!
//! # Shape
//! - `store`: the data and every rule of a write, free of HTTP; a write that touches a
//!   transaction returns the events it created.
//! - `routes`: thin axum handlers, registered through `utoipa-axum` so each route and its
//!   OpenAPI operation are one declaration (`GET /openapi.json`).
//! - `tokens`: client credentials and tokens (digests only), lifetimes from
//!   `partner_api::TokenLifetime` read against the sandbox [`Clock`].
//! - `error`: every failure, axum's own rejections included, leaves as a
//!   `partner_api::ApiError` body with its status.
//! - `data_file`: the persistent mode (`SandboxConfig::data_file`): everything loaded from a
//!   SQLite file at start, every change written through and durable before its answer.
//!
//! # Which change fires what
//! Every change creates one or more transaction events; each event is delivered as a
//! `urn:svc:partner:transaction:event` `created` notification (`eventId` = `resourceId` = the
//! event's id), and the first event of a change that alters the transaction also stands for
//! the transaction's own notification (`eventId` = that event's id, `resourceId` = the
//! transaction's id). Subscriptions receive only the resource and event types they name. The
//! rule is `partner_api::firing` (`notify` applies it), shared with the console's check for
//! notifications that never arrived.
//!
//! | change | system events (in order) | transaction notification | event notifications |
//! |---|---|---|---|
//! | lender creates (`POST /sandbox/v1/transactions`) | `request:created` | `created` | one `created` |
//! | lender updates (`PATCH /sandbox/v1/transactions/{id}`) | `request:updated` | `updated` | one `created` |
//! | lender adds a custom event (`POST /sandbox/v1/transactions/{id}/events`) | — (the custom event) | — | one `created` |
//! | partner responds (`PATCH /partner/v2/transactions/{id}/response`) | `response:updated`, `response:processed` | `updated` (with `response:updated`'s id) | two `created` |
//!
//! The sandbox validates a response before it accepts it (a bad one is a 400 and changes
//! nothing), so accepting it and processing it are the same step: `response:processed`
//! follows every `response:updated`. `response:failed` is therefore never generated, and no
//! one can send it: custom event types under `urn:svc:partner:transaction` are reserved to the
//! system (a 400).
//! A response PATCH to a completed (locked) transaction is a 409 and fires nothing.

pub mod clock;
pub mod config;
pub mod dispatch;
pub mod error;
pub mod faults;

mod app;
mod data_file;
mod delivery_record;
mod demo;
mod extract;
mod notify;
mod routes;
mod server;
mod state;
mod store;
mod tokens;

pub use clock::Clock;
pub use config::{ClientCredentials, DemoData, SandboxConfig, DEFAULT_BODY_LIMIT};
pub use data_file::{reset_data_file, SCHEMA_VERSION as DATA_FILE_SCHEMA_VERSION};
pub use error::{Error, Result};
/// The key a data file is encrypted with (`SandboxConfig::data_key`).
pub use partner_seal::DataKey;
pub use routes::control::{
    ClockAdvance, ClockState, MAX_ADVANCE_SECONDS, MAX_LATENCY_MILLISECONDS,
};
pub use server::{serve, Sandbox, SandboxHandle};
pub use tokens::partner_id_of;

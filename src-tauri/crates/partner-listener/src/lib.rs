//! The webhook listener of Partner Console: receives the service's notifications, verifies each
//! with `partner_api::signature` over the exact bytes that arrived, keeps every request in a
//! SQLite store (acknowledging only after a durable commit), and feeds live views, forwards
//! (by rules per resource type and event type, [`forward`]), replays, exports, a signature
//! debugger and a tunnel check.
//!
//! No Tauri here: the CLI (`partner listen`) and the desktop app drive the same [`Listener`].
//!
//! The public modules' notes say why they are built as they are, and link to the private parts
//! that do it (the store's journal and tables threads, the search index's limits): they are
//! read by whoever changes this crate, with `cargo doc --document-private-items`, where those
//! links resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod bulk;
pub mod capture;
pub mod classes;
pub mod compare;
mod connections;
pub mod debugger;
pub mod error;
pub mod evidence;
pub mod export;
mod facet_counts;
pub mod flood;
pub mod forward;
pub mod keys;
pub mod limits_text;
pub mod live;
pub mod outbound;
mod readers;
mod redelivery;
pub mod runs;
pub mod search;
pub mod server;
pub mod store;
pub mod test_mode;
pub mod tunnel;
pub mod verdict;
mod watermark;
pub mod writer_lock;
pub mod xml;

pub use capture::{Capture, Header, OutboundKind, OutboundRecord, ResponseRecord};
pub use classes::RetentionClass;
pub use debugger::{
    diagnose, diagnose_capture, diagnose_capture_with, diagnose_with, Diagnosis, KeyRole,
    SignatureReport,
};
pub use error::{Error, Result};
pub use export::{export_with, ExportFormat, ExportReport};
pub use flood::{Fate, FloodSummary, JunkFlood, DEFAULT_JUNK_RATE};
pub use forward::{ForwardRule, ForwardRules};
pub use keys::{KeySource, MemoryKeys, PreviousKey, SubscriptionKeys, UnboundSubscription};
pub use live::{Coalescer, LiveBatch, LiveEvent};
pub use outbound::ReplayOutcome;
pub use redelivery::REDELIVERY_WINDOW;
pub use runs::{last_down_time, ListenerRun};
pub use server::{
    Listener, ListenerConfig, ReceiverCheckGuard, DEFAULT_ADDR, DEFAULT_BODY_LIMIT, DEFAULT_PATH,
    RECEIVER_CHECK_HEADER,
};
pub use store::{
    encrypted_at_rest, ArrivedNotification, CaptureFilter, CaptureList, CapturePage, CaptureQuery,
    ClassSizes, Durability, Facets, Grouping, HitCount, ImportReport, ListedCapture, Retention,
    RetentionSizes, Store, StoreKey, StoreOptions, StoreReader, COUNT_CAP, COUNT_TIME_BUDGET,
    MAX_PAGE_LIMIT,
};
pub use test_mode::TestMode;
pub use tunnel::{check_tunnel, TunnelFailure, TunnelReport};
pub use verdict::{judge, judge_at, MatchedKey, NotificationFields, Verdict};

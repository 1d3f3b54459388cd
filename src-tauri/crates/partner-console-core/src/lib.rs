//! The Partner Console app's services, free of Tauri.
//!
//! Everything the desktop app does except drawing its window lives here, so every service runs
//! in a test with no window, and a second front end (or a headless mode) could drive the same
//! code. Calls go one way: the commands (declared once in [`commands`]) → [`services`] (connections, keys, listener,
//! embedded sandbox, start-up, token, tunnel, captures, exports and jobs, support, missed,
//! evidence, deliveries, links, settings) → the libraries (`partner-client`,
//! `partner-listener`, `partner-sandbox`, `partner-local`, `partner-index`). The services
//! reach outside only through a [`Console`]: its [`EventSink`] (the window), its
//! [`FileDialogs`] and its runtime. The types that cross the bridge live in [`bridge`]
//! (generated into `ui/src/bindings/` by [`bindings`]).

pub mod bindings;
pub mod bridge;
pub mod commands;
pub mod compositing;
pub mod console;
pub mod error;
pub mod events;
pub mod milestones;
pub mod notices;
pub mod notification_diagram;
pub mod scenario;
pub mod services;
pub mod state;

pub use console::{
    AppEvent, Console, DesktopNotice, EventSink, FileChoice, FileDialogs, FolderDialogs,
    NoticeKind, RecordingSink,
};
pub use error::{AppError, ErrorKind, Result};
pub use state::AppState;

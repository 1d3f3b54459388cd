//! A team workspace from a console's side: the client of its HTTP API and the saved login.
//!
//! Why a crate of its own: the `partner` command called the workspace (`partner server`'s
//! `/api/v1`) from its own module, and the desktop app is to join a workspace too ("Team
//! workspace" in its settings). Both need the same calls, the same reading of the server's
//! refusals and the same place for a saved login, so they live here, free of Tauri and of the
//! server itself (no database driver or HTTP server comes with it):
//! - [`client`]: [`WorkspaceClient`], typed calls (`me`, the captures' page, walk and clear,
//!   notes, the audit log) and a generic `get` / `post` for the calls added later; the answers
//!   are the server's own types (the local store's `CapturePage`, `Capture`, and the
//!   workspace's [`Member`], [`Note`], [`AuditEntry`]);
//! - [`error`]: what a call can end in ([`Error`]), in the server's own words, never the token;
//! - [`roles`]: who may do what (the one home of the rule: the server enforces it, the consoles
//!   show it);
//! - [`inspector`]: the inspector's other calls (the filter's counts, a notification's
//!   attempts, a replay by the server), and [`live`]: the workspace's live feed of captures
//!   (Server-Sent Events, with a deadline for silence instead of one for the whole answer);
//! - [`resources`]: the service's resources read through the workspace (a transaction from the
//!   team's index, its events, a product, an answer sent, the service's address);
//! - [`missed`]: the missed-notification check and its recovery, run by the server
//!   ([`MissedRequest`], [`RecoverRequest`]; the answers are partner-local's reports);
//! - [`login`]: where a login is kept (the URL in `workspace.json` in the data folder, the token
//!   in the OS secret store) and which workspace a command acts on (`PARTNER_WORKSPACE` first,
//!   else the saved login, else none).
//!
//! The order of the layers: a command (the CLI's, later the app's) → [`WorkspaceClient`] →
//! HTTP → the server.

pub mod client;
pub mod error;
pub mod inspector;
pub mod live;
pub mod login;
pub mod missed;
pub mod resources;
pub mod roles;

pub use client::{
    AuditEntry, EvidenceBundle, EvidenceRequest, Member, Note, TargetKind, WorkspaceClient,
};
pub use error::{Error, Result};
pub use inspector::CaptureFacets;
pub use live::LiveFeed;
pub use login::{resolve, EnvWorkspace, LoginFile, Logins, Resolved, SavedLogin, Source};
pub use missed::{MissedRequest, NotificationKey, RecoverRequest};
pub use resources::ServiceConnection;
pub use roles::{Action, Role};

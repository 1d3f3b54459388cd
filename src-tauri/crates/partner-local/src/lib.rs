//! What the console keeps on this machine between runs, free of Tauri, so the desktop app and
//! the `partner` command read and write the same things the same way:
//! - [`paths`]: the one data folder (settings, the capture store, the embedded sandbox's data);
//! - [`settings`]: the versioned settings file, written atomically, a corrupt one kept aside;
//! - [`files`]: how such a small file is written whole and an unusable one kept aside;
//! - [`listener_address`]: where the webhook listener listens (a stable default a tunnel can
//!   point at, `PARTNER_LISTENER_ADDR`, a clear error for a port already taken);
//! - [`keys`]: the signing keys the listener verifies with, read from the OS keychain entries
//!   that `partner-client` writes (so a subscription made by the CLI verifies in the app);
//! - [`missed`]: the notifications the service gave up on while the listener was down, worked
//!   out from the API and compared with the captures, and [`recover`]: those sent again, built
//!   and signed as the service would have sent them;
//! - [`audit`]: the audit log of every write the console sent or refused, shared by the app
//!   and the CLI;
//! - [`data_key`]: the key of the data at rest (the secret store, a key file or a variable);
//! - [`environment`]: a connection named by the CLI's variables (`PARTNER_BASE_URL`, …);
//! - [`updates`]: when the app looks for a newer version, where, and what it says about it.

pub mod audit;
pub mod data_key;
pub mod environment;
pub mod error;
pub mod files;
pub mod keys;
pub mod links;
pub mod listener_address;
pub mod missed;
pub mod paths;
pub mod recover;
pub mod settings;
pub mod sorts_tried;
pub mod updates;

pub use audit::{AuditEntry, AuditLog};
pub use error::{Error, Result};
pub use keys::{KeychainHealth, KeychainKeys};
pub use listener_address::{ListenerAddress, PortTaken};
pub use settings::{
    ConnectionNetwork, DesktopNotices, Environment, LoadedSettings, SavedConnection, Settings,
    SettingsFile,
};
pub use sorts_tried::{KeyStanding, KeysTried, SortsTried};

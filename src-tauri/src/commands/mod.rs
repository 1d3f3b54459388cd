//! The Tauri commands: each a thin adapter from a bridge type to a library call and back.
//! Grouped by screen; `handler()` lists them all for the builder.

pub mod calls;
pub mod connections;
pub mod demo;
pub mod listings;
pub mod picture;
pub mod products;
pub mod scenarios;
pub mod support;
pub mod token;
pub mod transactions;
pub mod tunnel;
pub mod updates;
pub mod webhooks;

pub use calls::*;
pub use connections::*;
pub use demo::*;
pub use listings::*;
pub use picture::*;
pub use products::*;
pub use scenarios::*;
pub use support::*;
pub use token::*;
pub use transactions::*;
pub use tunnel::*;
pub use updates::*;
pub use webhooks::*;

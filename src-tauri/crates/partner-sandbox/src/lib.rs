//! The partner API service as a library: the whole service of the spec, the lender side that a
//! partner never sees, and the webhook dispatcher, behind `serve(config, listener, shutdown)` so
//! tests and the desktop app start the real thing on a port of their choosing.

pub mod clock;
pub mod dispatch;

pub use clock::Clock;

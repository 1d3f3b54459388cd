//! partner-client against the real sandbox over HTTP on 127.0.0.1, port 0: one test binary.

// Helpers of tests panic on failure like the tests themselves (clippy.toml allows unwrap in
// #[test] functions only).
#![allow(clippy::unwrap_used)]

mod browsing;
mod calls;
mod connection_check;
mod errors;
mod faults;
mod keychain;
mod network;
mod other_service;
mod rotation;
mod sandbox_control;
mod secrets;
mod subscriptions;
mod support;
mod tokens;
mod updated_since;
mod writes;

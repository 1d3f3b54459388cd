//! The `partner` binary as a process: one test binary, one module per subcommand.

// Helpers of tests panic on failure like the tests themselves (clippy.toml allows unwrap in
// #[test] functions only).
#![allow(clippy::unwrap_used)]

mod check_receiver;
mod client_commands;
mod evidence;
mod link;
mod listen;
mod missed;
mod network;
mod other_service;
mod sandbox;

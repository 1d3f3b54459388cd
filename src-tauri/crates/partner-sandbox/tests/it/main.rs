//! The sandbox's integration tests: one binary, one module per area, real HTTP on 127.0.0.1.

// Helpers of tests panic on failure like the tests themselves (clippy.toml allows unwrap in
// #[test] functions only).
#![allow(clippy::unwrap_used)]

mod admin;
mod config;
mod deliveries;
mod errors;
mod lender;
mod openapi;
mod persistence;
mod products;
mod secrets;
mod support;
mod tokens;
mod transactions;

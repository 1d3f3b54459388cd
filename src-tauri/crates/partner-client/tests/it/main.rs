//! partner-client against the real sandbox over HTTP on 127.0.0.1, port 0: one test binary.

mod browsing;
mod errors;
mod keychain;
mod rotation;
mod secrets;
mod support;
mod tokens;

//! Test helpers shared by the crates' integration tests: real servers on 127.0.0.1 port 0,
//! never mocks of our own code.

pub mod receiver;

pub use receiver::{refused_url, ReceivedRequest, Reply, TestReceiver};

//! Test helpers shared by the crates' integration tests and benchmarks: real servers on
//! 127.0.0.1 port 0, never mocks of our own code.

pub mod har;
pub mod leaks;
pub mod other_service;
pub mod postgres;
pub mod proxy;
pub mod receiver;
pub mod sandbox;
pub mod webhook_receiver;

pub use other_service::{
    Compression, Dialect, ErrorShape, OtherService, PrivateCaService, RateLimit, RetryAfter, Seed,
    ServiceTls,
};
pub use postgres::Postgres;
pub use proxy::{ProxyAuth, TestProxy};
pub use receiver::{refused_url, ReceivedRequest, Reply, TestReceiver};
pub use sandbox::TestSandbox;
pub use webhook_receiver::{
    Arrived, Misbehaviour, ServerCert, TestCa, Tls11Receiver, Transport, WebhookReceiver,
};

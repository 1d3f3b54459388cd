//! The sandbox's integration tests: one binary, one module per area, real HTTP on 127.0.0.1.

mod deliveries;

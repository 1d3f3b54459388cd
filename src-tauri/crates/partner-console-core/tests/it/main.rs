//! The console's services run without a window: a [`Console`] over a recording sink, dialogs
//! answered from a folder and an in-memory keychain, started as the app starts (the embedded
//! sandbox and the listener, both real, over HTTP on loopback), then driven through the same
//! service calls the Tauri commands make. What would have reached the window is read back from
//! the sink.

mod harness;
mod listings_and_products;
mod more_services;
mod network_and_calls;
mod other_service;
mod scenarios;
mod sorts_and_walks;
mod startup_and_connections;
mod support_and_links;
mod team;
mod team_audit;
mod team_inspector;
mod team_missed;
mod webhooks;
mod without_subscription_ids;
mod workspace;

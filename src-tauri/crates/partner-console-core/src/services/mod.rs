//! The app's services: what the commands call, and what never calls a command. Each owns one
//! part of the app (connections, listings, the embedded sandbox, the listener, the signing keys, the
//! settings, start-up, the token, subscriptions, the tunnel check) and does its work through
//! the libraries (`partner-client`, `partner-listener`, `partner-sandbox`, `partner-local`).
//! Calls go one way: commands → services → libraries; `events` only sends to the UI.

pub mod audit;
pub mod calls;
pub mod captures;
pub mod connection_check;
pub mod connection_network;
pub mod connections;
pub mod data_key;
pub mod deliveries;
pub mod demo;
pub mod desktop_notices;
pub mod embedded;
pub mod evidence;
pub mod exports;
pub mod faults;
pub mod file_dialog;
pub mod form;
pub mod go_to;
pub mod instance;
pub mod jobs;
pub mod keys;
pub mod links;
pub mod listener;
pub mod listings;
pub mod missed;
pub mod notes;
pub mod picture;
pub mod products;
pub mod receiver_check;
pub mod scenarios;
pub mod send_again;
pub mod settings;
pub mod signatures;
pub mod startup;
pub mod subscriptions;
pub mod support;
pub mod token;
pub mod transaction_notifications;
pub mod transactions;
pub mod tunnel;
pub mod updates;
pub mod workspace;
pub mod workspace_feed;

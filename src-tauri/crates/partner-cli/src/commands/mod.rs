//! One module per subcommand (`listen` a folder, one file per subcommand of its own;
//! `local_index` holds `transactions sync|find|forget`), and the few they share: `connect` (the
//! connection options), `render` and `listing` (output and paging), `store_args` (the capture
//! store's options), `signal`, `data_key`, `keychain`.

pub mod audit;
pub mod check_receiver;
pub mod connect;
pub mod connections;
pub mod data_key;
pub mod demo;
pub mod docs;
pub mod doctor;
pub mod keychain;
pub mod link;
pub mod listen;
pub mod listing;
pub mod local_index;
pub mod products;
pub mod render;
pub mod sandbox;
pub mod server;
pub mod signal;
pub mod store_args;
pub mod token;
pub mod transactions;
pub mod trigger;
pub mod version;
pub mod workspace;
pub mod workspace_index;

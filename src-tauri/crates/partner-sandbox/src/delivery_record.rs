//! What became of each notification sent to each subscription: the records the dispatcher
//! (`dispatch`) keeps and updates, `GET /sandbox/v1/deliveries` shows and the data file
//! (`data_file`) writes through and loads back.
//!
//! The types are the wire shape of `GET /sandbox/v1/deliveries`, so they live in `partner_api`
//! (one type for the sandbox, the client and the listener's evidence); this module re-exports
//! them where the sandbox's code has always found them (`dispatch` re-exports them in turn).

pub use partner_api::delivery_record::{DeliveryAttempt, DeliveryRecord, DeliveryState};

//! From a change to the notifications it fires: which subscriptions match, and the body each
//! one gets. The dispatcher (`dispatch`) then signs, sends and retries.
//!
//! Which event fires what, and which subscription takes it, is `partner_api::firing`: the same
//! rule the console uses to work out which notifications a receiver should have had (its check
//! for notifications that never arrived), so the two cannot disagree.

use crate::dispatch::Outgoing;
use crate::store::{Change, Store};
use partner_api::firing;

/// The notifications `change` fires, in order: per new event, the transaction's (when the event
/// stands for a change to it) then the event's.
pub fn outgoing(store: &Store, change: &Change, base_url: &str) -> Vec<Outgoing> {
    let Some(product) = store.product(&change.product_id) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for event in &change.new_events {
        for fired in firing::fired_by(&change.transaction_id, event) {
            let mut notification = None;
            for (subscription, key) in product.subscriptions() {
                if fired.is_taken_by(subscription) {
                    let notification = notification
                        .get_or_insert_with(|| fired.notification(&product.product.name, base_url));
                    out.push(Outgoing {
                        subscription_id: subscription.subscription_id.clone(),
                        url: subscription.url.clone(),
                        signing_key: key.clone(),
                        notification: notification.clone(),
                    });
                }
            }
        }
    }
    out
}

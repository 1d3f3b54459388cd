//! From a change to the notifications it fires: which subscriptions match, and the body each
//! one gets. The dispatcher (`dispatch`) then signs, sends and retries.
//!
//! A subscription matches when its `resource` is the notification's resource type and its
//! `events` name the event type. The transaction's own notification carries the id of the
//! event that stands for the change (`eventId`) and the transaction's id (`resourceId`); an
//! event's notification carries the event's id in both (field notes, "Webhooks").

use crate::dispatch::Outgoing;
use crate::store::{Change, Store};
use partner_api::Notification;

/// The notifications `change` fires, in order: the transaction's first, then each event's.
pub fn outgoing(store: &Store, change: &Change, base_url: &str) -> Vec<Outgoing> {
    let Some(product) = store.product(&change.product_id) else {
        return Vec::new();
    };
    let mut bodies = Vec::new();
    if let Some((event_type, event_id)) = &change.transaction_notice {
        let sent = change
            .new_events
            .iter()
            .find(|e| &e.id == event_id)
            .map(|e| e.sent);
        if let Some(sent) = sent {
            bodies.push(Notification::transaction(
                event_id,
                sent,
                *event_type,
                &product.product.name,
                &change.transaction_id,
                base_url,
            ));
        }
    }
    for event in &change.new_events {
        bodies.push(Notification::transaction_event(
            &event.id,
            event.sent,
            &product.product.name,
            &change.transaction_id,
            base_url,
        ));
    }
    let mut out = Vec::new();
    for notification in bodies {
        for (subscription, key) in product.subscriptions() {
            if subscription.resource == notification.meta.resource_type
                && subscription.events.contains(&notification.event_type)
            {
                out.push(Outgoing {
                    subscription_id: subscription.subscription_id.clone(),
                    url: subscription.url.clone(),
                    signing_key: key.clone(),
                    notification: notification.clone(),
                });
            }
        }
    }
    out
}

//! Which change fires which notification: one home for the sandbox's dispatcher (which sends
//! them) and the console's check for notifications that never arrived (which works out what
//! should have been sent from the transactions and events the API shows).
//!
//! The rule (service spec "Resources and event types", field notes "Webhooks" and "Transaction
//! events"):
//! - every transaction event, system or custom, fires a `urn:svc:partner:transaction:event`
//!   `created` notification whose `eventId` and `resourceId` are the event's id;
//! - the system events that stand for a change to the transaction itself also fire the
//!   transaction's notification, `eventId` = that event's id, `resourceId` = the transaction's
//!   id: `request:created` → `created`, `request:updated` and `response:updated` → `updated`.
//!   `response:processed`, `response:failed` and custom events do not (they follow a change
//!   already announced, or are not a change to the transaction);
//! - a subscription receives a notification when its `resource` is the notification's resource
//!   type and its `events` name the event type.
//!
//! A notification to a subscription is identified, across its retries, by the subscription
//! (`Svc-SubscriptionId`), the resource type and the eventId: what receivers deduplicate on
//! (field notes, "Webhooks") and what the console matches captures with.
//!
//! Everything here is a function of what the API returns (a transaction's events), so the same
//! answer comes out whether the sandbox computes it at the change or the console computes it
//! later from a listing: eventIds are event ids, never made up per delivery.

use crate::notification::{event_ref, transaction_ref, EventType, Notification, ResourceType};
use crate::product::WebhookSubscription;
use crate::transaction::{event_types, TransactionEvent};
use chrono::{DateTime, Utc};

/// The event type of the transaction's own notification that an event of type `event_type`
/// (a URN) stands for, if any.
pub fn transaction_notice(event_type: &str) -> Option<EventType> {
    match event_type {
        event_types::REQUEST_CREATED => Some(EventType::Created),
        event_types::REQUEST_UPDATED | event_types::RESPONSE_UPDATED => Some(EventType::Updated),
        _ => None,
    }
}

/// One notification a transaction event fires, before it is addressed to a subscription.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fired {
    pub resource_type: ResourceType,
    pub event_type: EventType,
    /// The id of the event behind it (`$.eventId`).
    pub event_id: String,
    /// `$.meta.resourceId`: the transaction's id or the event's.
    pub resource_id: String,
    pub transaction_id: String,
    /// `$.eventTime`: when the event was sent, which is when the service sends the notification.
    pub event_time: DateTime<Utc>,
}

impl Fired {
    /// The notification's body for a product named `instance_id` on the service at `base_url`.
    pub fn notification(&self, instance_id: &str, base_url: &str) -> Notification {
        match self.resource_type {
            ResourceType::Transaction => Notification::transaction(
                &self.event_id,
                self.event_time,
                self.event_type,
                instance_id,
                &self.transaction_id,
                base_url,
            ),
            ResourceType::TransactionEvent => Notification::transaction_event(
                &self.event_id,
                self.event_time,
                instance_id,
                &self.transaction_id,
                base_url,
            ),
        }
    }

    /// `$.meta.resourceRef`: where the resource is read.
    pub fn resource_ref(&self, base_url: &str) -> String {
        match self.resource_type {
            ResourceType::Transaction => transaction_ref(base_url, &self.transaction_id),
            ResourceType::TransactionEvent => {
                event_ref(base_url, &self.transaction_id, &self.event_id)
            }
        }
    }

    /// Whether `subscription` receives this notification.
    pub fn is_taken_by(&self, subscription: &WebhookSubscription) -> bool {
        takes(subscription, self.resource_type, self.event_type)
    }
}

/// Whether `subscription` receives notifications of `resource_type` and `event_type`.
pub fn takes(
    subscription: &WebhookSubscription,
    resource_type: ResourceType,
    event_type: EventType,
) -> bool {
    subscription.resource == resource_type && subscription.events.contains(&event_type)
}

/// The notifications one event of transaction `transaction_id` fires, in the order the service
/// sends them: the transaction's own first (when the event stands for a change to it), then the
/// event's.
pub fn fired_by(transaction_id: &str, event: &TransactionEvent) -> Vec<Fired> {
    fired_by_event(transaction_id, &event.id, &event.event_type, event.sent)
}

/// [`fired_by`] from an event's parts alone (its id, type and `sent`), for a reader of an event
/// whose other fields a service may leave out (`crate::read::EventView`).
pub fn fired_by_event(
    transaction_id: &str,
    event_id: &str,
    event_type: &str,
    sent: DateTime<Utc>,
) -> Vec<Fired> {
    let mut fired = Vec::with_capacity(2);
    if let Some(notice) = transaction_notice(event_type) {
        fired.push(Fired {
            resource_type: ResourceType::Transaction,
            event_type: notice,
            event_id: event_id.to_owned(),
            resource_id: transaction_id.to_owned(),
            transaction_id: transaction_id.to_owned(),
            event_time: sent,
        });
    }
    fired.push(Fired {
        resource_type: ResourceType::TransactionEvent,
        event_type: EventType::Created,
        event_id: event_id.to_owned(),
        resource_id: event_id.to_owned(),
        transaction_id: transaction_id.to_owned(),
        event_time: sent,
    });
    fired
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str, event_type: &str) -> TransactionEvent {
        TransactionEvent {
            id: id.into(),
            event_type: event_type.into(),
            text: "t".into(),
            from: event_types::SYSTEM.into(),
            sent: "2024-05-01T10:00:00Z".parse().unwrap(),
            comments: None,
            details: None,
        }
    }

    fn subscription(resource: ResourceType, events: &[EventType]) -> WebhookSubscription {
        WebhookSubscription {
            subscription_id: "s".into(),
            url: "https://h/w".into(),
            events: events.to_vec(),
            resource,
        }
    }

    #[test]
    fn the_changes_to_a_transaction_fire_its_own_notification_too() {
        let cases = [
            (event_types::REQUEST_CREATED, Some(EventType::Created)),
            (event_types::REQUEST_UPDATED, Some(EventType::Updated)),
            (event_types::RESPONSE_UPDATED, Some(EventType::Updated)),
            (event_types::RESPONSE_PROCESSED, None),
            (event_types::RESPONSE_FAILED, None),
            ("urn:acme:note", None),
        ];
        for (urn, notice) in cases {
            let fired = fired_by("t1", &event("e1", urn));
            let last = fired.last().unwrap();
            assert_eq!(last.resource_type, ResourceType::TransactionEvent, "{urn}");
            assert_eq!(last.event_type, EventType::Created, "{urn}");
            assert_eq!((&*last.event_id, &*last.resource_id), ("e1", "e1"), "{urn}");
            match notice {
                Some(event_type) => {
                    assert_eq!(fired.len(), 2, "{urn}");
                    assert_eq!(fired[0].resource_type, ResourceType::Transaction);
                    assert_eq!(fired[0].event_type, event_type);
                    assert_eq!((&*fired[0].event_id, &*fired[0].resource_id), ("e1", "t1"));
                }
                None => assert_eq!(fired.len(), 1, "{urn}"),
            }
        }
    }

    #[test]
    fn the_body_and_the_ref_are_the_builders_of_the_notification() {
        let fired = fired_by("t1", &event("e1", event_types::REQUEST_UPDATED));
        let tx = fired[0].notification("acme", "https://svc.example/");
        assert_eq!(
            tx.meta.resource_ref,
            "https://svc.example/partner/v2/transactions/t1"
        );
        assert_eq!(
            tx.meta.resource_ref,
            fired[0].resource_ref("https://svc.example")
        );
        assert_eq!(tx.event_type, EventType::Updated);
        assert_eq!(tx.event_time, fired[0].event_time);
        let ev = fired[1].notification("acme", "https://svc.example");
        assert_eq!(
            ev.meta.resource_ref,
            "https://svc.example/partner/v2/transactions/t1/events/e1"
        );
        assert_eq!(
            ev.meta.resource_ref,
            fired[1].resource_ref("https://svc.example")
        );
        assert_eq!(ev.meta.instance_id, "acme");
    }

    #[test]
    fn a_subscription_takes_only_its_resource_and_event_types() {
        let fired = fired_by("t1", &event("e1", event_types::REQUEST_UPDATED));
        let updates = subscription(ResourceType::Transaction, &[EventType::Updated]);
        let creations = subscription(ResourceType::Transaction, &[EventType::Created]);
        let events = subscription(ResourceType::TransactionEvent, &[EventType::Created]);
        assert!(fired[0].is_taken_by(&updates));
        assert!(!fired[0].is_taken_by(&creations));
        assert!(!fired[0].is_taken_by(&events));
        assert!(fired[1].is_taken_by(&events));
        assert!(!fired[1].is_taken_by(&updates));
        // An event subscription naming only `updated` receives nothing: events are only created.
        let odd = subscription(ResourceType::TransactionEvent, &[EventType::Updated]);
        assert!(fired.iter().all(|f| !f.is_taken_by(&odd)));
    }
}

//! Subscriptions the service names only in its notifications.
//!
//! The spec's webhook subscription (an element of a product's `webhooks`) has no id field: only
//! the `Svc-SubscriptionId` header of each notification names it. Our sandbox adds
//! `subscriptionId` (the field notes), but a service that follows the spec alone may not. Such
//! an element is addressed by what it shows: its product, `url` and `resource`
//! ([`SubscriptionElement`]); a PATCH keeps it by sending those two fields, as such a service
//! matches an element without an id by them (a new `url` and `resource` is a new subscription).
//!
//! Where its signing key rests: in the OS secret store under the element
//! ([`SecretSlot::ElementSigningKey`] and its previous key), never a file. A listener learns the
//! subscription id the first time a notification for the element's URL verifies with that key,
//! and keeps the binding both ways in the store ([`bind`]), so the next start needs no trial and
//! [`verifying_keys`] finds the key by the id the notification names. The elements not bound yet
//! are listed in the store too ([`SecretSlot::UnboundElements`]), because a secret store cannot
//! be enumerated and `partner listen --keychain` has no connection to list products with; an
//! element leaves the list once bound or deleted. The list is kept in parts of at most
//! [`PART_LIMIT`] UTF-16 units, each part a whole JSON list: Windows' Credential Manager keeps
//! at most 2,560 bytes (1,280 UTF-16 units) per entry, about ten elements, and a part torn by a
//! crash between two writes still reads as a list (the elements of the other parts are kept).
//! The list is read, changed and written whole: two programs adding at the same instant could
//! lose one addition (the element's key stays, and a new list entry comes with its next
//! rotation or subscribe).
//!
//! None of these entries is written to a file or a log; the binding and the list are not
//! secrets, and are kept in the store only so that the app and the CLI share them.

use crate::error::Result;
use crate::secrets::{decode_previous, encode_previous, SecretSlot, SecretStore, SigningKeys};
use chrono::{DateTime, Utc};
use partner_api::read::SubscriptionView;
use partner_api::Secret;
use serde::{Deserialize, Serialize};

/// A webhook subscription shown without an id, named by its product, `url` and `resource`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionElement {
    pub product_id: String,
    pub url: String,
    pub resource: String,
}

impl SubscriptionElement {
    /// The element `subscription` of product `product_id`, when it shows a `url` and a
    /// `resource` (without them it cannot be addressed at all).
    pub fn of(product_id: &str, subscription: &SubscriptionView) -> Option<Self> {
        Some(Self {
            product_id: product_id.to_string(),
            url: subscription.url.clone()?,
            resource: subscription.resource.as_ref()?.as_str().to_string(),
        })
    }

    /// Whether `subscription` is this element (same `url` and `resource`, as such a service
    /// matches them; the product is the caller's).
    pub fn is(&self, subscription: &SubscriptionView) -> bool {
        subscription.url.as_deref() == Some(self.url.as_str())
            && subscription
                .resource
                .as_ref()
                .is_some_and(|r| r.as_str() == self.resource)
    }

    /// How a person reads it: `url (resource) of product id`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}) of product {}",
            self.url, self.resource, self.product_id
        )
    }

    fn current_slot(&self) -> SecretSlot {
        SecretSlot::ElementSigningKey {
            product_id: self.product_id.clone(),
            url: self.url.clone(),
            resource: self.resource.clone(),
        }
    }

    fn previous_slot(&self) -> SecretSlot {
        SecretSlot::PreviousElementSigningKey {
            product_id: self.product_id.clone(),
            url: self.url.clone(),
            resource: self.resource.clone(),
        }
    }

    fn binding_slot(&self) -> SecretSlot {
        SecretSlot::ElementBinding {
            product_id: self.product_id.clone(),
            url: self.url.clone(),
            resource: self.resource.clone(),
        }
    }

    fn encode(&self) -> Secret {
        Secret::new(serde_json::to_string(self).unwrap_or_default())
    }

    fn decode(stored: &Secret) -> Option<Self> {
        serde_json::from_str(stored.expose()).ok()
    }
}

/// The element's keys (current, and previous with when it was replaced), or `None`.
pub fn element_keys(
    store: &dyn SecretStore,
    element: &SubscriptionElement,
) -> Result<Option<SigningKeys>> {
    let Some(current) = store.get(&element.current_slot())? else {
        return Ok(None);
    };
    let previous = store
        .get(&element.previous_slot())?
        .and_then(|stored| decode_previous(&stored));
    Ok(Some(SigningKeys { current, previous }))
}

/// The element's two raw entries as read before a change, to put back if the PATCH fails.
#[derive(Debug, Clone)]
pub struct StoredElementKeys {
    element: SubscriptionElement,
    current: Option<Secret>,
    previous: Option<Secret>,
    /// Whether the change put the element on the list of those not bound yet.
    listed: bool,
}

impl StoredElementKeys {
    /// Puts both entries back as they were, and takes the element off the list of those not
    /// bound yet if the change put it there.
    pub fn restore(&self, store: &dyn SecretStore) -> Result<()> {
        for (slot, value) in [
            (self.element.current_slot(), &self.current),
            (self.element.previous_slot(), &self.previous),
        ] {
            match value {
                Some(value) => store.set(&slot, value)?,
                None => store.delete(&slot)?,
            }
        }
        if self.listed {
            unlist(store, &self.element)?;
        }
        Ok(())
    }
}

/// Stores `key` as the element's current key; the one it replaces becomes the previous key,
/// replaced at `now`. An element no notification has bound yet is listed for a listener to
/// try (one whose key the console did not hold before, say, subscribed elsewhere, would
/// otherwise never be bound). Returns what was there before.
pub fn store_element_key(
    store: &dyn SecretStore,
    element: &SubscriptionElement,
    key: &Secret,
    now: DateTime<Utc>,
) -> Result<StoredElementKeys> {
    let mut before = StoredElementKeys {
        element: element.clone(),
        current: store.get(&element.current_slot())?,
        previous: store.get(&element.previous_slot())?,
        listed: false,
    };
    if let Some(old) = &before.current {
        store.set(&element.previous_slot(), &encode_previous(old, now))?;
    }
    store.set(&element.current_slot(), key)?;
    if bound_id(store, element)?.is_none() {
        before.listed = list(store, element)?;
    }
    Ok(before)
}

/// Stops the element's previous key verifying: its entry is removed (the current key stays).
pub fn retire_previous_key(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<()> {
    store.delete(&element.previous_slot())
}

/// A new element's key: stored, and the element listed as not bound yet (so a listener tries
/// it). A binding left by an earlier element of the same product, url and resource is
/// forgotten: the service made a new subscription.
pub fn keep_new_element(
    store: &dyn SecretStore,
    element: &SubscriptionElement,
    key: &Secret,
    now: DateTime<Utc>,
) -> Result<()> {
    forget_binding(store, element)?;
    store_element_key(store, element, key, now)?;
    list(store, element)?;
    Ok(())
}

/// Puts the element on the list of those not bound yet; whether it was not there before.
fn list(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<bool> {
    let mut unbound = unbound_elements(store)?;
    if unbound.contains(element) {
        return Ok(false);
    }
    unbound.push(element.clone());
    write_unbound(store, &unbound)?;
    Ok(true)
}

/// Takes the element off the list of those not bound yet.
fn unlist(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<()> {
    let mut unbound = unbound_elements(store)?;
    let before = unbound.len();
    unbound.retain(|e| e != element);
    if unbound.len() != before {
        write_unbound(store, &unbound)?;
    }
    Ok(())
}

/// Forgets everything kept for an element (deleted): its keys, its binding, its place in the
/// list of elements not bound yet.
pub fn forget_element(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<()> {
    store.delete(&element.current_slot())?;
    store.delete(&element.previous_slot())?;
    forget_binding(store, element)?;
    unlist(store, element)
}

fn forget_binding(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<()> {
    if let Some(id) = store.get(&element.binding_slot())? {
        store.delete(&SecretSlot::SubscriptionBinding {
            subscription_id: id.expose().to_string(),
        })?;
        store.delete(&element.binding_slot())?;
    }
    Ok(())
}

/// The subscription id bound to an element, if a notification has told it.
pub fn bound_id(store: &dyn SecretStore, element: &SubscriptionElement) -> Result<Option<String>> {
    Ok(store
        .get(&element.binding_slot())?
        .map(|id| id.expose().to_string()))
}

/// The element a subscription id was bound to, if any.
pub fn bound_element(
    store: &dyn SecretStore,
    subscription_id: &str,
) -> Result<Option<SubscriptionElement>> {
    Ok(store
        .get(&SecretSlot::SubscriptionBinding {
            subscription_id: subscription_id.to_string(),
        })?
        .and_then(|stored| SubscriptionElement::decode(&stored)))
}

/// Binds `subscription_id` to `element` (a notification naming the id verified with the
/// element's key), both ways, and takes the element off the list of those not bound yet.
pub fn bind(
    store: &dyn SecretStore,
    subscription_id: &str,
    element: &SubscriptionElement,
) -> Result<()> {
    store.set(
        &SecretSlot::SubscriptionBinding {
            subscription_id: subscription_id.to_string(),
        },
        &element.encode(),
    )?;
    store.set(&element.binding_slot(), &Secret::new(subscription_id))?;
    unlist(store, element)
}

/// The elements whose keys the console holds and that no notification has bound yet. An entry
/// that cannot be read is taken as none (it names no secret, and the next write replaces it).
pub fn unbound_elements(store: &dyn SecretStore) -> Result<Vec<SubscriptionElement>> {
    let mut unbound = Vec::new();
    for part in 0.. {
        let Some(stored) = store.get(&SecretSlot::UnboundElements { part })? else {
            break;
        };
        let elements: Vec<SubscriptionElement> =
            serde_json::from_str(stored.expose()).unwrap_or_default();
        for element in elements {
            if !unbound.contains(&element) {
                unbound.push(element);
            }
        }
    }
    Ok(unbound)
}

/// The longest part of the unbound list, in UTF-16 units (what Windows' store counts), with
/// room to spare under its 1,280.
pub const PART_LIMIT: usize = 1_000;

fn write_unbound(store: &dyn SecretStore, unbound: &[SubscriptionElement]) -> Result<()> {
    let parts = unbound_parts(unbound);
    for (part, text) in parts.iter().enumerate() {
        store.set(
            &SecretSlot::UnboundElements { part },
            &Secret::new(text.as_str()),
        )?;
    }
    // The parts a longer list had before.
    for part in parts.len().. {
        let slot = SecretSlot::UnboundElements { part };
        if store.get(&slot)?.is_none() {
            break;
        }
        store.delete(&slot)?;
    }
    Ok(())
}

/// The list as whole JSON lists of at most [`PART_LIMIT`] UTF-16 units each (an element longer
/// than that alone takes a part of its own).
fn unbound_parts(unbound: &[SubscriptionElement]) -> Vec<String> {
    let units = |elements: &[SubscriptionElement]| {
        serde_json::to_string(elements)
            .unwrap_or_default()
            .encode_utf16()
            .count()
    };
    let mut parts: Vec<Vec<SubscriptionElement>> = Vec::new();
    for element in unbound {
        let mut grown = parts.last().cloned().unwrap_or_default();
        grown.push(element.clone());
        match parts.last_mut() {
            Some(last) if units(&grown) <= PART_LIMIT => *last = grown,
            _ => parts.push(vec![element.clone()]),
        }
    }
    parts
        .iter()
        .map(|part| serde_json::to_string(part).unwrap_or_default())
        .collect()
}

/// The keys a receiver verifies a notification naming `subscription_id` with: the id's own
/// (a service that shows ids), else those of the element the id was bound to.
pub fn verifying_keys(
    store: &dyn SecretStore,
    subscription_id: &str,
) -> Result<Option<SigningKeys>> {
    if let Some(keys) = crate::secrets::signing_keys(store, subscription_id)? {
        return Ok(Some(keys));
    }
    match bound_element(store, subscription_id)? {
        Some(element) => element_keys(store, &element),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;

    fn element(url: &str) -> SubscriptionElement {
        SubscriptionElement {
            product_id: "p1".into(),
            url: url.into(),
            resource: "urn:svc:partner:transaction".into(),
        }
    }

    #[test]
    fn a_new_element_waits_unbound_until_a_binding_names_it() {
        let store = MemoryStore::new();
        let (a, b) = (element("https://h/a"), element("https://h/b"));
        let now = Utc::now();
        keep_new_element(&store, &a, &Secret::new("key-a"), now).unwrap();
        keep_new_element(&store, &b, &Secret::new("key-b"), now).unwrap();
        assert_eq!(
            unbound_elements(&store).unwrap(),
            vec![a.clone(), b.clone()]
        );
        assert!(verifying_keys(&store, "whs-1").unwrap().is_none());

        bind(&store, "whs-1", &a).unwrap();
        assert_eq!(unbound_elements(&store).unwrap(), vec![b.clone()]);
        let keys = verifying_keys(&store, "whs-1").unwrap().unwrap();
        assert!(keys.current.ct_eq("key-a"));
        assert_eq!(bound_id(&store, &a).unwrap().as_deref(), Some("whs-1"));

        // A rotation of the element keeps the binding; the old key is the previous one.
        store_element_key(&store, &a, &Secret::new("key-a2"), now).unwrap();
        let keys = verifying_keys(&store, "whs-1").unwrap().unwrap();
        assert!(keys.current.ct_eq("key-a2"));
        assert!(keys.previous.unwrap().key.ct_eq("key-a"));

        forget_element(&store, &a).unwrap();
        forget_element(&store, &b).unwrap();
        assert!(verifying_keys(&store, "whs-1").unwrap().is_none());
        assert!(unbound_elements(&store).unwrap().is_empty());
        assert!(store
            .get(&SecretSlot::UnboundElements { part: 0 })
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_long_unbound_list_is_kept_in_parts_each_short_enough_for_windows() {
        let store = MemoryStore::new();
        let now = Utc::now();
        let elements: Vec<_> = (0..40)
            .map(|i| {
                element(&format!(
                    "https://tunnel.example.ngrok.app/webhooks/partner/{i}"
                ))
            })
            .collect();
        for (i, e) in elements.iter().enumerate() {
            keep_new_element(&store, e, &Secret::new(format!("key-{i}")), now).unwrap();
        }
        assert_eq!(unbound_elements(&store).unwrap(), elements);
        let mut parts = 0;
        while let Some(text) = store
            .get(&SecretSlot::UnboundElements { part: parts })
            .unwrap()
        {
            assert!(text.expose().encode_utf16().count() <= PART_LIMIT);
            parts += 1;
        }
        assert!(parts > 1, "{parts}");

        // Binding all but one leaves one part, the others deleted.
        for (i, e) in elements.iter().enumerate().skip(1) {
            bind(&store, &format!("whs-{i}"), e).unwrap();
        }
        assert_eq!(unbound_elements(&store).unwrap(), vec![elements[0].clone()]);
        assert!(store
            .get(&SecretSlot::UnboundElements { part: 1 })
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_key_set_by_rotation_where_none_was_kept_waits_for_a_binding_and_is_put_back_on_failure() {
        let store = MemoryStore::new();
        let a = element("https://h/a");
        let now = Utc::now();
        // Subscribed elsewhere: the console held no key and listed nothing.
        let before = store_element_key(&store, &a, &Secret::new("key-1"), now).unwrap();
        assert_eq!(unbound_elements(&store).unwrap(), vec![a.clone()]);
        before.restore(&store).unwrap();
        assert!(element_keys(&store, &a).unwrap().is_none());
        assert!(unbound_elements(&store).unwrap().is_empty());

        store_element_key(&store, &a, &Secret::new("key-1"), now).unwrap();
        bind(&store, "whs-1", &a).unwrap();
        let before = store_element_key(&store, &a, &Secret::new("key-2"), now).unwrap();
        assert!(
            unbound_elements(&store).unwrap().is_empty(),
            "a bound one stays bound"
        );
        retire_previous_key(&store, &a).unwrap();
        let keys = element_keys(&store, &a).unwrap().unwrap();
        assert!(keys.current.ct_eq("key-2"));
        assert!(keys.previous.is_none());
        before.restore(&store).unwrap();
        assert_eq!(bound_id(&store, &a).unwrap().as_deref(), Some("whs-1"));
    }

    #[test]
    fn a_new_element_where_a_bound_one_was_is_unbound_again() {
        let store = MemoryStore::new();
        let a = element("https://h/a");
        keep_new_element(&store, &a, &Secret::new("key-1"), Utc::now()).unwrap();
        bind(&store, "whs-old", &a).unwrap();
        keep_new_element(&store, &a, &Secret::new("key-2"), Utc::now()).unwrap();
        assert!(bound_id(&store, &a).unwrap().is_none());
        assert!(verifying_keys(&store, "whs-old").unwrap().is_none());
        assert_eq!(unbound_elements(&store).unwrap(), vec![a]);
    }
}

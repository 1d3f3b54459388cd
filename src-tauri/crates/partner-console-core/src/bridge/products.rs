//! Product detail: new products and subscriptions, signing keys shown once, re-pointing subscriptions to a new tunnel.

use partner_api::{EventType, ResourceType};
use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

/// The create-product form.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewProductForm {
    pub name: String,
    pub listing_name: String,
    pub request_types: Vec<String>,
    pub interface_url: Option<String>,
}

/// Add a subscription to a product; no key means the app generates a compliant one.
// Its Debug print leaves the key out (below).
#[derive(Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewSubscriptionForm {
    pub product_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub resource: ResourceType,
    pub signing_key: Option<String>,
}

/// Rotate a subscription's key: a pasted key, or none to generate one.
// Its Debug print leaves the key out (below).
#[derive(Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RotateKeyForm {
    pub product_id: String,
    pub subscription_id: String,
    pub signing_key: Option<String>,
}

/// A signing key the user just set, shown once; the app keeps it in the keychain.
// Its Debug print leaves the key out (below).
#[derive(Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShownOnceKey {
    pub subscription_id: String,
    pub key: String,
    /// Whether the previous key still verifies until the user retires it.
    pub previous_still_verifies: bool,
}

/// What a Debug print shows of a key: whether there is one.
fn key_shown(key: Option<&str>) -> &'static str {
    match key {
        Some(_) => "[redacted]",
        None => "none",
    }
}

impl fmt::Debug for NewSubscriptionForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewSubscriptionForm")
            .field("product_id", &self.product_id)
            .field("url", &self.url)
            .field("events", &self.events)
            .field("resource", &self.resource)
            .field("signing_key", &key_shown(self.signing_key.as_deref()))
            .finish()
    }
}

impl fmt::Debug for RotateKeyForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RotateKeyForm")
            .field("product_id", &self.product_id)
            .field("subscription_id", &self.subscription_id)
            .field("signing_key", &key_shown(self.signing_key.as_deref()))
            .finish()
    }
}

impl fmt::Debug for ShownOnceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShownOnceKey")
            .field("subscription_id", &self.subscription_id)
            .field("key", &key_shown(Some(&self.key)))
            .field("previous_still_verifies", &self.previous_still_verifies)
            .finish()
    }
}

/// The keys the listener verifies a subscription's notifications with (never their values).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionKeys {
    pub subscription_id: String,
    pub has_current: bool,
    pub has_previous: bool,
}

/// A subscription the service shows without an id (its product's element of that `url` and
/// `resource`): what the console keeps for it, and the id the listener learned, never a key.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElementKeys {
    /// How the screen names it to rotate, edit or delete it: `RESOURCE=URL`, as `partner` takes it.
    pub subscription: String,
    pub url: String,
    pub resource: String,
    /// Whether its signing key is in the keychain (kept under the element).
    pub has_current: bool,
    /// Whether a replaced key still verifies (until it is retired).
    pub has_previous: bool,
    /// The subscription id the listener bound to it: the one the first notification that
    /// verified with its key named. None while it waits for that notification.
    pub bound_id: Option<String>,
}

/// A subscription's new URL, events or resource (each left as it is when none).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionChangeForm {
    pub product_id: String,
    pub subscription_id: String,
    pub url: Option<String>,
    pub events: Option<Vec<EventType>>,
    pub resource: Option<ResourceType>,
}

/// Subscriptions of the active connection under an old base URL, and where they would go.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointOffer {
    pub from: String,
    pub to: String,
    pub subscriptions: Vec<RepointedSubscription>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointedSubscription {
    pub product_id: String,
    pub subscription_id: String,
    pub url: String,
    pub new_url: String,
}

/// What a re-pointing did.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RepointResult {
    pub changed: Vec<RepointedSubscription>,
    /// One sentence per product that could not be changed.
    pub failures: Vec<String>,
}

//! Product detail: new products and subscriptions, signing keys shown once, re-pointing subscriptions to a new tunnel.

use partner_api::{EventType, ResourceType};
use serde::{Deserialize, Serialize};
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
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewSubscriptionForm {
    pub product_id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub resource: ResourceType,
    pub signing_key: Option<String>,
}

/// Rotate a subscription's key: a pasted key, or none to generate one.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RotateKeyForm {
    pub product_id: String,
    pub subscription_id: String,
    pub signing_key: Option<String>,
}

/// A signing key the user just set, shown once; the app keeps it in the keychain.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShownOnceKey {
    pub subscription_id: String,
    pub key: String,
    /// Whether the previous key still verifies until the user retires it.
    pub previous_still_verifies: bool,
}

/// The keys the listener verifies a subscription's notifications with (never their values).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionKeys {
    pub subscription_id: String,
    pub has_current: bool,
    pub has_previous: bool,
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

//! The other service's notifications: a signed `POST` to a subscription's URL, as the spec's
//! "Events" section describes it, with this implementation's own HMAC (not partner-api's).
//!
//! Why it exists: in the `no_subscription_ids` dialect a subscription's id is said nowhere but
//! in the `Svc-SubscriptionId` header of its notifications, so a receiver's handling of such a
//! service can only be tested by receiving them. One attempt per call, no retries: a test
//! drives the deliveries it needs.

use super::{OtherService, Value};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

/// One notification as sent, and the receiver's answer.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The subscription id sent in `Svc-SubscriptionId`.
    pub subscription_id: String,
    pub event_id: String,
    /// The receiver's status.
    pub status: u16,
}

impl OtherService {
    /// Sends a `created` notification of the subscription of `product_id` with this `url` and
    /// `resource`, signed with the key the service holds for it, to its URL. `Err` says why it
    /// could not be sent (no such subscription, or the request failed).
    pub async fn notify(
        &self,
        product_id: &str,
        url: &str,
        resource: &str,
    ) -> Result<Sent, String> {
        let (subscription_id, key) =
            self.subscription_at(product_id, url, resource)
                .ok_or_else(|| {
                    format!("product {product_id} has no subscription {url} ({resource})")
                })?;
        self.send_notification(url, &subscription_id, &key, product_id, resource)
            .await
    }

    /// Sends a `created` notification to `url` naming `subscription_id`, signed with `key`
    /// (any key: a test sends one the subscription does not have).
    pub async fn send_notification(
        &self,
        url: &str,
        subscription_id: &str,
        key: &str,
        product_id: &str,
        resource: &str,
    ) -> Result<Sent, String> {
        let event_id = uuid::Uuid::new_v4().to_string();
        let instance = self
            .products()
            .into_iter()
            .find(|p| p.get("id").and_then(Value::as_str) == Some(product_id))
            .and_then(|p| p.get("name").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        let transaction = uuid::Uuid::new_v4().to_string();
        let body = json!({
            "eventId": event_id,
            "eventTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "eventType": "created",
            "meta": {
                "instanceId": instance,
                "resourceId": transaction,
                "resourceType": resource,
                "resourceRef": format!("{}/partner/v2/transactions/{transaction}", self.base_url()),
            }
        })
        .to_string();
        let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes())
            .map_err(|e| format!("the key cannot key an HMAC ({e})"))?;
        mac.update(body.as_bytes());
        let signature =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let response = reqwest::Client::new()
            .post(url)
            .header("Svc-Signature", signature)
            .header("Svc-SubscriptionId", subscription_id)
            .header("Svc-Environment", "prod")
            .header("Content-Type", "application/json")
            .timeout(std::time::Duration::from_secs(30))
            .body(body)
            .send()
            .await
            .map_err(|e| format!("the notification could not be sent ({e})"))?;
        Ok(Sent {
            subscription_id: subscription_id.to_string(),
            event_id,
            status: response.status().as_u16(),
        })
    }
}

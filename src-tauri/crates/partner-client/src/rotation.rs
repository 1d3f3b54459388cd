//! Signing-key rotation: a new key on the server and in the keychain, the old one kept for a while.
//!
//! Order matters, because the service never returns a key: a key it holds that the console lost
//! could only be replaced by another rotation. So the keychain is written first (the new key as
//! current, the old one as previous with the time it was replaced), then the service is patched;
//! if the PATCH fails the keychain is put back as it was. A receiver reading the keychain in
//! between verifies with either key, which is exactly what the previous slot is for.
//!
//! The PATCH is a JSON merge patch, where an array replaces the whole array: every other
//! subscription of the product is listed by its `subscriptionId` alone, which keeps it as it is,
//! and the rotated one carries its new `signingkey`. A subscription created by someone else
//! between the read and the PATCH would be dropped; the service offers no precondition to
//! prevent that, so the window is kept as short as one GET and one PATCH.

use crate::client::PartnerClient;
use crate::error::{ClientError, Result, RuleError};
use crate::secrets::{store_signing_key, SecretStore};
use chrono::{DateTime, Utc};
use partner_api::{signing_key, NewProduct, Product, Secret, WebhookSubscriptionInput};
use serde::Serialize;

/// What a rotation did (the key itself stays in the keychain).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rotation {
    pub product: Product,
    pub subscription_id: String,
    pub replaced_at: DateTime<Utc>,
    /// Whether the key was generated (rather than given by the caller).
    pub generated: bool,
}

#[derive(Serialize)]
struct WebhooksPatch<'a> {
    webhooks: &'a [WebhookSubscriptionInput],
}

impl PartnerClient {
    /// Replaces the signing key of one subscription of a product. A given key is checked against
    /// the spec's rule first; without one, a compliant key is generated.
    pub async fn rotate_signing_key(
        &self,
        store: &dyn SecretStore,
        product_id: &str,
        subscription_id: &str,
        new_key: Option<Secret>,
    ) -> Result<Rotation> {
        let (key, generated) = match new_key {
            Some(key) => {
                signing_key::check(key.expose()).map_err(RuleError::from)?;
                (key, false)
            }
            None => (signing_key::generate(), true),
        };
        let product = self.get_product(product_id).await?;
        if !product
            .webhooks
            .iter()
            .any(|w| w.subscription_id == subscription_id)
        {
            return Err(ClientError::NotFound {
                message: format!(
                    "product {} has no subscription {}",
                    product.id,
                    subscription_id.chars().take(64).collect::<String>()
                ),
            });
        }
        let webhooks: Vec<WebhookSubscriptionInput> = product
            .webhooks
            .iter()
            .map(|w| {
                if w.subscription_id == subscription_id {
                    WebhookSubscriptionInput {
                        subscription_id: Some(w.subscription_id.clone()),
                        signing_key: Some(key.clone()),
                        ..WebhookSubscriptionInput::default()
                    }
                } else {
                    WebhookSubscriptionInput::keep(w)
                }
            })
            .collect();
        let patch = serde_json::to_value(WebhooksPatch {
            webhooks: &webhooks,
        })
        .map_err(|e| ClientError::input(format!("the patch cannot be encoded ({e})")))?;

        let replaced_at = self.clock().now();
        let before = store_signing_key(store, subscription_id, &key, replaced_at)?;
        let patched = match self.patch_product(&product.id, &patch).await {
            Ok(product) => product,
            Err(error) => {
                if let Err(restore) = before.restore(store) {
                    tracing::warn!(error = %restore, "could not put the keychain back after a failed rotation");
                }
                return Err(error);
            }
        };
        tracing::info!(product = %patched.id, subscription = subscription_id, generated, "signing key rotated");
        Ok(Rotation {
            product: patched,
            subscription_id: subscription_id.to_string(),
            replaced_at,
            generated,
        })
    }

    /// Creates a product and keeps the signing keys of its new subscriptions in the keychain,
    /// matched to the service's subscription ids by position (the service keeps the order).
    pub async fn create_product_storing_keys(
        &self,
        store: &dyn SecretStore,
        product: &NewProduct,
    ) -> Result<Product> {
        let created = self.create_product(product).await?;
        if created.webhooks.len() != product.webhooks.len() {
            return Err(ClientError::Server {
                status: 201,
                message: format!(
                    "the product was created with {} subscriptions where {} were sent; its keys were not stored",
                    created.webhooks.len(),
                    product.webhooks.len()
                ),
                raw_body: None,
            });
        }
        let now = self.clock().now();
        for (sent, made) in product.webhooks.iter().zip(&created.webhooks) {
            if let Some(key) = &sent.signing_key {
                store_signing_key(store, &made.subscription_id, key, now)?;
            }
        }
        Ok(created)
    }
}

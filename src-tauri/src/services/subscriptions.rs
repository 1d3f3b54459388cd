//! Webhook subscriptions of the active connection: add, rotate and retire keys, edit, delete,
//! re-point. `partner-client` does the service's side and the keychain's; this module keeps the
//! listener's key cache ([`partner_local::KeychainKeys`]) in step, so a change verifies at once
//! without waiting for the next load from the keychain.
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::Secret;
use partner_client::{NewSubscription, PartnerClient, SecretSlot, Subscribed};
use partner_listener::{KeySource, PreviousKey, SubscriptionKeys};

/// Adds a subscription (the key goes to the keychain first) and hands its key to the listener.
/// Shared by the Products screen and the embedded sandbox's demo subscription.
pub async fn subscribe(
    client: &PartnerClient,
    state: &AppState,
    product_id: &str,
    subscription: &NewSubscription,
    key: Option<Secret>,
) -> Result<Subscribed> {
    let subscribed = client
        .add_subscription(&state.secrets, product_id, subscription, key)
        .await?;
    state.keys.remember(
        &subscribed.subscription_id,
        SubscriptionKeys::new(subscribed.key.clone()),
    );
    Ok(subscribed)
}

/// A rotated key as the listener now holds it: the new current key, and whether the old one
/// still verifies.
#[derive(Debug)]
pub struct Rotated {
    pub subscription_id: String,
    pub key: Secret,
    pub previous_still_verifies: bool,
}

/// Rotates a subscription's key (keychain first, then the PATCH) and gives the listener both.
pub async fn rotate(
    state: &AppState,
    product_id: &str,
    subscription_id: &str,
    pasted: Option<Secret>,
) -> Result<Rotated> {
    let client = state.client()?;
    let rotation = client
        .rotate_signing_key(state.secrets.as_ref(), product_id, subscription_id, pasted)
        .await?;
    let stored = partner_client::signing_keys(state.secrets.as_ref(), &rotation.subscription_id)?
        .ok_or_else(|| {
            AppError::new(
                ErrorKind::Keychain,
                "The new key is not in the keychain.",
                "Unlock the keychain and rotate again.",
            )
        })?;
    let previous = stored.previous.map(|p| PreviousKey {
        key: p.key,
        replaced_at: p.replaced_at,
    });
    let previous_still_verifies = previous.is_some();
    state.keys.remember(
        &rotation.subscription_id,
        SubscriptionKeys {
            current: stored.current.clone(),
            previous,
        },
    );
    Ok(Rotated {
        subscription_id: rotation.subscription_id,
        key: stored.current,
        previous_still_verifies,
    })
}

/// Stops the previous key verifying: removed from the keychain and from the listener.
pub fn retire_previous_key(state: &AppState, subscription_id: &str) -> Result<()> {
    state.secrets.delete(&SecretSlot::PreviousSigningKey {
        subscription_id: subscription_id.to_string(),
    })?;
    if let Some(keys) = state.keys.keys(subscription_id) {
        state
            .keys
            .remember(subscription_id, SubscriptionKeys::new(keys.current));
    }
    Ok(())
}

/// The subscriptions still pointing under a tunnel URL that was just replaced, with where they
/// would go (the user is asked before anything changes).
pub async fn repoint_offer(
    state: &AppState,
    replaced: Option<String>,
) -> Result<Option<crate::bridge::RepointOffer>> {
    let _ = (state, replaced);
    Ok(None) // MERGE: helper 2's subscriptions_under
}

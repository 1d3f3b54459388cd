//! Webhook subscriptions of the active connection: add, rotate and retire keys, edit, delete,
//! re-point. `partner-client` does the service's side and the keychain's; this module keeps the
//! listener's key cache ([`partner_local::KeychainKeys`]) in step, so a change verifies at once
//! without waiting for the next load from the keychain.
use crate::bridge::{RepointOffer, RepointResult, RepointedSubscription};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::Secret;
use partner_client::{
    NewSubscription, PartnerClient, SecretSlot, Subscribed, SubscriptionElement, SubscriptionRef,
};
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
    if subscribed.element.is_some() {
        // A service that shows no ids: the listener binds the id from the first notification
        // that verifies with this key, from the keychain's list it reads again now.
        state.keys.forget_unbound();
    } else {
        state.keys.remember(
            &subscribed.subscription_id,
            SubscriptionKeys::new(subscribed.key.clone()),
        );
    }
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
        .rotate_signing_key(
            state.secrets.as_ref(),
            product_id,
            partner_client::SubscriptionRef::parse(subscription_id),
            pasted,
        )
        .await?;
    // A subscription the service shows without an id: its keys rest under its element, and the
    // listener holds them under the id a notification bound (if one has yet).
    let (bound, stored) = match &rotation.element {
        Some(element) => (
            partner_client::elements::bound_id(state.secrets.as_ref(), element)?,
            partner_client::elements::element_keys(state.secrets.as_ref(), element)?,
        ),
        None => (
            Some(rotation.subscription_id.clone()),
            partner_client::signing_keys(state.secrets.as_ref(), &rotation.subscription_id)?,
        ),
    };
    let stored = stored.ok_or_else(|| {
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
    match bound {
        Some(id) => state.keys.remember(
            &id,
            SubscriptionKeys {
                current: stored.current.clone(),
                previous,
            },
        ),
        None => state.keys.forget_unbound(),
    }
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

/// Stops the previous key of a subscription the service shows without an id verifying:
/// removed from the keychain (the element's entry), and from the listener, under the id a
/// notification bound or in its list of those not bound yet. Reads the keychain: call it off
/// the async workers.
pub fn retire_previous_element_key(state: &AppState, element: &SubscriptionElement) -> Result<()> {
    let store = state.secrets.as_ref();
    partner_client::elements::retire_previous_key(store, element)?;
    match partner_client::elements::bound_id(store, element)? {
        Some(id) => {
            if let Some(keys) = state.keys.keys(&id) {
                state
                    .keys
                    .remember(&id, SubscriptionKeys::new(keys.current));
            }
        }
        None => state.keys.forget_unbound(),
    }
    Ok(())
}

/// Changes a subscription's URL, events or resource (its key stays as it is).
pub async fn update(
    state: &AppState,
    form: crate::bridge::SubscriptionChangeForm,
) -> Result<partner_api::read::SubscriptionView> {
    let change = partner_client::SubscriptionChange {
        url: form
            .url
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty()),
        events: form.events,
        resource: form.resource,
    };
    let subscription = SubscriptionRef::parse(&form.subscription_id);
    // The id a notification bound to a subscription shown without one: the listener reads its
    // keys again after the change (gone with the element if it moved to a new url or resource).
    let bound = match &subscription {
        SubscriptionRef::Element { url, resource } => {
            let element = SubscriptionElement {
                product_id: form.product_id.clone(),
                url: url.clone(),
                resource: resource.clone(),
            };
            state
                .with_keychain(move |store| partner_client::elements::bound_id(store, &element))
                .await??
        }
        SubscriptionRef::Id(_) => None,
    };
    let updated = state
        .client()?
        .update_subscription_keeping_key(&state.secrets, &form.product_id, subscription, &change)
        .await?;
    // A subscription moved to a new url or resource at a service that shows no ids is a new
    // one there, not bound yet.
    state.keys.forget_unbound();
    if let Some(id) = bound {
        state.keys.forget(&id);
    }
    Ok(updated)
}

/// Deletes a subscription at the service, then its keys from the keychain and the listener.
pub async fn delete(
    state: &AppState,
    product_id: &str,
    subscription_id: &str,
) -> Result<crate::bridge::Received<partner_api::read::ProductView>> {
    let client = state.client()?;
    let subscription = partner_client::SubscriptionRef::parse(subscription_id);
    // The id the listener holds the keys under: for a subscription shown without one, the id a
    // notification bound to it (if any), read before the delete forgets the binding.
    let product = client.get_product(product_id).await?;
    let listener_id = match product.webhooks.iter().find_map(|w| {
        partner_client::SubscriptionElement::of(&product.id, w).filter(|e| {
            w.subscription_id.is_none()
                && subscription
                    == partner_client::SubscriptionRef::Element {
                        url: e.url.clone(),
                        resource: e.resource.clone(),
                    }
        })
    }) {
        Some(element) => partner_client::elements::bound_id(state.secrets.as_ref(), &element)?
            .unwrap_or_default(),
        None => subscription_id.to_string(),
    };
    let subscription_id = listener_id.as_str();
    let outcome = client
        .delete_subscription(&state.secrets, product_id, subscription)
        .await;
    match outcome {
        Ok(product) => {
            state.keys.forget(subscription_id);
            // An element not bound yet leaves the listener's list of those it tries.
            state.keys.forget_unbound();
            Ok(product.into())
        }
        Err(error @ partner_client::ClientError::KeysLeftBehind { .. }) => {
            // The subscription is gone at the service: the listener stops using its keys now;
            // only the keychain still holds them, and the words say so.
            state.keys.forget(subscription_id);
            let mut app_error = AppError::from(error);
            app_error.hint = "The subscription is deleted: do not delete it again. Remove the keychain entries named above with your keychain tool (seahorse), or leave them: nothing uses them.".into();
            Err(app_error)
        }
        Err(error) => Err(error.into()),
    }
}

/// The subscriptions still pointing under a tunnel URL that was just replaced, with where they
/// would go (the user is asked before anything changes). None when nothing was replaced, no
/// new URL is set, or nothing points under the old one.
pub async fn repoint_offer(
    state: &AppState,
    replaced: Option<String>,
) -> Result<Option<RepointOffer>> {
    let (Some(from), Some(to)) = (replaced, crate::services::listener::tunnel_url(state)) else {
        return Ok(None);
    };
    if from == to {
        return Ok(None);
    }
    let to_base = partner_client::CallbackBase::parse(&to)?;
    let under = state.client()?.subscriptions_under(&from).await?;
    if under.is_empty() {
        return Ok(None);
    }
    let from_base = partner_client::CallbackBase::parse(&from)?;
    let subscriptions = under
        .into_iter()
        .filter_map(|at| {
            let url = at.subscription.url?;
            let new_url = from_base.rebase(&url, &to_base)?;
            Some(RepointedSubscription {
                product_id: at.product_id,
                subscription_id: at.subscription.subscription_id?,
                url,
                new_url,
            })
        })
        .collect();
    Ok(Some(RepointOffer {
        from,
        to,
        subscriptions,
    }))
}

/// Re-points every subscription under `from` to the same path under `to`.
pub async fn repoint(state: &AppState, from: &str, to: &str) -> Result<RepointResult> {
    let done = state.client()?.repoint_subscriptions(from, to).await?;
    Ok(RepointResult {
        changed: done
            .changed
            .into_iter()
            .map(|r| RepointedSubscription {
                product_id: r.product_id,
                subscription_id: r.subscription_id,
                url: r.old_url,
                new_url: r.new_url,
            })
            .collect(),
        failures: done
            .failed
            .into_iter()
            .map(|f| format!("Product {}: {}", f.product_id, f.error))
            .collect(),
    })
}

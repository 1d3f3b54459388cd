//! Products and their subscriptions as the Product screen edits them: the forms mapped to what
//! `partner-client` sends, a pasted signing key checked by the spec's rule (or one generated),
//! and which keys the listener holds for a subscription. The keychain and the listener's keys
//! are kept in step by [`crate::services::subscriptions`].
use crate::bridge::Received;
use crate::bridge::{
    ElementKeys, NewProductForm, NewSubscriptionForm, RotateKeyForm, ShownOnceKey, SubscriptionKeys,
};
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::{read, NewProduct, Secret};
use partner_client::{KeyHome, NewSubscription, SecretStore, SubscriptionElement, SubscriptionRef};
use partner_listener::KeySource;

/// Creates a product from the form (blank optional fields are left out).
pub async fn create(state: &AppState, form: NewProductForm) -> Result<Received<read::ProductView>> {
    let product = NewProduct {
        name: form.name,
        listing_name: form.listing_name,
        request_types: form.request_types,
        interface_url: form.interface_url.filter(|u| !u.trim().is_empty()),
        ..NewProduct::default()
    };
    Ok(state.client()?.create_product(&product).await?.into())
}

/// A product by its id.
pub async fn get(state: &AppState, id: &str) -> Result<Received<read::ProductView>> {
    Ok(state.client()?.get_product(id).await?.into())
}

/// A pasted key is checked by the rule; none means a generated one.
fn chosen_key(pasted: Option<String>) -> Result<Secret> {
    match pasted {
        Some(key) => {
            partner_api::signing_key::check(&key)
                .map_err(|p| AppError::invalid(format!("{p}.")))?;
            Ok(Secret::new(key))
        }
        None => Ok(partner_api::signing_key::generate()),
    }
}

/// Adds a subscription (`partner-client` PATCHes the product and keeps the key in the keychain
/// first); the listener verifies with the key from then on. The key is shown once.
pub async fn add_subscription(state: &AppState, form: NewSubscriptionForm) -> Result<ShownOnceKey> {
    let client = state.client()?;
    let key = chosen_key(form.signing_key)?;
    let subscription = NewSubscription {
        url: form.url,
        events: form.events,
        resource: form.resource,
    };
    let subscribed = crate::services::subscriptions::subscribe(
        &client,
        state,
        &form.product_id,
        &subscription,
        Some(key),
    )
    .await?;
    Ok(ShownOnceKey {
        subscription_id: subscribed.subscription_id,
        key: subscribed.key.expose().to_string(),
        previous_still_verifies: false,
    })
}

/// Rotates a subscription's signing key to a pasted one, or a generated one.
pub async fn rotate_key(state: &AppState, form: RotateKeyForm) -> Result<ShownOnceKey> {
    let pasted = match form.signing_key {
        Some(key) => Some(chosen_key(Some(key))?),
        None => None,
    };
    let rotated = crate::services::subscriptions::rotate(
        state,
        &form.product_id,
        &form.subscription_id,
        pasted,
    )
    .await?;
    Ok(ShownOnceKey {
        subscription_id: rotated.subscription_id,
        key: rotated.key.expose().to_string(),
        previous_still_verifies: rotated.previous_still_verifies,
    })
}

/// Whether the listener holds a subscription's keys. May read the keychain (a D-Bus round trip
/// for a subscription not loaded yet), so it runs on the blocking pool.
pub async fn keys_held(state: &AppState, subscription_id: String) -> Result<SubscriptionKeys> {
    let keys = state.keys.clone();
    tokio::task::spawn_blocking(move || held_keys(keys.as_ref(), subscription_id))
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Reading the keys failed: {e}."),
                "Try again.",
            )
        })
}

fn held_keys(keys: &dyn KeySource, subscription_id: String) -> SubscriptionKeys {
    let held = keys.keys(&subscription_id);
    SubscriptionKeys {
        has_current: held.is_some(),
        has_previous: held.as_ref().is_some_and(|k| k.previous.is_some()),
        subscription_id,
    }
}

/// Stops the previous key verifying: forgotten by the listener and the keychain.
pub fn retire_previous_key(state: &AppState, subscription_id: String) -> Result<SubscriptionKeys> {
    crate::services::subscriptions::retire_previous_key(state, &subscription_id)?;
    Ok(held_keys(state.keys.as_ref(), subscription_id))
}

/// The subscription of product `product_id` with this `url` and `resource` at a service that
/// shows no `subscriptionId`, named as `partner-client` names it (`KeyHome`); refused when it
/// cannot be named so (a resource the console does not know).
fn element_of(product_id: &str, url: String, resource: String) -> Result<SubscriptionElement> {
    let shown = read::SubscriptionView {
        subscription_id: None,
        url: Some(url),
        events: Vec::new(),
        resource: Some(read::Open::parse(&resource)),
    };
    match KeyHome::of(product_id, &shown) {
        Some(KeyHome::Element(element)) => Ok(element),
        _ => Err(AppError::new(
            ErrorKind::InvalidInput,
            format!(
                "This subscription shows no subscriptionId and its resource ({}) is not one the console knows, so it cannot be named by its url and resource.",
                resource.escape_debug()
            ),
            "Change it with the service's own tools, or ask the service to show subscription ids.",
        )),
    }
}

/// What the keychain holds for an element, and the id bound to it (never a key).
fn element_view(store: &dyn SecretStore, element: SubscriptionElement) -> Result<ElementKeys> {
    let keys = partner_client::elements::element_keys(store, &element)?;
    let bound_id = partner_client::elements::bound_id(store, &element)?;
    Ok(ElementKeys {
        subscription: SubscriptionRef::Element {
            url: element.url.clone(),
            resource: element.resource.clone(),
        }
        .argument(),
        has_current: keys.is_some(),
        has_previous: keys.is_some_and(|k| k.previous.is_some()),
        bound_id,
        url: element.url,
        resource: element.resource,
    })
}

/// A subscription the service shows without an id (product, `url`, `resource`): whether its
/// keys are in the keychain, the id the listener bound to it if one has, and how the screen
/// names it to rotate, edit or delete it. Reads the keychain on the blocking pool.
pub async fn element_keys(
    state: &AppState,
    product_id: String,
    url: String,
    resource: String,
) -> Result<ElementKeys> {
    let element = element_of(&product_id, url, resource)?;
    state
        .with_keychain(move |store| element_view(store, element))
        .await?
}

/// Stops the previous key of a subscription shown without an id verifying (keychain and
/// listener). Reads and writes the keychain: call it off the async workers.
pub fn retire_previous_element_key(
    state: &AppState,
    product_id: String,
    url: String,
    resource: String,
) -> Result<ElementKeys> {
    let element = element_of(&product_id, url, resource)?;
    crate::services::subscriptions::retire_previous_element_key(state, &element)?;
    element_view(state.secrets.as_ref(), element)
}

/// What is wrong with a signing key, sentence by sentence (none when it keeps the rule).
pub fn signing_key_problems(key: &str) -> Vec<String> {
    partner_api::signing_key::problems(key)
        .iter()
        .map(|p| format!("The key {p}."))
        .collect()
}

/// A new key that keeps the rule, from the OS's CSPRNG, shown once.
pub fn generate_signing_key() -> String {
    partner_api::signing_key::generate().expose().to_string()
}

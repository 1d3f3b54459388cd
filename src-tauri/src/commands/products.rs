//! Product detail: get, create, add, edit and delete subscriptions, rotate and retire signing
//! keys, check a subscription's receiver. Thin adapters over `services::subscriptions`, which keeps the keychain and the
//! listener's keys in step.
use crate::bridge::{
    ListenerSubscription, NewProductForm, NewSubscriptionForm, ReceiverCheckForm, RepointResult,
    RotateKeyForm, ShownOnceKey, SubscriptionChangeForm, SubscriptionKeys,
};
use crate::error::{AppError, Result};
use crate::state::AppState;
use partner_api::{NewProduct, Product, Secret, WebhookSubscription};
use partner_client::NewSubscription;
use partner_listener::KeySource;
use tauri::State;

#[tauri::command]
pub async fn get_product(state: State<'_, AppState>, id: String) -> Result<Product> {
    Ok(state
        .client()?
        .get_product_as::<Product>(&id)
        .await?
        .into_view())
}

#[tauri::command]
pub async fn create_product(state: State<'_, AppState>, form: NewProductForm) -> Result<Product> {
    let product = NewProduct {
        name: form.name,
        listing_name: form.listing_name,
        request_types: form.request_types,
        interface_url: form.interface_url.filter(|u| !u.trim().is_empty()),
        ..NewProduct::default()
    };
    let created = state.client()?.create_product(&product).await?;
    Ok(partner_client::to_record("the new product", &created)?)
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
/// first); the listener verifies with the key from then on.
#[tauri::command]
pub async fn add_subscription(
    state: State<'_, AppState>,
    form: NewSubscriptionForm,
) -> Result<ShownOnceKey> {
    let client = state.client()?;
    let key = chosen_key(form.signing_key)?;
    let subscription = NewSubscription {
        url: form.url,
        events: form.events,
        resource: form.resource,
    };
    let subscribed = crate::services::subscriptions::subscribe(
        &client,
        &state,
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

#[tauri::command]
pub async fn rotate_signing_key(
    state: State<'_, AppState>,
    form: RotateKeyForm,
) -> Result<ShownOnceKey> {
    let pasted = match form.signing_key {
        Some(key) => Some(chosen_key(Some(key))?),
        None => None,
    };
    let rotated = crate::services::subscriptions::rotate(
        &state,
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
/// for a subscription not loaded yet), so it runs on the blocking pool, not the main thread.
#[tauri::command]
pub async fn subscription_keys(
    state: State<'_, AppState>,
    subscription_id: String,
) -> Result<SubscriptionKeys> {
    let keys = state.keys.clone();
    tauri::async_runtime::spawn_blocking(move || held_keys(keys.as_ref(), subscription_id))
        .await
        .map_err(|e| {
            AppError::new(
                crate::error::ErrorKind::Internal,
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
#[tauri::command]
pub fn retire_previous_key(
    state: State<'_, AppState>,
    subscription_id: String,
) -> Result<SubscriptionKeys> {
    crate::services::subscriptions::retire_previous_key(&state, &subscription_id)?;
    Ok(held_keys(state.keys.as_ref(), subscription_id))
}

#[tauri::command]
pub fn signing_key_problems(key: String) -> Vec<String> {
    partner_api::signing_key::problems(&key)
        .iter()
        .map(|p| format!("The key {p}."))
        .collect()
}

#[tauri::command]
pub fn generate_signing_key() -> String {
    partner_api::signing_key::generate().expose().to_string()
}

/// Changes a subscription's URL, events or resource; its key stays.
#[tauri::command]
pub async fn update_subscription(
    state: State<'_, AppState>,
    form: SubscriptionChangeForm,
) -> Result<WebhookSubscription> {
    crate::services::subscriptions::update(&state, form).await
}

/// Deletes a subscription, and its keys from the keychain and the listener.
#[tauri::command]
pub async fn delete_subscription(
    state: State<'_, AppState>,
    product_id: String,
    subscription_id: String,
) -> Result<Product> {
    crate::services::subscriptions::delete(&state, &product_id, &subscription_id).await
}

/// Checks the subscription's receiver as the service would meet it (`partner-conformance`).
#[tauri::command]
pub async fn check_receiver(
    state: State<'_, AppState>,
    form: ReceiverCheckForm,
) -> Result<partner_conformance::Report> {
    crate::services::receiver_check::check(&state, form).await
}

/// The subscriptions that reach the console's own listener (tunnel or direct), to check.
#[tauri::command]
pub async fn listener_subscriptions(
    state: State<'_, AppState>,
) -> Result<Vec<ListenerSubscription>> {
    crate::services::receiver_check::listener_subscriptions(&state).await
}

#[tauri::command]
pub fn cancel_receiver_check(state: State<'_, AppState>, subscription_id: String) {
    crate::services::receiver_check::cancel(&state, &subscription_id);
}

/// Re-points the subscriptions under an old tunnel (or listener) URL to a new one.
#[tauri::command]
pub async fn repoint_subscriptions(
    state: State<'_, AppState>,
    from: String,
    to: String,
) -> Result<RepointResult> {
    crate::services::subscriptions::repoint(&state, &from, &to).await
}

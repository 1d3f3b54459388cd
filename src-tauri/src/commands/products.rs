//! Product detail: get, create, add a subscription, rotate and retire signing keys.
//! Keys go to the keychain (`partner-client`) and to the listener's verifying keys together.
use crate::bridge::{
    NewProductForm, NewSubscriptionForm, RotateKeyForm, ShownOnceKey, SubscriptionKeys,
};
use crate::error::{AppError, Result};
use crate::state::AppState;
use partner_api::{NewProduct, Product, Secret, WebhookSubscriptionInput};
use partner_client::SecretSlot;
use partner_listener::KeySource;
use tauri::State;

#[tauri::command]
pub async fn get_product(state: State<'_, AppState>, id: String) -> Result<Product> {
    Ok(state.client()?.get_product(&id).await?)
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
    Ok(state.client()?.create_product(&product).await?)
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

/// Adds a subscription by PATCHing the product's `webhooks` with the existing ones kept and
/// one new entry; the service assigns the new subscription's id.
#[tauri::command]
pub async fn add_subscription(
    state: State<'_, AppState>,
    form: NewSubscriptionForm,
) -> Result<ShownOnceKey> {
    let client = state.client()?;
    let key = chosen_key(form.signing_key)?;
    let product = client.get_product(&form.product_id).await?;
    let subscription = add_subscription_to(
        &client,
        &state,
        &product,
        &form.url,
        form.events,
        form.resource,
        key.clone(),
    )
    .await?;
    Ok(ShownOnceKey {
        subscription_id: subscription,
        key: key.expose().to_string(),
        previous_still_verifies: false,
    })
}

/// Shared with the first run, which subscribes the demo product to the listener.
pub async fn add_subscription_to(
    client: &partner_client::PartnerClient,
    state: &AppState,
    product: &Product,
    url: &str,
    events: Vec<partner_api::EventType>,
    resource: partner_api::ResourceType,
    key: Secret,
) -> Result<String> {
    let mut webhooks: Vec<WebhookSubscriptionInput> = product
        .webhooks
        .iter()
        .map(WebhookSubscriptionInput::keep)
        .collect();
    webhooks.push(WebhookSubscriptionInput {
        subscription_id: None,
        url: Some(url.trim().to_string()),
        events: Some(events),
        resource: Some(resource),
        signing_key: Some(key.clone()),
    });
    let patch = serde_json::json!({ "webhooks": webhooks_json(&webhooks)? });
    let patched = client.patch_product(&product.id, &patch).await?;
    let subscription = patched
        .webhooks
        .iter()
        .find(|w| {
            !product
                .webhooks
                .iter()
                .any(|old| old.subscription_id == w.subscription_id)
        })
        .map(|w| w.subscription_id.clone())
        .ok_or_else(|| {
            AppError::new(
                crate::error::ErrorKind::Server,
                "The service did not show the new subscription.",
                "Reload the product.",
            )
        })?;
    // The keychain is a blocking D-Bus round trip: off the async workers, so the commands the
    // UI is waiting for (the first listing at start-up) are not held behind it.
    let secrets = state.secrets.clone();
    let (id, stored) = (subscription.clone(), key.clone());
    tauri::async_runtime::spawn_blocking(move || {
        partner_client::store_signing_key(secrets.as_ref(), &id, &stored, chrono::Utc::now())
    })
    .await
    .map_err(|e| {
        AppError::new(
            crate::error::ErrorKind::Keychain,
            format!("Storing the signing key failed: {e}."),
            "Try again.",
        )
    })??;
    state.keys.insert(subscription.clone(), key);
    Ok(subscription)
}

fn webhooks_json(webhooks: &[WebhookSubscriptionInput]) -> Result<serde_json::Value> {
    serde_json::to_value(webhooks).map_err(|e| {
        AppError::new(
            crate::error::ErrorKind::Internal,
            format!("Could not encode the subscriptions: {e}."),
            "Try again.",
        )
    })
}

#[tauri::command]
pub async fn rotate_signing_key(
    state: State<'_, AppState>,
    form: RotateKeyForm,
) -> Result<ShownOnceKey> {
    let client = state.client()?;
    let pasted = match form.signing_key {
        Some(key) => Some(chosen_key(Some(key))?),
        None => None,
    };
    let rotation = client
        .rotate_signing_key(
            state.secrets.as_ref(),
            &form.product_id,
            &form.subscription_id,
            pasted,
        )
        .await?;
    let stored = partner_client::signing_keys(state.secrets.as_ref(), &rotation.subscription_id)?
        .ok_or_else(|| {
        AppError::new(
            crate::error::ErrorKind::Keychain,
            "The new key is not in the keychain.",
            "Unlock the keychain and rotate again.",
        )
    })?;
    let had_previous = state.keys.keys(&rotation.subscription_id).is_some();
    state.keys.rotate_at(
        &rotation.subscription_id,
        stored.current.clone(),
        rotation.replaced_at,
    );
    Ok(ShownOnceKey {
        subscription_id: rotation.subscription_id,
        key: stored.current.expose().to_string(),
        previous_still_verifies: had_previous,
    })
}

#[tauri::command]
pub fn subscription_keys(state: State<'_, AppState>, subscription_id: String) -> SubscriptionKeys {
    let keys = state.keys.keys(&subscription_id);
    SubscriptionKeys {
        has_current: keys.is_some(),
        has_previous: keys.as_ref().is_some_and(|k| k.previous.is_some()),
        subscription_id,
    }
}

/// Stops the previous key verifying: forgotten by the listener and the keychain.
#[tauri::command]
pub fn retire_previous_key(
    state: State<'_, AppState>,
    subscription_id: String,
) -> Result<SubscriptionKeys> {
    state.secrets.delete(&SecretSlot::PreviousSigningKey {
        subscription_id: subscription_id.clone(),
    })?;
    if let Some(keys) = state.keys.keys(&subscription_id) {
        state.keys.insert(subscription_id.clone(), keys.current);
    }
    Ok(subscription_keys(state, subscription_id))
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

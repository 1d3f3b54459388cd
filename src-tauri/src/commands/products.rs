//! Product detail: get, create, add, edit and delete subscriptions, rotate and retire signing
//! keys, check a subscription's receiver. Adapters over `services::products`,
//! `services::subscriptions` and `services::receiver_check`.
use partner_api::read::{Product, WebhookSubscription};
use partner_console_core::bridge::{
    ElementKeys, ListenerSubscription, NewProductForm, NewSubscriptionForm, Received,
    ReceiverCheckForm, RepointResult, RotateKeyForm, ShownOnceKey, SubscriptionChangeForm,
    SubscriptionKeys,
};
use partner_console_core::services::{products, receiver_check, subscriptions};
use partner_console_core::{Console, Result};
use tauri::State;

#[tauri::command]
pub async fn get_product(state: State<'_, Console>, id: String) -> Result<Received<Product>> {
    products::get(&state, &id).await
}

#[tauri::command]
pub async fn create_product(
    state: State<'_, Console>,
    form: NewProductForm,
) -> Result<Received<Product>> {
    products::create(&state, form).await
}

#[tauri::command]
pub async fn add_subscription(
    state: State<'_, Console>,
    form: NewSubscriptionForm,
) -> Result<ShownOnceKey> {
    products::add_subscription(&state, form).await
}

#[tauri::command]
pub async fn rotate_signing_key(
    state: State<'_, Console>,
    form: RotateKeyForm,
) -> Result<ShownOnceKey> {
    products::rotate_key(&state, form).await
}

#[tauri::command]
pub async fn subscription_keys(
    state: State<'_, Console>,
    subscription_id: String,
) -> Result<SubscriptionKeys> {
    products::keys_held(&state, subscription_id).await
}

#[tauri::command]
pub async fn retire_previous_key(
    state: State<'_, Console>,
    subscription_id: String,
) -> Result<SubscriptionKeys> {
    state
        .blocking(move |console| products::retire_previous_key(console, subscription_id))
        .await
}

/// A subscription the service shows without an id, by its product, url and resource.
#[tauri::command]
pub async fn element_keys(
    state: State<'_, Console>,
    product_id: String,
    url: String,
    resource: String,
) -> Result<ElementKeys> {
    products::element_keys(&state, product_id, url, resource).await
}

#[tauri::command]
pub async fn retire_previous_element_key(
    state: State<'_, Console>,
    product_id: String,
    url: String,
    resource: String,
) -> Result<ElementKeys> {
    state
        .blocking(move |console| {
            products::retire_previous_element_key(console, product_id, url, resource)
        })
        .await
}

#[tauri::command]
pub fn signing_key_problems(key: String) -> Vec<String> {
    products::signing_key_problems(&key)
}

#[tauri::command]
pub fn generate_signing_key() -> String {
    products::generate_signing_key()
}

#[tauri::command]
pub async fn update_subscription(
    state: State<'_, Console>,
    form: SubscriptionChangeForm,
) -> Result<WebhookSubscription> {
    subscriptions::update(&state, form).await
}

#[tauri::command]
pub async fn delete_subscription(
    state: State<'_, Console>,
    product_id: String,
    subscription_id: String,
) -> Result<Received<Product>> {
    subscriptions::delete(&state, &product_id, &subscription_id).await
}

#[tauri::command]
pub async fn check_receiver(
    state: State<'_, Console>,
    form: ReceiverCheckForm,
) -> Result<partner_conformance::Report> {
    receiver_check::check(&state, form).await
}

#[tauri::command]
pub async fn listener_subscriptions(
    state: State<'_, Console>,
) -> Result<Vec<ListenerSubscription>> {
    receiver_check::listener_subscriptions(&state).await
}

#[tauri::command]
pub fn cancel_receiver_check(state: State<'_, Console>, subscription_id: String) {
    receiver_check::cancel(&state, &subscription_id);
}

#[tauri::command]
pub async fn repoint_subscriptions(
    state: State<'_, Console>,
    from: String,
    to: String,
) -> Result<RepointResult> {
    subscriptions::repoint(&state, &from, &to).await
}

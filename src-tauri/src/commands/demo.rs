//! The Demo screen: play the embedded sandbox's lender, move its clock, try the demo
//! subscription again. Thin adapters over `services::embedded` and `services::startup`.
use partner_console_core::bridge::{AppStatus, DemoOutcome};
use partner_console_core::services::embedded;
use partner_console_core::Console;
use partner_console_core::Result;
use tauri::State;

#[tauri::command]
pub async fn demo_new_transaction(
    state: State<'_, Console>,
    product_id: String,
) -> Result<DemoOutcome> {
    embedded::new_transaction(&state, product_id).await
}

#[tauri::command]
pub async fn demo_update_transaction(
    state: State<'_, Console>,
    transaction_id: String,
) -> Result<DemoOutcome> {
    embedded::update_transaction(&state, transaction_id).await
}

#[tauri::command]
pub async fn demo_custom_event(
    state: State<'_, Console>,
    transaction_id: String,
    text: String,
) -> Result<DemoOutcome> {
    embedded::custom_event(&state, transaction_id, text).await
}

#[tauri::command]
pub fn demo_advance_clock(state: State<'_, Console>, minutes: u32) -> Result<DemoOutcome> {
    embedded::advance_clock(&state, minutes)
}

#[tauri::command]
pub fn retry_demo_subscription(state: State<'_, Console>) -> Result<AppStatus> {
    partner_console_core::services::demo::retry_subscription(&state)
}

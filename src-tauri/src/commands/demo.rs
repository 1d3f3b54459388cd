//! The Demo screen: play the embedded sandbox's lender, move its clock, make it misbehave on
//! demand, try the demo subscription again. Thin adapters over `services::embedded`,
//! `services::faults` and `services::demo`.
use partner_console_core::bridge::{AppStatus, DemoOutcome, FaultForm, FaultView};
use partner_console_core::services::{embedded, faults};
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

/// The faults in force on the embedded sandbox.
#[tauri::command]
pub async fn demo_faults(state: State<'_, Console>) -> Result<Vec<FaultView>> {
    faults::list(&state).await
}

/// A fault for the next calls of an endpoint.
#[tauri::command]
pub async fn demo_add_fault(state: State<'_, Console>, form: FaultForm) -> Result<Vec<FaultView>> {
    faults::add(&state, form).await
}

/// Ends every fault.
#[tauri::command]
pub async fn demo_clear_faults(state: State<'_, Console>) -> Result<Vec<FaultView>> {
    faults::clear(&state).await
}

/// Revokes every token of the embedded sandbox.
#[tauri::command]
pub async fn demo_revoke_tokens(state: State<'_, Console>) -> Result<DemoOutcome> {
    faults::revoke_tokens(&state).await
}

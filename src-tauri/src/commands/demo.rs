//! The Demo screen: play the embedded sandbox's lender, move its clock, try the demo
//! subscription again. Thin adapters over `services::embedded` and `services::startup`.
use crate::bridge::{AppStatus, DemoOutcome};
use crate::error::Result;
use crate::services::embedded;
use crate::state::AppState;
use tauri::{AppHandle, State};

#[tauri::command]
pub async fn demo_new_transaction(
    state: State<'_, AppState>,
    product_id: String,
) -> Result<DemoOutcome> {
    embedded::new_transaction(&state, product_id).await
}

#[tauri::command]
pub async fn demo_update_transaction(
    state: State<'_, AppState>,
    transaction_id: String,
) -> Result<DemoOutcome> {
    embedded::update_transaction(&state, transaction_id).await
}

#[tauri::command]
pub async fn demo_custom_event(
    state: State<'_, AppState>,
    transaction_id: String,
    text: String,
) -> Result<DemoOutcome> {
    embedded::custom_event(&state, transaction_id, text).await
}

#[tauri::command]
pub fn demo_advance_clock(state: State<'_, AppState>, minutes: u32) -> Result<DemoOutcome> {
    embedded::advance_clock(&state, minutes)
}

#[tauri::command]
pub fn retry_demo_subscription(app: AppHandle) -> Result<AppStatus> {
    crate::services::startup::retry_demo_subscription(&app)
}

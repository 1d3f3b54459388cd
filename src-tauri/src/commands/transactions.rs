//! Transaction detail: the transaction, its events, its notifications, and the partner's
//! response.
use partner_api::read::{Transaction, TransactionEvent};
use partner_console_core::bridge::{Received, RespondForm, TransactionNotifications};
use partner_console_core::services::{transaction_notifications, transactions};
use partner_console_core::{Console, Result};
use tauri::State;

#[tauri::command]
pub async fn get_transaction(
    state: State<'_, Console>,
    id: String,
) -> Result<Received<Transaction>> {
    transactions::get(&state, &id).await
}

#[tauri::command]
pub async fn transaction_events(
    state: State<'_, Console>,
    id: String,
) -> Result<Vec<Received<TransactionEvent>>> {
    transactions::events(&state, &id).await
}

/// Every notification the console knows about for the transaction, each as a timeline.
#[tauri::command]
pub async fn transaction_notifications(
    state: State<'_, Console>,
    id: String,
) -> Result<TransactionNotifications> {
    transaction_notifications::timeline(&state, &id).await
}

/// The transaction, its events and its notifications' timeline, saved as one JSON file for a
/// support ticket (through the save dialog).
#[tauri::command]
pub async fn save_transaction_evidence(
    state: State<'_, Console>,
    id: String,
) -> Result<partner_console_core::bridge::FileJobResult> {
    transaction_notifications::save_evidence(&state, &id).await
}

#[tauri::command]
pub async fn respond_transaction(
    state: State<'_, Console>,
    form: RespondForm,
) -> Result<Received<Transaction>> {
    transactions::respond(&state, form).await
}

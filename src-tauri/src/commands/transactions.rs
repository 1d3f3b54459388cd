//! Transaction detail: the transaction, its events, and the partner's response.
use partner_api::read::{Transaction, TransactionEvent};
use partner_console_core::bridge::{Received, RespondForm};
use partner_console_core::services::transactions;
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

#[tauri::command]
pub async fn respond_transaction(
    state: State<'_, Console>,
    form: RespondForm,
) -> Result<Received<Transaction>> {
    transactions::respond(&state, form).await
}

//! Transaction detail: the transaction, its events, and the partner's response.
use partner_api::{Transaction, TransactionEvent};
use partner_console_core::bridge::RespondForm;
use partner_console_core::services::transactions;
use partner_console_core::{Console, Result};
use tauri::State;

#[tauri::command]
pub async fn get_transaction(state: State<'_, Console>, id: String) -> Result<Transaction> {
    transactions::get(&state, &id).await
}

#[tauri::command]
pub async fn transaction_events(
    state: State<'_, Console>,
    id: String,
) -> Result<Vec<TransactionEvent>> {
    transactions::events(&state, &id).await
}

#[tauri::command]
pub async fn respond_transaction(
    state: State<'_, Console>,
    form: RespondForm,
) -> Result<Transaction> {
    transactions::respond(&state, form).await
}

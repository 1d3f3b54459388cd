//! Transaction detail: the transaction, its events, and the partner's response.
use crate::bridge::RespondForm;
use crate::error::Result;
use crate::state::AppState;
use partner_api::{Transaction, TransactionEvent, TransactionResponse};
use tauri::State;

#[tauri::command]
pub async fn get_transaction(state: State<'_, AppState>, id: String) -> Result<Transaction> {
    Ok(state
        .client()?
        .get_transaction_as::<Transaction>(&id)
        .await?
        .into_view())
}

#[tauri::command]
pub async fn transaction_events(
    state: State<'_, AppState>,
    id: String,
) -> Result<Vec<TransactionEvent>> {
    let events = state
        .client()?
        .list_events_as::<TransactionEvent>(&id)
        .await?;
    Ok(events.into_iter().map(|e| e.into_view()).collect())
}

#[tauri::command]
pub async fn respond_transaction(
    state: State<'_, AppState>,
    form: RespondForm,
) -> Result<Transaction> {
    let response = TransactionResponse {
        status: form.status,
        partner_status: form.partner_status.filter(|s| !s.trim().is_empty()),
        reference_number: form.reference_number.filter(|s| !s.trim().is_empty()),
        responding_party: None,
        loan: None,
        resources: None,
        errors: None,
    };
    Ok(state
        .client()?
        .respond_to_transaction_as::<Transaction>(&form.transaction_id, &response)
        .await?
        .into_view())
}

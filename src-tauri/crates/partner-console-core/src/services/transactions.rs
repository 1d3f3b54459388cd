//! A transaction's detail as the Transaction screen works with it: the transaction, its events,
//! and the partner's response form mapped to what `partner-client` sends.
use crate::bridge::Received;
use crate::bridge::RespondForm;
use crate::error::Result;
use crate::state::AppState;
use partner_api::{read, TransactionResponse};

/// Sends the partner's response to a transaction (blank free-text fields are left out).
pub async fn respond(state: &AppState, form: RespondForm) -> Result<Received<read::Transaction>> {
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
        .respond_to_transaction(&form.transaction_id, &response)
        .await?
        .into())
}

/// A transaction by its id.
pub async fn get(state: &AppState, id: &str) -> Result<Received<read::Transaction>> {
    Ok(state.client()?.get_transaction(id).await?.into())
}

/// A transaction's events, oldest first.
pub async fn events(state: &AppState, id: &str) -> Result<Vec<Received<read::TransactionEvent>>> {
    let events = state.client()?.list_events(id).await?;
    Ok(events.into_iter().map(Received::from).collect())
}

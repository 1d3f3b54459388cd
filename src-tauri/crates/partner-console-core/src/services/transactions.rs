//! A transaction's detail as the Transaction screen works with it: the partner's response form
//! mapped to what `partner-client` sends.
use crate::bridge::RespondForm;
use crate::error::Result;
use crate::state::AppState;
use partner_api::{Transaction, TransactionResponse};

/// Sends the partner's response to a transaction (blank free-text fields are left out).
pub async fn respond(state: &AppState, form: RespondForm) -> Result<Transaction> {
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
        .await?)
}

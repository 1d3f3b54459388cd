//! A transaction's detail as the Transaction screen works with it: the transaction, its events,
//! and the partner's response form mapped to what `partner-client` sends.
use crate::bridge::Received;
use crate::bridge::RespondForm;
use crate::error::{AppError, ErrorKind, Result};
use crate::state::AppState;
use partner_api::{read, TransactionResponse};

/// Sends the partner's response as written, after checking it (nothing written is dropped on
/// the way). A final status locks the transaction for good: it is sent only when the form
/// names the transaction again in `confirm`, which the window asks the user for.
pub async fn respond(
    state: &AppState,
    form: RespondForm,
) -> Result<Received<read::TransactionView>> {
    let response = TransactionResponse::from_json(&form.response).map_err(|why| {
        AppError::new(
            ErrorKind::InvalidInput,
            format!("The response was not sent: {why}."),
            "Correct the response and send it again.",
        )
    })?;
    let confirmed = form.confirm.as_deref().map(str::trim) == Some(form.transaction_id.trim());
    if response.status.is_final() && !confirmed {
        return Err(AppError::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}` is final: it locks transaction {}'s request and response for good, so it is sent only once confirmed.",
                response.status, form.transaction_id
            ),
            "Confirm it (on a production connection, by typing the transaction's id).",
        ));
    }
    Ok(state
        .client()?
        .respond_to_transaction(&form.transaction_id, &response)
        .await?
        .into())
}

/// A transaction by its id.
pub async fn get(state: &AppState, id: &str) -> Result<Received<read::TransactionView>> {
    Ok(state.client()?.get_transaction(id).await?.into())
}

/// A transaction's events, oldest first.
pub async fn events(state: &AppState, id: &str) -> Result<Vec<Received<read::EventView>>> {
    let events = state.client()?.list_events(id).await?;
    Ok(events.into_iter().map(Received::from).collect())
}

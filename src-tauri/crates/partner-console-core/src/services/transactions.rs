//! A transaction's detail as the Transaction screen works with it: the transaction, its events,
//! and the partner's response form mapped to what `partner-client` sends.
//!
//! Joined to a team workspace (`services::workspace`), the transaction is read from the team's
//! index and the response is sent through the workspace (`transactions/{id}` and
//! `transactions/{id}/respond`): the team's servers hold the service connection, and the
//! answer lands in the team's audit log under the member's name. The member's role is checked
//! first, so a role that may not answer is told why before anything is sent. The events are
//! asked of the service by the team's servers (`transactions/{id}/events`: the index keeps
//! transactions, not events), so the page shows one service's transaction and its events.
use crate::bridge::Received;
use crate::bridge::RespondForm;
use crate::error::{AppError, ErrorKind, Result};
use crate::services::workspace;
use crate::state::AppState;
use partner_api::{read, TransactionResponse};
use partner_workspace::roles::Action;

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
    if let Some(joined) = workspace::joined(state) {
        joined.may(Action::Respond)?;
        // The response as written (the checks above read it; the server reads it again).
        let body: serde_json::Value = serde_json::from_str(&form.response)
            .map_err(|why| AppError::invalid(format!("The response was not sent: {why}.")))?;
        let answered = workspace::answered(
            state,
            joined.client.respond(&form.transaction_id, &body).await,
        )?;
        return Ok(answered.into());
    }
    Ok(state
        .client()?
        .respond_to_transaction(&form.transaction_id, &response)
        .await?
        .into())
}

/// A transaction by its id (joined to a workspace: as the team's index holds it).
pub async fn get(state: &AppState, id: &str) -> Result<Received<read::TransactionView>> {
    if let Some(joined) = workspace::joined(state) {
        let found = workspace::answered(state, joined.client.transaction(id).await)?;
        return Ok(found.into());
    }
    Ok(state.client()?.get_transaction(id).await?.into())
}

/// A transaction's events, oldest first (joined to a workspace: as the service answers the
/// team's servers).
pub async fn events(state: &AppState, id: &str) -> Result<Vec<Received<read::EventView>>> {
    let events = match workspace::joined(state) {
        Some(joined) => workspace::answered(state, joined.client.transaction_events(id).await)?,
        None => state.client()?.list_events(id).await?,
    };
    Ok(events.into_iter().map(Received::from).collect())
}

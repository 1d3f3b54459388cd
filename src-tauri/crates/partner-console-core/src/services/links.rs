//! `partner-console://` links (`partner_local::links`): made for "Copy link", and opened when the
//! desktop hands one to the app (Tauri's deep-link plugin: the link is the argument of a new
//! start, forwarded to the running app by the single-instance plugin).
//!
//! Why a pending route: a link that starts the app arrives before the page listens for events,
//! so the route it asks for is kept until the UI takes it (`take_pending_link`) as well as sent
//! as an `open-link` event for a page that is already listening.
use crate::console::{AppEvent, Console};
use crate::error::{AppError, Result};
use crate::state::locked;
use crate::state::AppState;
use partner_local::links::{Link, LinkTarget};

/// The link to a transaction (or one of its events) or a product on the active connection.
pub fn link_to(state: &AppState, screen: &str, id: &str, event_id: Option<&str>) -> Result<String> {
    let connection = state.active_id().ok_or_else(AppError::not_connected)?;
    let link = match screen {
        "transactions" => Link::transaction(&connection, id, event_id),
        "products" => Link::product(&connection, id),
        other => {
            return Err(AppError::invalid(format!(
                "There are no links to the {other} screen: only to transactions and products."
            )))
        }
    };
    Ok(link.to_url())
}

/// The app's route (`#/…`) for a link's target.
fn route_of(target: &LinkTarget) -> String {
    let encode = |s: &str| -> String {
        url::form_urlencoded::byte_serialize(s.as_bytes())
            .collect::<String>()
            .replace('+', "%20")
    };
    match target {
        LinkTarget::Transaction {
            transaction_id,
            event_id: None,
        } => format!("#/transactions/{}", encode(transaction_id)),
        LinkTarget::Transaction {
            transaction_id,
            event_id: Some(event_id),
        } => format!(
            "#/transactions/{}/events/{}",
            encode(transaction_id),
            encode(event_id)
        ),
        LinkTarget::Product { product_id } => format!("#/products/{}", encode(product_id)),
    }
}

/// Opens the first of `urls` that is a console link: on its connection (switched to when it is
/// another one), at its resource. A link that cannot be opened becomes a notice saying why.
pub async fn open(app: &Console, urls: Vec<url::Url>) {
    let Some(url) = urls.first() else { return };
    if let Err(error) = open_one(app, url.as_str()).await {
        app.announce(|inner| {
            inner.notices.push(format!(
                "The link could not be opened: {} {}",
                error.message, error.hint
            ))
        });
    }
}

async fn open_one(app: &Console, text: &str) -> Result<()> {
    let link = Link::parse(text).map_err(|e| {
        AppError::invalid(format!("{}.", crate::error::capitalised(&e.to_string())))
    })?;
    let state = app.state();
    // Start-up opens a connection first; the link's is opened after it, never raced.
    state.started().await;
    let known = link.connection == partner_local::settings::EMBEDDED_CONNECTION_ID
        || state.lock().settings.connection(&link.connection).is_some();
    if !known {
        return Err(AppError::invalid(format!(
            "The link is for the connection {:?}, which this console does not have.",
            link.connection
        )));
    }
    if state.active_id().as_deref() != Some(link.connection.as_str()) {
        crate::services::connections::open(app, &link.connection).await?;
    }
    let route = route_of(&link.target);
    *locked(&state.pending_link) = Some(route.clone());
    app.emit(AppEvent::OpenLink(route));
    app.bring_to_front();
    Ok(())
}

/// The route a link asked for that the page has not taken yet.
pub fn take_pending(state: &AppState) -> Option<String> {
    locked(&state.pending_link).take()
}

//! "Go to" any id: where the top bar's box and the command palette take the user for a
//! transaction id, a product id, an event id (of a notification that was captured) or a
//! `resourceRef` URL.
//!
//! Each is looked up by its own call (`GET /transactions/{id}`, `GET /products/{id}`, the
//! captures searched for the eventId), never by walking a listing, in the place the screens
//! read from ([`Place`]): the active connection and this machine's capture store, or, joined
//! to a team workspace, the workspace (the team's index, the service as the team's servers
//! call it, the team's captures, and a `resourceRef` read against the team's service URL), so
//! what "Go to" finds is what the page it opens then shows.

use crate::bridge::GoToTarget;
use crate::error::{capitalised, AppError, Result};
use crate::services::workspace::{self, Joined};
use crate::state::AppState;
use partner_api::ResourceAddress;
use partner_client::{ClientError, PartnerClient};
use partner_listener::{CaptureFilter, CapturePage, CaptureQuery, HitCount};

/// Where the text is looked up.
enum Place {
    /// The active connection, and this machine's capture store.
    Connection {
        label: String,
        base_url: String,
        client: PartnerClient,
    },
    /// The team workspace, and the service URL its servers call.
    Workspace { joined: Joined, base_url: String },
}

pub async fn go_to(state: &AppState, text: &str) -> Result<GoToTarget> {
    let wanted = text.trim();
    if wanted.is_empty() {
        return Ok(GoToTarget::NotFound {
            message:
                "Type or paste a transaction id, an event id, a product id or a resourceRef URL."
                    .into(),
        });
    }
    let place = match Place::now(state).await? {
        Ok(place) => place,
        Err(why) => return Ok(GoToTarget::NotFound { message: why }),
    };
    if wanted.contains("://") {
        let (transaction_id, event_id) = match partner_api::resource_at(place.base_url(), wanted) {
            Ok(ResourceAddress::Transaction { transaction_id }) => (transaction_id, None),
            Ok(ResourceAddress::Event {
                transaction_id,
                event_id,
            }) => (transaction_id, Some(event_id)),
            Err(mismatch) => {
                return Ok(GoToTarget::NotFound {
                    message: format!("{}.", capitalised(&mismatch.to_string())),
                })
            }
        };
        return Ok(match place.has_transaction(state, &transaction_id).await? {
            true => GoToTarget::Transaction {
                transaction_id,
                event_id,
            },
            false => place.not_found(&format!("transaction {transaction_id}")),
        });
    }
    if place.has_transaction(state, wanted).await? {
        return Ok(GoToTarget::Transaction {
            transaction_id: wanted.to_string(),
            event_id: None,
        });
    }
    if place.has_product(state, wanted).await? {
        return Ok(GoToTarget::Product {
            product_id: wanted.to_string(),
        });
    }
    if let Some(transaction_id) = place.captured_event(state, wanted).await? {
        if place.has_transaction(state, &transaction_id).await? {
            return Ok(GoToTarget::Transaction {
                transaction_id,
                event_id: Some(wanted.to_string()),
            });
        }
    }
    Ok(place.not_found(wanted))
}

impl Place {
    /// The workspace while joined, else the active connection; `Err` with the words to show
    /// when a joined workspace has no service connection yet.
    async fn now(state: &AppState) -> Result<std::result::Result<Place, String>> {
        if let Some(joined) = workspace::joined(state) {
            let connection = workspace::answered(state, joined.client.service_connection().await)?;
            return Ok(match connection {
                Some(connection) => Ok(Place::Workspace {
                    joined,
                    base_url: connection.base_url,
                }),
                None => Err(format!(
                    "The team workspace {} has no service connection yet: an admin of the workspace sets it, then ids can be looked up.",
                    joined.describe()
                )),
            });
        }
        let place = state
            .lock()
            .active
            .as_ref()
            .map(|active| Place::Connection {
                label: active.view.label.clone(),
                base_url: active.view.base_url.clone(),
                client: active.client.clone(),
            })
            .ok_or_else(AppError::not_connected)?;
        Ok(Ok(place))
    }

    fn base_url(&self) -> &str {
        match self {
            Place::Connection { base_url, .. } | Place::Workspace { base_url, .. } => base_url,
        }
    }

    async fn has_transaction(&self, state: &AppState, id: &str) -> Result<bool> {
        match self {
            Place::Connection { client, .. } => found(client.get_transaction(id).await),
            Place::Workspace { joined, .. } => {
                found_in_workspace(state, joined.client.transaction(id).await)
            }
        }
    }

    async fn has_product(&self, state: &AppState, id: &str) -> Result<bool> {
        match self {
            Place::Connection { client, .. } => found(client.get_product(id).await),
            Place::Workspace { joined, .. } => {
                found_in_workspace(state, joined.client.product(id).await)
            }
        }
    }

    /// The transaction of a captured notification with eventId `event_id`, when it is about
    /// this place's service.
    async fn captured_event(&self, state: &AppState, event_id: &str) -> Result<Option<String>> {
        let query = CaptureQuery {
            filter: CaptureFilter {
                text: Some(event_id.to_string()),
                ..CaptureFilter::default()
            },
            limit: 20,
            // Only the rows: the count is not shown.
            count: HitCount::ThroughPage,
            ..CaptureQuery::default()
        };
        let page = match self {
            Place::Connection { .. } => match state.captures() {
                Ok(store) => store.page(&query)?,
                // No store (no listener was ever started): no capture to name it.
                Err(_) => return Ok(None),
            },
            Place::Workspace { joined, .. } => {
                workspace::answered(state, joined.client.captures_page(&query, None).await)?
            }
        };
        Ok(transaction_of(&page, self.base_url(), event_id))
    }

    fn not_found(&self, what: &str) -> GoToTarget {
        let message = match self {
            Place::Connection { label, .. } => format!(
                "Nothing named {what} on {label}: not a transaction, a product, or the eventId of a notification the listener kept."
            ),
            Place::Workspace { joined, .. } => format!(
                "Nothing named {what} in the team workspace {}: not a transaction in the team's index, a product of its service, or the eventId of a notification it captured.",
                joined.describe()
            ),
        };
        GoToTarget::NotFound { message }
    }
}

/// Whether a lookup found its resource (404 is "no"; any other failure is an error).
fn found<T>(answer: std::result::Result<T, ClientError>) -> Result<bool> {
    match answer {
        Ok(_) => Ok(true),
        Err(ClientError::NotFound { .. }) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// [`found`] for a workspace's answer (a 404 from the workspace, or from the service behind
/// it, is "no").
fn found_in_workspace<T>(state: &AppState, answer: partner_workspace::Result<T>) -> Result<bool> {
    match answer {
        Err(error) if error.is_not_found() => Ok(false),
        answer => workspace::answered(state, answer.map(|_| true)),
    }
}

/// The transaction named by the `resourceRef` of a capture on `page` whose eventId is
/// `event_id` (a search for the text finds it in other fields too), read against `base_url`.
fn transaction_of(page: &CapturePage, base_url: &str, event_id: &str) -> Option<String> {
    page.items.iter().find_map(|listed| {
        let fields = &listed.capture.fields;
        if fields.event_id.as_deref() != Some(event_id) {
            return None;
        }
        match partner_api::resource_at(base_url, fields.resource_ref.as_deref()?) {
            Ok(ResourceAddress::Event { transaction_id, .. })
            | Ok(ResourceAddress::Transaction { transaction_id }) => Some(transaction_id),
            Err(_) => None,
        }
    })
}

//! The service's resources as a joined console reads them: a transaction as the team's support
//! index holds it, its events and a product as the service answers the workspace's client, an
//! answer sent to a transaction, and the service's address.
//!
//! Why through the server: it holds the team's service connection (a member's console has no
//! client secret of the team's), so "Go to", the transaction page and its events show what the
//! team's servers see, and an answer lands in the team's audit log. The address
//! ([`ServiceConnection::base_url`]) is what a console reads a `resourceRef` URL against, as it
//! reads one against its own connection's.
//!
//! An id goes into the path as one segment ([`path_segment`]), so an id holding `/`, `?` or
//! `#` names that id and no other call.

use crate::client::WorkspaceClient;
use crate::error::{Error, Result};
use partner_api::read::{self, Document};
use serde::Deserialize;

/// The service the workspace's servers call, without its secret (`GET /api/v1/service`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceConnection {
    pub base_url: String,
    pub client_id: String,
}

const NO_QUERY: &[(&str, &str)] = &[];

impl WorkspaceClient {
    /// A transaction as the team's index holds it.
    pub async fn transaction(&self, id: &str) -> Result<Document<read::TransactionView>> {
        let path = format!("/api/v1/transactions/{}", path_segment(id)?);
        self.get(&path, NO_QUERY).await
    }

    /// A transaction's events, oldest first, as the service answers the workspace now.
    pub async fn transaction_events(&self, id: &str) -> Result<Vec<Document<read::EventView>>> {
        let path = format!("/api/v1/transactions/{}/events", path_segment(id)?);
        self.get(&path, NO_QUERY).await
    }

    /// Sends `response` (the partner's response, as written) to a transaction through the
    /// workspace (support and up); the transaction as the service answered.
    pub async fn respond(
        &self,
        id: &str,
        response: &serde_json::Value,
    ) -> Result<Document<read::TransactionView>> {
        let path = format!("/api/v1/transactions/{}/respond", path_segment(id)?);
        self.post(&path, response).await
    }

    /// A product as the service answers the workspace now.
    pub async fn product(&self, id: &str) -> Result<Document<read::ProductView>> {
        let path = format!("/api/v1/products/{}", path_segment(id)?);
        self.get(&path, NO_QUERY).await
    }

    /// The service the workspace calls; `None` while no admin has set one.
    pub async fn service_connection(&self) -> Result<Option<ServiceConnection>> {
        #[derive(Deserialize)]
        struct Answer {
            connection: Option<ServiceConnection>,
        }
        let answer: Answer = self.get("/api/v1/service", NO_QUERY).await?;
        Ok(answer.connection)
    }
}

impl Error {
    /// The workspace (or the service behind it) has nothing by that name.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Failed { status: 404, .. })
    }
}

/// `id` as one path segment: every byte but the unreserved ones percent-encoded (`.` and `..`,
/// which a URL reads as a step in the path, name nothing).
pub fn path_segment(id: &str) -> Result<String> {
    let id = id.trim();
    if matches!(id, "" | "." | "..") {
        return Err(Error::Usage(format!("{id:?} is not an id.")));
    }
    Ok(id
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_one_path_segment() {
        let segment = |id: &str| path_segment(id).expect("an id");
        assert_eq!(segment("t_9-a.b~c"), "t_9-a.b~c");
        assert_eq!(segment(" a/b?c#d e "), "a%2Fb%3Fc%23d%20e");
        assert_eq!(segment("é"), "%C3%A9");
        assert!(path_segment("..").is_err());
        assert!(path_segment(" ").is_err());
    }

    #[test]
    fn a_404_is_not_found_and_other_failures_are_not() {
        let failed = |status| Error::Failed {
            status,
            message: "x".into(),
        };
        assert!(failed(404).is_not_found());
        assert!(!failed(502).is_not_found());
        assert!(!Error::Invalid("x".into()).is_not_found());
    }

    #[test]
    fn the_service_answer_reads_without_a_secret_field() {
        #[derive(Deserialize)]
        struct Answer {
            connection: Option<ServiceConnection>,
        }
        let answer: Answer = serde_json::from_value(serde_json::json!({
            "connection": {"baseUrl": "http://127.0.0.1:9/", "clientId": "c", "setBy": "admin", "setAt": "2026-12-06T00:00:00Z"}
        }))
        .unwrap();
        assert_eq!(
            answer.connection,
            Some(ServiceConnection {
                base_url: "http://127.0.0.1:9/".into(),
                client_id: "c".into()
            })
        );
    }
}

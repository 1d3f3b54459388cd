//! The inspector's calls beyond a page of captures: the filter's choices and counts, one
//! notification's attempts, a replay sent by the server. Kept apart from [`crate::client`]'s
//! general calls because the app's inspector is their one reader, and the answers are the local
//! store's own types ([`Facets`], [`Capture`], [`OutboundRecord`]), so the app shows a
//! workspace's captures with the code it shows its own with.

use crate::client::WorkspaceClient;
use crate::error::Result;
use partner_listener::{Capture, CaptureFilter, Facets, OutboundRecord};
use serde::{Deserialize, Serialize};

/// What the inspector's filter controls show (`POST /api/v1/captures/facets`): the local
/// store's [`Facets`] for the filter, and how many captures the workspace holds in all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureFacets {
    #[serde(flatten)]
    pub facets: Facets,
    pub stored: u64,
}

impl WorkspaceClient {
    /// The filter's choices and the counts under it.
    pub async fn captures_facets(&self, filter: &CaptureFilter) -> Result<CaptureFacets> {
        self.post(
            "/api/v1/captures/facets",
            &serde_json::json!({ "filter": filter }),
        )
        .await
    }

    /// Every attempt of the notification capture `id` belongs to, first first.
    pub async fn capture_attempts(&self, id: i64) -> Result<Vec<Capture>> {
        self.get(
            &format!("/api/v1/captures/{id}/attempts"),
            &[] as &[(&str, &str)],
        )
        .await
    }

    /// Has the server send capture `id` again to `to` (an http(s) URL), unchanged or with an
    /// edited `body` it re-signs with the subscription's current key; the server's record of
    /// what it sent and what came back (developer and up).
    pub async fn replay(&self, id: i64, to: &str, body: Option<&str>) -> Result<OutboundRecord> {
        self.post(
            &format!("/api/v1/captures/{id}/replay"),
            &serde_json::json!({ "to": to, "body": body }),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facets_answer_reads_as_the_stores_facets_and_the_count_held() {
        let answer = serde_json::json!({
            "verdicts": {"valid": 3, "invalid-signature": 1},
            "eventTypes": ["TransactionCreated"],
            "resourceTypes": ["transaction"],
            "subscriptions": ["sub-1"],
            "total": 4,
            "capped": false,
            "unsearched": 0,
            "stored": 9
        });
        let read: CaptureFacets = serde_json::from_value(answer.clone()).expect("reads");
        assert_eq!(read.stored, 9);
        assert_eq!(read.facets.total, 4);
        assert_eq!(read.facets.verdicts.len(), 2);
        assert_eq!(serde_json::to_value(&read).expect("writes"), answer);
    }
}

//! The team workspace the app has joined, as the Connections screen, the header and the
//! Support desk show it: where, as whom, whether it answers, and what the member's role allows.
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether the member may take one action, and if not, why (the sentence the screen shows
/// beside the disabled button).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspacePermission {
    /// The action's name as the workspace's audit log records it: `respond`, `write-note`,
    /// `export-evidence`, `sync-index`, `replay`, `clear`, `recover`, `import`, `subscribe`,
    /// `rotate`.
    pub action: String,
    /// What it does, in words: "answer transactions".
    pub label: String,
    pub allowed: bool,
    /// "A viewer may not answer transactions: support and up may. Ask an admin of the
    /// workspace." when not allowed.
    pub why_not: Option<String>,
}

/// The app's team workspace: none, or the one joined and how it answered last.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    /// Whether the app works with a workspace (the support desk's answers come from it).
    pub joined: bool,
    /// The workspace's URL.
    pub url: Option<String>,
    /// The member the token belongs to, and their role (viewer, support, developer, admin).
    pub member: Option<String>,
    pub role: Option<String>,
    /// The workspace came from `PARTNER_WORKSPACE` (it wins over the saved login at every
    /// start).
    pub from_environment: bool,
    /// Whether the last call to the workspace was answered.
    pub reachable: bool,
    /// Why the workspace was not usable when it was last asked (unreachable, the token
    /// refused), or why a saved login was not used at start.
    pub last_error: Option<String>,
    /// When the workspace was last asked who the member is (RFC 3339).
    pub checked_at: Option<String>,
    /// What the member may do, for each action the app offers.
    pub permissions: Vec<WorkspacePermission>,
    /// Where the token is kept (the OS's secret store, by name).
    pub token_store: String,
}

/// Joining a workspace: its URL and the member's personal token (checked with the workspace
/// before anything is kept; the token goes to the OS's secret store only).
// Its Debug print leaves the token out (below).
#[derive(Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct JoinWorkspaceForm {
    pub url: String,
    pub token: String,
}

impl std::fmt::Debug for JoinWorkspaceForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinWorkspaceForm")
            .field("url", &self.url)
            .field("token", &"[redacted]")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_debug_print_leaves_the_token_out() {
        let form = JoinWorkspaceForm {
            url: "https://team.example".into(),
            token: "pcw_very-secret".into(),
        };
        let shown = format!("{form:?}");
        assert!(shown.contains("team.example"), "{shown}");
        assert!(!shown.contains("pcw_very-secret"), "{shown}");
    }
}

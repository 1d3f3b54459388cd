//! Who may do what in a workspace: the one home of the roles' rule (issue #50).
//!
//! Four roles, each allowed everything the one before it is: a viewer reads everything; support
//! also writes notes, exports evidence and answers transactions; a developer also replays,
//! recovers, imports, clears, sets forward rules and the test mode, subscribes and rotates keys;
//! an admin also manages members, the service connection and the signing keys. Each action
//! names the least role that may take it ([`Action::least_role`]), so a refusal can say what it
//! takes, and the server checks every call against it before doing anything.
//!
//! Why it lives in the workspace's client crate, not the server's: the consoles show the same
//! rule before a call is made (a button disabled with why, a refusal named without a round
//! trip), and the server enforces it. One home, which the server re-exports as its `roles`, so
//! the rule a console shows cannot drift from the rule the server applies.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A member's role, in the order of what it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Support,
    Developer,
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Support, Role::Developer, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Support => "support",
            Role::Developer => "developer",
            Role::Admin => "admin",
        }
    }

    /// Whether a member of this role may take `action`.
    pub fn may(self, action: Action) -> bool {
        self >= action.least_role()
    }

    /// Why a member of this role may not take `action`, as a console shows it ("A viewer may
    /// not answer transactions: support and up may. Ask an admin of the workspace."); `None`
    /// when the role allows it.
    pub fn why_not(self, action: Action) -> Option<String> {
        if self.may(action) {
            return None;
        }
        let least = action.least_role();
        let who = match least {
            Role::Admin => "only an admin may".to_string(),
            least => format!("{least} and up may"),
        };
        let member = match self {
            Role::Viewer => "A viewer",
            Role::Support => "A support member",
            Role::Developer => "A developer",
            Role::Admin => "An admin",
        };
        Some(format!(
            "{member} may not {}: {who}. Ask an admin of the workspace.",
            action.describe()
        ))
    }

    /// "a" or "an", for sentences that name the role.
    pub fn article(self) -> &'static str {
        match self {
            Role::Admin => "an",
            _ => "a",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == text.trim())
            .ok_or_else(|| {
                format!("{text:?} is not a role: one of viewer, support, developer, admin")
            })
    }
}

/// Something a member asks the workspace to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Captures, transactions, notes, the audit log: every read.
    Read,
    WriteNote,
    ExportEvidence,
    Respond,
    /// Bring the support index up to date now (the servers also do it on their own).
    SyncIndex,
    Replay,
    Recover,
    Import,
    Clear,
    SetForwardRules,
    SetTestMode,
    Subscribe,
    Rotate,
    ManageMembers,
    ManageConnection,
    ManageKeys,
}

impl Action {
    /// The least role that may take this action.
    pub fn least_role(self) -> Role {
        match self {
            Action::Read => Role::Viewer,
            Action::WriteNote | Action::ExportEvidence | Action::Respond | Action::SyncIndex => {
                Role::Support
            }
            Action::Replay
            | Action::Recover
            | Action::Import
            | Action::Clear
            | Action::SetForwardRules
            | Action::SetTestMode
            | Action::Subscribe
            | Action::Rotate => Role::Developer,
            Action::ManageMembers | Action::ManageConnection | Action::ManageKeys => Role::Admin,
        }
    }

    /// What the action does, for a sentence: "a viewer may not {describe}".
    pub fn describe(self) -> &'static str {
        match self {
            Action::Read => "read the workspace",
            Action::WriteNote => "write notes",
            Action::ExportEvidence => "export evidence",
            Action::Respond => "answer transactions",
            Action::SyncIndex => "sync the support index",
            Action::Replay => "replay captures",
            Action::Recover => "recover missed notifications",
            Action::Import => "import captures",
            Action::Clear => "clear captures",
            Action::SetForwardRules => "set forward rules",
            Action::SetTestMode => "set the test mode",
            Action::Subscribe => "subscribe to webhooks",
            Action::Rotate => "rotate signing keys",
            Action::ManageMembers => "manage members",
            Action::ManageConnection => "manage the service connection",
            Action::ManageKeys => "manage signing keys",
        }
    }

    /// The name the audit log records the action under.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::WriteNote => "write-note",
            Action::ExportEvidence => "export-evidence",
            Action::Respond => "respond",
            Action::SyncIndex => "sync-index",
            Action::Replay => "replay",
            Action::Recover => "recover",
            Action::Import => "import",
            Action::Clear => "clear",
            Action::SetForwardRules => "set-forward-rules",
            Action::SetTestMode => "set-test-mode",
            Action::Subscribe => "subscribe",
            Action::Rotate => "rotate",
            Action::ManageMembers => "manage-members",
            Action::ManageConnection => "manage-connection",
            Action::ManageKeys => "manage-keys",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_allows_what_the_issue_lists_and_nothing_above_it() {
        let allowed = |role: Role| -> Vec<&str> {
            [
                Action::Read,
                Action::WriteNote,
                Action::ExportEvidence,
                Action::Respond,
                Action::SyncIndex,
                Action::Replay,
                Action::Clear,
                Action::Rotate,
                Action::ManageMembers,
                Action::ManageKeys,
            ]
            .into_iter()
            .filter(|action| role.may(*action))
            .map(Action::as_str)
            .collect()
        };
        assert_eq!(allowed(Role::Viewer), ["read"]);
        assert_eq!(
            allowed(Role::Support),
            [
                "read",
                "write-note",
                "export-evidence",
                "respond",
                "sync-index"
            ]
        );
        assert_eq!(
            allowed(Role::Developer),
            [
                "read",
                "write-note",
                "export-evidence",
                "respond",
                "sync-index",
                "replay",
                "clear",
                "rotate"
            ]
        );
        assert_eq!(allowed(Role::Admin).len(), 10);
    }

    #[test]
    fn a_refusal_names_the_role_and_the_least_role_that_may() {
        assert_eq!(
            Role::Viewer.why_not(Action::Respond).as_deref(),
            Some("A viewer may not answer transactions: support and up may. Ask an admin of the workspace.")
        );
        assert_eq!(Role::Admin.why_not(Action::Respond), None, "an admin may");
        assert_eq!(
            Role::Developer.why_not(Action::ManageMembers).as_deref(),
            Some("A developer may not manage members: only an admin may. Ask an admin of the workspace.")
        );
    }

    #[test]
    fn roles_parse_as_written_and_a_wrong_one_lists_the_four() {
        assert_eq!("support".parse::<Role>(), Ok(Role::Support));
        let error = "owner".parse::<Role>().unwrap_err();
        assert!(
            error.contains("viewer, support, developer, admin"),
            "{error}"
        );
    }
}

//! The team workspace the app works with (#50): joining one, leaving it, restoring the login at
//! start, and what the member's role allows.
//!
//! Why the login is the CLI's own (`partner_workspace::login`): one member on one machine
//! joins once. `partner workspace login` and the app's "Join" write the same `workspace.json`
//! in the data folder and the same secret-store slot, and `PARTNER_WORKSPACE` with
//! `PARTNER_WORKSPACE_TOKEN` wins over both in the app as it does in the CLI.
//!
//! Why a session in the state ([`crate::state::WorkspaceSession`]) instead of reading the login
//! at each call: the token is read from the secret store once (a D-Bus round trip), and the
//! workspace is asked who the member is once (at start or join, again when the status is asked),
//! so every support call only clones the session ([`joined`]). While joined, the support desk's
//! questions and answers go to the workspace; a workspace that does not answer at start, or
//! refuses the token, leaves the app on this machine's own store with a notice saying so.
//!
//! Why the role is checked here before a call ([`Joined::may`]): the screen shows a refused
//! action disabled with the reason, from the same rule the server enforces
//! (`partner_workspace::roles`); the server still checks every call.

use crate::bridge::{JoinWorkspaceForm, WorkspacePermission, WorkspaceView};
use crate::console::Console;
use crate::error::{sentence, AppError, ErrorKind, Result};
use crate::state::{locked, AppState, WorkspaceSession};
use partner_api::Secret;
use partner_local::KeychainHealth;
use partner_workspace::login::{LoginFile, Logins, LOGIN_FILE};
use partner_workspace::roles::{Action, Role};
use partner_workspace::{EnvWorkspace, Member, Source, WorkspaceClient};
use std::time::Duration;

pub use crate::state::Joined;

/// The actions the app offers that a role may not allow, in the order the status lists them.
pub const SHOWN_ACTIONS: [Action; 10] = [
    Action::Respond,
    Action::WriteNote,
    Action::ExportEvidence,
    Action::SyncIndex,
    Action::Replay,
    Action::Clear,
    Action::Recover,
    Action::Import,
    Action::Subscribe,
    Action::Rotate,
];

/// How long the check at start waits for the workspace before the app goes on without it
/// (it is asked again with the status).
const START_CHECK: Duration = Duration::from_secs(3);

/// How long the status waits for the workspace's answer.
const STATUS_CHECK: Duration = Duration::from_secs(5);

/// A clone of the current session, when the app has joined a workspace that answered.
pub fn joined(state: &AppState) -> Option<Joined> {
    locked(&state.workspace).joined.clone()
}

impl Joined {
    /// Whether the member's role allows `action`; the refusal names the role and the least
    /// role that may ("A viewer may not answer transactions: support and up may. Ask an admin
    /// of the workspace.").
    pub fn may(&self, action: Action) -> Result<()> {
        match self.member.role.why_not(action) {
            None => Ok(()),
            Some(why) => Err(AppError::refused_by_role(why)),
        }
    }

    /// Where the workspace is, for messages.
    pub fn describe(&self) -> String {
        self.client.describe()
    }
}

/// A workspace call's answer as the app takes it: the session learns whether the workspace
/// answered (a token it no longer knows ends the session: the app goes back to its own store),
/// and an error becomes the app's.
pub fn answered<T>(state: &AppState, answer: partner_workspace::Result<T>) -> Result<T> {
    let mut session = locked(&state.workspace);
    match &answer {
        Ok(_) => {
            session.reachable = true;
            session.last_error = None;
        }
        Err(partner_workspace::Error::Unreachable(why)) => {
            session.reachable = false;
            session.last_error = Some(why.clone());
        }
        Err(partner_workspace::Error::Unauthorized(why)) => {
            session.joined = None;
            session.waiting = None;
            session.reachable = true;
            session.last_error = Some(format!("the workspace refused the token: {why}"));
        }
        Err(_) => session.reachable = true,
    }
    drop(session);
    answer.map_err(AppError::from)
}

/// What the app knows of its workspace now (no call is made).
pub fn view(state: &AppState) -> WorkspaceView {
    let session = locked(&state.workspace);
    let (member, role) = match &session.joined {
        Some(joined) => (
            Some(joined.member.name.clone()),
            Some(joined.member.role.to_string()),
        ),
        None => (None, None),
    };
    WorkspaceView {
        joined: session.joined.is_some(),
        url: session.url.clone(),
        member,
        role,
        from_environment: session.from_environment,
        reachable: session.reachable,
        last_error: session.last_error.clone(),
        checked_at: session.checked_at.map(|at| at.to_rfc3339()),
        permissions: session
            .joined
            .as_ref()
            .map(|joined| permissions(joined.member.role))
            .unwrap_or_default(),
        token_store: partner_client::STORE_NAME.to_string(),
    }
}

/// For each action the app shows, whether `role` allows it and if not why.
pub fn permissions(role: Role) -> Vec<WorkspacePermission> {
    SHOWN_ACTIONS
        .into_iter()
        .map(|action| {
            let why_not = role.why_not(action);
            WorkspacePermission {
                action: action.as_str().to_string(),
                label: action.describe().to_string(),
                allowed: why_not.is_none(),
                why_not,
            }
        })
        .collect()
}

/// The status, after asking the workspace again who the member is (so a role an admin
/// changed is shown, and a workspace that was down at start is joined once it answers).
pub async fn status(state: &AppState) -> WorkspaceView {
    let client = {
        let session = locked(&state.workspace);
        session
            .joined
            .as_ref()
            .map(|joined| joined.client.clone())
            .or_else(|| session.waiting.clone())
    };
    if let Some(client) = client {
        let answer = ask(&client, STATUS_CHECK).await;
        settle(state, client, answer);
    }
    view(state)
}

/// `client.me()`, given up after `limit` as unreachable.
async fn ask(client: &WorkspaceClient, limit: Duration) -> partner_workspace::Result<Member> {
    match tokio::time::timeout(limit, client.me()).await {
        Ok(answer) => answer,
        Err(_) => Err(partner_workspace::Error::Unreachable(format!(
            "{} did not answer within {} s",
            client.describe(),
            limit.as_secs()
        ))),
    }
}

/// Takes the workspace's answer to `me` into the session: joined when it answered; not joined
/// when it refused the token (not asked again: each ask would count as a failed login against
/// this address); otherwise waiting to be asked again, or still joined.
fn settle(state: &AppState, client: WorkspaceClient, answer: partner_workspace::Result<Member>) {
    let mut session = locked(&state.workspace);
    session.url = Some(client.describe());
    session.checked_at = Some(chrono::Utc::now());
    match answer {
        Ok(member) => {
            session.joined = Some(Joined { client, member });
            session.waiting = None;
            session.reachable = true;
            session.last_error = None;
        }
        Err(error @ partner_workspace::Error::Unauthorized(_)) => {
            session.joined = None;
            session.waiting = None;
            session.reachable = true;
            session.last_error = Some(format!("the workspace refused the token: {error}"));
        }
        // Down, busy (rate limited, a 5xx) or of another version: a session stays joined (its
        // calls say what fails), a login not joined yet waits to be asked again.
        Err(error) => {
            if session.joined.is_none() {
                session.waiting = Some(client);
            }
            session.reachable = !matches!(error, partner_workspace::Error::Unreachable(_));
            session.last_error = Some(error.to_string());
        }
    }
}

/// The saved login, over `secrets`, in the app's data folder (the CLI's file when the data
/// folder is the same, as it is outside tests).
fn logins<'a>(
    data_dir: &std::path::Path,
    secrets: &'a dyn partner_client::SecretStore,
) -> Logins<'a> {
    Logins::new(LoginFile::new(data_dir.join(LOGIN_FILE)), secrets)
}

/// At start: the workspace `env` names, else the saved login, asked who the member is (for
/// [`START_CHECK`] at most). Whatever stops it is a notice, and the app works on its own store.
pub async fn restore(app: &Console, env: EnvWorkspace) {
    let state = app.state();
    let data_dir = state.data_dir.clone();
    let found = state
        .with_keychain(move |secrets| {
            partner_workspace::resolve(&env, Some(&logins(&data_dir, secrets)))
        })
        .await;
    let resolved = match found {
        Ok(Ok(Some(resolved))) => resolved,
        Ok(Ok(None)) => return,
        Ok(Err(error)) => {
            let error = AppError::from(error);
            locked(&state.workspace).last_error = Some(error.message.clone());
            notice(
                app,
                format!(
                    "The team workspace was not joined: {} The app works on this machine's own store.",
                    error.message
                ),
            );
            return;
        }
        Err(error) => {
            notice(
                app,
                format!("The team workspace was not joined: {}", error.message),
            );
            return;
        }
    };
    let from_environment = matches!(resolved.source, Source::Environment);
    locked(&state.workspace).from_environment = from_environment;
    let client = resolved.client;
    let url = client.describe();
    let answer = ask(&client, START_CHECK).await;
    let said = answer.as_ref().err().map(AppError::from_workspace);
    settle(state, client, answer);
    if let Some(error) = said {
        notice(
            app,
            format!(
                "The team workspace {url} was not joined: {} {} Meanwhile the support desk answers from this machine's own store.",
                error.message, error.hint
            ),
        );
    } else {
        app.announce(|_| {});
    }
}

fn notice(app: &Console, text: String) {
    app.announce(|inner| inner.notices.push(text));
}

/// Joins the workspace at `form.url` with the member's token: the workspace is asked who the
/// token belongs to first (a token it refuses leaves no trace), then the token goes to the OS's
/// secret store and the URL to `workspace.json` (the CLI's login too). A secret store that does
/// not keep secrets is refused before anything is sent.
pub async fn join(app: &Console, form: JoinWorkspaceForm) -> Result<WorkspaceView> {
    let state = app.state();
    if form.url.trim().is_empty() {
        return Err(AppError::invalid(
            "Give the workspace's URL (where its `partner server run` listens, e.g. https://team.example).",
        ));
    }
    let url = partner_workspace::client::parse_url(&form.url)?;
    let token = form.token.trim();
    if token.is_empty() {
        return Err(AppError::invalid(
            "Paste your personal token: an admin of the workspace makes one with `partner server member add NAME --role ROLE`.",
        ));
    }
    if let KeychainHealth::Unavailable(why) = state.keys.health() {
        return Err(AppError::new(
            ErrorKind::Keychain,
            format!(
                "The token would not be kept: {}",
                sentence(&why)
            ),
            "Unlock or set up the OS's secret store, use \"Try again\" on its banner, then join again. Nothing was sent.",
        ));
    }
    let client = WorkspaceClient::new(url, Secret::new(token))?;
    let member = client.me().await?;
    let data_dir = state.data_dir.clone();
    let (saving, as_member) = (client.clone(), member.clone());
    let kept_aside = state
        .with_keychain(move |secrets| logins(&data_dir, secrets).save(&saving, &as_member))
        .await??;
    if let Some(text) = kept_aside {
        notice(app, sentence(&text));
    }
    let answer = Ok(member);
    {
        locked(&state.workspace).from_environment = false;
    }
    settle(state, client, answer);
    app.announce(|_| {});
    Ok(view(state))
}

/// Leaves the workspace: the saved login (its file and its token) is deleted, and the support
/// desk answers from this machine's own store again. A workspace named by `PARTNER_WORKSPACE`
/// is left for this run only, which a notice says.
pub async fn leave(app: &Console) -> Result<WorkspaceView> {
    let state = app.state();
    let data_dir = state.data_dir.clone();
    state
        .with_keychain(move |secrets| logins(&data_dir, secrets).remove())
        .await??;
    let from_environment = {
        let mut session = locked(&state.workspace);
        let from_environment = session.from_environment;
        *session = WorkspaceSession::default();
        from_environment
    };
    if from_environment {
        notice(
            app,
            format!(
                "The team workspace is left for this run; ${} names it, so the app joins it again at the next start unless it is unset.",
                partner_workspace::login::WORKSPACE_ENV
            ),
        );
    } else {
        app.announce(|_| {});
    }
    Ok(view(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(role: Role) -> Joined {
        Joined {
            client: WorkspaceClient::new(
                partner_workspace::client::parse_url("https://team.example").expect("url"),
                Secret::new("pcw_secret-token"),
            )
            .expect("client"),
            member: Member {
                name: "vera".into(),
                role,
            },
        }
    }

    #[test]
    fn a_refused_action_names_the_role_and_the_least_role_that_may() {
        let error = joined(Role::Viewer)
            .may(Action::Respond)
            .expect_err("a viewer may not answer");
        assert_eq!(error.kind, ErrorKind::Refused);
        assert_eq!(
            error.message,
            "A viewer may not answer transactions: support and up may. Ask an admin of the workspace."
        );
        assert!(joined(Role::Support).may(Action::Respond).is_ok());
        assert!(joined(Role::Support).may(Action::Replay).is_err());
    }

    #[test]
    fn the_permissions_list_every_shown_action_with_why_when_refused() {
        let listed = permissions(Role::Support);
        assert_eq!(listed.len(), SHOWN_ACTIONS.len());
        let respond = listed
            .iter()
            .find(|p| p.action == "respond")
            .expect("respond");
        assert!(respond.allowed && respond.why_not.is_none());
        let replay = listed
            .iter()
            .find(|p| p.action == "replay")
            .expect("replay");
        assert!(!replay.allowed);
        assert_eq!(
            replay.why_not.as_deref(),
            Some("A support member may not replay captures: developer and up may. Ask an admin of the workspace.")
        );
    }

    #[test]
    fn a_session_never_shows_its_token() {
        let shown = format!("{:?}", joined(Role::Admin));
        assert!(!shown.contains("pcw_secret-token"), "{shown}");
    }
}

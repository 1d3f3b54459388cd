//! `partner workspace login|status|logout`, and the team workspace a command acts on instead
//! of this machine's store: `PARTNER_WORKSPACE` (the server's URL) with
//! `PARTNER_WORKSPACE_TOKEN` (the member's personal token) when set, else the login saved by
//! `partner workspace login` (the URL in the data folder's `workspace.json`, the token in the
//! OS secret store), else none. `listen captures`, `listen clear` and `listen export` ask the
//! workspace's API (partner-server) through `partner_workspace::WorkspaceClient`, which
//! answers in the local store's own types, so the output is the same.
//!
//! A refusal is the workspace's (the member's role, and the role the call takes, in its words)
//! and exits 1, as the service's refusals do, as does a token the workspace does not know; a
//! body it refuses exits 2; a workspace that cannot be reached exits 3.

use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::Secret;
use partner_client::KeyringStore;
use partner_workspace::login::{LoginFile, Logins, Source, TOKEN_ENV, WORKSPACE_ENV};
use partner_workspace::{EnvWorkspace, WorkspaceClient};

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// Log in to a team workspace (the URL `partner server run` serves, without /webhooks):
    /// the token is checked with the workspace first, then kept in the OS secret store and the
    /// URL in the data folder. Commands then act on the workspace without PARTNER_WORKSPACE.
    Login(LoginArgs),
    /// The workspace commands act on (the environment's or the saved login's), and who you are
    /// there.
    Status,
    /// Forget the saved login: its token in the secret store and its file.
    Logout,
}

#[derive(Debug, ClapArgs)]
struct LoginArgs {
    /// The workspace's URL, e.g. https://team.example.
    url: String,
    /// Read the token from stdin (its first line). Without it the token is asked for on the
    /// terminal, not shown as it is typed.
    #[arg(long)]
    token_stdin: bool,
}

impl From<partner_workspace::Error> for CliError {
    fn from(error: partner_workspace::Error) -> Self {
        use partner_workspace::Error;
        let status = match &error {
            Error::Invalid(_) | Error::Usage(_) => 2,
            Error::Unreachable(_) => 3,
            Error::SavedLogin(_) => 4,
            Error::Refused { .. }
            | Error::Unauthorized(_)
            | Error::RateLimited { .. }
            | Error::Failed { .. }
            | Error::Unreadable(_) => 1,
        };
        match error {
            Error::Usage(message) => CliError::Usage(message),
            other => CliError::Workspace {
                message: other.to_string(),
                status,
            },
        }
    }
}

/// The workspace a command acts on: its client (`Deref`), found by [`Workspace::from_env`].
#[derive(Debug)]
pub struct Workspace(WorkspaceClient);

impl std::ops::Deref for Workspace {
    type Target = WorkspaceClient;

    fn deref(&self) -> &WorkspaceClient {
        &self.0
    }
}

impl Workspace {
    /// The workspace a command acts on, if any: the environment's (`PARTNER_WORKSPACE`), else
    /// the saved login's (the name is older than the login). A URL without a token, or one
    /// that is not a URL, is a usage error.
    pub fn from_env() -> Result<Option<Self>> {
        Ok(resolve()?.map(Workspace))
    }
}

/// The workspace a command acts on, if any: the environment's, else the saved login's. The
/// secret store is asked only when a login was saved; a saved login that cannot be used (its
/// file unreadable, its token missing) is an error, never a silent turn to this machine's
/// store.
fn resolve() -> Result<Option<WorkspaceClient>> {
    let env = EnvWorkspace::from_process();
    if let Some(client) = env.client()? {
        return Ok(Some(client));
    }
    let Ok(file) = LoginFile::in_data_dir() else {
        // No data folder is known, so nothing was saved.
        return Ok(None);
    };
    if !file.path().exists() {
        return Ok(None);
    }
    let store = KeyringStore::default();
    let logins = Logins::new(file, &store);
    Ok(partner_workspace::resolve(&env, Some(&logins))?.map(|resolved| resolved.client))
}

pub async fn run(args: Args) -> Result<()> {
    match args.command {
        WorkspaceCommand::Login(login) => self::login(login).await,
        WorkspaceCommand::Status => status().await,
        WorkspaceCommand::Logout => logout(),
    }
}

async fn login(args: LoginArgs) -> Result<()> {
    let url = partner_workspace::client::parse_url(&args.url)?;
    // The secret store is checked before the token is asked for, and so before anything is
    // sent or saved.
    let store = KeyringStore::default();
    super::keychain::ready(&store, "workspace tokens")?;
    let token = read_token(args.token_stdin)?;
    let client = WorkspaceClient::new(url, token)?;
    // The token is checked before anything is saved: a refused one leaves no trace.
    let member = client.me().await?;
    let logins = Logins::new(LoginFile::in_data_dir()?, &store);
    if let Some(notice) = logins.save(&client, &member)? {
        eprintln!("partner: {notice}");
    }
    println!(
        "logged in to {} as {} ({})",
        client.describe(),
        member.name,
        member.role
    );
    println!(
        "the token is kept in {}, the workspace's URL in {}",
        partner_client::STORE_NAME,
        logins.file.path().display()
    );
    if EnvWorkspace::from_process().url.is_some() {
        println!("note: ${WORKSPACE_ENV} is set, and commands act on its workspace while it is");
    }
    Ok(())
}

async fn status() -> Result<()> {
    let env = EnvWorkspace::from_process();
    let file = LoginFile::in_data_dir().ok();
    let loaded = match &file {
        Some(file) => file.load()?,
        None => Default::default(),
    };
    if let Some(notice) = &loaded.notice {
        eprintln!("partner: {notice}");
    }
    let (client, source) = match env.client()? {
        Some(client) => (client, Source::Environment),
        None => {
            let Some(login) = loaded.login.clone() else {
                println!(
                    "no workspace: commands act on this machine's store (log in with `partner \
                     workspace login URL`, or set ${WORKSPACE_ENV} and ${TOKEN_ENV})"
                );
                return Ok(());
            };
            let store = KeyringStore::default();
            let logins = Logins::new(
                file.clone()
                    .ok_or_else(|| CliError::Usage("no data folder is known".into()))?,
                &store,
            );
            match logins.client()? {
                Some((client, _)) => (client, Source::Saved(login)),
                None => {
                    println!("no workspace: commands act on this machine's store");
                    return Ok(());
                }
            }
        }
    };
    println!("workspace: {}", client.describe());
    match &source {
        Source::Environment => {
            println!("from: ${WORKSPACE_ENV} and ${TOKEN_ENV}");
            if let Some(saved) = &loaded.login {
                println!(
                    "the saved login ({}, as {}) is not used while ${WORKSPACE_ENV} is set",
                    saved.url, saved.member
                );
            }
        }
        Source::Saved(login) => println!(
            "from: the saved login (as {} since {}; the token in {})",
            login.member,
            login
                .saved_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            partner_client::STORE_NAME
        ),
    }
    let member = client.me().await?;
    println!("member: {}", member.name);
    println!("role: {}", member.role);
    Ok(())
}

fn logout() -> Result<()> {
    let store = KeyringStore::default();
    let logins = Logins::new(LoginFile::in_data_dir()?, &store);
    let out = logins.remove()?;
    if let Some(notice) = &out.notice {
        eprintln!("partner: {notice}");
    }
    match out.login {
        Some(login) => println!(
            "logged out of {}: its token deleted from {}",
            login.url,
            partner_client::STORE_NAME
        ),
        None => println!("no saved workspace login"),
    }
    if EnvWorkspace::from_process().url.is_some() {
        println!("note: ${WORKSPACE_ENV} is still set, and commands act on its workspace");
    }
    Ok(())
}

/// The token: stdin's first line with --token-stdin, else asked on the terminal without echo
/// (Unix); without a terminal, --token-stdin is required (a token on the command line would
/// be in the shell's history and the process list).
fn read_token(from_stdin: bool) -> Result<Secret> {
    let text = if from_stdin {
        use std::io::Read as _;
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| {
                CliError::Usage(format!("the token could not be read from stdin: {error}"))
            })?;
        text
    } else {
        ask_without_echo("workspace token: ")?
    };
    let token = Secret::new(text.lines().next().unwrap_or("").trim());
    drop(text);
    if token.expose().is_empty() {
        return Err(CliError::Usage("no token was given".into()));
    }
    Ok(token)
}

#[cfg(unix)]
fn ask_without_echo(prompt: &str) -> Result<String> {
    use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(needs_token_stdin());
    }
    let before = tcgetattr(&stdin).map_err(|e| CliError::Usage(format!("the terminal: {e}")))?;
    let mut quiet = before.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    tcsetattr(&stdin, OptionalActions::Flush, &quiet)
        .map_err(|e| CliError::Usage(format!("the terminal: {e}")))?;
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    let _ = tcsetattr(&stdin, OptionalActions::Flush, &before);
    read.map_err(|e| CliError::Usage(format!("the token could not be read: {e}")))?;
    Ok(line)
}

#[cfg(not(unix))]
fn ask_without_echo(_prompt: &str) -> Result<String> {
    Err(needs_token_stdin())
}

fn needs_token_stdin() -> CliError {
    CliError::Usage(
        "give the token with --token-stdin (e.g. `partner workspace login URL --token-stdin < \
         token-file`): it is not read from the command line, and here there is no terminal to \
         ask it on without showing it"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_workspace::Error;

    #[test]
    fn each_workspace_error_exits_as_it_did() {
        let status = |error: Error| CliError::from(error).exit_status();
        let refused = Error::Refused {
            message: "a viewer may not clear captures: it takes the developer role".into(),
            role: Some("viewer".into()),
            needs: Some("developer".into()),
        };
        assert_eq!(status(refused), 1);
        assert_eq!(status(Error::Unauthorized("no member".into())), 1);
        assert_eq!(
            status(Error::RateLimited {
                message: "wait".into(),
                retry_after_secs: Some(9)
            }),
            1
        );
        assert_eq!(
            status(Error::Failed {
                status: 404,
                message: "capture 9 was not found".into()
            }),
            1
        );
        assert_eq!(status(Error::Invalid("bad filter".into())), 2);
        assert_eq!(status(Error::Usage("not a URL".into())), 2);
        assert_eq!(status(Error::Unreachable("down".into())), 3);
        assert_eq!(status(Error::SavedLogin("corrupt".into())), 4);
        let said = CliError::from(Error::Invalid("bad filter".into())).to_string();
        assert_eq!(said, "the workspace: bad filter");
    }
}

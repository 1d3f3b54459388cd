//! `partner`: the Partner Console's command-line tool.
//!
//! Each subcommand lives in its own module under `commands/` (a folder for one with
//! subcommands of its own, as `listen/`) with an `Args` struct and a `run`. Adding one takes
//! three hand-written places: the module, its `pub mod` line in `commands/mod.rs`, and here a
//! variant of [`Command`] (its doc comment is the help line; box its `Args` if clippy finds the
//! variant large) with the arm of `main`'s match that runs it (tried in a scratch change; the
//! help, completions and man pages follow from clap). Logs go to stderr through tracing
//! (`RUST_LOG`), so stdout carries only what a command prints for its user.

mod call_lines;
mod commands;
mod error;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The version and the commit it was built from (`build.rs`).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (build ",
    env!("PARTNER_BUILD_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "partner",
    version = VERSION,
    about = "Partner Console: the partner API from the command line",
    after_help = error::EXIT_STATUSES
)]
struct Cli {
    /// A connection saved in the desktop app, by name (`partner connections list`): its base
    /// URL and client id, its secret from the keychain, in place of --base-url and --client-id.
    #[arg(long, env = "PARTNER_CONNECTION", global = true, value_name = "NAME")]
    connection: Option<String>,
    /// Print each call to the service on stderr as it ends: method, path and query, status,
    /// time, retries and waits, and the service's request id.
    #[arg(short = 'v', long, global = true)]
    verbose: bool,
    /// Print each call to the service on stderr as a curl command, with the token and the
    /// client id and secret as $PARTNER_TOKEN, $PARTNER_CLIENT_ID and $PARTNER_CLIENT_SECRET.
    #[arg(long, global = true)]
    curl: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the local sandbox of the partner API service.
    Sandbox(commands::sandbox::Args),
    /// Issue, introspect or revoke access tokens; store the client secret in the keychain.
    Token(commands::token::Args),
    /// List, show and create products; add, change, delete subscriptions and rotate their keys.
    Products(commands::products::Args),
    /// List and show transactions and their events.
    Transactions(commands::transactions::Args),
    /// Receive, verify and keep webhook notifications (and export the store).
    Listen(Box<commands::listen::Args>),
    /// Play the lender against a sandbox: start or update a transaction, add an event (prints
    /// what was created and the notifications it queued); or make it misbehave on demand
    /// (faults, revoked tokens).
    Trigger(commands::trigger::Args),
    /// Scenarios: scripted webhook flows (the app's Demo screen), listed or played to their end
    /// on a sandbox and listener of their own.
    Demo(commands::demo::Args),
    /// Check a webhook receiver against the spec's signing and endpoint rules: sends a few
    /// marked notifications and reports each rule as pass, fail or warn with its evidence.
    CheckReceiver(commands::check_receiver::Args),
    /// Check the way to the service step by step (address, proxy, TCP, TLS and who issued its
    /// certificate, HTTP, a token, a list call of each kind), with what to do at the first step
    /// that fails: for a support ticket.
    Doctor(commands::doctor::Args),
    /// The connections saved in the desktop app (use one with --connection NAME).
    Connections(commands::connections::Args),
    /// The audit log: every write (respond, create or change a product, subscribe, rotate,
    /// delete) the app and this command sent or refused, with the service's answer.
    Audit(commands::audit::Args),
    /// A team's workspace on PostgreSQL: create it, add members, set signing keys, run servers
    /// (the team's webhook endpoint and the API consoles join with PARTNER_WORKSPACE).
    Server(commands::server::Args),
    /// Log in to a team workspace (`partner server`), see who you are there, log out: commands
    /// such as `listen captures` then act on the workspace instead of this machine's store.
    Workspace(commands::workspace::Args),
    /// Print the partner-console:// link the desktop app opens for a transaction, an event or
    /// a product on a saved connection (--connection NAME) or the embedded sandbox.
    Link(commands::link::Args),
    /// The version; with --check, whether a newer one exists (asked only then: `partner` never
    /// looks for updates by itself).
    Version(commands::version::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell).
    Completions(commands::docs::CompletionsArgs),
    /// Write the man pages into a folder.
    Man(commands::docs::ManArgs),
}

/// Logs at `default` and above unless `RUST_LOG` says otherwise.
fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal; a log file or a pipe gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
}

/// mimalloc rather than the system allocator: `partner listen` is a server whose requests
/// allocate and free on different runtime threads (a capture is built on one worker and dropped
/// on another after the store and the live feed are done with it), where glibc's malloc spent
/// about a tenth of the workers' time (see BENCHMARKS.md, listener).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // `demo run` starts the app's services, whose start-up is told at info and whose failed
    // deliveries (what the scenarios are about) at warn: its output is the scenario, so only
    // errors are logged unless asked.
    init_logging(if matches!(cli.command, Command::Demo(_)) {
        "error"
    } else {
        "info"
    });
    call_lines::show(call_lines::Show {
        lines: cli.verbose,
        curl: cli.curl,
    });
    if let Some(name) = cli.connection.clone() {
        commands::connect::use_named_connection(name);
    }
    let result = match cli.command {
        Command::Sandbox(args) => commands::sandbox::run(args).await,
        Command::Token(args) => commands::token::run(args).await,
        Command::Products(args) => commands::products::run(args).await,
        Command::Transactions(args) => commands::transactions::run(args).await,
        Command::Listen(args) => commands::listen::run(*args).await,
        Command::Trigger(args) => commands::trigger::run(args).await,
        Command::Demo(args) => commands::demo::run(args).await,
        Command::CheckReceiver(args) => commands::check_receiver::run(args).await,
        Command::Doctor(args) => commands::doctor::run(args).await,
        Command::Connections(args) => commands::connections::run(args).await,
        Command::Audit(args) => commands::audit::run(args),
        Command::Server(args) => commands::server::run(args).await,
        Command::Workspace(args) => commands::workspace::run(args).await,
        Command::Link(args) => commands::link::run(args),
        Command::Version(args) => commands::version::run(args, VERSION).await,
        Command::Completions(args) => commands::docs::completions::<Cli>(args),
        Command::Man(args) => commands::docs::man::<Cli>(args),
    };
    call_lines::finish();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.is_closed_pipe() => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("partner: {error}");
            ExitCode::from(error.exit_status())
        }
    }
}

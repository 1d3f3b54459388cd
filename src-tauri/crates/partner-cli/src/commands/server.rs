//! `partner server`: a team's workspace on PostgreSQL (partner-server). `init` creates or
//! migrates the schema and the first admin, `member add` a member, `key set` a signing key,
//! `service set` the service connection the servers call for everyone, `run` a server. Tokens are printed once, as the output's last line `token: TOKEN`, for the
//! scripts that drive these commands.

use crate::commands::signal::stop_signal;
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::Secret;
use partner_server::intake::IntakeConfig;
use partner_server::server_key::KeySource;
use partner_server::{database, members, service, signing_keys, Role, ServerConfig};
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: ServerCommand,
}

#[derive(Debug, Subcommand)]
enum ServerCommand {
    /// Create or migrate the workspace's schema, and its first admin (`admin`, whose token is
    /// printed once). Run again it changes nothing. Creates the server key file if missing.
    Init(DatabaseArgs),
    /// The workspace's members.
    Member {
        #[command(subcommand)]
        command: MemberCommand,
    },
    /// The signing keys the servers verify notifications with (kept sealed with the server key).
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// The service the servers call for everyone (the support index's sync, answers): its
    /// client secret is kept sealed with the server key and never sent to a console.
    Service {
        #[command(subcommand)]
        command: ServiceCommand,
    },
    /// Serve the webhook endpoint and the workspace API until Ctrl-C or SIGTERM. Any number of
    /// servers may run on one database (behind a load balancer).
    Run(RunArgs),
}

#[derive(Debug, Subcommand)]
enum MemberCommand {
    /// Add a member with a role; prints their personal token once (kept hashed).
    Add {
        /// The member's name, as the audit log shows it.
        name: String,
        /// viewer, support, developer or admin.
        #[arg(long, value_name = "ROLE")]
        role: Role,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List the members and their roles.
    List(DatabaseArgs),
}

#[derive(Debug, Subcommand)]
enum KeyCommand {
    /// Set a subscription's signing key (the one before it keeps verifying for the grace
    /// period). The key is read from stdin, never from an argument.
    Set {
        /// The subscription id its notifications carry in `Svc-SubscriptionId`; or, where the
        /// service shows no subscription ids, RESOURCE=URL with --product (the key is then
        /// bound to the id named by the first notification for that URL it verifies).
        subscription_id: String,
        /// The product of a subscription named by RESOURCE=URL.
        #[arg(long)]
        product: Option<String>,
        /// Read the key from stdin (required: a key on the command line would be in the
        /// shell's history and the process list).
        #[arg(long, required = true)]
        key_stdin: bool,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// Set the service connection (checked first: a token is asked for with it). The client
    /// secret is read from stdin, never from an argument.
    Set {
        /// The service's base URL (without /partner/v2).
        #[arg(long, value_name = "URL")]
        base_url: String,
        #[arg(long, value_name = "ID")]
        client_id: String,
        /// Read the client secret from stdin (required).
        #[arg(long, required = true)]
        client_secret_stdin: bool,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Show the service connection (never its secret).
    Show(DatabaseArgs),
}

/// Where the workspace is: its database, and the key its secrets are sealed with.
#[derive(ClapArgs)]
struct DatabaseArgs {
    /// The workspace's PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE; add
    /// ?sslmode=verify-full for TLS to the database).
    #[arg(
        long,
        value_name = "URL",
        env = "PARTNER_DATABASE_URL",
        hide_env_values = true
    )]
    database: String,
    /// The server key's file (default: server.key in the console's data folder, made by `init`);
    /// $PARTNER_SERVER_KEY (the key's 64 hex digits) wins over it.
    #[arg(long, value_name = "FILE", env = "PARTNER_SERVER_KEY_FILE")]
    key_file: Option<PathBuf>,
}

impl std::fmt::Debug for DatabaseArgs {
    // The URL may hold the database's password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseArgs")
            .field("database", &"<hidden>")
            .field("key_file", &self.key_file)
            .finish()
    }
}

#[derive(Debug, ClapArgs)]
struct RunArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// The address to serve on (webhooks on /webhooks, the workspace API on /api/v1).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8790")]
    addr: SocketAddr,
    /// Junk stored in full per second (e.g. 20/s), as `partner listen --junk-rate`: past it
    /// junk is answered as ever and counted, one in 100 kept. off: store every request.
    #[arg(long, value_name = "N/s", default_value = "20/s", value_parser = partner_listener::limits_text::parse_rate)]
    junk_rate: crate::commands::listen::serve::JunkRate,
    /// Keep at most this many captures. Past it, junk goes first (other paths and methods,
    /// failed or absent signatures), then notifications of subscriptions without a key, validly
    /// signed ones last; oldest first in each (as `partner listen --max-captures`).
    #[arg(long, value_name = "N")]
    max_captures: Option<u64>,
    /// Keep at most this many bytes of captures as stored, e.g. 20GiB; pruned as
    /// --max-captures is. Junk holds at most a tenth of either limit.
    #[arg(long, value_name = "SIZE", value_parser = partner_listener::limits_text::parse_size)]
    max_bytes: Option<u64>,
    /// Keep captures at most this long (e.g. 30days).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    max_age: Option<std::time::Duration>,
    /// How often the servers sync the support index with the service on their own (once for
    /// the whole workspace, however many servers run); off: only when a member asks.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_every)]
    sync_every: SyncEvery,
    /// Serve HTTPS with this certificate chain (PEM: the server's certificate first, then any
    /// intermediates); with --tls-key. Without both, plain HTTP (TLS is then a reverse proxy's).
    #[arg(
        long,
        value_name = "FILE",
        env = "PARTNER_SERVER_TLS_CERT",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM: PKCS#8, RSA or SEC1, unencrypted); with --tls-cert.
    #[arg(
        long,
        value_name = "FILE",
        env = "PARTNER_SERVER_TLS_KEY",
        requires = "tls_cert"
    )]
    tls_key: Option<PathBuf>,
}

/// `--sync-every`: a duration, or off.
#[derive(Debug, Clone, Copy)]
struct SyncEvery(Option<std::time::Duration>);

fn parse_every(text: &str) -> std::result::Result<SyncEvery, String> {
    if text.trim() == "off" {
        return Ok(SyncEvery(None));
    }
    let every = humantime::parse_duration(text.trim()).map_err(|e| e.to_string())?;
    if every < std::time::Duration::from_secs(1) {
        return Err("a sync interval is at least 1s (or off)".into());
    }
    Ok(SyncEvery(Some(every)))
}

impl DatabaseArgs {
    fn key_source(&self) -> Result<KeySource> {
        KeySource::choose(self.key_file.clone(), || {
            Ok(partner_local::paths::data_dir()?.join("server.key"))
        })
    }

    async fn connect(&self, connections: u32) -> Result<database::Pool> {
        Ok(database::connect(&self.database, connections).await?)
    }
}

pub async fn run(args: Args) -> Result<()> {
    match args.command {
        ServerCommand::Init(database) => init(database).await,
        ServerCommand::Member {
            command:
                MemberCommand::Add {
                    name,
                    role,
                    database,
                },
        } => {
            let pool = database.connect(2).await?;
            database::check(&pool, &database.key_source()?.load()?).await?;
            let token = members::add(&pool, &name, role, None).await?;
            println!("added {} as {role}", name.trim());
            println!("token: {}", token.expose());
            Ok(())
        }
        ServerCommand::Member {
            command: MemberCommand::List(database),
        } => {
            let pool = database.connect(2).await?;
            for member in members::list(&pool).await? {
                println!("{}\t{}", member.name, member.role);
            }
            Ok(())
        }
        ServerCommand::Key {
            command:
                KeyCommand::Set {
                    subscription_id,
                    product,
                    key_stdin: _,
                    database,
                },
        } => {
            use partner_client::{SubscriptionElement, SubscriptionRef};
            let element = match (SubscriptionRef::parse(&subscription_id), product) {
                (SubscriptionRef::Element { url, resource }, Some(product_id)) => {
                    Some(SubscriptionElement {
                        product_id: product_id.trim().to_string(),
                        url,
                        resource,
                    })
                }
                (SubscriptionRef::Element { .. }, None) => {
                    return Err(CliError::Usage(
                        "a subscription named by RESOURCE=URL needs its --product".into(),
                    ))
                }
                (SubscriptionRef::Id(_), Some(_)) => {
                    return Err(CliError::Usage(
                        "--product goes with a subscription named by RESOURCE=URL, not an id"
                            .into(),
                    ))
                }
                (SubscriptionRef::Id(_), None) => None,
            };
            let key = read_key_from_stdin()?;
            let server_key = database.key_source()?.load()?;
            let pool = database.connect(2).await?;
            database::check(&pool, &server_key).await?;
            match &element {
                Some(element) => {
                    signing_keys::set_element(&pool, &server_key, element, &key, false).await?;
                    println!("the signing key of {} is set", element.describe());
                }
                None => {
                    signing_keys::set(&pool, &server_key, &subscription_id, &key).await?;
                    println!("the signing key of {} is set", subscription_id.trim());
                }
            }
            Ok(())
        }
        ServerCommand::Service {
            command:
                ServiceCommand::Set {
                    base_url,
                    client_id,
                    client_secret_stdin: _,
                    database,
                },
        } => {
            let client_secret = super::connect::secret_from_stdin("client secret")?;
            let server_key = database.key_source()?.load()?;
            let pool = database.connect(2).await?;
            database::check(&pool, &server_key).await?;
            let info = service::set(
                &pool,
                &server_key,
                &service::NewConnection {
                    base_url,
                    client_id,
                    client_secret,
                },
                "partner server service set",
            )
            .await?;
            println!(
                "the workspace calls {} as {} (a token was issued with it)",
                info.base_url, info.client_id
            );
            Ok(())
        }
        ServerCommand::Service {
            command: ServiceCommand::Show(database),
        } => {
            let pool = database.connect(2).await?;
            match service::info(&pool).await? {
                Some(info) => println!(
                    "{} as {} (set by {} at {})",
                    info.base_url,
                    info.client_id,
                    info.set_by,
                    info.set_at.to_rfc3339()
                ),
                None => println!("no service connection is set"),
            }
            Ok(())
        }
        ServerCommand::Run(args) => serve(args).await,
    }
}

async fn init(database: DatabaseArgs) -> Result<()> {
    let source = database.key_source()?;
    let (server_key, created) = source.load_or_create()?;
    if created {
        println!(
            "server key: created {} (copy it to every server of this workspace)",
            source.describe()
        );
    }
    let pool = database.connect(2).await?;
    let report = database::init(&pool, &server_key).await?;
    if report.applied.is_empty() {
        println!("schema: up to date");
    } else {
        let versions: Vec<String> = report.applied.iter().map(i64::to_string).collect();
        println!("schema: applied migration {}", versions.join(", "));
    }
    match report.admin_token {
        Some(token) => {
            println!("added {} as admin", database::FIRST_ADMIN);
            println!("token: {}", token.expose());
        }
        None => println!("members: the workspace has an admin already"),
    }
    Ok(())
}

async fn serve(args: RunArgs) -> Result<()> {
    // Read and checked first: a bad file is refused (exit 2) before anything else is opened.
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(partner_server::tls::load(cert, key)?),
        _ => None,
    };
    let server_key = args.database.key_source()?.load()?;
    let pool = args.database.connect(16).await?;
    let intake = IntakeConfig::default();
    let path = intake.path.clone();
    let server = partner_server::start(
        pool,
        server_key,
        ServerConfig {
            addr: args.addr,
            intake,
            junk_rate: args.junk_rate,
            retention: partner_listener::Retention {
                max_count: args.max_captures,
                max_bytes: args.max_bytes,
                max_age: args
                    .max_age
                    .map(|d| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)),
            },
            sync_every: args.sync_every.0,
            tls,
        },
    )
    .await?;
    println!("listening on {}", server.webhook_url(&path));
    println!(
        "workspace API on {}://{}/api/v1",
        server.scheme(),
        server.local_addr
    );
    let stop = stop_signal()?;
    let shutdown = server.shutdown_token();
    tokio::spawn(async move {
        stop.await;
        shutdown.cancel();
    });
    server.wait().await?;
    Ok(())
}

/// The signing key from stdin: its first line, blanks around it dropped.
fn read_key_from_stdin() -> Result<Secret> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|error| {
            CliError::Usage(format!("the key could not be read from stdin: {error}"))
        })?;
    let key = text.lines().next().unwrap_or("").trim().to_string();
    text.clear();
    if key.is_empty() {
        return Err(CliError::Usage("--key-stdin: stdin held no key".into()));
    }
    Ok(Secret::new(key))
}

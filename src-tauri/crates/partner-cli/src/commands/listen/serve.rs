//! `partner listen` itself: the webhook listener in the foreground on a capture store (the
//! console's by default), with its keys (`--key SUB=KEY`, `--keychain`), forward rules, test
//! mode and retention; the captures are printed by [`super::printer`] on a thread of its own.
//!
//! `--forward-rule [RESOURCE][:EVENT]=URL` (repeatable) passes valid notifications on to the
//! user's own apps by resource type and event type, the first matching rule winning;
//! `--forward-to URL` is the catch-all after them (`partner_listener::forward`).
//!
//! The first line on stdout is `listening on http://HOST:PORT/PATH` with the real port, so a
//! script that passed port 0 can read it. Then one line per capture (or one JSON object per line
//! with `--json`), written as soon as the capture is committed. Keys come from `--key SUB=KEY`
//! and, with `--keychain`, from the keychain entries the Partner Console client stores (looked up
//! on first sight of a subscription and cached briefly). Keys never reach stdout or a log line.
//! Junk counted rather than stored (a flood past `--junk-rate`) is said on stderr.

use super::keys::ListenKeys;
use crate::commands::store_args::default_db;
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_listener::keys::MemoryKeys;
use partner_listener::{
    ForwardRules, Listener, ListenerConfig, Retention, Store, StoreOptions, TestMode,
};
use partner_local::KeychainKeys;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

#[derive(Debug, ClapArgs)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = partner_listener::DEFAULT_ADDR)]
    pub addr: String,
    /// Path notifications are posted to.
    #[arg(long, default_value = partner_listener::DEFAULT_PATH)]
    pub path: String,
    /// A subscription's signing key as SUBSCRIPTION_ID=KEY (repeatable).
    #[arg(long = "key", value_name = "SUBSCRIPTION_ID=KEY")]
    pub keys: Vec<crate::commands::store_args::KeyArg>,
    /// Also use the signing keys the Partner Console client keeps in the keychain.
    #[arg(long)]
    pub keychain: bool,
    /// Send each valid notification, unchanged, to this URL too (your own app). With
    /// --forward-rule, only those no rule takes (it acts as a last, catch-all rule).
    #[arg(long, value_name = "URL")]
    pub forward_to: Option<String>,
    /// Send valid notifications of a resource type and event type, unchanged, to a URL:
    /// [RESOURCE][:EVENT]=URL (repeatable). RESOURCE is a resource type, short (transaction,
    /// transaction:event) or full (urn:svc:partner:...), EVENT an event type (created,
    /// updated, or any name the service sends); * or nothing means any. A resource type the
    /// spec does not show takes an explicit EVENT (transaction:document:*).
    /// The first rule that matches wins, e.g.
    /// --forward-rule transaction:created=http://localhost:3000/hooks
    /// --forward-rule transaction:event=http://localhost:4000/hooks --forward-rule
    /// '*=http://localhost:5000/hooks'. Replays and invalid notifications are never forwarded.
    #[arg(long = "forward-rule", value_name = "SPEC")]
    pub forward_rules: Vec<String>,
    /// Test mode: answer every notification with this status.
    #[arg(long, value_name = "STATUS")]
    pub respond: Option<u16>,
    /// Test mode: hold every answer back this long (e.g. 35s).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub delay: Option<Duration>,
    /// Test mode: answer 500 to this fraction (0-1) of notifications, at random.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub fail_rate: f64,
    /// Test mode: answer 500 to the first N attempts of each notification.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fail_first: u32,
    /// The capture store (SQLite). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// Bodies over this many bytes get 413.
    #[arg(long, value_name = "BYTES", default_value_t = partner_listener::DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Keep at most this many captures. Past it, junk goes first (other paths and methods,
    /// failed or absent signatures), then notifications of subscriptions without a key here,
    /// validly signed ones last; oldest first in each.
    #[arg(long, value_name = "N")]
    pub max_captures: Option<u64>,
    /// Keep at most this many bytes of captures (their bodies and headers), e.g. 2GiB or
    /// 500MB; pruned as --max-captures is. Junk holds at most a tenth of either limit.
    #[arg(long, value_name = "SIZE", value_parser = partner_listener::limits_text::parse_size)]
    pub max_bytes: Option<u64>,
    /// Junk stored in full per second (e.g. 20/s); past it junk is answered as ever and
    /// counted, one in 100 kept as a sample, with a line on stderr. off: store every request.
    #[arg(long, value_name = "N/s", default_value = "20/s", value_parser = partner_listener::limits_text::parse_rate)]
    pub junk_rate: JunkRate,
    /// Keep captures at most this long (e.g. 7days).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_age: Option<Duration>,
    /// One JSON object per capture instead of a line of text.
    #[arg(long)]
    pub json: bool,
}

/// What `partner listen` calls itself in a store's lock file (a refused second writer names it).
const HOLDER_LISTEN: &str = "partner listen";

pub async fn run(args: ServeArgs) -> Result<()> {
    let given = MemoryKeys::new();
    for assignment in &args.keys {
        let (subscription, key) = assignment.read()?;
        if let Err(problems) = partner_api::signing_key::check(key.expose()) {
            eprintln!("partner: warning: the key of {subscription}: {problems}");
        }
        given.insert(subscription, key);
    }
    let keychain = args.keychain.then(|| {
        let store: Arc<dyn partner_client::SecretStore> = Arc::new(
            partner_client::KeyringStore::new(partner_client::KEYCHAIN_SERVICE),
        );
        KeychainKeys::new(store, partner_listener::keys::DEFAULT_PREVIOUS_KEY_GRACE)
    });
    let keys = Arc::new(ListenKeys { given, keychain });
    let forward_to = args
        .forward_to
        .as_deref()
        .map(partner_listener::outbound::parse_target)
        .transpose()?;
    let forward_rules = args
        .forward_rules
        .iter()
        .map(|spec| ForwardRules::parse_cli(spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    // Any name is taken (a service may add types), so a typo is not refused: say so instead.
    for rule in &forward_rules {
        for name in rule.unknown_names() {
            eprintln!(
                "note: the spec shows no {name:?}; the forward rule to {} matches only \
                 notifications that carry exactly that",
                rule.url
            );
        }
    }
    let test_mode = TestMode {
        status: args.respond,
        delay: args.delay,
        fail_rate: args.fail_rate,
        fail_first_attempts: args.fail_first,
        failure_status: None,
    };
    let db = match args.db {
        Some(db) => db,
        None => default_db()?,
    };
    let retention = Retention {
        max_count: args.max_captures,
        max_bytes: args.max_bytes,
        max_age: args
            .max_age
            .map(|d| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)),
    };
    let data_key = crate::commands::store_args::store_key(&db)?;
    eprintln!(
        "partner: the capture store is encrypted at rest with {}",
        data_key.describe()
    );
    let store = Store::open_with(
        &db,
        StoreOptions {
            retention,
            holder: HOLDER_LISTEN,
            key: Some(data_key.store_key()),
            ..StoreOptions::default()
        },
    )?;
    let config = ListenerConfig {
        path: args.path.clone(),
        body_limit: args.body_limit,
        forward_to,
        forward_rules,
        test_mode,
        junk_rate: args.junk_rate,
        ..ListenerConfig::default()
    };
    let listener = Listener::new(config, store, keys)?;
    let reporting = tokio::spawn(report_junk(listener.clone()));
    let tcp = TcpListener::bind(&args.addr)
        .await
        .map_err(|source| CliError::Bind {
            addr: args.addr.clone(),
            source,
        })?;
    let local = tcp.local_addr().map_err(|source| CliError::Bind {
        addr: args.addr.clone(),
        source,
    })?;
    let feed = listener.subscribe();
    let stop = crate::commands::signal::stop_signal()?;
    tracing::info!(db = %db.display(), "capture store");
    // A thread of its own: a reader of stdout that stops reading blocks only this thread (the
    // feed then reports what it missed), never the runtime that answers the service.
    let json = args.json;
    std::thread::Builder::new()
        .name("capture-printer".into())
        .spawn(move || super::printer::print_captures(feed, json))
        .map_err(CliError::Output)?;
    // The first line once the run is in the store (a `listen missed` run right after it sees
    // this run).
    let path = listener.config().path.clone();
    let announce = move || {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{local}{path}")?;
        out.flush()
    };
    listener.serve_announced(tcp, stop, announce).await?;
    reporting.abort();
    if junk_counts(&listener) != (0, 0) {
        eprintln!("{}", junk_line(&listener));
    }
    Ok(())
}

/// The junk rate of `--junk-rate` (`None`: off).
pub type JunkRate = Option<u32>;

/// How often `partner listen` says on stderr what junk it counted rather than stored.
const JUNK_REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// A line on stderr every [`JUNK_REPORT_EVERY`] in which junk was counted rather than stored
/// (a flood past `--junk-rate`) or pruned, and once more at the stop: a scan of the tunnel URL
/// is seen, not only felt.
async fn report_junk(listener: Listener) {
    let mut said = (0, 0);
    loop {
        tokio::time::sleep(JUNK_REPORT_EVERY).await;
        let now = junk_counts(&listener);
        if now != said {
            eprintln!("{}", junk_line(&listener));
            said = now;
        }
    }
}

/// Junk counted rather than stored, and junk captures pruned, so far.
fn junk_counts(listener: &Listener) -> (u64, u64) {
    let pruned = listener.store().retention_sizes().junk.pruned;
    (listener.flood_summary().summarised, pruned)
}

fn junk_line(listener: &Listener) -> String {
    let flood = listener.flood_summary();
    let pruned = listener.store().retention_sizes().junk.pruned;
    let rate = flood
        .junk_rate
        .map_or_else(|| "the rate".to_string(), |rate| format!("{rate}/s"));
    format!(
        "partner: junk (other paths and methods, failed or absent signatures) past {rate}: {} \
         counted and not stored, {} kept as a sample; {pruned} junk captures pruned to keep \
         junk within its share",
        flood.summarised, flood.sampled
    )
}

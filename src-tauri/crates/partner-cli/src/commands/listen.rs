//! `partner listen`: runs the webhook listener in the foreground and prints each capture;
//! `partner listen export` / `import` move a capture store to and from files (`export --redact`
//! writes a redacted evidence bundle for a support ticket instead); `partner listen clear`
//! deletes captures; `partner listen captures` lists them, newest first, with the desktop
//! inspector's filters and search, answered by the store (`StoreReader::page`).
//!
//! Every subcommand uses the same store as the desktop app by default
//! (`$XDG_DATA_HOME/partner-console/captures.sqlite3`). A store has one writer at a time
//! (`partner_listener::writer_lock`): `partner listen`, `import` and `clear --yes` take its
//! lock and are refused, naming the holder, while the app or another `partner listen` has it;
//! `export`, `captures` and `clear` without `--yes` only read, so they work beside a running
//! listener. Every subcommand that selects captures reads its filter options through one
//! function ([`FilterArgs::filter`]), so `--verdict` or `--since` mean the same everywhere.
//! `import` returns once the search index covers what it imported
//! (`Store::wait_until_searchable`), so the next search is answered from the index.
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

use super::store_args::{default_db, invalid, store_path, FilterArgs};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_api::Secret;
use partner_listener::evidence::{self, EvidenceOptions, FieldPath, Selection};
use partner_listener::export::{export, import_jsonl, ExportFormat};
use partner_listener::keys::{KeySource, MemoryKeys, SubscriptionKeys};
use partner_listener::{
    Capture, CaptureQuery, ForwardRules, Grouping, HitCount, Listener, ListenerConfig, LiveEvent,
    OutboundRecord, Retention, Store, StoreOptions, TestMode, Verdict, MAX_PAGE_LIMIT,
};
use partner_local::KeychainKeys;
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

#[derive(Debug, ClapArgs)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Write the captures of a store out as JSON Lines or HAR 1.2, or (--redact) as an
    /// evidence bundle for a support ticket.
    Export(Box<ExportArgs>),
    /// Add the captures of a JSON Lines export to a store.
    Import(ImportArgs),
    /// Delete captures (all, or those the filters select). Without --yes, only says how many
    /// it would delete.
    Clear(ClearArgs),
    /// List captures, newest first, with the inspector's filters and search. Reads the store
    /// only, so it works while a listener runs.
    Captures(CapturesArgs),
    /// List the notifications the service gave up on while the listener was down: worked out
    /// from the API (the transactions changed since --since and their events) and compared
    /// with the captures. Reads the store only.
    Missed(super::missed::MissedArgs),
    /// Send the missed notifications again (the same check as `missed` first): each built as
    /// the service would have sent it, signed with its subscription's key (the keychain, or
    /// --key), marked `Svc-Replay: recovery`, to the listener or --to URL.
    Recover(super::missed::RecoverArgs),
    /// Send captures again to a receiver: those the filters select from the store (a receiver
    /// fixed after an outage gets them again), or every one of a file (--from, JSON Lines or
    /// HAR: fixtures for a contract test in CI), paced (--rate, --concurrency), each answer
    /// checked (--expect, --max-time), with a JUnit report (--junit). Exit status 1 when one
    /// did not pass.
    Replay(Box<super::replay::ReplayArgs>),
    /// List the listener's runs on a store (when each started and stopped), one JSON object a
    /// line, oldest first. Reads the store only (it is encrypted at rest, so other tools cannot).
    Runs(RunsArgs),
}

#[derive(Debug, ClapArgs)]
pub struct RunsArgs {
    /// The capture store to read. Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

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
    pub keys: Vec<String>,
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

#[derive(Debug, ClapArgs)]
pub struct ExportArgs {
    /// The capture store to read (works beside a running listener; after a crash it first writes
    /// in what the listener acknowledged). Default: the
    /// console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// jsonl (lossless, importable) or har (HAR 1.2).
    #[arg(long, default_value = "jsonl")]
    pub format: String,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only captures with this verdict (repeatable), e.g. valid, invalid-signature.
    #[arg(long, conflicts_with = "redact")]
    pub verdict: Vec<String>,
    /// Write a redacted evidence bundle for a support ticket instead: NAME.har (HAR 1.2) and
    /// NAME.md (verdicts, the signature debugger's diagnosis, attempts and timing, the
    /// forward's answer) for --out NAME. Authorization and cookie headers are masked, and no
    /// signing key, client secret or token is in it. Select with --id or --notification.
    #[arg(long)]
    pub redact: bool,
    /// With --redact: this capture (repeatable).
    #[arg(long = "id", value_name = "CAPTURE_ID", requires = "redact")]
    pub ids: Vec<i64>,
    /// With --redact: every attempt of the notification with this eventId.
    #[arg(
        long,
        value_name = "EVENT_ID",
        requires = "redact",
        conflicts_with = "ids"
    )]
    pub notification: Option<String>,
    /// With --notification: only that subscription's (when the eventId arrived for several).
    #[arg(long, value_name = "SUBSCRIPTION_ID", requires = "notification")]
    pub subscription: Option<String>,
    /// With --notification: only that resource type's (a URN).
    #[arg(long, value_name = "URN", requires = "notification")]
    pub resource_type: Option<String>,
    /// With --redact: mask this body field, as a JSON pointer (/borrower/ssn) or a dotted path
    /// (borrower.ssn) (repeatable).
    #[arg(long = "mask-field", value_name = "PATH", requires = "redact")]
    pub mask_fields: Vec<String>,
    /// With --redact: a subscription's signing key as SUBSCRIPTION_ID=KEY, for the signature
    /// debugger's diagnosis (repeatable). The key itself never goes into the bundle.
    #[arg(long = "key", value_name = "SUBSCRIPTION_ID=KEY", requires = "redact")]
    pub keys: Vec<String>,
    /// With --redact: also the signing keys (and the client secret of PARTNER_CLIENT_ID) the
    /// Partner Console client keeps in the keychain.
    #[arg(long, requires = "redact")]
    pub keychain: bool,
    /// With --redact: the sandbox the notifications came from (its base URL); its delivery
    /// record of each eventId goes into the summary. The admin token, if the sandbox has one,
    /// comes from PARTNER_SANDBOX_ADMIN_TOKEN.
    #[arg(long, value_name = "URL", requires = "redact")]
    pub deliveries_from: Option<String>,
}

#[derive(Debug, ClapArgs)]
pub struct ImportArgs {
    /// The capture store to add to (created if missing). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// A JSON Lines export.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
}

#[derive(Debug, ClapArgs)]
pub struct ClearArgs {
    /// The capture store to clear. Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Delete them. Without it, only say how many would be deleted.
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, ClapArgs)]
pub struct CapturesArgs {
    /// The capture store to read (it changes nothing but, after a crash, writes in what the
    /// listener acknowledged). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Rows to list.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: u64,
    /// Rows to skip first (newest first).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,
    /// One row per notification (its newest matching attempt, with how many attempts match).
    #[arg(long)]
    pub grouped: bool,
    /// One JSON object per line (the fields of `partner listen --json`) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `partner listen` calls itself in a store's lock file (a refused second writer names it).
const HOLDER_LISTEN: &str = "partner listen";
const HOLDER_IMPORT: &str = "partner listen import";
const HOLDER_CLEAR: &str = "partner listen clear";

pub async fn run(args: Args) -> Result<()> {
    match args.action {
        Some(Action::Export(export_args)) if export_args.redact => run_evidence(*export_args).await,
        Some(Action::Export(export_args)) => run_export(*export_args),
        Some(Action::Import(import_args)) => run_import(import_args).await,
        Some(Action::Clear(clear_args)) => run_clear(clear_args).await,
        Some(Action::Captures(captures_args)) => run_captures(captures_args),
        Some(Action::Missed(mut missed_args)) => {
            let db = match missed_args.db.take() {
                Some(db) => db,
                None => default_db()?,
            };
            super::missed::run(missed_args, db).await
        }
        Some(Action::Recover(mut recover_args)) => {
            let db = match recover_args.missed.db.take() {
                Some(db) => db,
                None => default_db()?,
            };
            super::missed::run_recover(recover_args, db).await
        }
        Some(Action::Replay(replay_args)) => super::replay::run(*replay_args).await,
        Some(Action::Runs(runs_args)) => run_runs(runs_args),
        None => run_listener(args.serve).await,
    }
}

async fn run_listener(args: ServeArgs) -> Result<()> {
    let given = MemoryKeys::new();
    for assignment in &args.keys {
        let (subscription, key) = MemoryKeys::parse_assignment(assignment)?;
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
    let data_key = super::store_args::store_key(&db)?;
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
    let stop = super::signal::stop_signal()?;
    tracing::info!(db = %db.display(), "capture store");
    // A thread of its own: a reader of stdout that stops reading blocks only this thread (the
    // feed then reports what it missed), never the runtime that answers the service.
    let json = args.json;
    std::thread::Builder::new()
        .name("capture-printer".into())
        .spawn(move || print_captures(feed, json))
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

/// One line (or JSON object) per capture, as captures are committed.
///
/// A capture after a quiet moment is printed at once. Under a flood the thread gathers what
/// arrived every [`PRINT_INTERVAL`] and writes it in one call: woken and writing once per
/// capture, it took about a tenth of the listener's CPU (`partner listen` under wrk, in
/// BENCHMARKS.md), for lines no one reads faster than that.
fn print_captures(mut feed: tokio::sync::broadcast::Receiver<LiveEvent>, json: bool) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut lines = String::new();
    // Adds an event's line; false once the feed is closed.
    let take = |event: Result<LiveEvent, RecvError>, lines: &mut String| {
        let line = match event {
            Ok(LiveEvent::Captured(capture)) => capture_line(&capture, json),
            Ok(LiveEvent::Outbound(record)) => outbound_line(&record, json),
            Err(RecvError::Lagged(missed)) => {
                eprintln!("partner: {missed} captures were not printed (output too slow); they are in the store");
                return true;
            }
            Err(RecvError::Closed) => return false,
        };
        lines.push_str(&line);
        lines.push('\n');
        true
    };
    loop {
        // Quiet: wait for the next event.
        let mut open = take(feed.blocking_recv(), &mut lines);
        // Busy: what else is there now, then every interval, until an interval brings nothing.
        loop {
            while open {
                let event = match feed.try_recv() {
                    Ok(event) => Ok(event),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Lagged(missed)) => Err(RecvError::Lagged(missed)),
                    Err(TryRecvError::Closed) => Err(RecvError::Closed),
                };
                open = take(event, &mut lines);
            }
            if lines.is_empty() {
                break;
            }
            if write_lines(&mut lines).is_err() || !open {
                return;
            }
            std::thread::sleep(PRINT_INTERVAL);
        }
        if !open {
            return;
        }
    }
}

/// How long the printer gathers captures under a flood before it writes them.
const PRINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// Writes the lines gathered so far to stdout in one call, and empties them.
fn write_lines(lines: &mut String) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    lines.clear();
    written
}

fn capture_line(capture: &Capture, json: bool) -> String {
    if json {
        capture_json(capture).to_string()
    } else {
        let dash = || "-".to_string();
        let mut line = format!(
            "{} {:<20} {:<7} {} {} {}",
            capture.received_at.format("%H:%M:%S%.3f"),
            capture.verdict.as_str(),
            capture.fields.event_type.clone().unwrap_or_else(dash),
            capture.fields.resource_type.clone().unwrap_or_else(dash),
            capture.fields.resource_id.clone().unwrap_or_else(dash),
            capture.response.status,
        );
        if capture.attempt > 1 {
            line.push_str(&format!(" (attempt {})", capture.attempt));
        }
        if capture.verdict == Verdict::WrongPath {
            line.push_str(&format!(" at {}", capture.path));
        }
        let departures = departures(capture);
        if !departures.is_empty() {
            line.push_str(&format!(" [{}]", departures.join("; ")));
        }
        line
    }
}

/// A capture as `partner listen --json` prints it.
fn capture_json(capture: &Capture) -> serde_json::Value {
    serde_json::json!({
            "kind": "capture",
            "id": capture.id,
            "receivedAt": capture.received_at,
            "subscriptionId": capture.subscription_id,
            "eventId": capture.fields.event_id,
            "eventType": capture.fields.event_type,
            "resourceType": capture.fields.resource_type,
            "resourceId": capture.fields.resource_id,
            "verdict": capture.verdict,
            "matchedKey": capture.matched_key,
            "status": capture.response.status,
            "attempt": capture.attempt,
            "replay": capture.replay,
            "path": capture.path,
            "departures": departures(capture),
    })
}

/// How a notification departs from the shape the spec shows (no `meta`, an `eventTime` in
/// another form, a type the spec does not show), in words; nothing for a request that is not a
/// notification at all, whose verdict already says so.
fn departures(capture: &Capture) -> Vec<String> {
    if !capture.fields.is_notification() {
        return Vec::new();
    }
    capture
        .fields
        .departures()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn outbound_line(record: &OutboundRecord, json: bool) -> String {
    if json {
        serde_json::json!({
            "kind": record.kind,
            "captureId": record.capture_id,
            "url": record.url,
            "status": record.status,
            "elapsedMs": record.elapsed_ms,
            "error": record.error,
        })
        .to_string()
    } else {
        match (&record.status, &record.error) {
            (Some(status), _) => format!(
                "  -> {} {}: {status} ({} ms)",
                record.kind.as_str(),
                record.url,
                record.elapsed_ms
            ),
            (None, error) => format!(
                "  -> {} {}: failed: {}",
                record.kind.as_str(),
                record.url,
                error.as_deref().unwrap_or("no answer")
            ),
        }
    }
}

/// `partner listen runs`: the store's listener runs, one JSON object a line.
fn run_runs(args: RunsArgs) -> Result<()> {
    let store = super::store_args::open_reader(store_path(args.db)?)?;
    for run in store.listener_runs()? {
        let line = serde_json::to_string(&run).map_err(|e| invalid(e.to_string()))?;
        super::render::print_line(format_args!("{line}"))?;
    }
    Ok(())
}

fn run_export(args: ExportArgs) -> Result<()> {
    let format = ExportFormat::parse(&args.format)?;
    let filter = FilterArgs::verdicts(&args.verdict).filter()?;
    let store = super::store_args::open_reader(store_path(args.db)?)?;
    let written = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(CliError::Output)?;
            let mut out = std::io::BufWriter::new(file);
            let written = export(&store, &filter, format, &mut out)?;
            out.flush().map_err(CliError::Output)?;
            written
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let written = export(&store, &filter, format, &mut out)?;
            out.flush().map_err(CliError::Output)?;
            written
        }
    };
    eprintln!("partner: exported {written} captures");
    Ok(())
}

/// `export --redact`: the evidence bundle (`partner_listener::evidence`).
async fn run_evidence(args: ExportArgs) -> Result<()> {
    let Some(out) = args.out.clone() else {
        return Err(CliError::Usage(
            "--redact writes two files: give --out NAME (it writes NAME.har and NAME.md)".into(),
        ));
    };
    let selection = match (&args.notification, args.ids.is_empty()) {
        (Some(event_id), _) => Selection::Notification {
            event_id: event_id.clone(),
            subscription_id: args.subscription.clone(),
            resource_type: args.resource_type.clone(),
        },
        (None, false) => Selection::Ids(args.ids.clone()),
        (None, true) => {
            return Err(CliError::Usage(
                "--redact needs a selection: --id CAPTURE_ID (repeatable) or --notification \
                 EVENT_ID"
                    .into(),
            ))
        }
    };
    let mask_body_fields = args
        .mask_fields
        .iter()
        .map(|path| FieldPath::parse(path))
        .collect::<partner_listener::Result<Vec<_>>>()?;
    let store = super::store_args::open_reader(store_path(args.db.clone())?)?;
    let evidence = evidence::select(&store, &selection)?;

    let given = MemoryKeys::new();
    for assignment in &args.keys {
        let (subscription, key) = MemoryKeys::parse_assignment(assignment)?;
        given.insert(subscription, key);
    }
    let mut other_secrets = secrets_from_env();
    let keychain = if args.keychain {
        let store: Arc<dyn partner_client::SecretStore> = Arc::new(
            partner_client::KeyringStore::new(partner_client::KEYCHAIN_SERVICE),
        );
        let keys = KeychainKeys::new(
            store.clone(),
            partner_listener::keys::DEFAULT_PREVIOUS_KEY_GRACE,
        );
        let subscriptions: BTreeSet<&str> = evidence
            .captures
            .iter()
            .filter_map(|c| c.subscription_id.as_deref())
            .collect();
        if let Err(error) = keys.load(subscriptions) {
            eprintln!("partner: warning: the keychain could not be read ({error}); no diagnosis for its keys");
        }
        other_secrets.extend(client_secret_from_keychain(store.as_ref()));
        Some(keys)
    } else {
        None
    };
    let has_keys = !args.keys.is_empty() || keychain.is_some();
    let keys = ListenKeys { given, keychain };

    let deliveries = match &args.deliveries_from {
        Some(url) => {
            let control = super::trigger::sandbox_control(url)?;
            let event_ids: BTreeSet<&str> = evidence
                .captures
                .iter()
                .filter_map(|c| c.fields.event_id.as_deref())
                .collect();
            let mut records = Vec::new();
            for event_id in event_ids {
                records.extend(control.deliveries(Some(event_id)).await?);
            }
            Some(records)
        }
        None => None,
    };

    let mut options = EvidenceOptions::new(chrono::Utc::now());
    options.mask_body_fields = mask_body_fields;
    options.deliveries = deliveries;
    options.keys = has_keys.then_some(&keys as &dyn KeySource);
    options.other_secrets = other_secrets;
    let bundle = evidence::build(&evidence, &options)?;
    let (har_path, summary_path) = bundle.write(&out)?;
    let report = bundle.report;
    eprintln!(
        "partner: wrote the evidence of {} captures to {} and {} ({} headers, {} body fields and {} secrets masked)",
        evidence.captures.len(),
        har_path.display(),
        summary_path.display(),
        report.headers_masked,
        report.fields_masked,
        report.secrets_masked
    );
    Ok(())
}

/// Secrets the environment holds for other commands: searched for and masked in evidence.
fn secrets_from_env() -> Vec<Secret> {
    [super::connect::SECRET_ENV, super::trigger::ADMIN_TOKEN_ENV]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .filter(|value| !value.is_empty())
        .map(Secret::new)
        .collect()
}

/// The keychain's client secret of `PARTNER_CLIENT_ID` at `PARTNER_BASE_URL` (or the default
/// service), when both are known and it is there.
fn client_secret_from_keychain(store: &dyn partner_client::SecretStore) -> Option<Secret> {
    let client_id = std::env::var("PARTNER_CLIENT_ID").ok()?;
    let base_url = std::env::var("PARTNER_BASE_URL")
        .unwrap_or_else(|_| partner_client::DEFAULT_BASE_URL.to_string());
    let base_url = partner_client::parse_base_url(&base_url).ok()?;
    partner_client::client_secret(store, &base_url, &client_id)
        .ok()
        .flatten()
}

async fn run_import(args: ImportArgs) -> Result<()> {
    let file = std::fs::File::open(&args.from)
        .map_err(|e| invalid(format!("could not open {}: {e}", args.from.display())))?;
    let store = open_writer(&store_path(args.db)?, HOLDER_IMPORT)?;
    let stop = super::signal::stop_signal()?;
    let report = import_jsonl(&store, std::io::BufReader::new(file)).await?;
    eprintln!(
        "partner: imported {} captures, skipped {} already present",
        report.imported, report.skipped
    );
    // The store this leaves answers searches from its index at once: an import indexes what
    // it brings as it goes, and when the indexer was far behind (a store being re-indexed
    // after a migration) this waits for it to reach the last capture.
    let started = std::time::Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut first: Option<u64> = None;
    let searchable = store
        .wait_until_searchable(
            |left| {
                let total = *first.get_or_insert(left);
                if terminal && left > 0 {
                    eprint!(
                        "\rpartner: indexing for search: {} of {total}   ",
                        total - left
                    );
                }
            },
            stop,
        )
        .await?;
    if terminal && first.unwrap_or(0) > 0 {
        eprintln!();
    }
    if !searchable {
        eprintln!("partner: stopped while indexing for search; the next `partner listen` (or the app) finishes it, and until then a search looks at the newest captures not indexed and says how many older ones it left out");
        return Err(CliError::Cancelled);
    }
    if first.unwrap_or(0) == 0 {
        eprintln!("partner: indexed for search as it was imported");
    } else {
        eprintln!(
            "partner: indexed for search in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn open_writer(db: &std::path::Path, holder: &'static str) -> Result<Store> {
    let key = super::store_args::store_key_said(db)?;
    Ok(Store::open_with(
        db,
        StoreOptions {
            retention: Retention::default(),
            holder,
            key: Some(key),
            ..StoreOptions::default()
        },
    )?)
}

/// Counts first, read only (so a dry run works beside a running listener); deletes only with
/// `--yes`, through the store's writer (so it needs the writer lock).
async fn run_clear(args: ClearArgs) -> Result<()> {
    let filter = args.filter.filter()?;
    let db = store_path(args.db)?;
    let which = args.filter.describe();
    if !args.yes {
        let count = super::store_args::open_reader(db.clone())?.count(&filter)?;
        return super::render::print_line(format_args!(
            "would delete {count} {which} from {}; run again with --yes to delete them",
            db.display()
        ));
    }
    if !db.exists() {
        return Err(partner_listener::Error::NoStore(db).into());
    }
    let store = open_writer(&db, HOLDER_CLEAR)?;
    let deleted = store.clear(&filter).await?;
    super::render::print_line(format_args!(
        "deleted {deleted} {which} from {}",
        db.display()
    ))
}

/// `partner listen captures`: a page of the store, read only.
fn run_captures(args: CapturesArgs) -> Result<()> {
    if args.limit > MAX_PAGE_LIMIT {
        return Err(invalid(format!(
            "--limit {} is over the most one page lists ({MAX_PAGE_LIMIT}); page with --offset",
            args.limit
        )));
    }
    let query = CaptureQuery {
        filter: args.filter.filter()?,
        grouping: if args.grouped {
            Grouping::ByNotification
        } else {
            Grouping::EveryAttempt
        },
        offset: args.offset,
        limit: args.limit,
        count: HitCount::UpToCap,
    };
    let store = super::store_args::open_reader(store_path(args.db)?)?;
    let page = store.page(&query)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for row in &page.items {
            let mut object = capture_json(&row.capture);
            if args.grouped {
                object["groupAttempts"] = row.group_attempts.into();
            }
            writeln!(out, "{object}").map_err(CliError::Output)?;
        }
    } else {
        let dash = || "-".to_string();
        let rows: Vec<Vec<String>> = page
            .items
            .iter()
            .map(|row| {
                let c = &row.capture;
                let attempts = if args.grouped {
                    row.group_attempts.to_string()
                } else {
                    c.attempt.to_string()
                };
                vec![
                    c.id.to_string(),
                    c.received_at
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    c.verdict.as_str().to_string(),
                    c.fields.event_type.clone().unwrap_or_else(dash),
                    c.fields.resource_type.clone().unwrap_or_else(dash),
                    c.fields.event_id.clone().unwrap_or_else(dash),
                    c.response.status.to_string(),
                    attempts,
                ]
            })
            .collect();
        let attempt_header = if args.grouped { "attempts" } else { "attempt" };
        super::render::write_table(
            &mut out,
            &[
                "id",
                "received",
                "verdict",
                "event type",
                "resource type",
                "event id",
                "status",
                attempt_header,
            ],
            &rows,
        )?;
        let unit = if args.grouped {
            "notifications"
        } else {
            "captures"
        };
        let total = if page.total_capped {
            format!("{}+", page.total)
        } else {
            page.total.to_string()
        };
        let first = if page.items.is_empty() {
            0
        } else {
            args.offset + 1
        };
        writeln!(
            out,
            "{first}-{} of {total} {unit}, newest first",
            args.offset + page.items.len() as u64
        )
        .map_err(CliError::Output)?;
        if page.unsearched > 0 {
            writeln!(
                out,
                "still indexing for search: {} older captures not searched yet; run the search \
                 again once `partner listen` (or the app) has indexed them",
                page.unsearched
            )
            .map_err(CliError::Output)?;
        }
    }
    out.flush().map_err(CliError::Output)
}

/// `--key` values first, then the keychain entries `partner products subscribe`, `rotate-key`
/// and the desktop app write (`partner_local::KeychainKeys`, the app's own key source).
#[derive(Debug)]
struct ListenKeys {
    given: MemoryKeys,
    keychain: Option<KeychainKeys>,
}

impl KeySource for ListenKeys {
    fn keys(&self, subscription_id: &str) -> Option<SubscriptionKeys> {
        self.given
            .keys(subscription_id)
            .or_else(|| self.keychain.as_ref()?.keys(subscription_id))
    }

    fn unavailable(&self) -> bool {
        self.keychain.as_ref().is_some_and(KeySource::unavailable)
    }

    fn unbound(&self) -> Vec<partner_listener::UnboundSubscription> {
        self.keychain.iter().flat_map(KeySource::unbound).collect()
    }

    fn bind(&self, subscription_id: &str, subscription: &partner_listener::UnboundSubscription) {
        if let Some(keychain) = &self.keychain {
            keychain.bind(subscription_id, subscription);
        }
    }

    fn all(&self) -> Vec<(String, SubscriptionKeys)> {
        let mut all = self.given.all();
        for (id, keys) in self.keychain.iter().flat_map(KeySource::all) {
            if !all.iter().any(|(known, _)| *known == id) {
                all.push((id, keys));
            }
        }
        all
    }
}

//! `partner listen replay`: captures sent again to a receiver (`partner_listener::bulk`).
//!
//! Two sources: the store, through the inspector's filters (a receiver fixed after an outage
//! gets that hour again), or a file (`--from`: JSON Lines as `listen export` writes them, or a
//! HAR 1.2 document), which makes a set of captures a fixture for a contract test in CI. Bodies
//! are signed again when a key is given (`--sign-with-env VAR` for every one, `--key SUB=KEY`,
//! or `--keychain` for the subscriptions' own). Each answer is checked against `--expect` (by
//! default what the service takes as delivered: 2xx or 3xx) and `--max-time`; outcomes go to
//! stdout (a table, or JSON lines), a JUnit report to `--junit FILE`, a summary to stderr.
//! The exit status is 1 when one did not pass, 130 when stopped by Ctrl-C.
//!
//! With a team workspace in effect (and no `--from`), the captures are the workspace's: the
//! filters select there (the newest `--limit`, sent oldest first, as locally), and each is sent
//! by the workspace's servers (`POST /api/v1/captures/{id}/replay`: as it came, the send in the
//! team's audit log), paced and judged here by the same code as a local replay
//! ([`bulk::send_each`]), so the outcomes, the JUnit report and the exit status read the same.
//! `--db` and the signing flags name this machine's store and keys, which the workspace does
//! not use: refused there rather than ignored. A role that may not replay is refused by the
//! server on the first send (recorded there), and the run stops with its words (exit 1).
//! `--from` reads a file and touches no store, so it works the same with a workspace set.

use crate::commands::render::Row;
use crate::commands::store_args::{invalid, store_path, FilterArgs};
use crate::commands::workspace::Workspace;
use crate::error::{CliError, Result};
use clap::Args as ClapArgs;
use partner_api::secret::Secret;
use partner_listener::bulk::{self, Expectation, Resign, SendPlan, SendReport, SentCapture};
use partner_listener::keys::MemoryKeys;
use partner_listener::{Capture, CaptureQuery, Grouping, HitCount, MAX_PAGE_LIMIT};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The most captures one replay reads from the store.
const MOST_FROM_STORE: u64 = 100_000;

#[derive(Debug, ClapArgs)]
pub struct ReplayArgs {
    /// Where to send them (an http or https URL).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// Send every capture of this file instead of the store's: JSON Lines (`listen export`) or
    /// HAR 1.2 (a .har file, from `listen export --format har` or another tool).
    #[arg(long, value_name = "FILE", conflicts_with = "db")]
    pub from: Option<PathBuf>,
    /// The capture store to read (it changes nothing but, after a crash, writes in what the
    /// listener acknowledged). Default: the console's data folder.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The most captures sent from the store, oldest first of those the filters select.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub limit: u64,
    /// Sends started per second at most (e.g. 5, or 0.5).
    #[arg(long, value_name = "N")]
    pub rate: Option<f64>,
    /// Sends in flight at most.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    /// The answer each must get: a class (2xx), a status (204), or several with commas.
    /// Default: what the service takes as delivered, 2xx or 3xx.
    #[arg(long, value_name = "STATUSES")]
    pub expect: Option<String>,
    /// ...within this time (e.g. 5s; the service gives a receiver 30 s).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_time: Option<Duration>,
    /// Sign every body again with the key in this environment variable (the key the receiver
    /// under test verifies with; a variable keeps it off the command line).
    #[arg(long, value_name = "VAR")]
    pub sign_with_env: Option<String>,
    /// Sign a subscription's bodies again with this key: SUBSCRIPTION_ID=KEY (repeatable).
    #[arg(long = "key", value_name = "SUBSCRIPTION_ID=KEY")]
    pub keys: Vec<crate::commands::store_args::KeyArg>,
    /// Sign bodies again with their subscription's current key from the keychain.
    #[arg(long)]
    pub keychain: bool,
    /// Write a JUnit XML report of the run here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// One JSON object per capture sent instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl Row for SentCapture {
    const HEADERS: &'static [&'static str] =
        &["capture", "eventId", "status", "ms", "signed", "result"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.capture_id.to_string(),
            self.event_id.clone().unwrap_or_default(),
            self.status.map(|s| s.to_string()).unwrap_or_default(),
            self.elapsed_ms.to_string(),
            if self.resigned { "again" } else { "as sent" }.to_string(),
            self.failure.clone().unwrap_or_else(|| "passed".into()),
        ]
    }
}

pub async fn run(args: ReplayArgs) -> Result<()> {
    let target = partner_listener::outbound::parse_target(&args.to)?;
    let mut expect = match &args.expect {
        Some(text) => Expectation::parse(text)?,
        None => Expectation::delivered(),
    };
    expect = expect.within(args.max_time);
    if let Some(rate) = args.rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(CliError::Usage(format!(
                "--rate {rate}: give a number of sends per second above 0"
            )));
        }
    }
    if args.concurrency == 0 {
        return Err(CliError::Usage(
            "--concurrency 0: at least one send must be in flight".into(),
        ));
    }
    if args.from.is_none() {
        if let Some(workspace) = Workspace::from_env()? {
            return run_on_workspace(&workspace, &args, target, expect).await;
        }
    }
    let captures = read_captures(&args)?;
    if captures.is_empty() {
        eprintln!("partner: no capture to send");
        return Ok(());
    }
    let one_key = match &args.sign_with_env {
        Some(variable) => Some(Secret::new(std::env::var(variable).map_err(|_| {
            CliError::Usage(format!(
                "--sign-with-env {variable}: the variable is not set (or not text)"
            ))
        })?)),
        None => None,
    };
    let keys = subscription_keys(&args, &captures)?;
    let resign = match (&one_key, &keys) {
        (Some(key), _) => Resign::With(key),
        (None, Some(keys)) => Resign::FromKeys(keys.as_ref()),
        (None, None) => Resign::Never,
    };
    let plan = plan_of(args.concurrency, args.rate, &target, &expect);
    let on_stop = crate::commands::signal::cancel_on_stop()?;
    let cancel = on_stop.token.clone();
    let http = partner_listener::outbound::http_client();
    let report = bulk::send_all(
        &http,
        &plan,
        &captures,
        &resign,
        None,
        &cancel,
        progress_line(),
    )
    .await;
    drop(on_stop);
    clear_progress_line();
    told(&args, &target, &expect, &report, captures.len())
}

/// How the captures are paced and judged (`--concurrency`, `--rate`, `--expect`).
fn plan_of(
    concurrency: usize,
    per_second: Option<f64>,
    target: &url::Url,
    expect: &Expectation,
) -> SendPlan {
    SendPlan {
        target: target.clone(),
        concurrency,
        per_second,
        expect: expect.clone(),
    }
}

/// `sent DONE/TOTAL` on stderr's one line while it is a terminal (nothing in a pipe or a log).
fn progress_line() -> impl FnMut(usize, usize) {
    let show = std::io::stderr().is_terminal();
    move |done, total| {
        if show {
            eprint!("\r\x1b[2Ksent {done}/{total}");
        }
    }
}

/// Clears what [`progress_line`] wrote.
fn clear_progress_line() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}

/// The outcomes on stdout, the JUnit report, the summary on stderr and the exit status: the
/// same for a local replay and a workspace's.
fn told(
    args: &ReplayArgs,
    target: &url::Url,
    expect: &Expectation,
    report: &SendReport,
    asked: usize,
) -> Result<()> {
    crate::commands::render::write_lines(&report.sent, args.json)?;
    if let Some(path) = &args.junit {
        let suite = match &args.from {
            Some(file) => format!("partner listen replay --from {}", file.display()),
            None => "partner listen replay".to_string(),
        };
        std::fs::write(path, bulk::junit(&suite, target.as_str(), report))
            .map_err(|e| CliError::Usage(format!("could not write {}: {e}", path.display())))?;
    }
    let failures = report.failures();
    eprintln!(
        "partner: {} of {} captures sent to {target} passed (expected {}{})",
        report.sent.len() - failures,
        report.sent.len(),
        expect.describe(),
        args.max_time
            .map(|t| format!(" within {} ms", t.as_millis()))
            .unwrap_or_default()
    );
    if report.cancelled {
        eprintln!("partner: stopped after {} of {asked}", report.sent.len());
        return Err(CliError::Cancelled);
    }
    if failures > 0 {
        return Err(CliError::SendsFailed(format!(
            "{failures} of {} captures did not get the expected answer",
            report.sent.len()
        )));
    }
    Ok(())
}

/// `partner listen replay` on a team workspace (see the module's notes).
async fn run_on_workspace(
    workspace: &Workspace,
    args: &ReplayArgs,
    target: url::Url,
    expect: Expectation,
) -> Result<()> {
    let local_flag = if args.db.is_some() {
        Some("--db")
    } else if !args.keys.is_empty() {
        Some("--key")
    } else if args.keychain {
        Some("--keychain")
    } else if args.sign_with_env.is_some() {
        Some("--sign-with-env")
    } else {
        None
    };
    if let Some(flag) = local_flag {
        return Err(CliError::Usage(format!(
            "{flag} does not apply to a team workspace: its servers send its captures as they \
             came (unset PARTNER_WORKSPACE, or `partner workspace logout`, to replay this \
             machine's store)"
        )));
    }
    let captures = workspace_captures(workspace, args).await?;
    if captures.is_empty() {
        eprintln!("partner: no capture to send");
        return Ok(());
    }
    let plan = plan_of(args.concurrency, args.rate, &target, &expect);
    let on_stop = crate::commands::signal::cancel_on_stop()?;
    let cancel = on_stop.token.clone();
    // A refusal (the member's role) is the same for every capture: the first stops the run.
    let refused = std::sync::Mutex::new(None::<partner_workspace::Error>);
    let (ended, cancelled) =
        bulk::send_each(&plan, &captures, &cancel, progress_line(), |capture| {
            let (id, to) = (capture.id, target.as_str());
            let (refused, cancel) = (&refused, &cancel);
            async move {
                match workspace.replay(id, to, None).await {
                    Ok(record) => Ok((record, false)),
                    Err(error) => {
                        let said = error.to_string();
                        if matches!(error, partner_workspace::Error::Refused { .. }) {
                            refused
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .get_or_insert(error);
                            cancel.cancel();
                        }
                        Err(said)
                    }
                }
            }
        })
        .await;
    drop(on_stop);
    clear_progress_line();
    let refusal = refused
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(refusal) = refusal {
        return Err(refusal.into());
    }
    let report = SendReport {
        sent: ended.into_iter().map(|(outcome, _)| outcome).collect(),
        cancelled,
    };
    told(args, &target, &expect, &report, captures.len())
}

/// The workspace's captures the filters select, the newest `--limit` of them (said when more
/// match), oldest first: read newest first a page at a time, by the last id read.
async fn workspace_captures(workspace: &Workspace, args: &ReplayArgs) -> Result<Vec<Capture>> {
    check_limit(args.limit)?;
    let mut query = CaptureQuery {
        filter: args.filter.filter()?,
        grouping: Grouping::EveryAttempt,
        offset: 0,
        limit: args.limit.min(MAX_PAGE_LIMIT),
        count: HitCount::UpToCap,
    };
    let mut captures: Vec<Capture> = Vec::new();
    let mut before = None;
    let mut total = None;
    while (captures.len() as u64) < args.limit {
        query.limit = (args.limit - captures.len() as u64).min(MAX_PAGE_LIMIT);
        let page = workspace.captures_page(&query, before).await?;
        total.get_or_insert((page.total, page.total_capped));
        let Some(last) = page.items.last() else {
            break;
        };
        before = Some(last.capture.id);
        let full = page.items.len() as u64 == query.limit;
        captures.extend(page.items.into_iter().map(|row| row.capture));
        if !full {
            break;
        }
    }
    if let Some((total, capped)) = total {
        if total > captures.len() as u64 {
            eprintln!(
                "partner: {total}{} captures match in the workspace; the newest {} are sent (raise --limit for more)",
                if capped { "+" } else { "" },
                captures.len()
            );
        }
    }
    captures.reverse();
    Ok(captures)
}

fn check_limit(limit: u64) -> Result<()> {
    if limit == 0 || limit > MOST_FROM_STORE {
        return Err(invalid(format!(
            "--limit {limit}: give 1 to {MOST_FROM_STORE}"
        )));
    }
    Ok(())
}

/// The captures to send, oldest first: every one of `--from`, or those the filters select from
/// the store (at most `--limit`, said when more match).
fn read_captures(args: &ReplayArgs) -> Result<Vec<Capture>> {
    if let Some(file) = &args.from {
        let filter = args.filter.filter()?;
        if filter != partner_listener::CaptureFilter::default() {
            return Err(CliError::Usage(
                "--from sends every capture of the file: the filters select from the store".into(),
            ));
        }
        let opened = std::fs::File::open(file)
            .map_err(|e| CliError::Usage(format!("could not open {}: {e}", file.display())))?;
        let is_har = file
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("har"));
        let mut captures = if is_har {
            partner_listener::export::read_har(std::io::BufReader::new(opened))?
        } else {
            partner_listener::export::read_jsonl(std::io::BufReader::new(opened))?
        };
        captures.sort_by_key(|c| (c.received_at, c.id));
        return Ok(captures);
    }
    check_limit(args.limit)?;
    let store = crate::commands::store_args::open_reader(store_path(args.db.clone())?)?;
    let found = store.query(&args.filter.filter()?, 0, args.limit)?;
    if found.total > found.items.len() as u64 {
        eprintln!(
            "partner: {} captures match; the newest {} are sent (raise --limit for more)",
            found.total,
            found.items.len()
        );
    }
    let mut captures = found.items;
    captures.reverse();
    Ok(captures)
}

/// The keys to sign again with, when any are asked for (`--key`, `--keychain`); `None`: the
/// bodies go as they were signed.
fn subscription_keys(args: &ReplayArgs, captures: &[Capture]) -> Result<Option<Arc<MemoryKeys>>> {
    if args.keys.is_empty() && !args.keychain {
        return Ok(None);
    }
    let wanted = captures.iter().filter_map(|c| c.subscription_id.as_deref());
    let keys = crate::commands::store_args::signing_keys(
        &args.keys,
        wanted,
        args.keychain,
        "bodies without a --key go as signed",
    )?;
    Ok(Some(Arc::new(keys)))
}

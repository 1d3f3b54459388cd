//! `partner listen missed`: the notifications the service gave up on while the listener was
//! down, worked out from the API and compared with the capture store
//! (`partner_local::missed::find_missed`, the same check the app's inspector shows).
//!
//! The store is only read (a listener may be running on it); whether one is running decides the
//! default `since` (the end of the run before the current one), and is found from the store's
//! writer lock. Rows go to stdout (a table, or one JSON object per line with `--json`); the
//! per-subscription summary and progress go to stderr. Ctrl-C stops the walk: what was found
//! so far is printed, and the exit status is 130.
//!
//! With a team workspace in effect, the workspace's servers run the same check over its
//! captures with the team's connection (`POST /api/v1/missed`), and a recovery is theirs too
//! (`POST /api/v1/missed/recover`: signed with the keys they hold, sent to `--to` or the
//! workspace's own intake); the output is printed by the same functions. `--db` and `--key`
//! name this machine's store and keys, which the workspace does not use: they are refused
//! there rather than ignored.

use crate::commands::connect::ConnectionArgs;
use crate::commands::render::Row;
use crate::commands::workspace::Workspace;
use crate::error::{CliError, Result};
use chrono::{DateTime, Utc};
use clap::Args as ClapArgs;
use partner_local::missed::{
    find_missed, MissedNotification, MissedProgress, MissedQuery, MissedReport, NotChecked,
    SinceSource,
};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, ClapArgs)]
pub struct MissedArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// From when: an RFC 3339 time, or a duration back from now (2h, 30min). Default: the last
    /// time the listener went down, else each subscription's first capture.
    #[arg(long, value_name = "TIME", value_parser = parse_instant)]
    pub since: Option<DateTime<Utc>>,
    /// Up to when (service time): an RFC 3339 time, a duration back from now, or `now`.
    /// Default: 130 s ago, the longest the service takes to give up on a notification (younger
    /// ones may still arrive).
    #[arg(long, value_name = "TIME", value_parser = parse_instant)]
    pub until: Option<DateTime<Utc>>,
    /// Only this subscription (checked even if the store never captured anything of it).
    #[arg(long, value_name = "SUBSCRIPTION_ID")]
    pub subscription: Option<String>,
    /// Check every subscription of the products, also those the store never captured anything
    /// of (by default they are left out: they may point at another receiver).
    #[arg(long)]
    pub all_subscriptions: bool,
    /// The capture store to compare with (it changes nothing but, after a crash, writes in what
    /// the listener acknowledged). Default: the console's data folder. Not with a team
    /// workspace, whose servers compare with its captures.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// One JSON object per missed notification instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `2024-05-01T10:00:00Z`, `2h` (that long ago) or `now`.
pub(crate) fn parse_instant(text: &str) -> std::result::Result<DateTime<Utc>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("now") {
        return Ok(Utc::now());
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    match humantime::parse_duration(text) {
        Ok(ago) => chrono::Duration::from_std(ago)
            .ok()
            .and_then(|ago| Utc::now().checked_sub_signed(ago))
            .ok_or_else(|| format!("{text} ago is out of range")),
        Err(_) => Err(format!(
            "`{text}` is neither an RFC 3339 time (2024-05-01T10:00:00Z), a duration (2h, 30min) nor `now`"
        )),
    }
}

impl Row for MissedNotification {
    const HEADERS: &'static [&'static str] = &[
        "sentAt",
        "subscription",
        "product",
        "resource",
        "event",
        "eventId",
        "resourceRef",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.sent_at.to_rfc3339(),
            self.subscription_id.clone(),
            self.product_name.clone(),
            self.resource_type.to_string(),
            self.event_type.to_string(),
            self.event_id.clone(),
            self.resource_ref.clone(),
        ]
    }
}

#[derive(Debug, ClapArgs)]
pub struct RecoverArgs {
    #[command(flatten)]
    pub missed: MissedArgs,
    /// Where to send them. Default: the console's listener (its saved address, or
    /// PARTNER_LISTENER_ADDR, and its path); with a team workspace, its own intake.
    #[arg(long, value_name = "URL")]
    pub to: Option<String>,
    /// A subscription's signing key as SUBSCRIPTION_ID=KEY (repeatable); the keychain's keys
    /// (those `products subscribe`, `rotate-key` and the app keep) are used for the others.
    /// Not with a team workspace, whose servers sign with the keys they hold.
    #[arg(long = "key", value_name = "SUBSCRIPTION_ID=KEY")]
    pub keys: Vec<crate::commands::store_args::KeyArg>,
    /// Only list what would be sent, and where.
    #[arg(long)]
    pub dry_run: bool,
}

/// What a workspace's check is asked, from the same options.
fn workspace_request(args: &MissedArgs) -> partner_workspace::MissedRequest {
    partner_workspace::MissedRequest {
        since: args.since,
        until: args.until,
        subscription_id: args.subscription.clone(),
        all_subscriptions: args.all_subscriptions,
    }
}

/// `--db` / `--key` with a workspace: refused, naming the flag (they would do nothing there).
fn refuse_local_flags(db: bool, keys: bool) -> Result<()> {
    let flag = match (db, keys) {
        (true, _) => "--db",
        (false, true) => "--key",
        (false, false) => return Ok(()),
    };
    Err(CliError::Usage(format!(
        "{flag} does not apply to a team workspace: its servers check the workspace's captures \
         and sign recoveries with the keys they hold (unset PARTNER_WORKSPACE, or `partner \
         workspace logout`, to check this machine's store)"
    )))
}

/// `partner listen missed` on a team workspace: the check run by its servers.
pub async fn run_on_workspace(workspace: &Workspace, args: MissedArgs) -> Result<()> {
    refuse_local_flags(args.db.is_some(), false)?;
    let report = workspace.missed(&workspace_request(&args)).await?;
    crate::commands::render::write_lines(&report.missed, args.json)?;
    print_summary(&report, Checked::Workspace);
    if report.cancelled {
        return Err(CliError::Cancelled);
    }
    Ok(())
}

/// `partner listen recover` on a team workspace: the check and the sends are its servers'.
pub async fn run_recover_on_workspace(workspace: &Workspace, args: RecoverArgs) -> Result<()> {
    refuse_local_flags(args.missed.db.is_some(), !args.keys.is_empty())?;
    // A bad URL is told here, as locally, before the workspace is asked anything.
    let to = match args.to.as_deref() {
        Some(url) => Some(partner_listener::outbound::parse_target(url.trim())?.to_string()),
        None => None,
    };
    let place = match &to {
        Some(url) => url.clone(),
        None => format!(
            "the workspace's own intake ({}/webhooks)",
            workspace.describe()
        ),
    };
    let request = workspace_request(&args.missed);
    if args.dry_run {
        let report = workspace.missed(&request).await?;
        print_summary(&report, Checked::Workspace);
        if report.missed.is_empty() {
            eprintln!("partner: nothing to recover");
            return Ok(());
        }
        crate::commands::render::write_lines(&report.missed, args.missed.json)?;
        eprintln!(
            "partner: would send {} notifications to {place} (--dry-run: none sent)",
            report.missed.len()
        );
        return Ok(());
    }
    let recovered = workspace
        .recover(&partner_workspace::RecoverRequest {
            missed: request,
            to,
            only: Vec::new(),
        })
        .await?;
    if recovered.outcomes.is_empty() && !recovered.cancelled {
        eprintln!("partner: nothing to recover");
        return Ok(());
    }
    told_recovered(&recovered, args.missed.json, &place)
}

/// The outcomes on stdout, how many were acknowledged on stderr, and the exit status they make.
fn told_recovered(
    recovered: &partner_local::recover::RecoveryReport,
    json: bool,
    place: &str,
) -> Result<()> {
    crate::commands::render::write_lines(&recovered.outcomes, json)?;
    let acknowledged = recovered.acknowledged();
    let sent = recovered.outcomes.len();
    eprintln!("partner: {acknowledged} of {sent} recovered notifications acknowledged by {place}");
    if recovered.cancelled {
        return Err(CliError::Cancelled);
    }
    if acknowledged < sent {
        return Err(CliError::SendsFailed(format!(
            "{} of {sent} recovered notifications were not acknowledged",
            sent - acknowledged
        )));
    }
    Ok(())
}

pub async fn run(args: MissedArgs, db: PathBuf) -> Result<()> {
    let report = find(&args, db).await?;
    crate::commands::render::write_lines(&report.missed, args.json)?;
    print_summary(&report, Checked::ThisStore);
    if report.cancelled {
        return Err(CliError::Cancelled);
    }
    Ok(())
}

/// `partner listen recover`: the check, then each missed notification sent again.
pub async fn run_recover(args: RecoverArgs, db: PathBuf) -> Result<()> {
    let target = match &args.to {
        Some(url) => partner_listener::outbound::parse_target(url)?,
        None => {
            let settings = crate::commands::connections::saved_settings()?;
            let address = partner_local::ListenerAddress::from_env(&settings.listener)
                .map_err(CliError::Usage)?;
            partner_listener::outbound::parse_target(&address.url())?
        }
    };
    let report = find(&args.missed, db).await?;
    print_summary(&report, Checked::ThisStore);
    if report.cancelled {
        return Err(CliError::Cancelled);
    }
    if report.missed.is_empty() {
        eprintln!("partner: nothing to recover");
        return Ok(());
    }
    if args.dry_run {
        crate::commands::render::write_lines(&report.missed, args.missed.json)?;
        eprintln!(
            "partner: would send {} notifications to {target} (--dry-run: none sent)",
            report.missed.len()
        );
        return Ok(());
    }
    let keys = crate::commands::store_args::signing_keys(
        &args.keys,
        report.missed.iter().map(|m| m.subscription_id.as_str()),
        true,
        "only --key keys are used",
    )?;
    let on_stop = crate::commands::signal::cancel_on_stop()?;
    let cancel = on_stop.token.clone();
    let show_progress = std::io::stderr().is_terminal();
    let http = partner_listener::outbound::http_client();
    let recovered = partner_local::recover::recover(
        &http,
        &target,
        &report.missed,
        &keys,
        &cancel,
        |done, total| {
            if show_progress {
                eprint!("\r\x1b[2Ksending {done}/{total}");
            }
        },
    )
    .await;
    drop(on_stop);
    if show_progress {
        eprint!("\r\x1b[2K");
    }
    told_recovered(&recovered, args.missed.json, target.as_str())
}

impl Row for partner_local::recover::RecoveryOutcome {
    const HEADERS: &'static [&'static str] = &[
        "subscription",
        "resource",
        "eventId",
        "status",
        "ms",
        "error",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.subscription_id.clone(),
            self.resource_type.to_string(),
            self.event_id.clone(),
            self.status.map(|s| s.to_string()).unwrap_or_default(),
            self.elapsed_ms.to_string(),
            self.error.clone().unwrap_or_default(),
        ]
    }
}

/// The check of `partner listen missed`, its progress on stderr.
async fn find(args: &MissedArgs, db: PathBuf) -> Result<MissedReport> {
    let client = args.connection.resolved()?.client()?;
    let store = crate::commands::store_args::open_reader(db.clone())?;
    let listening_now = partner_listener::writer_lock::is_held(&db)?;
    // On a sandbox, its own retry settings say how long a notification may be on its way.
    let give_up_window = match (args.until, args.connection.environment()?) {
        (None, partner_local::Environment::Sandbox) => {
            let base_url = args.connection.resolved()?.base_url;
            let control =
                crate::commands::trigger::sandbox_control(&base_url)?.with_call_log(client.calls());
            partner_local::missed::sandbox_give_up_window(&control).await
        }
        _ => None,
    };
    let query = MissedQuery {
        subscription_id: args.subscription.clone(),
        since: args.since,
        until: args.until,
        give_up_window,
        all_subscriptions: args.all_subscriptions,
        listening_now,
    };
    let on_stop = crate::commands::signal::cancel_on_stop()?;
    let cancel = on_stop.token.clone();
    let show_progress = std::io::stderr().is_terminal();
    let waits = crate::commands::listing::tell_waits(&client);
    let mut noted = false;
    let report = find_missed(&client, &store, &query, &cancel, |step| {
        // A fallback (the service does not sort by `updated`) is said once, plainly.
        if let MissedProgress::Walking(walk) = &step {
            if let (false, Some(note)) = (noted, walk.fallback_note()) {
                noted = true;
                eprintln!("{}{note}", if show_progress { "\r\x1b[2K" } else { "" });
            }
        }
        if show_progress {
            progress_line(&step);
        }
    })
    .await;
    drop(on_stop);
    waits.abort();
    if show_progress {
        eprint!("\r\x1b[2K");
    }
    Ok(report?)
}

fn progress_line(step: &MissedProgress) {
    let line = match step {
        MissedProgress::Subscriptions => "reading subscriptions…".to_string(),
        MissedProgress::Walking(walk) => format!(
            "walking transactions changed since {}: {} read, {:.0}%",
            walk.since.to_rfc3339(),
            walk.read,
            walk.fraction() * 100.0
        ),
        MissedProgress::Events { done, total } => format!("reading events: {done}/{total}"),
    };
    eprint!("\r\x1b[2K{line}");
}

/// Whose captures a check compared with, for the summary's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    ThisStore,
    Workspace,
}

fn print_summary(report: &MissedReport, checked: Checked) {
    if report.transactions_without_product > 0 {
        eprintln!(
            "partner: {} changed transactions name no product, so which subscription should have heard of them cannot be told: not checked",
            report.transactions_without_product
        );
    }
    for check in &report.subscriptions {
        let Some(since) = check.since else {
            let why = match (check.not_checked_because, checked) {
                (Some(NotChecked::NeverCaptured), Checked::ThisStore) => {
                    "this store never captured anything of it (it may point at another receiver; name it with --subscription or give --all-subscriptions)"
                }
                (Some(NotChecked::NeverCaptured), Checked::Workspace) => {
                    "the workspace never captured anything of it (it may point at another receiver; name it with --subscription or give --all-subscriptions)"
                }
                (_, Checked::ThisStore) => {
                    "the listener has no record of going down and no capture of it (give --since)"
                }
                (_, Checked::Workspace) => {
                    "the workspace holds no capture of it (give --since)"
                }
            };
            eprintln!("partner: {} not checked: {why}", check.subscription_id);
            continue;
        };
        let from = match check.since_source {
            Some(SinceSource::Given) => "as given",
            Some(SinceSource::ListenerDown) => "when the listener went down",
            Some(SinceSource::FirstCapture) => "its first capture",
            Some(SinceSource::ProductChanged) => "its product's last change",
            None => "",
        };
        let mut line = format!(
            "partner: {}: {} missed of {} since {} ({from})",
            check.subscription_id,
            check.missed,
            check.expected,
            since.to_rfc3339()
        );
        if check.not_yet_due > 0 {
            line.push_str(&format!(
                ", {} younger than {} may still arrive",
                check.not_yet_due,
                report.until.to_rfc3339()
            ));
        }
        eprintln!("{line}");
    }
    if report.cancelled {
        eprintln!(
            "partner: cancelled after {} transactions: the list above may be incomplete",
            report.transactions_read
        );
    }
}

//! `partner check-receiver URL`: checks a webhook receiver against the spec's signing and
//! endpoint rules (the `partner-conformance` library) and prints one line per rule, or one JSON
//! object per line per rule with `--json`, for CI pipelines.
//!
//! Its exit statuses are its own, so a pipeline can tell a broken receiver from a check that
//! never ran: 0 every rule passes (warnings allowed), 1 a rule fails, 2 the check could not run
//! (bad arguments, no key, the receiver unreachable, Ctrl-C). The signing key comes from
//! standard input (`--key-stdin`) or the keychain entry the console keeps for the subscription
//! (`--keychain`), never from argv, and appears in no output.

use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, ValueEnum};
use partner_api::{ResourceType, Secret};
use partner_conformance::{
    check_receiver, CheckConfig, CheckError, Exchange, Outcome, Report, RuleId, RuleResult,
};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The exit statuses of `partner check-receiver` (shown in its `--help`).
pub const EXIT_STATUSES: &str = "\
Exit status:
  0  every rule passes (warnings allowed)
  1  the receiver fails at least one rule
  2  the check could not run: a bad argument, no signing key, the receiver unreachable";

#[derive(Debug, ClapArgs)]
#[command(after_help = EXIT_STATUSES)]
pub struct Args {
    /// The receiver's URL (the subscription's callback).
    pub url: String,
    /// The subscription's id (sent as Svc-SubscriptionId).
    #[arg(long, value_name = "ID")]
    pub subscription_id: String,
    /// Read the subscription's signing key from standard input.
    #[arg(
        long,
        conflicts_with = "keychain",
        required_unless_present = "keychain"
    )]
    pub key_stdin: bool,
    /// Use the signing key the Partner Console keeps in the keychain for the subscription.
    #[arg(long)]
    pub keychain: bool,
    /// The subscription's resource: the type of notification sent.
    #[arg(long, value_enum, default_value_t = Resource::Transaction)]
    pub resource: Resource,
    /// How long the receiver has to acknowledge (the service waits 30s).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "30s")]
    pub timeout: Duration,
    /// Check a plain http:// URL (loopback development) with a warning instead of a failure.
    #[arg(long)]
    pub allow_http: bool,
    /// Trust this root certificate (PEM) too, e.g. a company's private CA (repeatable).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,
    /// One JSON object per rule, one per line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Resource {
    Transaction,
    Event,
}

impl From<Resource> for ResourceType {
    fn from(resource: Resource) -> Self {
        match resource {
            Resource::Transaction => ResourceType::Transaction,
            Resource::Event => ResourceType::TransactionEvent,
        }
    }
}

fn not_run(message: impl Into<String>) -> CliError {
    CliError::CheckNotRun(message.into())
}

fn signing_key(args: &Args) -> Result<Secret> {
    if args.key_stdin {
        return super::connect::secret_from_stdin("signing key")
            .map_err(|e| not_run(e.to_string()));
    }
    let store = partner_client::KeyringStore::default();
    match partner_client::signing_keys(&store, &args.subscription_id) {
        Ok(Some(keys)) => Ok(keys.current),
        Ok(None) => Err(not_run(format!(
            "the keychain holds no signing key for subscription {} (the console keeps the keys \
             of the subscriptions it added or rotated); give the key with --key-stdin",
            args.subscription_id
        ))),
        Err(error) => Err(not_run(format!("the keychain could not be read: {error}"))),
    }
}

pub async fn run(args: Args) -> Result<()> {
    let key = signing_key(&args)?;
    if let Err(problems) = partner_api::signing_key::check(key.expose()) {
        eprintln!("partner: warning: {problems}; the service would not accept it");
    }
    let mut extra_roots = Vec::new();
    for path in &args.ca_cert {
        extra_roots.extend(
            partner_conformance::ca_certificates(path).map_err(|e| not_run(e.to_string()))?,
        );
    }
    let mut config = CheckConfig::new(args.url.clone(), args.subscription_id.clone(), key);
    config.resource = args.resource.into();
    config.timeout = args.timeout;
    config.allow_http = args.allow_http;
    config.extra_roots = extra_roots;

    let on_stop = super::signal::cancel_on_stop()?;
    let result = check_receiver(&config, &on_stop.token).await;
    drop(on_stop);
    let report = result.map_err(|error| match error {
        CheckError::Cancelled => not_run("stopped before the check was done"),
        other => not_run(other.to_string()),
    })?;

    let mut out = std::io::stdout().lock();
    if args.json {
        for rule in &report.rules {
            let line = serde_json::to_string(rule)
                .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
            writeln!(out, "{line}").map_err(CliError::Output)?;
        }
    } else {
        write!(out, "{}", human(&report)).map_err(CliError::Output)?;
    }
    out.flush().map_err(CliError::Output)?;
    let failed: Vec<&str> = report
        .rules
        .iter()
        .filter(|rule| rule.outcome == Outcome::Fail)
        .map(|rule| rule.id.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::CheckFailed(failed.join(", ")))
    }
}

/// The report for a person: a heading, one line per rule with its mark, and the evidence
/// indented under it.
fn human(report: &Report) -> String {
    let mut text = format!(
        "Checked {} (subscription {}, {} notifications, timeout {}): {} requests\n",
        report.url,
        report.subscription_id,
        report.resource,
        partner_conformance::report::format_ms(report.timeout_ms),
        report.requests_sent
    );
    for rule in &report.rules {
        text.push_str(&rule_lines(rule));
    }
    let count = |outcome| report.rules.iter().filter(|r| r.outcome == outcome).count();
    text.push_str(&format!(
        "{} passed, {} failed, {} warnings, {} skipped\n",
        count(Outcome::Pass),
        count(Outcome::Fail),
        count(Outcome::Warn),
        count(Outcome::Skipped)
    ));
    text
}

fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "✓",
        Outcome::Fail => "✗",
        Outcome::Warn => "!",
        Outcome::Skipped => "-",
    }
}

fn rule_lines(rule: &RuleResult) -> String {
    let mut text = format!(
        "{} {}: {}\n    {}\n",
        mark(rule.outcome),
        rule.id,
        rule.title,
        rule.summary
    );
    // A clean bill of the responses repeats every exchange shown above it: the JSON keeps it.
    let repeats = rule.id == RuleId::NoSensitiveData && rule.outcome == Outcome::Pass;
    if !repeats {
        for exchange in &rule.evidence {
            text.push_str(&format!("    · {}\n", evidence_line(exchange)));
        }
    }
    text
}

fn evidence_line(exchange: &Exchange) -> String {
    let mut line = format!(
        "sent {}, eventId {} → {}",
        exchange.sent,
        exchange.event_id,
        exchange.answer()
    );
    if let Some(body) = &exchange.body_excerpt {
        line.push_str(&format!(", body: {}", body.trim().replace('\n', " ")));
    }
    line
}

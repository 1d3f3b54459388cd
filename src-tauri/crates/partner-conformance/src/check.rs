//! The check itself: the TLS probes, then nine notifications, then one verdict per rule.
//!
//! Order and bounds:
//! 1. For `https://`, two handshakes (TLS 1.3 only, TLS 1.2 only) name the versions accepted
//!    and fetch the certificate chain, which is verified on its own ([`crate::tls`]). No
//!    version in common: nothing more can be sent, and the other rules are skipped.
//! 2. A correctly signed notification; then, if it was acknowledged, the same bytes again (a
//!    redelivery); then, side by side, the six negative probes and the correctly signed one
//!    written pretty. Nine requests in all, never more than [`crate::MAX_REQUESTS`].
//! 3. Each request may take up to twice the timeout, so a slow receiver is reported with how
//!    slow it was rather than just "timed out"; the timeout rule still judges against the
//!    timeout itself. The whole check is thus bounded (about seven timeouts at worst) and can
//!    be cancelled at any point.
//!
//! A receiver that cannot be reached at all (refused, DNS, no TCP connection) is an error, not
//! a report: the check could not run.

use crate::probe::{prepare, Prepared, Probe, Sender, Sent};
use crate::report::{format_ms, Outcome, Report, RuleId, RuleResult};
use crate::secrets::SecretForms;
use crate::{tls, CheckConfig, CheckError};
use partner_api::delivery;
use rustls::pki_types::ServerName;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use url::{Host, Url};

/// Runs the check; `cancel` stops it at once (with [`CheckError::Cancelled`]).
pub async fn check_receiver(
    config: &CheckConfig,
    cancel: &CancellationToken,
) -> Result<Report, CheckError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(CheckError::Cancelled),
        report = run(config) => report,
    }
}

struct Target {
    url: Url,
    host: String,
    port: u16,
    server_name: Option<ServerName<'static>>,
}

fn target(config: &CheckConfig) -> Result<Target, CheckError> {
    let url = Url::parse(config.url.trim())
        .map_err(|e| CheckError::InvalidInput(format!("the receiver URL is not a URL: {e}")))?;
    let https = match url.scheme() {
        "https" => true,
        "http" => false,
        other => {
            return Err(CheckError::InvalidInput(format!(
                "the receiver URL must start with https:// (or http:// with --allow-http), not {other}://"
            )))
        }
    };
    let (host, server_name) = match url.host() {
        Some(Host::Domain(domain)) => (
            domain.to_owned(),
            ServerName::try_from(domain.to_owned()).ok(),
        ),
        Some(Host::Ipv4(ip)) => (ip.to_string(), Some(ServerName::IpAddress(ip.into()))),
        Some(Host::Ipv6(ip)) => (ip.to_string(), Some(ServerName::IpAddress(ip.into()))),
        None => {
            return Err(CheckError::InvalidInput(
                "the receiver URL has no host".into(),
            ))
        }
    };
    let port = url.port_or_known_default().unwrap_or(443);
    if https && server_name.is_none() {
        return Err(CheckError::InvalidInput(format!(
            "{host} is not a name a TLS certificate can be checked for"
        )));
    }
    Ok(Target {
        url,
        host,
        port,
        server_name: server_name.filter(|_| https),
    })
}

fn validate(config: &CheckConfig) -> Result<(), CheckError> {
    if config.subscription_id.trim().is_empty() {
        return Err(CheckError::InvalidInput(
            "the subscription id is empty".into(),
        ));
    }
    if config.signing_key.is_empty() {
        return Err(CheckError::InvalidInput("the signing key is empty".into()));
    }
    if config.timeout.is_zero() {
        return Err(CheckError::InvalidInput(
            "the timeout must be more than zero".into(),
        ));
    }
    Ok(())
}

async fn run(config: &CheckConfig) -> Result<Report, CheckError> {
    validate(config)?;
    let target = target(config)?;
    let timeout = config.timeout;
    let mut report = Report {
        url: config.url.trim().to_owned(),
        subscription_id: config.subscription_id.clone(),
        resource: config.resource,
        timeout_ms: crate::probe::millis(timeout),
        requests_sent: 0,
        rules: Vec::new(),
    };

    let (transport_rules, tls_config) = match &target.server_name {
        Some(server_name) => {
            let (rules, tls_config) = tls_rules(config, &target, server_name.clone()).await?;
            (rules, tls_config)
        }
        None => (plain_http_rules(config.allow_http), None),
    };
    report.rules.extend(transport_rules);
    let https = target.server_name.is_some();
    if https && tls_config.is_none() {
        for id in [
            RuleId::AcknowledgedInTime,
            RuleId::SignatureVerified,
            RuleId::RedeliveryAcknowledged,
            RuleId::NoSensitiveData,
        ] {
            report.rules.push(RuleResult::new(
                id,
                Outcome::Skipped,
                "nothing could be sent: the receiver accepts neither TLS 1.2 nor TLS 1.3",
            ));
        }
        return Ok(report);
    }

    // As the service: no redirects followed (200-399 is the answer), and straight to the
    // receiver like the TLS probes, never through a proxy from the environment.
    let mut client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(tls_config) = tls_config {
        client = client.use_preconfigured_tls(tls_config);
    }
    if !config.marker_headers.is_empty() {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &config.marker_headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| CheckError::InvalidInput(format!("the header name {name:?} ({e})")))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|e| CheckError::InvalidInput(format!("the value of {name} ({e})")))?;
            headers.insert(name, value);
        }
        client = client.default_headers(headers);
    }
    let client = client
        .build()
        .map_err(|e| CheckError::Setup(format!("the HTTP client could not be built: {e}")))?;
    let sender = Sender {
        client,
        url: target.url.clone(),
        subscription_id: config.subscription_id.clone(),
        wait: timeout.saturating_mul(2),
        key_forms: SecretForms::new(&config.signing_key),
        sent: AtomicUsize::new(0),
    };
    let build = |probe| {
        prepare(
            probe,
            config.resource,
            &config.resource_base_url,
            &config.signing_key,
        )
        .map_err(CheckError::Setup)
    };

    let signed: Prepared = build(Probe::Signed)?;
    let first = sender.send(&signed).await;
    if first.connect_failed && !https {
        return Err(CheckError::Unreachable(
            first
                .exchange
                .error
                .clone()
                .unwrap_or_else(|| "no connection".into()),
        ));
    }
    let redelivery = if first.exchange.acknowledged() {
        Some(sender.send(&signed.redelivery()).await)
    } else {
        None
    };
    let negatives: Vec<Prepared> = Probe::NEGATIVE
        .into_iter()
        .map(build)
        .collect::<Result<_, _>>()?;
    let not_compact = build(Probe::NotCompact)?;
    let (negatives, not_compact) = futures::future::join(
        futures::future::join_all(negatives.iter().map(|probe| sender.send(probe))),
        sender.send(&not_compact),
    )
    .await;

    report.rules.push(acknowledged_rule(&first, timeout));
    report
        .rules
        .push(signature_rule(&first, &not_compact, &negatives));
    report
        .rules
        .push(redelivery_rule(&first, redelivery.as_ref()));
    let mut all = vec![&first, &not_compact];
    all.extend(redelivery.as_ref());
    all.extend(negatives.iter());
    report.rules.push(sensitive_data_rule(&all));
    report.requests_sent = sender.requests_sent();
    Ok(report)
}

fn plain_http_rules(allow_http: bool) -> Vec<RuleResult> {
    let https = if allow_http {
        RuleResult::new(
            RuleId::HttpsTrustedCertificate,
            Outcome::Warn,
            "plain http://, allowed for development on this machine; the service only calls \
             https:// endpoints with a certificate from a certificate authority",
        )
    } else {
        RuleResult::new(
            RuleId::HttpsTrustedCertificate,
            Outcome::Fail,
            "plain http://: the service only calls https:// endpoints with a certificate from a \
             certificate authority (--allow-http allows http:// for loopback development)",
        )
    };
    vec![
        https,
        RuleResult::new(
            RuleId::Tls12OrAbove,
            Outcome::Skipped,
            "plain http://: no TLS to check",
        ),
    ]
}

/// The two TLS rules, and the TLS configuration for the notifications (`None` when no
/// version in common was found).
async fn tls_rules(
    config: &CheckConfig,
    target: &Target,
    server_name: ServerName<'static>,
) -> Result<(Vec<RuleResult>, Option<rustls::ClientConfig>), CheckError> {
    let roots = tls::root_store(&config.extra_roots).map_err(CheckError::InvalidInput)?;
    let handshakes = futures::future::join_all(tls::VERSIONS.into_iter().map(|version| {
        tls::handshake(
            &target.host,
            target.port,
            server_name.clone(),
            version,
            config.timeout,
        )
    }))
    .await;
    let mut results = Vec::new();
    for handshake in handshakes {
        results
            .push(handshake.map_err(|tls::Unreachable(reason)| CheckError::Unreachable(reason))?);
    }
    let accepted: Vec<String> = results
        .iter()
        .filter(|h| h.refused.is_none())
        .map(|h| h.version.to_owned())
        .collect();
    let mut version_rule = if accepted.is_empty() {
        let reasons: Vec<String> = results
            .iter()
            .map(|h| {
                format!(
                    "{}: {}",
                    h.version,
                    h.refused.as_deref().unwrap_or("accepted")
                )
            })
            .collect();
        RuleResult::new(
            RuleId::Tls12OrAbove,
            Outcome::Fail,
            format!(
                "the receiver accepts neither TLS 1.2 nor TLS 1.3 ({}); the service needs TLS 1.2 \
                 or above",
                reasons.join("; ")
            ),
        )
    } else {
        RuleResult::new(
            RuleId::Tls12OrAbove,
            Outcome::Pass,
            format!("the receiver accepts {}", accepted.join(" and ")),
        )
    };
    version_rule.tls_versions = Some(accepted.clone());

    let chain = results
        .iter()
        .find(|h| h.refused.is_none() && !h.chain.is_empty())
        .or_else(|| results.iter().find(|h| !h.chain.is_empty()))
        .map(|h| h.chain.clone())
        .unwrap_or_default();
    let trusted =
        (!chain.is_empty()).then(|| tls::verify_chain(&chain, &server_name, roots.clone()));
    let certificate_rule = match &trusted {
        None => RuleResult::new(
            RuleId::HttpsTrustedCertificate,
            Outcome::Skipped,
            "no TLS handshake got as far as the certificate",
        ),
        Some(Ok(())) => RuleResult::new(
            RuleId::HttpsTrustedCertificate,
            Outcome::Pass,
            format!(
                "https:// with a certificate for {} that chains to a trusted certificate authority",
                server_name.to_str()
            ),
        ),
        Some(Err(reason)) => RuleResult::new(
            RuleId::HttpsTrustedCertificate,
            Outcome::Fail,
            format!(
                "{reason}. The other rules were checked trusting the certificate the receiver \
                 presented, but the service will not deliver to this endpoint"
            ),
        ),
    };
    let tls_config = if accepted.is_empty() {
        None
    } else {
        let pinned = match trusted {
            Some(Ok(())) => None,
            _ => chain.first().cloned(),
        };
        Some(tls::client_config(roots, pinned).map_err(CheckError::Setup)?)
    };
    Ok((vec![certificate_rule, version_rule], tls_config))
}

fn acknowledged_rule(first: &Sent, timeout: Duration) -> RuleResult {
    let exchange = &first.exchange;
    let took = format_ms(exchange.duration_ms);
    let allowed = format_ms(crate::probe::millis(timeout));
    let within = Duration::from_millis(exchange.duration_ms) <= timeout;
    let (outcome, summary) = match exchange.status {
        Some(status) if delivery::acknowledges(status) && within => {
            if Duration::from_millis(exchange.duration_ms).saturating_mul(2) > timeout {
                (
                    Outcome::Warn,
                    format!(
                        "acknowledged with {status} in {took}, more than half of the {allowed} the \
                         service waits: acknowledge first and process afterwards"
                    ),
                )
            } else {
                (
                    Outcome::Pass,
                    format!("acknowledged with {status} in {took} (the service waits {allowed})"),
                )
            }
        }
        Some(status) if delivery::acknowledges(status) => (
            Outcome::Fail,
            format!(
                "acknowledged with {status}, but only after {took}: the service gives up after \
                 {allowed}, counts the attempt failed and sends the notification again. \
                 Acknowledge first and process afterwards"
            ),
        ),
        Some(status @ (401 | 403)) => (
            Outcome::Fail,
            format!(
                "answered {status} to a correctly signed notification: does the receiver hold \
                 this subscription's current signing key? The service would retry and then \
                 discard it"
            ),
        ),
        Some(status) => (
            Outcome::Fail,
            format!(
                "answered {status} to a correctly signed notification: the service would retry \
                 it and then discard it"
            ),
        ),
        None => (
            Outcome::Fail,
            format!(
                "no acknowledgement ({}); the service waits {allowed}",
                exchange.error.as_deref().unwrap_or("no answer")
            ),
        ),
    };
    RuleResult::new(RuleId::AcknowledgedInTime, outcome, summary)
        .with_evidence(vec![exchange.clone()])
}

/// Which re-serialisation a receiver verifies, from the probes it took: each is signed over
/// exactly one re-serialisation of the bytes sent.
fn reserialisation_taken(took: impl Fn(Probe) -> bool) -> Option<&'static str> {
    if took(Probe::OtherSpacing) {
        Some(
            "acknowledged the same JSON with other spacing under the compact form's signature: \
             the receiver verifies its own compact re-serialisation of the parsed body \
             (JSON.stringify(req.body) and the like), not the bytes that arrived",
        )
    } else if took(Probe::SignedOverSortedKeys) {
        Some(
            "acknowledged a notification signed over its keys sorted: the receiver verifies a \
             sorted-key re-serialisation of the parsed body, not the bytes that arrived",
        )
    } else if took(Probe::SignedOverPretty) {
        Some(
            "acknowledged a notification signed over it pretty-printed: the receiver verifies a \
             pretty-printed re-serialisation of the parsed body (JSON.stringify(req.body, null, \
             2) and the like), not the bytes that arrived",
        )
    } else {
        None
    }
}

fn signature_rule(first: &Sent, not_compact: &Sent, negatives: &[Sent]) -> RuleResult {
    let acknowledged: Vec<Probe> = negatives
        .iter()
        .filter(|sent| sent.exchange.acknowledged())
        .map(|sent| sent.probe)
        .collect();
    let mut evidence: Vec<_> = negatives.iter().map(|sent| sent.exchange.clone()).collect();
    evidence.push(not_compact.exchange.clone());
    let took = |probe: Probe| acknowledged.contains(&probe);
    // A correctly signed notification in other (pretty) bytes refused while the compact one was
    // taken: the receiver verifies what it makes of the body, not the body.
    let refused_not_compact = first.exchange.acknowledged() && !not_compact.exchange.acknowledged();
    if acknowledged.is_empty() && !refused_not_compact {
        if !first.exchange.acknowledged() {
            return RuleResult::new(
                RuleId::SignatureVerified,
                Outcome::Skipped,
                "the correctly signed notification was not acknowledged either, so refusing the \
                 others shows nothing",
            )
            .with_evidence(evidence);
        }
        let unanswered = negatives
            .iter()
            .filter(|sent| sent.exchange.status.is_none())
            .count();
        let (outcome, summary) = if unanswered == 0 {
            (
                Outcome::Pass,
                format!(
                    "acknowledged a correctly signed notification written pretty, and refused all \
                     {}: {}",
                    negatives.len(),
                    negatives
                        .iter()
                        .map(|sent| format!("{} ({})", short(sent.probe), sent.exchange.answer()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        } else {
            (
                Outcome::Warn,
                format!(
                    "none was acknowledged, but {unanswered} got no answer at all: answer a \
                     notification that does not verify with 401 at once"
                ),
            )
        };
        return RuleResult::new(RuleId::SignatureVerified, outcome, summary)
            .with_evidence(evidence);
    }
    let mut findings = Vec::new();
    if took(Probe::WrongSignature) {
        findings.push(
            "acknowledged a notification signed with another key: the receiver does not verify \
             signatures"
                .to_owned(),
        );
    } else if let Some(which) = reserialisation_taken(took) {
        findings.push(format!(
            "{which}. Compute the HMAC over the body exactly as received"
        ));
    }
    if refused_not_compact && !took(Probe::WrongSignature) {
        findings.push(format!(
            "refused a correctly signed notification written pretty ({}): a sender may write \
             JSON with other spacing, and only the bytes that arrived are signed",
            not_compact.exchange.answer()
        ));
    }
    if took(Probe::TamperedBody) && !took(Probe::WrongSignature) {
        findings.push(
            "acknowledged a body changed by one byte after signing: the receiver does not verify \
             the whole raw body"
                .to_owned(),
        );
    }
    if took(Probe::MissingSignature) && !took(Probe::WrongSignature) {
        findings.push(
            "acknowledged a notification without Svc-Signature: the receiver does not require a \
             signature"
                .to_owned(),
        );
    }
    if !acknowledged.is_empty() {
        let also: Vec<&str> = acknowledged.iter().map(|p| short(*p)).collect();
        findings.push(format!("acknowledged: {}", also.join(", ")));
    }
    RuleResult::new(
        RuleId::SignatureVerified,
        Outcome::Fail,
        findings.join("; "),
    )
    .with_evidence(evidence)
}

fn short(probe: Probe) -> &'static str {
    match probe {
        Probe::Signed => "correctly signed",
        Probe::Redelivery => "redelivery",
        Probe::WrongSignature => "wrong signature",
        Probe::MissingSignature => "missing signature",
        Probe::TamperedBody => "body changed after signing",
        Probe::NotCompact => "correctly signed, written pretty",
        Probe::OtherSpacing => "other spacing under the compact form's signature",
        Probe::SignedOverSortedKeys => "signed over sorted keys",
        Probe::SignedOverPretty => "signed over the pretty form",
    }
}

fn redelivery_rule(first: &Sent, redelivery: Option<&Sent>) -> RuleResult {
    let Some(again) = redelivery else {
        return RuleResult::new(
            RuleId::RedeliveryAcknowledged,
            Outcome::Skipped,
            "the first delivery was not acknowledged, so a redelivery shows nothing",
        )
        .with_evidence(vec![first.exchange.clone()]);
    };
    let exchange = &again.exchange;
    let (outcome, summary) = match exchange.status {
        Some(status) if delivery::acknowledges(status) => (
            Outcome::Pass,
            format!(
                "the redelivery was acknowledged again ({})",
                exchange.answer()
            ),
        ),
        Some(status) => (
            Outcome::Fail,
            format!(
                "answered {status} to a redelivery of a notification it had acknowledged: the \
                 service takes that as a failed attempt and keeps retrying. Acknowledge a \
                 duplicate (and process it once)"
            ),
        ),
        None => (
            Outcome::Fail,
            format!(
                "no acknowledgement of the redelivery ({})",
                exchange.error.as_deref().unwrap_or("no answer")
            ),
        ),
    };
    RuleResult::new(RuleId::RedeliveryAcknowledged, outcome, summary)
        .with_evidence(vec![first.exchange.clone(), exchange.clone()])
}

fn sensitive_data_rule(all: &[&Sent]) -> RuleResult {
    let leaks: Vec<&&Sent> = all.iter().filter(|sent| sent.key_leak.is_some()).collect();
    let traces: Vec<&&Sent> = all
        .iter()
        .filter(|sent| sent.stack_trace.is_some())
        .collect();
    let answered = all
        .iter()
        .filter(|sent| sent.exchange.status.is_some())
        .count();
    if !leaks.is_empty() {
        let which: Vec<String> = leaks
            .iter()
            .map(|sent| {
                format!(
                    "the answer to {} carries it ({})",
                    sent.probe.describe(),
                    sent.key_leak.unwrap_or("raw")
                )
            })
            .collect();
        return RuleResult::new(
            RuleId::NoSensitiveData,
            Outcome::Fail,
            format!(
                "a response carries the signing key: {}. Replace the key now (rotate it) and \
                 answer errors without it",
                which.join("; ")
            ),
        )
        .with_evidence(leaks.iter().map(|sent| sent.exchange.clone()).collect());
    }
    if !traces.is_empty() {
        let which: Vec<String> = traces
            .iter()
            .map(|sent| {
                format!(
                    "the answer to {} looks like a {} stack trace",
                    sent.probe.describe(),
                    sent.stack_trace.unwrap_or("")
                )
            })
            .collect();
        return RuleResult::new(
            RuleId::NoSensitiveData,
            Outcome::Warn,
            format!("{}: answer errors without internals", which.join("; ")),
        )
        .with_evidence(traces.iter().map(|sent| sent.exchange.clone()).collect());
    }
    if answered == 0 {
        return RuleResult::new(
            RuleId::NoSensitiveData,
            Outcome::Skipped,
            "no response to look at",
        );
    }
    RuleResult::new(
        RuleId::NoSensitiveData,
        Outcome::Pass,
        format!(
            "none of the {answered} responses carries the signing key (raw, Base64, hex or \
             URL-encoded) or a stack trace"
        ),
    )
    .with_evidence(all.iter().map(|sent| sent.exchange.clone()).collect())
}

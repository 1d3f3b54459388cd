//! Evidence for a support ticket: chosen captures (or every attempt of one notification) as one
//! redacted bundle, a HAR 1.2 file and a short Markdown summary written side by side
//! (`NAME.har`, `NAME.md`). Two plain files rather than an archive: both open as they are
//! (browser dev tools, any text viewer), attach to any ticket system, and need no extra crate.
//!
//! The summary says, per capture: the verdict, the signature debugger's diagnosis, the attempt
//! and its timing, the forward's answer; and, for a sandbox connection, the service's own
//! delivery record of the same eventId, each attempt with its time, status or error and
//! duration, beside the capture it produced.
//!
//! Redaction, in this order:
//! 1. `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` values become
//!    `[masked]`; what they held (the whole value, the token after the scheme, Basic credentials
//!    decoded, each cookie value) joins the secrets looked for below, so the same token elsewhere
//!    (a body, a query) is masked too.
//! 2. The body fields the user chose (JSON pointers or dotted paths) become `"[masked]"`; the
//!    body stays valid JSON, re-written compactly. A masked body no longer matches its
//!    signature: the summary says so, and keeps the verdict and diagnosis of the body as it
//!    arrived (computed before masking). A body that is not JSON, when fields were to be
//!    masked, is withheld rather than sent unmasked.
//! 3. Every known secret (every signing key of the key source, current and previous, the
//!    client secrets and tokens the caller passes, and the values of headers and query
//!    parameters whose names say credential: `X-Api-Key`, `?access_token=`) is looked for in every string of both files
//!    in every form `partner_api::SecretForms` knows (raw, JSON-escaped, Base64 standard and
//!    URL-safe, hex, percent-encoded) and replaced by `[secret]`.
//! 4. Defence in depth: the finished text of both files is searched once more, and a bundle in
//!    which a secret is still found is refused (nothing written), never "mostly" redacted.
//!
//! The debugger's diagnosis needs the keys, and its sentences never hold one (they name key
//! roles). The signature the debugger expected is left out on purpose: it is a valid signature
//! of the body, so for a rejected request it would let anyone send that body as genuine.
//!
//! Pure: captures, forward records and delivery records are inputs ([`select`] reads them from
//! a store through its read-only API; the CLI fetches delivery records from the sandbox), so
//! the bundle is built and tested without a network.

use crate::capture::{header_value, Capture, OutboundKind, OutboundRecord};
use crate::debugger::diagnose_capture;
use crate::export::har;
use crate::keys::KeySource;
use crate::store::{CaptureFilter, StoreReader};
use crate::{Error, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};
use partner_api::signature::SIGNATURE_HEADER;
use partner_api::{DeliveryRecord, Secret, SecretForms};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What replaces a masked header value or body field.
pub const MASKED: &str = "[masked]";
/// What replaces a known secret found anywhere in the bundle.
pub const SECRET_MASK: &str = "[secret]";
/// Stands in the summary for the number of secrets masked until that number is known.
const SECRETS_MASKED_PLACEHOLDER: &str = "{secrets-masked}";
/// Headers whose values are always masked (compared case-insensitively).
pub const MASKED_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Parts of a header or query parameter name that say its value is a credential
/// (`X-Api-Key`, `X-Auth-Token`, `?access_token=`): such values are masked like a known
/// secret, wherever else they turn up too.
pub const CREDENTIAL_NAME_PARTS: [&str; 6] = [
    "token", "secret", "password", "api-key", "apikey", "api_key",
];

/// A body field to mask: a JSON pointer (`/meta/resourceRef`) or a dotted path
/// (`meta.resourceRef`, `items.0.secret`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    text: String,
    pointer: String,
}

impl FieldPath {
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim();
        let pointer = if trimmed.starts_with('/') {
            trimmed.to_string()
        } else {
            if trimmed.is_empty() || trimmed.split('.').any(str::is_empty) {
                return Err(Error::InvalidInput(format!(
                    "{text:?} is not a field path: give a JSON pointer (/meta/resourceRef) or a \
                     dotted path (meta.resourceRef)"
                )));
            }
            trimmed
                .split('.')
                .map(|segment| format!("/{}", segment.replace('~', "~0").replace('/', "~1")))
                .collect()
        };
        Ok(Self {
            text: trimmed.to_string(),
            pointer,
        })
    }

    /// As the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// As a JSON pointer.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

/// Which captures go into the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These captures, in the order of their ids.
    Ids(Vec<i64>),
    /// Every attempt of one notification: its eventId, narrowed by subscription and resource
    /// type when the same eventId arrived for more than one.
    Notification {
        event_id: String,
        subscription_id: Option<String>,
        resource_type: Option<String>,
    },
}

/// Captures read for a bundle, with their forwards and replays.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub captures: Vec<Capture>,
    /// Forwards and replays of those captures.
    pub outbound: Vec<OutboundRecord>,
}

/// Reads the selected captures and their outbound records through the store's read-only API.
pub fn select(store: &StoreReader, selection: &Selection) -> Result<Evidence> {
    let captures = match selection {
        Selection::Ids(ids) => {
            if ids.is_empty() {
                return Err(Error::InvalidInput(
                    "no capture selected: give at least one capture id".into(),
                ));
            }
            let unique: BTreeSet<i64> = ids.iter().copied().collect();
            unique
                .into_iter()
                .map(|id| store.get(id))
                .collect::<Result<Vec<_>>>()?
        }
        Selection::Notification {
            event_id,
            subscription_id,
            resource_type,
        } => notification_attempts(store, event_id, subscription_id, resource_type)?,
    };
    let mut outbound = Vec::new();
    for capture in &captures {
        outbound.extend(store.outbound_of(capture.id)?);
    }
    Ok(Evidence { captures, outbound })
}

fn notification_attempts(
    store: &StoreReader,
    event_id: &str,
    subscription_id: &Option<String>,
    resource_type: &Option<String>,
) -> Result<Vec<Capture>> {
    let filter = CaptureFilter {
        subscription_id: subscription_id.clone(),
        resource_type: resource_type.clone(),
        // Narrows the scan in SQL; the eventId itself is compared exactly below.
        text: Some(event_id.to_string()),
        ..CaptureFilter::default()
    };
    let mut found = Vec::new();
    store.for_each(&filter, |capture| {
        found.push(capture);
        Ok(())
    })?;
    one_notification(found, event_id, subscription_id, resource_type)
}

/// Of `found` (captures a store found for `event_id`, however it looked them up), the attempts
/// of one notification: those whose eventId is exactly `event_id`. An eventId that arrived for
/// more than one notification (subscription and resource type) is refused with their names,
/// so the user narrows it; none found is refused too. Every store that builds evidence
/// (this machine's, a team workspace's) chooses the attempts by this one rule.
pub fn one_notification(
    found: Vec<Capture>,
    event_id: &str,
    subscription_id: &Option<String>,
    resource_type: &Option<String>,
) -> Result<Vec<Capture>> {
    let found: Vec<Capture> = found
        .into_iter()
        .filter(|capture| capture.fields.event_id.as_deref() == Some(event_id))
        .collect();
    if found.is_empty() {
        return Err(Error::InvalidInput(format!(
            "no capture of a notification with eventId {event_id:?}{}",
            narrowed_by(subscription_id, resource_type)
        )));
    }
    let notifications: BTreeSet<(Option<String>, Option<String>)> = found
        .iter()
        .map(|c| (c.subscription_id.clone(), c.fields.resource_type.clone()))
        .collect();
    if notifications.len() > 1 {
        let names: Vec<String> = notifications
            .iter()
            .map(|(sub, rt)| {
                format!(
                    "subscription {} / resource type {}",
                    sub.as_deref().unwrap_or("-"),
                    rt.as_deref().unwrap_or("-")
                )
            })
            .collect();
        return Err(Error::InvalidInput(format!(
            "eventId {event_id:?} arrived for more than one notification ({}): name the \
             subscription and the resource type",
            names.join("; ")
        )));
    }
    Ok(found)
}

fn narrowed_by(subscription_id: &Option<String>, resource_type: &Option<String>) -> String {
    let mut words = String::new();
    if let Some(sub) = subscription_id {
        let _ = write!(words, " for subscription {sub:?}");
    }
    if let Some(rt) = resource_type {
        let _ = write!(words, " of resource type {rt:?}");
    }
    words
}

/// How to build a bundle.
#[derive(Debug, Clone)]
pub struct EvidenceOptions<'a> {
    /// Body fields to mask.
    pub mask_body_fields: Vec<FieldPath>,
    /// The service's delivery records (a sandbox connection), `None` when there are none.
    pub deliveries: Option<Vec<DeliveryRecord>>,
    /// The keys for the debugger's diagnosis; every key it holds is also searched for and
    /// masked. `None`: no diagnosis.
    pub keys: Option<&'a dyn KeySource>,
    /// Client secrets, tokens and any other secret to search for and mask.
    pub other_secrets: Vec<Secret>,
    /// The time the diagnosis is made at (whether a previous key is still in its grace period).
    pub now: DateTime<Utc>,
}

impl EvidenceOptions<'_> {
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            mask_body_fields: Vec::new(),
            deliveries: None,
            keys: None,
            other_secrets: Vec::new(),
            now,
        }
    }
}

/// What redaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedactionReport {
    pub headers_masked: usize,
    pub fields_masked: usize,
    pub bodies_withheld: usize,
    /// Occurrences of a known secret replaced by `[secret]` in the two files.
    pub secrets_masked: usize,
}

/// A finished bundle: the text of both files.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// HAR 1.2, pretty JSON.
    pub har: String,
    /// Markdown.
    pub summary: String,
    pub report: RedactionReport,
}

impl Bundle {
    /// The two files for `base`: `base.har` and `base.md` (an extension `base` already has is
    /// replaced, so `--out ticket.har` also gives `ticket.har` and `ticket.md`).
    pub fn paths(base: &Path) -> (PathBuf, PathBuf) {
        let stem = match base.extension().and_then(|e| e.to_str()) {
            Some("har" | "md") => base.with_extension(""),
            _ => base.to_path_buf(),
        };
        let with = |extension: &str| {
            let mut name = stem.as_os_str().to_owned();
            name.push(".");
            name.push(extension);
            PathBuf::from(name)
        };
        (with("har"), with("md"))
    }

    /// Writes `base.har` and `base.md`; returns their paths.
    pub fn write(&self, base: &Path) -> Result<(PathBuf, PathBuf)> {
        let (har_path, summary_path) = Self::paths(base);
        for (path, text) in [(&har_path, &self.har), (&summary_path, &self.summary)] {
            std::fs::write(path, text).map_err(|e| {
                Error::InvalidInput(format!("could not write {}: {e}", path.display()))
            })?;
        }
        Ok((har_path, summary_path))
    }
}

/// One capture after steps 1 and 2 of the redaction, with what was done to it.
struct Redacted {
    capture: Capture,
    masked_headers: Vec<String>,
    masked_fields: Vec<String>,
    body_withheld: Option<&'static str>,
}

/// Builds the bundle (see the module note for the redaction).
pub fn build(evidence: &Evidence, options: &EvidenceOptions<'_>) -> Result<Bundle> {
    if evidence.captures.is_empty() {
        return Err(Error::InvalidInput(
            "no capture to put in the evidence bundle".into(),
        ));
    }
    let mut secrets: Vec<Secret> = options.other_secrets.clone();
    if let Some(keys) = options.keys {
        for (_, subscription_keys) in keys.all() {
            secrets.push(subscription_keys.current);
            if let Some(previous) = subscription_keys.previous {
                secrets.push(previous.key);
            }
        }
    }
    let mut report = RedactionReport::default();
    let mut redacted = Vec::with_capacity(evidence.captures.len());
    for capture in &evidence.captures {
        let mut one = redact_headers(capture, &mut secrets);
        mask_body(&mut one, &options.mask_body_fields);
        report.headers_masked += one.masked_headers.len();
        report.fields_masked += one.masked_fields.len();
        redacted.push(one);
    }
    for record in &evidence.outbound {
        for header in record
            .request_headers
            .iter()
            .chain(&record.response_headers)
        {
            if is_masked_header(&header.name) {
                secrets.extend(secrets_in_header(&header.name, &header.value));
            }
        }
    }
    let forms = SecretForms::of_all(&secrets);

    // A body that is not text cannot be masked in place; one that holds a secret is withheld.
    for one in &mut redacted {
        if let Some(body) = &one.capture.body {
            if std::str::from_utf8(body).is_err()
                && forms.found_in(&String::from_utf8_lossy(body)).is_some()
            {
                one.capture.body = None;
                one.body_withheld = Some("it is not UTF-8 text and holds a known secret");
            }
        }
        if one.body_withheld.is_some() {
            report.bodies_withheld += 1;
        }
    }

    let mut document = har(&redacted
        .iter()
        .map(|r| r.capture.clone())
        .collect::<Vec<_>>());
    annotate_har(&mut document, &redacted, evidence);
    report.secrets_masked += mask_value(&mut document, &forms);
    let har_text = serde_json::to_string_pretty(&document)? + "\n";

    let summary = summary(evidence, &redacted, options, &report);
    let (summary, masked_in_summary) = forms.mask_counted(&summary, SECRET_MASK);
    report.secrets_masked += masked_in_summary;
    // The count is known only now, after the summary's own masking.
    let summary = summary.replacen(
        SECRETS_MASKED_PLACEHOLDER,
        &report.secrets_masked.to_string(),
        1,
    );

    refuse_leftovers(&forms, [("HAR file", &har_text), ("summary", &summary)])?;
    Ok(Bundle {
        har: har_text,
        summary,
        report,
    })
}

/// The last check: a known secret still in a finished file (in any form) refuses the bundle.
fn refuse_leftovers(forms: &SecretForms, files: [(&'static str, &String); 2]) -> Result<()> {
    for (file, text) in files {
        if let Some(form) = forms.found_in(text) {
            return Err(Error::SecretInEvidence {
                file,
                form: form.to_string(),
            });
        }
    }
    Ok(())
}

fn is_masked_header(name: &str) -> bool {
    MASKED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m))
}

fn names_a_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    CREDENTIAL_NAME_PARTS.iter().any(|part| name.contains(part))
}

/// What a masked header held, in every piece that could turn up elsewhere.
fn secrets_in_header(name: &str, value: &str) -> Vec<Secret> {
    let mut found = vec![Secret::new(value.trim())];
    if name.eq_ignore_ascii_case("cookie") || name.eq_ignore_ascii_case("set-cookie") {
        let pairs = value.split(';').filter_map(|pair| pair.split_once('='));
        for (_, cookie) in pairs {
            found.push(Secret::new(cookie.trim().trim_matches('"')));
        }
    } else if let Some((scheme, credentials)) = value.trim().split_once(' ') {
        let credentials = credentials.trim();
        found.push(Secret::new(credentials));
        if scheme.eq_ignore_ascii_case("basic") {
            if let Ok(decoded) = STANDARD.decode(credentials) {
                let decoded = String::from_utf8_lossy(&decoded).into_owned();
                if let Some((_, password)) = decoded.split_once(':') {
                    found.push(Secret::new(password));
                }
                found.push(Secret::new(decoded));
            }
        }
    }
    found
}

fn redact_headers(capture: &Capture, secrets: &mut Vec<Secret>) -> Redacted {
    let mut capture = capture.clone();
    let mut masked_headers = Vec::new();
    for header in &mut capture.headers {
        if is_masked_header(&header.name) {
            secrets.extend(secrets_in_header(&header.name, &header.value));
            header.value = MASKED.to_string();
            masked_headers.push(header.name.clone());
        } else if names_a_credential(&header.name) {
            // Masked by the secret scan, here and wherever else the value turns up.
            secrets.push(Secret::new(header.value.trim()));
        }
    }
    if let Some((_, query)) = capture.path.split_once('?') {
        for pair in query.split('&') {
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let decoded = |text: &str| -> String {
                url::form_urlencoded::parse(format!("x={text}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            if names_a_credential(&decoded(name)) && !value.is_empty() {
                // As sent (the URL) and decoded (the HAR's queryString).
                secrets.push(Secret::new(value));
                secrets.push(Secret::new(decoded(value)));
            }
        }
    }
    Redacted {
        capture,
        masked_headers,
        masked_fields: Vec::new(),
        body_withheld: None,
    }
}

fn mask_body(one: &mut Redacted, fields: &[FieldPath]) {
    if fields.is_empty() {
        return;
    }
    let Some(body) = &one.capture.body else {
        return;
    };
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
        one.capture.body = None;
        one.body_withheld = Some("it is not JSON, so the chosen fields could not be masked");
        return;
    };
    for field in fields {
        if let Some(target) = value.pointer_mut(field.pointer()) {
            *target = Value::String(MASKED.to_string());
            one.masked_fields.push(field.as_str().to_string());
        }
    }
    if !one.masked_fields.is_empty() {
        // Serialising a `Value` cannot fail; should it, the body is withheld, not kept unmasked.
        match serde_json::to_vec(&value) {
            Ok(bytes) => one.capture.body = Some(bytes),
            Err(_) => {
                one.capture.body = None;
                one.body_withheld = Some("it could not be re-written after masking");
            }
        }
    }
}

/// Adds to each HAR entry what the redaction did and the forward's answer.
fn annotate_har(document: &mut Value, redacted: &[Redacted], evidence: &Evidence) {
    let Some(entries) = document
        .pointer_mut("/log/entries")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for (entry, one) in entries.iter_mut().zip(redacted) {
        let mut comment = entry["comment"].as_str().unwrap_or_default().to_string();
        if !one.masked_fields.is_empty() {
            let _ = write!(
                comment,
                "; body fields masked ({}): the signature no longer matches this body, the \
                 verdict is that of the body as it arrived",
                one.masked_fields.join(", ")
            );
        }
        if let Some(why) = one.body_withheld {
            let _ = write!(comment, "; body withheld: {why}");
        }
        entry["comment"] = Value::String(comment);
        entry["_redaction"] = serde_json::json!({
            "maskedHeaders": one.masked_headers,
            "maskedBodyFields": one.masked_fields,
            "bodyWithheld": one.body_withheld,
        });
        let forwards: Vec<Value> = evidence
            .outbound
            .iter()
            .filter(|r| r.capture_id == one.capture.id)
            .map(|r| {
                serde_json::json!({
                    "kind": r.kind.as_str(),
                    "url": r.url,
                    "sentAt": r.sent_at.to_rfc3339_opts(SecondsFormat::Millis, true),
                    "status": r.status,
                    "elapsedMs": r.elapsed_ms,
                    "error": r.error,
                    "responseBody": r.response_body,
                })
            })
            .collect();
        if !forwards.is_empty() {
            entry["_outbound"] = Value::Array(forwards);
        }
    }
}

/// Masks every string (and object key) of `value`; returns how many secrets were replaced.
fn mask_value(value: &mut Value, forms: &SecretForms) -> usize {
    match value {
        Value::String(text) => {
            let (masked, count) = forms.mask_counted(text, SECRET_MASK);
            if count > 0 {
                *text = masked;
            }
            count
        }
        Value::Array(items) => items.iter_mut().map(|v| mask_value(v, forms)).sum(),
        Value::Object(map) => {
            let mut count = 0;
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                let (key, in_key) = forms.mask_counted(&key, SECRET_MASK);
                count += in_key + mask_value(&mut item, forms);
                map.insert(key, item);
            }
            count
        }
        _ => 0,
    }
}

fn time(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn millis(micros: u64) -> String {
    format!("{:.1} ms", micros as f64 / 1000.0)
}

/// A fenced block that no backtick run inside `text` can close early.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}\n{}\n{fence}\n", text.trim_end())
}

/// Cuts `text` to `limit` characters, never inside one.
fn excerpt(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Text for a table cell: no line breaks, no column breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn summary(
    evidence: &Evidence,
    redacted: &[Redacted],
    options: &EvidenceOptions<'_>,
    report: &RedactionReport,
) -> String {
    let captures = &evidence.captures;
    let mut md = String::new();
    let event_ids: BTreeSet<&str> = captures
        .iter()
        .filter_map(|c| c.fields.event_id.as_deref())
        .collect();
    let first = &captures[0];
    let one_notification = captures.iter().all(|c| {
        c.fields.event_id.is_some()
            && c.fields.event_id == first.fields.event_id
            && c.subscription_id == first.subscription_id
            && c.fields.resource_type == first.fields.resource_type
    });
    if one_notification {
        let _ = writeln!(
            md,
            "# Webhook evidence: notification {}\n",
            first.fields.event_id.as_deref().unwrap_or("-")
        );
        let _ = writeln!(
            md,
            "Subscription `{}`, resource type `{}`, event type `{}`, resource `{}`: {} attempt(s) captured.\n",
            first.subscription_id.as_deref().unwrap_or("-"),
            first.fields.resource_type.as_deref().unwrap_or("-"),
            first.fields.event_type.as_deref().unwrap_or("-"),
            first.fields.resource_id.as_deref().unwrap_or("-"),
            captures.len()
        );
    } else {
        let _ = writeln!(md, "# Webhook evidence: {} captures\n", captures.len());
    }
    let _ = writeln!(
        md,
        "Made by the Partner Console listener {} at {}. The HAR 1.2 file beside this one holds \
         each request as it arrived (after the redaction below) and the listener's answer.\n",
        env!("CARGO_PKG_VERSION"),
        time(&options.now)
    );

    md.push_str("## Redaction\n\n");
    let _ = writeln!(
        md,
        "- Headers masked as `{MASKED}`: {} value(s) of {}.",
        report.headers_masked,
        MASKED_HEADERS.join(", ")
    );
    if options.mask_body_fields.is_empty() {
        md.push_str("- No body field was chosen for masking.\n");
    } else {
        let chosen: Vec<&str> = options
            .mask_body_fields
            .iter()
            .map(FieldPath::as_str)
            .collect();
        let _ = writeln!(
            md,
            "- Body fields chosen for masking: `{}`; {} value(s) masked as `\"{MASKED}\"`. A \
             masked body no longer matches its signature: the verdicts and diagnoses here are \
             those of the bodies as they arrived.",
            chosen.join("`, `"),
            report.fields_masked
        );
    }
    if report.bodies_withheld > 0 {
        let _ = writeln!(md, "- Bodies withheld: {}.", report.bodies_withheld);
    }
    let _ = writeln!(
        md,
        "- Every signing key known to the listener, every client secret and token given, and the \
         value of every header and query parameter named like a credential ({}) were \
         searched for in both files (raw, Base64 standard and URL-safe, hex, URL-encoded, \
         JSON-escaped); {SECRETS_MASKED_PLACEHOLDER} occurrence(s) were replaced by \
         `{SECRET_MASK}`. No signing key, client secret or token is in this bundle.",
        CREDENTIAL_NAME_PARTS.join(", ")
    );
    md.push_str(
        "- The signature the listener expected is left out: it would be a valid signature of \
         the body.\n\n",
    );

    md.push_str("## Attempts\n\n");
    md.push_str(
        "| Capture | Received (UTC) | Attempt | Verdict | Answer | Processing | After previous |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|\n");
    let mut previous: Option<&Capture> = None;
    for capture in captures {
        let after = match previous {
            Some(p) if p.fields.event_id == capture.fields.event_id => {
                let gap = capture.received_at - p.received_at;
                format!("{:.1} s", gap.num_milliseconds() as f64 / 1000.0)
            }
            _ => "-".to_string(),
        };
        let mut answer = capture.response.status.to_string();
        if capture.response.delay_ms > 0 {
            let _ = write!(
                answer,
                " after {} ms (test mode)",
                capture.response.delay_ms
            );
        } else if capture.response.from_test_mode {
            answer.push_str(" (test mode)");
        }
        let _ = writeln!(
            md,
            "| #{} | {} | {}{} | {} | {} | {} | {} |",
            capture.id,
            time(&capture.received_at),
            capture.attempt,
            if capture.replay { " (replay)" } else { "" },
            capture.verdict,
            answer,
            millis(capture.processing_micros),
            after
        );
        previous = Some(capture);
    }
    md.push('\n');

    for (capture, one) in captures.iter().zip(redacted) {
        let _ = writeln!(md, "### Capture #{}: {}\n", capture.id, capture.verdict);
        let _ = writeln!(
            md,
            "- Received {} from {}: `{} {}`, {} body bytes.",
            time(&capture.received_at),
            capture.peer.as_deref().unwrap_or("-"),
            cell(&capture.method),
            cell(&capture.path),
            capture.body_size
        );
        let _ = writeln!(
            md,
            "- Notification: eventId `{}`, subscription `{}`, {} `{}` of `{}`; attempt {}.",
            capture.fields.event_id.as_deref().unwrap_or("-"),
            capture.subscription_id.as_deref().unwrap_or("-"),
            capture.fields.event_type.as_deref().unwrap_or("-"),
            capture.fields.resource_id.as_deref().unwrap_or("-"),
            capture.fields.resource_type.as_deref().unwrap_or("-"),
            capture.attempt
        );
        // Taken as sent (issue #46); what departs from the spec's shape is said, not hidden.
        let departures = capture.fields.departures();
        if capture.fields.is_notification() && !departures.is_empty() {
            let said: Vec<String> = departures.iter().map(|d| cell(&d.to_string())).collect();
            let _ = writeln!(md, "- Not the shape the spec shows: {}.", said.join("; "));
        }
        let matched = capture
            .matched_key
            .map(|k| format!(" (matched the {} key)", k.as_str()))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "- Verdict: **{}**{matched}; the listener answered {} `{}` after {} of processing.",
            capture.verdict,
            capture.response.status,
            capture.response.body.trim_end(),
            millis(capture.processing_micros)
        );
        match options.keys {
            Some(keys) => {
                let report = diagnose_capture(capture, keys, options.now);
                if let Some(received) = header_value(&capture.headers, SIGNATURE_HEADER) {
                    let _ = writeln!(md, "- Signature received: `{}`.", cell(received));
                }
                md.push_str("- Signature debugger:\n");
                for diagnosis in &report.diagnoses {
                    let _ = writeln!(md, "  - {diagnosis}");
                }
            }
            None => md.push_str(
                "- Signature debugger: not run (no signing keys were given to this export).\n",
            ),
        }
        if !one.masked_headers.is_empty() {
            let _ = writeln!(md, "- Masked headers: {}.", one.masked_headers.join(", "));
        }
        if !one.masked_fields.is_empty() {
            let _ = writeln!(
                md,
                "- Masked body fields: `{}` (the signature no longer matches the body in the HAR file).",
                one.masked_fields.join("`, `")
            );
        }
        if let Some(why) = one.body_withheld {
            let _ = writeln!(md, "- Body withheld: {why}.");
        }
        for record in evidence
            .outbound
            .iter()
            .filter(|r| r.capture_id == capture.id)
        {
            let what = match record.kind {
                OutboundKind::Forward => "Forwarded",
                OutboundKind::Replay => "Replayed",
                OutboundKind::ReplayEdited => "Replayed (edited, re-signed)",
            };
            match (record.status, &record.error) {
                (Some(status), _) => {
                    let _ = writeln!(
                        md,
                        "- {what} to {} at {}: answered {status} in {} ms.",
                        cell(&record.url),
                        time(&record.sent_at),
                        record.elapsed_ms
                    );
                }
                (None, error) => {
                    let _ = writeln!(
                        md,
                        "- {what} to {} at {}: no answer after {} ms: {}.",
                        cell(&record.url),
                        time(&record.sent_at),
                        record.elapsed_ms,
                        cell(error.as_deref().unwrap_or("unknown error"))
                    );
                }
            }
            if let Some(body) = record.response_body.as_deref().filter(|b| !b.is_empty()) {
                md.push_str("\n  Its answer:\n\n");
                md.push_str(&fenced(&excerpt(body, 2000)));
                md.push('\n');
            }
        }
        md.push('\n');
    }

    if let Some(deliveries) = &options.deliveries {
        md.push_str("## The service's delivery record\n\n");
        let relevant: Vec<&DeliveryRecord> = deliveries
            .iter()
            .filter(|d| event_ids.contains(d.event_id.as_str()))
            .filter(|d| {
                captures.iter().any(|c| {
                    c.fields.event_id.as_deref() == Some(d.event_id.as_str())
                        && c.subscription_id
                            .as_deref()
                            .is_none_or(|s| s == d.subscription_id)
                })
            })
            .collect();
        if relevant.is_empty() {
            md.push_str(
                "The service has no delivery record of these eventIds (it keeps the newest \
                 10,000).\n",
            );
        }
        for delivery in relevant {
            let _ = writeln!(
                md,
                "### eventId `{}` to subscription `{}`\n",
                delivery.event_id, delivery.subscription_id
            );
            let _ = writeln!(
                md,
                "State **{}**; queued {}; sent to {}.{}{}\n",
                delivery.state,
                time(&delivery.enqueued_at),
                cell(&delivery.url),
                delivery
                    .next_attempt_at
                    .map(|at| format!(" Next attempt due {}.", time(&at)))
                    .unwrap_or_default(),
                delivery
                    .not_sent_because
                    .as_deref()
                    .map(|why| format!(" Not sent: {}.", cell(why)))
                    .unwrap_or_default()
            );
            if delivery.attempts.is_empty() {
                md.push_str("No attempt has finished yet.\n\n");
                continue;
            }
            md.push_str(
                "| Attempt | Started (service clock) | Duration | Status or error | Capture |\n",
            );
            md.push_str("|---|---|---|---|---|\n");
            for attempt in &delivery.attempts {
                let outcome = match (attempt.status, &attempt.error) {
                    (Some(status), _) => status.to_string(),
                    (None, Some(error)) => cell(error),
                    (None, None) => "-".to_string(),
                };
                let capture = captures
                    .iter()
                    .find(|c| {
                        !c.replay
                            && c.attempt == attempt.number
                            && c.fields.event_id.as_deref() == Some(delivery.event_id.as_str())
                            && c.subscription_id.as_deref()
                                == Some(delivery.subscription_id.as_str())
                    })
                    .map(|c| format!("#{} ({})", c.id, c.verdict))
                    .unwrap_or_else(|| "not captured here".to_string());
                let _ = writeln!(
                    md,
                    "| {} | {} | {} ms | {} | {} |",
                    attempt.number,
                    time(&attempt.started_at),
                    attempt.duration_ms,
                    outcome,
                    capture
                );
            }
            md.push('\n');
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_are_pointers_or_dotted() {
        assert_eq!(FieldPath::parse("/a/b").unwrap().pointer(), "/a/b");
        assert_eq!(FieldPath::parse("a.b.0").unwrap().pointer(), "/a/b/0");
        assert_eq!(FieldPath::parse("a/b.c~d").unwrap().pointer(), "/a~1b/c~0d");
        for bad in ["", " ", "a..b", ".a", "a."] {
            assert!(FieldPath::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_secret_left_in_a_finished_file_refuses_the_bundle_without_naming_it() {
        let key = "Abcdefghijklmnopqrstuvwxyz0123!@";
        let forms = SecretForms::new(&Secret::new(key));
        let clean = String::from("{}");
        assert!(refuse_leftovers(&forms, [("HAR file", &clean), ("summary", &clean)]).is_ok());
        let leaky = format!("the key was {}", STANDARD.encode(key));
        let error = refuse_leftovers(&forms, [("HAR file", &clean), ("summary", &leaky)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "the evidence summary would still hold a secret (Base64 form) after redaction, so it was not written"
        );
        assert!(!error.contains(key) && !error.contains(&STANDARD.encode(key)));
    }

    #[test]
    fn a_masked_header_gives_up_every_piece_of_what_it_held() {
        let pieces = |name: &str, value: &str| -> Vec<String> {
            secrets_in_header(name, value)
                .iter()
                .map(|s| s.expose().to_string())
                .collect()
        };
        let basic = format!("Basic {}", STANDARD.encode("partner:pa55word-long"));
        let found = pieces("Authorization", &basic);
        assert!(found.contains(&"pa55word-long".to_string()));
        assert!(found.contains(&"partner:pa55word-long".to_string()));
        let found = pieces("Cookie", "a=first-value; b=\"second-value\"");
        assert!(found.contains(&"first-value".to_string()));
        assert!(found.contains(&"second-value".to_string()));
    }

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(fenced("a ```` b"), "`````\na ```` b\n`````\n");
        assert_eq!(fenced("plain"), "```\nplain\n```\n");
    }
}

//! The signature debugger: for a capture and the keys the console knows, the signature it
//! expected beside the one that arrived, and — when they differ — why, where that can be told.
//!
//! A pure function, so every diagnosis is tested without a network. It never guesses: each
//! diagnosis is a fact found by recomputing a signature that matches what arrived — under another
//! known key, or over a variant of the body that a common mistake would have produced (the sender
//! or a proxy re-serialised the JSON, added or dropped a trailing newline, changed the text
//! encoding), or with the signature written in another encoding. Reports carry signatures, which
//! are public in every request, and never a key.

use crate::capture::Capture;
use crate::keys::KeySource;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::{DateTime, Utc};
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::signing_key::{self, SigningKeyProblem};
use partner_api::Secret;
use serde::Serialize;

/// Which known key a diagnosis is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum KeyRole {
    /// The current key of the capture's subscription.
    Current,
    /// The previous key of the capture's subscription.
    Previous {
        replaced_at: DateTime<Utc>,
        in_grace: bool,
    },
    /// A key of another subscription.
    #[serde(rename_all = "camelCase")]
    OtherSubscription {
        subscription_id: String,
        previous: bool,
    },
    /// A key the user pasted to try (never kept): the sender's, say.
    Pasted,
}

/// A JSON layout of the same document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JsonLayout {
    /// No whitespace, keys in the order that arrived.
    Compact,
    /// Two-space indentation, keys in the order that arrived.
    Pretty,
    /// Four-space indentation, keys in the order that arrived.
    PrettyFourSpaces,
    /// No whitespace, keys sorted.
    CompactSortedKeys,
    /// Two-space indentation, keys sorted.
    PrettySortedKeys,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewlineChange {
    /// The signed body ended with a newline that did not arrive.
    Removed,
    /// A newline arrived that was not in the signed body.
    Added,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EncodingChange {
    /// The signed body was Latin-1; it arrived as UTF-8.
    Latin1ToUtf8,
    /// The signed body was UTF-8; it arrived as Latin-1.
    Utf8ToLatin1,
    /// A byte-order mark arrived that was not signed.
    BomAdded,
    /// The signed body had a byte-order mark that did not arrive.
    BomRemoved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignatureForm {
    Hex,
    Base64Url,
    Base64WithoutPadding,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "diagnosis", rename_all = "camelCase")]
pub enum Diagnosis {
    /// The signature verifies with this key over the exact body.
    #[serde(rename_all = "camelCase")]
    Matches {
        key: KeyRole,
    },
    /// The signature was computed over the body in another JSON layout: someone re-serialised it.
    #[serde(rename_all = "camelCase")]
    BodyReserialised {
        layout: JsonLayout,
        key: KeyRole,
    },
    #[serde(rename_all = "camelCase")]
    TrailingNewline {
        change: NewlineChange,
        key: KeyRole,
    },
    #[serde(rename_all = "camelCase")]
    TextEncoding {
        change: EncodingChange,
        key: KeyRole,
    },
    /// The right HMAC, written in another encoding than standard Base64.
    #[serde(rename_all = "camelCase")]
    SignatureEncoding {
        form: SignatureForm,
        key: KeyRole,
    },
    /// A known key does not meet the spec's signing-key rule.
    #[serde(rename_all = "camelCase")]
    KeyBreaksRule {
        key: KeyRole,
        problems: Vec<SigningKeyProblem>,
    },
    MissingSignature,
    MissingSubscription,
    /// No key is known for the capture's subscription.
    UnknownSubscription,
    /// The body was not kept (over the limit or incomplete), so nothing can be recomputed.
    BodyNotKept,
    /// No known key and no known mistake explains the signature.
    NoExplanation,
}

impl std::fmt::Display for KeyRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyRole::Current => write!(f, "the current key"),
            KeyRole::Previous {
                replaced_at,
                in_grace: true,
            } => write!(
                f,
                "the previous key (replaced {}, still verifying)",
                replaced_at.format("%Y-%m-%d %H:%M UTC")
            ),
            KeyRole::Previous {
                replaced_at,
                in_grace: false,
            } => write!(
                f,
                "the previous key (replaced {}, no longer verifying)",
                replaced_at.format("%Y-%m-%d %H:%M UTC")
            ),
            KeyRole::OtherSubscription {
                subscription_id,
                previous,
            } => write!(
                f,
                "the {} key of subscription `{subscription_id}`",
                if *previous { "previous" } else { "current" }
            ),
            KeyRole::Pasted => write!(f, "the pasted key"),
        }
    }
}

impl std::fmt::Display for JsonLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JsonLayout::Compact => "compact JSON",
            JsonLayout::Pretty => "JSON indented by two spaces",
            JsonLayout::PrettyFourSpaces => "JSON indented by four spaces",
            JsonLayout::CompactSortedKeys => "compact JSON with sorted keys",
            JsonLayout::PrettySortedKeys => "indented JSON with sorted keys",
        })
    }
}

/// Each finding as a sentence a user can act on (the console and the CLI show these).
impl std::fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Diagnosis::Matches {
                key: key @ KeyRole::Current,
            }
            | Diagnosis::Matches {
                key: key @ KeyRole::Previous { in_grace: true, .. },
            } => write!(f, "The signature matches {key}: the body arrived exactly as signed."),
            Diagnosis::Matches {
                key: key @ KeyRole::Previous { .. },
            } => write!(
                f,
                "The signature matches {key}: the sender still signs with the replaced key; give it the current one."
            ),
            Diagnosis::Matches {
                key: key @ KeyRole::Pasted,
            } => write!(
                f,
                "The signature matches {key}: the sender signs with it; rotate the subscription to that key, or give the sender the current one."
            ),
            Diagnosis::Matches { key } => write!(
                f,
                "The signature matches {key}: the sender signs with another subscription's key, or names the wrong subscription in Svc-SubscriptionId."
            ),
            Diagnosis::BodyReserialised { layout, key } => write!(
                f,
                "The signature matches {key} over the body written as {layout}: the JSON was re-serialised after signing (by the sender or a proxy); sign and send the same bytes."
            ),
            Diagnosis::TrailingNewline {
                change: NewlineChange::Removed,
                key,
            } => write!(
                f,
                "The signature matches {key} over the body with a trailing newline that did not arrive: sign exactly the bytes you send."
            ),
            Diagnosis::TrailingNewline {
                change: NewlineChange::Added,
                key,
            } => write!(
                f,
                "The signature matches {key} over the body without the trailing newline that arrived: sign exactly the bytes you send."
            ),
            Diagnosis::TextEncoding { change, key } => {
                let what = match change {
                    EncodingChange::Latin1ToUtf8 => "the body as Latin-1, and it arrived as UTF-8",
                    EncodingChange::Utf8ToLatin1 => "the body as UTF-8, and it arrived as Latin-1",
                    EncodingChange::BomAdded => "the body without the byte-order mark that arrived",
                    EncodingChange::BomRemoved => "the body with a byte-order mark that did not arrive",
                };
                write!(
                    f,
                    "The signature matches {key} over {what}: sign the UTF-8 bytes you send."
                )
            }
            Diagnosis::SignatureEncoding { form, key } => {
                let form = match form {
                    SignatureForm::Hex => "hexadecimal",
                    SignatureForm::Base64Url => "URL-safe Base64",
                    SignatureForm::Base64WithoutPadding => "Base64 without padding",
                };
                write!(
                    f,
                    "The HMAC is right for {key} but written as {form}: Svc-Signature is standard Base64 with padding."
                )
            }
            Diagnosis::KeyBreaksRule { key, problems } => {
                let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "{} does not meet the signing-key rule ({}): rotate it.",
                    capitalised(&key.to_string()),
                    problems.join("; ")
                )
            }
            Diagnosis::MissingSignature => write!(
                f,
                "No Svc-Signature header arrived: the sender did not sign this request. Check that the subscription has a signing key."
            ),
            Diagnosis::MissingSubscription => write!(
                f,
                "No Svc-SubscriptionId header arrived, so there is no key to check the signature with."
            ),
            Diagnosis::UnknownSubscription => write!(
                f,
                "The listener has no key for this subscription: add the subscription from this console, or paste its key to check it."
            ),
            Diagnosis::BodyNotKept => write!(
                f,
                "The body was not kept (too large or incomplete), so no signature can be recomputed."
            ),
            Diagnosis::NoExplanation => write!(
                f,
                "No known key gives this signature, and no known mistake explains it: the sender signs with another key (rotate the key or paste the sender's to compare), or the body was changed on the way."
            ),
        }
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What the debugger found for one capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureReport {
    pub received: Option<String>,
    /// The signature of the exact body under the subscription's current key.
    pub expected: Option<String>,
    /// The received signature verifies under the current or (in grace) previous key.
    pub valid: bool,
    pub diagnoses: Vec<Diagnosis>,
}

/// [`diagnose`] for a stored capture.
pub fn diagnose_capture(
    capture: &Capture,
    keys: &dyn KeySource,
    now: DateTime<Utc>,
) -> SignatureReport {
    diagnose_capture_with(capture, keys, None, now)
}

/// [`diagnose_with`] for a stored capture: also tries a key the user pasted.
pub fn diagnose_capture_with(
    capture: &Capture,
    keys: &dyn KeySource,
    pasted: Option<&Secret>,
    now: DateTime<Utc>,
) -> SignatureReport {
    diagnose_with(
        capture.body.as_deref(),
        capture.header(SIGNATURE_HEADER),
        capture.header(SUBSCRIPTION_HEADER),
        keys,
        pasted,
        now,
    )
}

struct Candidate {
    role: KeyRole,
    key: Secret,
}

fn candidates(
    subscription_id: Option<&str>,
    keys: &dyn KeySource,
    pasted: Option<&Secret>,
    now: DateTime<Utc>,
) -> Vec<Candidate> {
    let grace = keys.previous_key_grace();
    let mut found = Vec::new();
    if let Some(own) = subscription_id.and_then(|id| keys.keys(id)) {
        found.push(Candidate {
            role: KeyRole::Current,
            key: own.current.clone(),
        });
        if let Some(previous) = own.previous {
            found.push(Candidate {
                role: KeyRole::Previous {
                    replaced_at: previous.replaced_at,
                    in_grace: now - previous.replaced_at <= grace,
                },
                key: previous.key,
            });
        }
    }
    if let Some(pasted) = pasted {
        found.push(Candidate {
            role: KeyRole::Pasted,
            key: pasted.clone(),
        });
    }
    for (id, other) in keys.all() {
        if Some(id.as_str()) == subscription_id {
            continue;
        }
        found.push(Candidate {
            role: KeyRole::OtherSubscription {
                subscription_id: id.clone(),
                previous: false,
            },
            key: other.current,
        });
        if let Some(previous) = other.previous {
            found.push(Candidate {
                role: KeyRole::OtherSubscription {
                    subscription_id: id,
                    previous: true,
                },
                key: previous.key,
            });
        }
    }
    found
}

/// Explains a signature. `subscription_id` and `signature` are the header values as received.
pub fn diagnose(
    body: Option<&[u8]>,
    received: Option<&str>,
    subscription_id: Option<&str>,
    keys: &dyn KeySource,
    now: DateTime<Utc>,
) -> SignatureReport {
    diagnose_with(body, received, subscription_id, keys, None, now)
}

/// [`diagnose`], also trying a key the user pasted (after the subscription's own keys, before
/// other subscriptions'); a match with it never makes the notification valid.
pub fn diagnose_with(
    body: Option<&[u8]>,
    received: Option<&str>,
    subscription_id: Option<&str>,
    keys: &dyn KeySource,
    pasted: Option<&Secret>,
    now: DateTime<Utc>,
) -> SignatureReport {
    let candidates = candidates(subscription_id, keys, pasted, now);
    let own_keys = subscription_id.and_then(|id| keys.keys(id));
    let expected = match (&own_keys, body) {
        (Some(k), Some(body)) => Some(signature::sign(k.current.expose().as_bytes(), body)),
        _ => None,
    };
    let mut report = SignatureReport {
        received: received.map(str::to_string),
        expected,
        valid: false,
        diagnoses: Vec::new(),
    };
    // Keys that break the rule are worth saying whatever else is found.
    let rule_findings: Vec<Diagnosis> = candidates
        .iter()
        .filter(|c| !matches!(c.role, KeyRole::OtherSubscription { .. } | KeyRole::Pasted))
        .filter_map(|c| {
            let problems = signing_key::problems(c.key.expose());
            (!problems.is_empty()).then(|| Diagnosis::KeyBreaksRule {
                key: c.role.clone(),
                problems,
            })
        })
        .collect();

    match subscription_id {
        None => report.diagnoses.push(Diagnosis::MissingSubscription),
        Some(_) if own_keys.is_none() => report.diagnoses.push(Diagnosis::UnknownSubscription),
        Some(_) => {}
    }
    let Some(received) = received else {
        report.diagnoses.push(Diagnosis::MissingSignature);
        report.diagnoses.extend(rule_findings);
        return report;
    };
    let Some(body) = body else {
        report.diagnoses.push(Diagnosis::BodyNotKept);
        report.diagnoses.extend(rule_findings);
        return report;
    };

    for candidate in &candidates {
        if signature::verify(candidate.key.expose().as_bytes(), body, received) {
            report.valid = match &candidate.role {
                KeyRole::Current => true,
                KeyRole::Previous { in_grace, .. } => *in_grace,
                KeyRole::OtherSubscription { .. } | KeyRole::Pasted => false,
            };
            report.diagnoses.push(Diagnosis::Matches {
                key: candidate.role.clone(),
            });
            report.diagnoses.extend(rule_findings);
            return report;
        }
    }

    let variants = body_variants(body);
    for candidate in &candidates {
        let key = candidate.key.expose().as_bytes();
        for (variant, finding) in &variants {
            if signature::verify(key, variant, received) {
                report
                    .diagnoses
                    .push(finding.with_key(candidate.role.clone()));
            }
        }
        let digest = signature::digest(key, body);
        let forms = [
            (SignatureForm::Hex, hex(&digest)),
            (SignatureForm::Base64Url, URL_SAFE.encode(digest)),
            (
                SignatureForm::Base64WithoutPadding,
                URL_SAFE_NO_PAD.encode(digest),
            ),
            (
                SignatureForm::Base64WithoutPadding,
                STANDARD.encode(digest).trim_end_matches('=').to_string(),
            ),
        ];
        let trimmed = received.trim();
        let form = forms.iter().find(|(form, text)| match form {
            SignatureForm::Hex => text.eq_ignore_ascii_case(trimmed),
            _ => text == trimmed,
        });
        if let Some((form, _)) = form {
            report.diagnoses.push(Diagnosis::SignatureEncoding {
                form: *form,
                key: candidate.role.clone(),
            });
        }
    }
    if report.diagnoses.iter().all(|d| {
        matches!(
            d,
            Diagnosis::MissingSubscription | Diagnosis::UnknownSubscription
        )
    }) {
        report.diagnoses.push(Diagnosis::NoExplanation);
    }
    report.diagnoses.extend(rule_findings);
    report
}

/// A finding waiting for the key that confirmed it.
#[derive(Debug, Clone, Copy)]
enum Finding {
    Layout(JsonLayout),
    Newline(NewlineChange),
    Encoding(EncodingChange),
}

impl Finding {
    fn with_key(self, key: KeyRole) -> Diagnosis {
        match self {
            Finding::Layout(layout) => Diagnosis::BodyReserialised { layout, key },
            Finding::Newline(change) => Diagnosis::TrailingNewline { change, key },
            Finding::Encoding(change) => Diagnosis::TextEncoding { change, key },
        }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bodies a sender might have signed instead of the one that arrived, each with its finding.
fn body_variants(body: &[u8]) -> Vec<(Vec<u8>, Finding)> {
    let mut variants: Vec<(Vec<u8>, Finding)> = Vec::new();
    // The narrow mistakes first: when a re-layout gives the same bytes, the narrow one is named.
    variants.push((
        [body, b"\n"].concat(),
        Finding::Newline(NewlineChange::Removed),
    ));
    variants.push((
        [body, b"\r\n"].concat(),
        Finding::Newline(NewlineChange::Removed),
    ));
    if let Some(stripped) = body
        .strip_suffix(b"\r\n")
        .or_else(|| body.strip_suffix(b"\n"))
    {
        variants.push((stripped.to_vec(), Finding::Newline(NewlineChange::Added)));
    }
    if let Some(stripped) = body.strip_prefix(BOM) {
        variants.push((
            stripped.to_vec(),
            Finding::Encoding(EncodingChange::BomAdded),
        ));
    } else {
        variants.push((
            [BOM, body].concat(),
            Finding::Encoding(EncodingChange::BomRemoved),
        ));
    }
    if let Ok(text) = std::str::from_utf8(body) {
        if !text.is_ascii() && text.chars().all(|c| (c as u32) < 256) {
            let latin1: Vec<u8> = text.chars().map(|c| c as u32 as u8).collect();
            variants.push((latin1, Finding::Encoding(EncodingChange::Latin1ToUtf8)));
        }
    }
    if !body.is_ascii() {
        let as_utf8: String = body.iter().map(|&b| char::from(b)).collect();
        variants.push((
            as_utf8.into_bytes(),
            Finding::Encoding(EncodingChange::Utf8ToLatin1),
        ));
    }
    let json_text = std::str::from_utf8(body.strip_prefix(BOM).unwrap_or(body)).ok();
    if let Some(value) = json_text.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok()) {
        let raw = json_text.unwrap_or_default();
        let sorted = sort_keys(value);
        let layouts = [
            (JsonLayout::Compact, reformat(raw, None)),
            (JsonLayout::Pretty, reformat(raw, Some("  "))),
            (JsonLayout::PrettyFourSpaces, reformat(raw, Some("    "))),
            (
                JsonLayout::CompactSortedKeys,
                serde_json::to_string(&sorted).ok(),
            ),
            (
                JsonLayout::PrettySortedKeys,
                serde_json::to_string_pretty(&sorted).ok(),
            ),
        ];
        for (layout, text) in layouts {
            if let Some(text) = text {
                variants.push((text.into_bytes(), Finding::Layout(layout)));
            }
        }
    }
    // A layout that coincides with the body or an earlier variant says nothing new.
    let mut seen: Vec<Vec<u8>> = vec![body.to_vec()];
    variants.retain(|(variant, _)| {
        let new = !seen.contains(variant);
        if new {
            seen.push(variant.clone());
        }
        new
    });
    variants
}

fn sort_keys(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sort_keys).collect())
        }
        other => other,
    }
}

/// Re-lays out JSON text keeping its tokens and key order (as JavaScript's `JSON.stringify` of a
/// parsed body does; also what the Demo's re-serialising proxy sends): compact (`indent` None) or indented
/// the way `serde_json`'s pretty printer and most tools do (`"key": value`, `{}` for empty).
/// The text must already be valid JSON.
pub fn reformat(raw: &str, indent: Option<&str>) -> Option<String> {
    let mut out = String::with_capacity(raw.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = raw.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        if let Some(unit) = indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(unit);
            }
        }
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ' ' | '\t' | '\n' | '\r' => {}
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|n| n.is_ascii_whitespace()) {
                    chars.next();
                }
                let closer = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&closer) {
                    chars.next();
                    out.push(closer);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => {
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

//! Finding secrets (signing keys, client secrets, tokens) in text that is about to leave the
//! console, and masking them out of it.
//!
//! A secret can leak as typed or encoded, so every form a program is likely to print is looked
//! for: the raw text, Base64 (standard and URL-safe, with and without padding), hex (both
//! cases), percent-encoding, and the text as escaped inside a JSON string. Two callers share it:
//! the conformance check (a receiver must not echo the signing key in an error answer) and the
//! listener's evidence bundle (nothing sent to support may hold a secret). One home, so the two
//! cannot disagree on what counts as "the key is in there".

use crate::Secret;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use std::fmt;

/// Forms shorter than this are not looked for: they would turn up in ordinary text by chance
/// (keys the spec allows are 32 characters or more, so their forms never are this short).
pub const MIN_FORM_LEN: usize = 8;

/// The encodings of one or more secrets that are looked for and masked. Its `Debug` shows how
/// many forms it holds and their kinds, never a form.
#[derive(Default, Clone)]
pub struct SecretForms {
    /// (kind, text), longest first.
    forms: Vec<(&'static str, String)>,
}

impl fmt::Debug for SecretForms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretForms")
            .field(
                "forms",
                &self.forms.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl SecretForms {
    /// The forms of one secret.
    pub fn new(secret: &Secret) -> Self {
        let mut forms = Self::default();
        forms.add(secret);
        forms
    }

    /// The forms of every secret given.
    pub fn of_all<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let mut forms = Self::default();
        for secret in secrets {
            forms.add(secret);
        }
        forms
    }

    /// Adds the forms of one more secret.
    pub fn add(&mut self, secret: &Secret) {
        let raw = secret.expose();
        let bytes = raw.as_bytes();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let percent: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                    c.to_string()
                } else {
                    let mut buffer = [0u8; 4];
                    c.encode_utf8(&mut buffer)
                        .bytes()
                        .map(|b| format!("%{b:02X}"))
                        .collect()
                }
            })
            .collect();
        // Inside a JSON document a `"` or `\` in the secret is escaped, so the raw form would
        // not be found there.
        let json_escaped = serde_json::to_string(raw)
            .ok()
            .and_then(|quoted| {
                quoted
                    .strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| raw.to_owned());
        self.forms.extend([
            ("raw", raw.to_owned()),
            ("JSON-escaped", json_escaped),
            ("Base64", STANDARD.encode(bytes)),
            ("Base64", STANDARD_NO_PAD.encode(bytes)),
            ("Base64", URL_SAFE.encode(bytes)),
            ("Base64", URL_SAFE_NO_PAD.encode(bytes)),
            ("hex", hex.to_ascii_uppercase()),
            ("hex", hex),
            ("URL-encoded", percent),
        ]);
        // Longest first, so masking a form never leaves the tail of a longer one behind.
        self.forms
            .sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.1.cmp(&b.1)));
        self.forms.dedup_by(|a, b| a.1 == b.1);
        self.forms.retain(|(_, text)| text.len() >= MIN_FORM_LEN);
    }

    /// No form is looked for (no secret given, or all too short to recognise).
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// The form in which `text` carries a secret, if it does (`raw`, `Base64`, ...).
    pub fn found_in(&self, text: &str) -> Option<&'static str> {
        self.forms
            .iter()
            .find(|(_, form)| text.contains(form.as_str()))
            .map(|(name, _)| *name)
    }

    /// `text` with every form of every secret replaced by `mask`, and how many were replaced.
    pub fn mask_counted(&self, text: &str, mask: &str) -> (String, usize) {
        let mut masked = text.to_owned();
        let mut count = 0;
        for (_, form) in &self.forms {
            let found = masked.matches(form.as_str()).count();
            if found > 0 {
                count += found;
                masked = masked.replace(form.as_str(), mask);
            }
        }
        (masked, count)
    }

    /// `text` with every form of every secret replaced by `mask`.
    pub fn mask(&self, text: &str, mask: &str) -> String {
        self.mask_counted(text, mask).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@#$";

    #[test]
    fn finds_and_masks_every_form_of_the_key() {
        let forms = SecretForms::new(&Secret::new(KEY));
        let encoded = [
            KEY.to_owned(),
            STANDARD.encode(KEY),
            URL_SAFE_NO_PAD.encode(KEY),
            KEY.bytes().map(|b| format!("{b:02x}")).collect(),
            "Abcdefghijklmnopqrstuvwxyz0123%21%40%23%24".to_owned(),
        ];
        for form in &encoded {
            let body = format!("{{\"error\":\"bad signature, expected key {form}\"}}");
            assert!(forms.found_in(&body).is_some(), "{form}");
            let masked = forms.mask(&body, "[key]");
            assert!(!masked.contains(form.as_str()));
            assert!(masked.contains("[key]"));
            assert!(forms.found_in(&masked).is_none());
        }
        assert_eq!(forms.found_in("{\"error\":\"invalid signature\"}"), None);
        assert!(!format!("{forms:?}").contains("Abcdef"));
    }

    #[test]
    fn finds_a_secret_escaped_inside_json() {
        let secret = "Quote\"and\\backslash0123456789";
        let forms = SecretForms::new(&Secret::new(secret));
        let document = serde_json::json!({ "leak": secret }).to_string();
        assert!(!document.contains(secret));
        assert_eq!(forms.found_in(&document), Some("JSON-escaped"));
        let (masked, count) = forms.mask_counted(&document, "[secret]");
        assert_eq!(count, 1);
        assert_eq!(masked, r#"{"leak":"[secret]"}"#);
    }

    #[test]
    fn holds_the_forms_of_several_secrets() {
        let forms = SecretForms::of_all([
            &Secret::new("first-secret-0123456789"),
            &Secret::new("second-token-abcdefghij"),
        ]);
        let text = format!(
            "a first-secret-0123456789 and a {}",
            STANDARD.encode("second-token-abcdefghij")
        );
        let (masked, count) = forms.mask_counted(&text, "[secret]");
        assert_eq!(count, 2);
        assert_eq!(masked, "a [secret] and a [secret]");
    }

    #[test]
    fn a_secret_too_short_to_recognise_is_not_looked_for() {
        let forms = SecretForms::new(&Secret::new("a"));
        assert!(forms.is_empty());
        assert_eq!(forms.found_in("a plain answer"), None);
        assert_eq!(forms.mask("a plain answer", "[key]"), "a plain answer");
    }
}

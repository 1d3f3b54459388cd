//! Finding the signing key in what a receiver answered, and masking it out of the report.
//!
//! The spec: an endpoint "must not put sensitive data, such as the signing key, in HTTP error
//! responses". A key can leak as typed or encoded, so every form a framework is likely to print
//! is looked for: the raw text, Base64 (standard and URL-safe, with and without padding), hex
//! and percent-encoding. The same forms are masked out of every excerpt before it enters the
//! report, so the report itself never holds the key, even when the receiver leaked it.
//!
//! Stack traces are recognised by the markers the common runtimes print; that is a heuristic,
//! so the check warns on one rather than failing.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use partner_api::Secret;
use std::fmt;

/// What takes the place of the key in an excerpt.
pub const MASK: &str = "[signing key]";

/// Forms shorter than this are not looked for (see [`KeyForms::new`]).
pub const MIN_FORM_LEN: usize = 8;

/// The encodings of one key that are looked for and masked. Its `Debug` shows none of them.
pub struct KeyForms {
    forms: Vec<(&'static str, String)>,
}

impl fmt::Debug for KeyForms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyForms")
            .field(
                "forms",
                &self.forms.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl KeyForms {
    pub fn new(key: &Secret) -> Self {
        let raw = key.expose();
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
        let mut forms = vec![
            ("raw", raw.to_owned()),
            ("Base64", STANDARD.encode(bytes)),
            ("Base64", STANDARD_NO_PAD.encode(bytes)),
            ("Base64", URL_SAFE.encode(bytes)),
            ("Base64", URL_SAFE_NO_PAD.encode(bytes)),
            ("hex", hex.to_ascii_uppercase()),
            ("hex", hex),
            ("URL-encoded", percent),
        ];
        // Longest first, so masking a form never leaves the tail of a longer one behind.
        forms.sort_by_key(|(_, text)| std::cmp::Reverse(text.len()));
        forms.dedup_by(|a, b| a.1 == b.1);
        // A form this short would turn up in ordinary text by chance (keys the spec allows are
        // 32 characters or more, so their forms never are).
        forms.retain(|(_, text)| text.len() >= MIN_FORM_LEN);
        Self { forms }
    }

    /// The form in which `text` carries the key, if it does (`raw`, `Base64`, ...).
    pub fn found_in(&self, text: &str) -> Option<&'static str> {
        self.forms
            .iter()
            .find(|(_, form)| text.contains(form.as_str()))
            .map(|(name, _)| *name)
    }

    /// `text` with every form of the key replaced by [`MASK`].
    pub fn mask(&self, text: &str) -> String {
        let mut masked = text.to_owned();
        for (_, form) in &self.forms {
            if masked.contains(form.as_str()) {
                masked = masked.replace(form.as_str(), MASK);
            }
        }
        masked
    }
}

/// The runtime whose stack trace `text` looks like, if any.
pub fn stack_trace_in(text: &str) -> Option<&'static str> {
    // Each entry: a runtime and the parts that must all appear.
    let markers: [(&str, &[&str]); 10] = [
        ("Python", &["Traceback (most recent call last)"]),
        ("Rust", &["panicked at"]),
        ("Rust", &["stack backtrace:"]),
        ("Java", &["Exception in thread", ".java:"]),
        ("Go", &["goroutine ", " [running]:"]),
        ("PHP", &["Stack trace:", "#0 "]),
        ("Ruby", &[".rb:", ":in `"]),
        (".NET", &["   at ", ".cs:line "]),
        ("Node.js", &["    at ", ".js:"]),
        ("Java", &["\tat ", ".java:"]),
    ];
    markers
        .iter()
        .find(|(_, parts)| parts.iter().all(|part| text.contains(part)))
        .map(|(runtime, _)| *runtime)
}

/// The first `limit` characters of `text` (by char, never splitting one), with `…` when cut.
pub fn excerpt(text: &str, limit: usize) -> String {
    let mut chars = text.char_indices();
    match chars.nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "Abcdefghijklmnopqrstuvwxyz0123!@#$";

    #[test]
    fn finds_and_masks_every_form_of_the_key() {
        let forms = KeyForms::new(&Secret::new(KEY));
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
            let masked = forms.mask(&body);
            assert!(!masked.contains(form.as_str()));
            assert!(masked.contains(MASK));
            assert!(forms.found_in(&masked).is_none());
        }
        assert_eq!(forms.found_in("{\"error\":\"invalid signature\"}"), None);
        assert!(!format!("{forms:?}").contains("Abcdef"));
    }

    #[test]
    fn a_key_too_short_to_recognise_is_not_looked_for() {
        let forms = KeyForms::new(&Secret::new("a"));
        assert_eq!(forms.found_in("a plain answer"), None);
        assert_eq!(forms.mask("a plain answer"), "a plain answer");
    }

    #[test]
    fn recognises_common_stack_traces() {
        let python = "Traceback (most recent call last):\n  File \"app.py\", line 3";
        let node = "TypeError: x\n    at verify (/srv/app/hook.js:12:5)";
        let java = "java.lang.IllegalStateException\n\tat com.acme.Hook.verify(Hook.java:42)";
        let rust = "thread 'main' panicked at src/main.rs:3:5";
        assert_eq!(stack_trace_in(python), Some("Python"));
        assert_eq!(stack_trace_in(node), Some("Node.js"));
        assert_eq!(stack_trace_in(java), Some("Java"));
        assert_eq!(stack_trace_in(rust), Some("Rust"));
        assert_eq!(stack_trace_in("{\"error\":\"invalid signature\"}"), None);
        assert_eq!(stack_trace_in("ok"), None);
    }

    #[test]
    fn excerpts_cut_on_characters() {
        assert_eq!(excerpt("héllo", 2), "hé…");
        assert_eq!(excerpt("hi", 5), "hi");
    }
}

//! Looking for a secret in test output in every form it could leak as, written independently of
//! the code under test (`partner_api::SecretForms`), so a test does not check a function with
//! itself.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;

/// The forms of `secret` found in `text`: raw, Base64 (standard and URL-safe, padded or not),
/// hex (lower and upper case), and the raw text as escaped in a JSON string.
pub fn forms_of_secret_in(text: &str, secret: &str) -> Vec<&'static str> {
    let bytes = secret.as_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json.trim_matches('"').to_string();
    let forms = [
        ("raw", secret.to_string()),
        ("JSON-escaped", json),
        ("Base64", STANDARD.encode(bytes)),
        ("Base64 without padding", STANDARD_NO_PAD.encode(bytes)),
        ("URL-safe Base64", URL_SAFE.encode(bytes)),
        (
            "URL-safe Base64 without padding",
            URL_SAFE_NO_PAD.encode(bytes),
        ),
        ("hex", hex.clone()),
        ("upper-case hex", hex.to_ascii_uppercase()),
    ];
    forms
        .into_iter()
        .filter(|(_, form)| !form.is_empty() && text.contains(form.as_str()))
        .map(|(name, _)| name)
        .collect()
}

/// Panics, naming the secret's label, the form and `what`, if `text` holds `secret` in any form.
pub fn assert_no_secret(what: &str, text: &str, label: &str, secret: &str) {
    let found = forms_of_secret_in(text, secret);
    assert!(found.is_empty(), "{what} holds {label} as {found:?}");
}

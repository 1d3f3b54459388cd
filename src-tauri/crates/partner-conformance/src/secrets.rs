//! Finding the signing key in what a receiver answered, and masking it out of the report.
//!
//! The forms of the key are `partner_api::SecretForms` (shared with the listener's evidence
//! bundle); this module adds what only the check needs: the mask, stack traces, excerpts.
//!
//! The spec: an endpoint "must not put sensitive data, such as the signing key, in HTTP error
//! responses". A key can leak as typed or encoded, so every form a framework is likely to print
//! is looked for: the raw text, Base64 (standard and URL-safe, with and without padding), hex
//! and percent-encoding. The same forms are masked out of every excerpt before it enters the
//! report, so the report itself never holds the key, even when the receiver leaked it.
//!
//! Stack traces are recognised by the markers the common runtimes print; that is a heuristic,
//! so the check warns on one rather than failing.

pub use partner_api::secret_forms::{SecretForms, MIN_FORM_LEN};

/// What takes the place of the key in an excerpt.
pub const MASK: &str = "[signing key]";

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

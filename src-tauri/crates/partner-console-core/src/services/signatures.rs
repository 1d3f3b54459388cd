//! The signature debugger's report on a capture. Every sentence is `partner_listener::debugger`'s
//! (every known key and a key the user pasted, never stored; the body variants a known mistake
//! produces: re-serialised JSON, a trailing newline, a text encoding, a signature in another
//! encoding, a key that breaks the rule), so the CLI and the app say the same. This adds only
//! the expected signature under each key for display, and the keychain's state when it did not
//! answer (the keys may then not be loaded).
use crate::bridge::{SignatureCheck, SignatureReport};
use crate::error::Result;
use crate::state::AppState;
use partner_api::signature::{self, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_api::Secret;
use partner_listener::KeySource;

/// The signature debugger for capture `id`. `partner_listener::debugger` does the diagnosis (every known key,
/// and the body variants a known mistake produces: re-serialised JSON, a trailing newline, a
/// text encoding, a signature in another encoding, a key that breaks the rule); this adds
/// the expected signature under each of the subscription's keys for display, and an optional
/// pasted key (never stored).
pub fn report(state: &AppState, id: i64, pasted_key: Option<String>) -> Result<SignatureReport> {
    crate::services::captures::local_only(state, "The signature debugger")?;
    let capture = state.captures()?.get(id)?;
    let pasted = pasted_key.filter(|k| !k.is_empty()).map(Secret::new);
    let mut report = signature_view(&capture, state.keys.as_ref(), pasted, chrono::Utc::now());
    if let partner_local::KeychainHealth::Unavailable(why) = state.keys.health() {
        report.explanation = format!(
            "The keychain was not available when last asked ({why}), so this subscription's keys may not be loaded: unlock it and use Try again on the banner. {}",
            report.explanation
        );
    }
    Ok(report)
}

/// The pasted key's label in the checks.
const PASTED_KEY: &str = "pasted key";

/// [`report`] for one capture and a key source.
pub fn signature_view(
    capture: &partner_listener::Capture,
    keys: &dyn KeySource,
    pasted: Option<Secret>,
    now: chrono::DateTime<chrono::Utc>,
) -> SignatureReport {
    let body = capture.body.as_deref().unwrap_or_default();
    let received = capture.header(SIGNATURE_HEADER).map(str::to_string);
    let subscription = capture.header(SUBSCRIPTION_HEADER).unwrap_or_default();
    let mut labelled: Vec<(String, Secret)> = Vec::new();
    if let Some(known) = keys.keys(subscription) {
        labelled.push(("current key".into(), known.current.clone()));
        if let Some(previous) = known.previous {
            labelled.push(("previous key".into(), previous.key));
        }
    }
    if let Some(pasted) = &pasted {
        labelled.push((PASTED_KEY.into(), pasted.clone()));
    }
    let checks: Vec<SignatureCheck> = labelled
        .iter()
        .map(|(label, key)| SignatureCheck {
            key_label: label.clone(),
            expected: signature::sign(key.expose().as_bytes(), body),
            matches: received
                .as_deref()
                .is_some_and(|r| signature::verify(key.expose().as_bytes(), body, r)),
        })
        .collect();
    let diagnosis = partner_listener::diagnose_capture_with(capture, keys, pasted.as_ref(), now);
    let sentences: Vec<String> = diagnosis
        .diagnoses
        .iter()
        .map(ToString::to_string)
        .collect();
    SignatureReport {
        received,
        body_bytes: u32::try_from(body.len()).unwrap_or(u32::MAX),
        body_sha256: sha256_hex(body),
        checks,
        explanation: sentences.join(" "),
    }
}

fn sha256_hex(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::tunnel::tests::running_listener_with;
    use partner_listener::MemoryKeys;
    use std::sync::Arc;

    const SUB: &str = "sub-1";
    const KEY: &str = "Current#Key0123456789abcdefghijKLMN";
    const OTHER: &str = "Sender#Key0123456789abcdefghijKLMNO";
    const COMPACT: &str = r#"{"eventId":"e1","eventTime":"2026-01-01T00:00:00Z","eventType":"created","meta":{"instanceId":"i","resourceId":"r","resourceRef":"http://127.0.0.1/partner/v2/transactions/r","resourceType":"urn:svc:partner:transaction"}}"#;

    /// Posts `body` signed over `signed_body` with `key` to the listener; returns the capture.
    async fn deliver(
        running: &crate::state::RunningListener,
        key: &str,
        signed_body: &str,
        body: &str,
    ) -> partner_listener::Capture {
        reqwest::Client::new()
            .post(running.url())
            .header(SUBSCRIPTION_HEADER, SUB)
            .header(
                SIGNATURE_HEADER,
                signature::sign(key.as_bytes(), signed_body.as_bytes()),
            )
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let store = running.listener.store();
        let newest = store
            .query(&partner_listener::CaptureFilter::default(), 0, 1)
            .unwrap()
            .items;
        store.get(newest[0].id).unwrap()
    }

    /// The app's debugger is the library's: what arrived at a real listener is explained by
    /// the library's findings, in its words; the pasted key is checked beside the known ones.
    #[tokio::test]
    async fn the_signature_debugger_words_the_librarys_diagnosis() {
        let keys = Arc::new(MemoryKeys::new());
        keys.insert(SUB, KEY);
        let (running, dir) = running_listener_with(keys.clone()).await;
        let now = chrono::Utc::now();

        let valid = deliver(&running, KEY, COMPACT, COMPACT).await;
        let view = signature_view(&valid, keys.as_ref(), None, now);
        assert!(view.checks[0].matches, "{view:?}");
        assert!(
            view.explanation
                .starts_with("The signature matches the current key"),
            "{}",
            view.explanation
        );

        // Signed compact, re-serialised on the way (keys already sorted, as serde_json writes
        // them): a finding only the library's debugger makes.
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(COMPACT).unwrap(),
        )
        .unwrap();
        let reserialised = deliver(&running, KEY, COMPACT, &pretty).await;
        let view = signature_view(&reserialised, keys.as_ref(), None, now);
        assert!(!view.checks[0].matches);
        assert!(
            view.explanation.contains("re-serialised"),
            "{}",
            view.explanation
        );

        // Another sender's key: nothing known explains it until the user pastes that key.
        let foreign = deliver(&running, OTHER, COMPACT, COMPACT).await;
        let view = signature_view(&foreign, keys.as_ref(), None, now);
        assert!(
            view.explanation
                .starts_with("No known key gives this signature"),
            "{}",
            view.explanation
        );
        let view = signature_view(&foreign, keys.as_ref(), Some(Secret::new(OTHER)), now);
        let pasted = view
            .checks
            .iter()
            .find(|c| c.key_label == PASTED_KEY)
            .unwrap();
        assert!(pasted.matches);
        assert!(
            view.explanation
                .starts_with("The signature matches the pasted key"),
            "{}",
            view.explanation
        );
        assert!(
            !view.explanation.contains("No known key"),
            "{}",
            view.explanation
        );
        let shown = format!("{view:?}");
        assert!(
            !shown.contains(KEY) && !shown.contains(OTHER),
            "no key in the report"
        );

        running.stop.cancel();
        let _ = std::fs::remove_dir_all(dir);
    }
}

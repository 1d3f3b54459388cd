//! Every diagnosis of the signature debugger, each produced by the mistake it names.

use crate::support::*;
use chrono::{Duration, Utc};
use partner_api::signature::sign;
use partner_api::SigningKeyProblem;
use partner_listener::debugger::{
    diagnose, diagnose_with, Diagnosis, EncodingChange, JsonLayout, KeyRole, NewlineChange,
    SignatureForm,
};
use partner_listener::MemoryKeys;

fn keys() -> MemoryKeys {
    let keys = MemoryKeys::new();
    keys.insert(SUB, KEY);
    keys.insert("sub-2", OTHER_KEY);
    keys
}

fn run(keys: &MemoryKeys, arrived: &[u8], signature: &str) -> Vec<Diagnosis> {
    let report = diagnose(Some(arrived), Some(signature), Some(SUB), keys, Utc::now());
    assert_eq!(
        report.expected.as_deref(),
        Some(sign(KEY.as_bytes(), arrived).as_str())
    );
    assert!(
        !format!("{report:?}").contains(KEY),
        "a report never shows a key"
    );
    report.diagnoses
}

const PRETTY: &str = "{\n  \"eventId\": \"e1\",\n  \"meta\": {\n    \"resourceType\": \"urn:svc:partner:transaction\",\n    \"tags\": []\n  }\n}";
const COMPACT: &str =
    r#"{"eventId":"e1","meta":{"resourceType":"urn:svc:partner:transaction","tags":[]}}"#;

#[test]
fn a_matching_signature_names_the_key_that_matched() {
    let keys = keys();
    let body = COMPACT.as_bytes();
    let report = diagnose(
        Some(body),
        Some(&sign(KEY.as_bytes(), body)),
        Some(SUB),
        &keys,
        Utc::now(),
    );
    assert!(report.valid);
    assert_eq!(report.received, report.expected);
    assert_eq!(
        report.diagnoses,
        vec![Diagnosis::Matches {
            key: KeyRole::Current
        }]
    );

    keys.rotate(SUB, "Newkey0123456789abcdefghijklmnop#");
    let report = diagnose(
        Some(body),
        Some(&sign(KEY.as_bytes(), body)),
        Some(SUB),
        &keys,
        Utc::now(),
    );
    assert!(report.valid);
    assert!(matches!(
        &report.diagnoses[0],
        Diagnosis::Matches {
            key: KeyRole::Previous { in_grace: true, .. }
        }
    ));
    let later = Utc::now() + Duration::days(3);
    let report = diagnose(
        Some(body),
        Some(&sign(KEY.as_bytes(), body)),
        Some(SUB),
        &keys,
        later,
    );
    assert!(
        !report.valid,
        "a previous key past its grace period does not make a capture valid"
    );
    assert!(matches!(
        &report.diagnoses[0],
        Diagnosis::Matches {
            key: KeyRole::Previous {
                in_grace: false,
                ..
            }
        }
    ));
}

#[test]
fn another_subscriptions_key() {
    let keys = keys();
    let body = COMPACT.as_bytes();
    let diagnoses = run(&keys, body, &sign(OTHER_KEY.as_bytes(), body));
    assert_eq!(
        diagnoses,
        vec![Diagnosis::Matches {
            key: KeyRole::OtherSubscription {
                subscription_id: "sub-2".into(),
                previous: false
            }
        }]
    );
}

#[test]
fn a_body_re_serialised_after_signing() {
    let keys = keys();
    // Signed compact, arrived pretty.
    let diagnoses = run(
        &keys,
        PRETTY.as_bytes(),
        &sign(KEY.as_bytes(), COMPACT.as_bytes()),
    );
    assert_eq!(
        diagnoses,
        vec![Diagnosis::BodyReserialised {
            layout: JsonLayout::Compact,
            key: KeyRole::Current
        }]
    );
    // Signed pretty, arrived compact.
    let diagnoses = run(
        &keys,
        COMPACT.as_bytes(),
        &sign(KEY.as_bytes(), PRETTY.as_bytes()),
    );
    assert_eq!(
        diagnoses,
        vec![Diagnosis::BodyReserialised {
            layout: JsonLayout::Pretty,
            key: KeyRole::Current
        }]
    );
    // Signed with sorted keys, arrived in the sender's order.
    let unsorted = r#"{"meta":{"b":1,"a":2},"eventId":"e1"}"#;
    let sorted = r#"{"eventId":"e1","meta":{"a":2,"b":1}}"#;
    let diagnoses = run(
        &keys,
        unsorted.as_bytes(),
        &sign(KEY.as_bytes(), sorted.as_bytes()),
    );
    assert_eq!(
        diagnoses,
        vec![Diagnosis::BodyReserialised {
            layout: JsonLayout::CompactSortedKeys,
            key: KeyRole::Current
        }]
    );
}

#[test]
fn a_trailing_newline_added_or_removed() {
    let keys = keys();
    let with_newline = format!("{COMPACT}\n");
    let diagnoses = run(
        &keys,
        with_newline.as_bytes(),
        &sign(KEY.as_bytes(), COMPACT.as_bytes()),
    );
    assert!(
        diagnoses.contains(&Diagnosis::TrailingNewline {
            change: NewlineChange::Added,
            key: KeyRole::Current
        }),
        "{diagnoses:?}"
    );
    let diagnoses = run(
        &keys,
        COMPACT.as_bytes(),
        &sign(KEY.as_bytes(), with_newline.as_bytes()),
    );
    assert_eq!(
        diagnoses,
        vec![Diagnosis::TrailingNewline {
            change: NewlineChange::Removed,
            key: KeyRole::Current
        }]
    );
}

#[test]
fn a_text_encoding_change() {
    let keys = keys();
    let utf8 = r#"{"eventId":"e1","note":"Café Zürich"}"#;
    let latin1: Vec<u8> = utf8.chars().map(|c| c as u32 as u8).collect();
    // Signed as Latin-1, arrived as UTF-8.
    let diagnoses = run(&keys, utf8.as_bytes(), &sign(KEY.as_bytes(), &latin1));
    assert_eq!(
        diagnoses,
        vec![Diagnosis::TextEncoding {
            change: EncodingChange::Latin1ToUtf8,
            key: KeyRole::Current
        }]
    );
    // Signed as UTF-8, arrived as Latin-1.
    let diagnoses = run(&keys, &latin1, &sign(KEY.as_bytes(), utf8.as_bytes()));
    assert_eq!(
        diagnoses,
        vec![Diagnosis::TextEncoding {
            change: EncodingChange::Utf8ToLatin1,
            key: KeyRole::Current
        }]
    );
    // A byte-order mark put in front on the way.
    let with_bom = [b"\xEF\xBB\xBF".as_slice(), COMPACT.as_bytes()].concat();
    let diagnoses = run(&keys, &with_bom, &sign(KEY.as_bytes(), COMPACT.as_bytes()));
    assert!(
        diagnoses.contains(&Diagnosis::TextEncoding {
            change: EncodingChange::BomAdded,
            key: KeyRole::Current
        }),
        "{diagnoses:?}"
    );
    let diagnoses = run(&keys, COMPACT.as_bytes(), &sign(KEY.as_bytes(), &with_bom));
    assert_eq!(
        diagnoses,
        vec![Diagnosis::TextEncoding {
            change: EncodingChange::BomRemoved,
            key: KeyRole::Current
        }]
    );
}

#[test]
fn the_right_hmac_in_another_encoding() {
    let keys = keys();
    let body = COMPACT.as_bytes();
    let digest = partner_api::signature::digest(KEY.as_bytes(), body);
    let hex: String = digest.iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(
        run(&keys, body, &hex),
        vec![Diagnosis::SignatureEncoding {
            form: SignatureForm::Hex,
            key: KeyRole::Current
        }]
    );
    use base64::Engine;
    let unpadded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest);
    assert_eq!(
        run(&keys, body, &unpadded),
        vec![Diagnosis::SignatureEncoding {
            form: SignatureForm::Base64WithoutPadding,
            key: KeyRole::Current
        }]
    );
}

#[test]
fn a_key_that_breaks_the_rule_is_named_with_its_problems() {
    let keys = MemoryKeys::new();
    keys.insert(SUB, "shortkey");
    let body = COMPACT.as_bytes();
    let report = diagnose(
        Some(body),
        Some(&sign(b"shortkey", body)),
        Some(SUB),
        &keys,
        Utc::now(),
    );
    assert!(report.valid);
    assert_eq!(
        report.diagnoses,
        vec![
            Diagnosis::Matches {
                key: KeyRole::Current
            },
            Diagnosis::KeyBreaksRule {
                key: KeyRole::Current,
                problems: vec![
                    SigningKeyProblem::TooShort { length: 8 },
                    SigningKeyProblem::NoUppercase,
                    SigningKeyProblem::NoDigit,
                    SigningKeyProblem::NoSpecial,
                ],
            },
        ]
    );
    assert!(!serde_json::to_string(&report).unwrap().contains("shortkey"));
}

#[test]
fn what_cannot_be_told_is_said_plainly() {
    let keys = keys();
    let body = COMPACT.as_bytes();
    assert_eq!(
        run(&keys, body, &sign(b"a key nobody knows", body)),
        vec![Diagnosis::NoExplanation]
    );
    let report = diagnose(Some(body), None, Some(SUB), &keys, Utc::now());
    assert_eq!(report.diagnoses, vec![Diagnosis::MissingSignature]);
    let report = diagnose(None, Some("abc"), Some(SUB), &keys, Utc::now());
    assert_eq!(report.diagnoses, vec![Diagnosis::BodyNotKept]);
    let report = diagnose(
        Some(body),
        Some(&sign(OTHER_KEY.as_bytes(), body)),
        Some("sub-unknown"),
        &keys,
        Utc::now(),
    );
    assert_eq!(report.expected, None);
    assert_eq!(report.diagnoses[0], Diagnosis::UnknownSubscription);
    assert!(report.diagnoses.iter().any(|d| matches!(
        d,
        Diagnosis::Matches {
            key: KeyRole::OtherSubscription { .. }
        }
    )));
    let report = diagnose(Some(body), Some("zzz"), None, &keys, Utc::now());
    assert_eq!(
        report.diagnoses,
        vec![Diagnosis::MissingSubscription, Diagnosis::NoExplanation]
    );
}

#[test]
fn every_diagnosis_reads_as_a_sentence_naming_the_key_and_what_to_do() {
    let replaced_at = Utc::now() - Duration::hours(1);
    let other = KeyRole::OtherSubscription {
        subscription_id: "sub-2".into(),
        previous: false,
    };
    let cases: Vec<(Diagnosis, &[&str])> = vec![
        (
            Diagnosis::Matches {
                key: KeyRole::Current,
            },
            &["the current key", "exactly as signed"],
        ),
        (
            Diagnosis::Matches {
                key: KeyRole::Previous {
                    replaced_at,
                    in_grace: false,
                },
            },
            &[
                "previous key",
                "no longer verifying",
                "give it the current one",
            ],
        ),
        (
            Diagnosis::Matches { key: other.clone() },
            &["subscription `sub-2`", "another subscription's key"],
        ),
        (
            Diagnosis::BodyReserialised {
                layout: JsonLayout::PrettySortedKeys,
                key: KeyRole::Current,
            },
            &["sorted keys", "re-serialised"],
        ),
        (
            Diagnosis::TrailingNewline {
                change: NewlineChange::Removed,
                key: KeyRole::Current,
            },
            &["trailing newline that did not arrive"],
        ),
        (
            Diagnosis::TextEncoding {
                change: EncodingChange::Latin1ToUtf8,
                key: KeyRole::Current,
            },
            &["Latin-1", "UTF-8"],
        ),
        (
            Diagnosis::SignatureEncoding {
                form: SignatureForm::Hex,
                key: other,
            },
            &["hexadecimal", "standard Base64"],
        ),
        (
            Diagnosis::KeyBreaksRule {
                key: KeyRole::Current,
                problems: vec![SigningKeyProblem::NoDigit],
            },
            &["The current key does not meet", "rotate it"],
        ),
        (Diagnosis::MissingSignature, &["No Svc-Signature"]),
        (Diagnosis::MissingSubscription, &["No Svc-SubscriptionId"]),
        (
            Diagnosis::UnknownSubscription,
            &["no key for this subscription"],
        ),
        (Diagnosis::BodyNotKept, &["not kept"]),
        (
            Diagnosis::NoExplanation,
            &["No known key gives this signature"],
        ),
    ];
    for (diagnosis, words) in cases {
        let sentence = diagnosis.to_string();
        assert!(sentence.starts_with(char::is_uppercase), "{sentence}");
        assert!(sentence.ends_with('.'), "{sentence}");
        for word in words {
            assert!(sentence.contains(word), "{diagnosis:?}: {sentence}");
        }
        assert!(!sentence.contains(KEY) && !sentence.contains(OTHER_KEY));
    }
}

#[test]
fn a_pasted_key_is_tried_and_named_but_never_makes_a_notification_valid() {
    let keys = keys();
    let sender = "Sender#Key0123456789abcdefghijKLMNO";
    let body = COMPACT.as_bytes();
    let signature = sign(sender.as_bytes(), body);
    let pasted = partner_api::Secret::new(sender);
    let report = diagnose_with(
        Some(body),
        Some(&signature),
        Some(SUB),
        &keys,
        Some(&pasted),
        Utc::now(),
    );
    assert!(!report.valid, "only the subscription's keys verify");
    assert_eq!(
        report.diagnoses,
        vec![Diagnosis::Matches {
            key: KeyRole::Pasted
        }]
    );
    assert!(report.diagnoses[0]
        .to_string()
        .starts_with("The signature matches the pasted key: the sender signs with it"));
    assert!(
        !format!("{report:?}").contains(sender),
        "never shows the key"
    );

    // Re-serialised after signing with the pasted key: the same diagnosis as for a known key.
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_slice::<serde_json::Value>(body).unwrap())
            .unwrap();
    let report = diagnose_with(
        Some(pretty.as_bytes()),
        Some(&signature),
        Some(SUB),
        &keys,
        Some(&pasted),
        Utc::now(),
    );
    assert!(
        report.diagnoses.iter().any(|d| matches!(
            d,
            Diagnosis::BodyReserialised {
                key: KeyRole::Pasted,
                ..
            }
        )),
        "{:?}",
        report.diagnoses
    );

    // Without it, nothing known explains the signature.
    let report = diagnose(Some(body), Some(&signature), Some(SUB), &keys, Utc::now());
    assert_eq!(report.diagnoses, vec![Diagnosis::NoExplanation]);
}

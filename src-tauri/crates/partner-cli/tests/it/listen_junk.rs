//! `partner listen --max-captures`, `--max-bytes` and `--junk-rate` as a process (issue #46):
//! a flood of junk past the rate is answered, counted and said on stderr, and the signed
//! notifications among it are all kept; sizes and rates are read as people write them.

use crate::listen::{listen, terminate, KEY, SUB};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::{CaptureFilter, StoreReader, Verdict};
use std::process::Command;

#[tokio::test]
async fn a_flood_of_junk_is_counted_on_stderr_and_the_signed_ones_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let listening = listen(
        &db,
        &[
            "--max-captures",
            "100",
            "--max-bytes",
            "2GiB",
            "--junk-rate",
            "5/s",
        ],
    );
    let client = reqwest::Client::new();
    let base = listening.url.trim_end_matches("/webhooks").to_string();
    for i in 0..300 {
        let status = client
            .get(format!("{base}/wp-login.php?i={i}"))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 404);
        if i % 30 == 0 {
            let body = format!(r#"{{"eventId":"ev-{i}"}}"#).into_bytes();
            let status = client
                .post(&listening.url)
                .header(SUBSCRIPTION_HEADER, SUB)
                .header(SIGNATURE_HEADER, sign(KEY.as_bytes(), &body))
                .body(body)
                .send()
                .await
                .unwrap()
                .status();
            assert_eq!(status, 200);
        }
    }
    let output = terminate(listening);
    let line = output
        .lines()
        .find(|line| line.contains("counted and not stored"))
        .unwrap_or_else(|| panic!("no junk line in {output}"));
    assert!(line.contains("past 5/s"), "{line}");
    let reader = StoreReader::open_keyed(&db, Some(crate::data_at_rest::folder_key(&db))).unwrap();
    let valid = CaptureFilter {
        verdicts: vec![Verdict::Valid],
        ..CaptureFilter::default()
    };
    assert_eq!(
        reader.count(&valid).unwrap(),
        10,
        "every signed one is kept"
    );
    let everything = reader.count(&CaptureFilter::default()).unwrap();
    assert!(
        everything < 100,
        "the junk past the rate was counted, not stored: {everything}"
    );
}

#[test]
fn sizes_and_rates_that_are_not_are_refused_with_words() {
    for (flag, value, words) in [
        ("--max-bytes", "2 parsecs", "is not a size"),
        ("--junk-rate", "fast", "is not a rate"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_partner"))
            .args(["listen", "--addr", "127.0.0.1:0", flag, value, "--db"])
            .arg(tempfile::tempdir().unwrap().path().join("x.db"))
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(words), "{stderr}");
    }
}

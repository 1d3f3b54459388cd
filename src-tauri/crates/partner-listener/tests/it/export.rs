//! Export then import gives the same captures; the HAR export has the HAR 1.2 structure.

use crate::support::*;
use partner_listener::export::{
    export, har, import_jsonl, jsonl_captures, read_jsonl, ExportFormat,
};
use partner_listener::{CaptureFilter, ListenerConfig, Retention, Store, Verdict};
use serde_json::Value;

async fn a_mixed_store() -> Running {
    let running = start(ListenerConfig {
        body_limit: 4096,
        ..ListenerConfig::default()
    })
    .await;
    let client = reqwest::Client::new();
    post_signed(&client, &running.url, SUB, KEY, tx_body("x-1")).await;
    post_signed(&client, &running.url, SUB, KEY, tx_body("x-1")).await;
    post_signed(&client, &running.url, SUB, OTHER_KEY, tx_body("x-2")).await;
    post_signed(
        &client,
        &running.url,
        SUB,
        KEY,
        vec![0xff, 0xfe, 0x00, b'{'],
    )
    .await;
    post_signed(&client, &running.url, SUB, KEY, vec![b'a'; 5000]).await;
    post_signed(
        &client,
        &format!("{}/elsewhere?a=1&b=two", running.base()),
        SUB,
        KEY,
        tx_body("x-3"),
    )
    .await;
    running
}

fn all(store: &Store) -> Vec<partner_listener::Capture> {
    store
        .query(&CaptureFilter::default(), 0, 1000)
        .unwrap()
        .items
}

#[tokio::test]
async fn json_lines_round_trip_gives_the_same_captures() {
    let running = a_mixed_store().await;
    let store = running.listener.store();
    let mut out = Vec::new();
    let written = export(
        store,
        &CaptureFilter::default(),
        ExportFormat::JsonLines,
        &mut out,
    )
    .unwrap();
    assert_eq!(written, 6);
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 6);

    let dir = tempfile::tempdir().unwrap();
    let fresh = Store::open(dir.path().join("imported.db"), Retention::default()).unwrap();
    let report = import_jsonl(&fresh, out.as_slice()).await.unwrap();
    assert_eq!((report.imported, report.skipped), (6, 0));
    let original = all(store);
    assert_eq!(all(&fresh), original);
    assert!(original
        .iter()
        .any(|c| c.body.as_deref() == Some([0xff, 0xfe, 0x00, b'{'].as_slice())));
    assert!(original
        .iter()
        .any(|c| c.verdict == Verdict::TooLarge && c.body.is_none()));

    // Importing again skips what is there; a filtered export takes only what matches.
    let again = import_jsonl(&fresh, out.as_slice()).await.unwrap();
    assert_eq!((again.imported, again.skipped), (0, 6));
    let mut valid_only = Vec::new();
    let filter = CaptureFilter {
        verdicts: vec![Verdict::Valid],
        ..Default::default()
    };
    assert_eq!(
        export(store, &filter, ExportFormat::JsonLines, &mut valid_only).unwrap(),
        2
    );

    // Read one at a time: blank lines skipped, each capture with its line's number and
    // length; after a damaged line the reader says which one.
    let lines: Vec<&[u8]> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut spaced = Vec::new();
    for line in &lines[..2] {
        spaced.extend_from_slice(line);
        spaced.extend_from_slice(b"\n  \n");
    }
    spaced.extend_from_slice(b"{\"id\": 9}\n");
    spaced.extend_from_slice(lines[2]);
    let read: Vec<_> = jsonl_captures(spaced.as_slice()).collect();
    assert_eq!(
        read.len(),
        4,
        "two captures, the damaged line, the capture after it"
    );
    let first = read[0].as_ref().unwrap();
    let second = read[1].as_ref().unwrap();
    assert_eq!((first.number, first.bytes), (1, lines[0].len()));
    assert_eq!((second.number, second.bytes), (3, lines[1].len()));
    let whole = read_jsonl(out.as_slice()).unwrap();
    assert_eq!([&first.capture, &second.capture], [&whole[0], &whole[1]]);
    let damaged_at = read[2].as_ref().unwrap_err().to_string();
    assert!(damaged_at.contains("line 5"), "{damaged_at}");

    // A damaged line is named.
    let damaged = b"{\"id\": 1}\n".as_slice();
    let error = read_jsonl(damaged).unwrap_err().to_string();
    assert!(error.contains("line 1"), "{error}");
    assert!(ExportFormat::parse("xml").is_err());
    running.stop().await;
}

fn is_array(v: &Value) -> bool {
    v.is_array()
}

/// The required fields and types of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/).
fn validate_har(doc: &Value) {
    let log = &doc["log"];
    assert_eq!(log["version"], "1.2");
    assert!(log["creator"]["name"].is_string() && log["creator"]["version"].is_string());
    for entry in log["entries"].as_array().unwrap() {
        let started = entry["startedDateTime"].as_str().unwrap();
        chrono::DateTime::parse_from_rfc3339(started).unwrap();
        assert!(entry["time"].is_number());
        let request = &entry["request"];
        assert!(request["method"].is_string());
        url::Url::parse(request["url"].as_str().unwrap()).unwrap();
        assert!(request["httpVersion"].is_string());
        for list in ["cookies", "headers", "queryString"] {
            assert!(is_array(&request[list]), "request.{list}");
        }
        for header in request["headers"].as_array().unwrap() {
            assert!(header["name"].is_string() && header["value"].is_string());
        }
        assert!(request["headersSize"].is_i64() && request["bodySize"].is_i64());
        if let Some(post) = request.get("postData") {
            assert!(post["mimeType"].is_string() && post["text"].is_string());
        }
        let response = &entry["response"];
        assert!(response["status"].is_u64() && response["statusText"].is_string());
        assert!(response["httpVersion"].is_string());
        assert!(is_array(&response["cookies"]) && is_array(&response["headers"]));
        assert!(
            response["content"]["size"].is_i64() && response["content"]["mimeType"].is_string()
        );
        assert!(response["redirectURL"].is_string());
        assert!(response["headersSize"].is_i64() && response["bodySize"].is_i64());
        assert!(entry["cache"].is_object());
        for timing in ["send", "wait", "receive"] {
            assert!(entry["timings"][timing].is_number(), "timings.{timing}");
        }
    }
}

#[tokio::test]
async fn har_export_has_the_har_structure_and_the_captures() {
    let running = a_mixed_store().await;
    let mut out = Vec::new();
    export(
        running.listener.store(),
        &CaptureFilter::default(),
        ExportFormat::Har,
        &mut out,
    )
    .unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    validate_har(&doc);
    let entries = doc["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 6);
    let first = &entries[0];
    assert_eq!(first["request"]["method"], "POST");
    assert_eq!(
        first["request"]["postData"]["text"]
            .as_str()
            .unwrap()
            .as_bytes(),
        tx_body("x-1")
    );
    assert_eq!(first["response"]["status"], 200);
    assert_eq!(first["response"]["statusText"], "OK");
    let elsewhere = entries
        .iter()
        .find(|e| e["response"]["status"] == 404)
        .unwrap();
    assert_eq!(
        elsewhere["request"]["queryString"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(elsewhere["request"]["url"]
        .as_str()
        .unwrap()
        .ends_with("/elsewhere?a=1&b=two"));
    let too_large = entries
        .iter()
        .find(|e| e["response"]["status"] == 413)
        .unwrap();
    assert!(too_large["request"].get("postData").is_none());
    assert_eq!(har(&[])["log"]["entries"].as_array().unwrap().len(), 0);
    running.stop().await;
}

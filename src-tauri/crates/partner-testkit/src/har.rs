//! A checker of HAR 1.2 documents (<http://www.softwareishard.com/blog/har-12-spec/>) for tests
//! of the exports: every field the spec marks required, with its JSON type.

use serde_json::Value;

/// Every breach of HAR 1.2's required fields in `document`, as `path: what`; empty when valid.
pub fn har_1_2_problems(document: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut need = |value: &Value, path: &str, kind: Kind| {
        if !kind.fits(value.pointer(path)) {
            problems.push(format!("{path}: {}", kind.name()));
        }
    };
    need(document, "/log", Kind::Object);
    need(document, "/log/version", Kind::Text);
    need(document, "/log/creator/name", Kind::Text);
    need(document, "/log/creator/version", Kind::Text);
    need(document, "/log/entries", Kind::Array);
    if document.pointer("/log/version").and_then(Value::as_str) != Some("1.2") {
        problems.push("/log/version: not \"1.2\"".into());
    }
    let entries = document
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, entry) in entries.iter().enumerate() {
        let mut need = |path: &str, kind: Kind| {
            if !kind.fits(entry.pointer(path)) {
                problems.push(format!("/log/entries/{i}{path}: {}", kind.name()));
            }
        };
        need("/startedDateTime", Kind::Text);
        need("/time", Kind::Number);
        need("/request/method", Kind::Text);
        need("/request/url", Kind::Text);
        need("/request/httpVersion", Kind::Text);
        need("/request/cookies", Kind::Array);
        need("/request/headers", Kind::Array);
        need("/request/queryString", Kind::Array);
        need("/request/headersSize", Kind::Number);
        need("/request/bodySize", Kind::Number);
        need("/response/status", Kind::Number);
        need("/response/statusText", Kind::Text);
        need("/response/httpVersion", Kind::Text);
        need("/response/cookies", Kind::Array);
        need("/response/headers", Kind::Array);
        need("/response/content", Kind::Object);
        need("/response/content/size", Kind::Number);
        need("/response/content/mimeType", Kind::Text);
        need("/response/redirectURL", Kind::Text);
        need("/response/headersSize", Kind::Number);
        need("/response/bodySize", Kind::Number);
        need("/cache", Kind::Object);
        need("/timings/send", Kind::Number);
        need("/timings/wait", Kind::Number);
        need("/timings/receive", Kind::Number);
        for list in [
            "/request/headers",
            "/request/queryString",
            "/request/cookies",
            "/response/headers",
            "/response/cookies",
        ] {
            for (j, pair) in entry
                .pointer(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                for field in ["/name", "/value"] {
                    if !Kind::Text.fits(pair.pointer(field)) {
                        problems.push(format!("/log/entries/{i}{list}/{j}{field}: text"));
                    }
                }
            }
        }
        if let Some(post) = entry.pointer("/request/postData") {
            if !Kind::Text.fits(post.pointer("/mimeType")) {
                problems.push(format!("/log/entries/{i}/request/postData/mimeType: text"));
            }
            if !Kind::Text.fits(post.pointer("/text")) && !Kind::Array.fits(post.pointer("/params"))
            {
                problems.push(format!("/log/entries/{i}/request/postData: text or params"));
            }
        }
        let started = entry.pointer("/startedDateTime").and_then(Value::as_str);
        if let Some(started) = started {
            if !looks_like_iso_8601(started) {
                problems.push(format!(
                    "/log/entries/{i}/startedDateTime: ISO 8601 date and time"
                ));
            }
        }
    }
    problems
}

/// `YYYY-MM-DDThh:mm:ss` with a fraction and a zone or not: the shape HAR asks for.
fn looks_like_iso_8601(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10)
        && bytes.get(10) == Some(&b'T')
        && digits(11..13)
        && bytes.get(13) == Some(&b':')
        && digits(14..16)
        && bytes.get(16) == Some(&b':')
        && digits(17..19)
}

#[derive(Clone, Copy)]
enum Kind {
    Object,
    Array,
    Text,
    Number,
}

impl Kind {
    fn fits(self, value: Option<&Value>) -> bool {
        match (self, value) {
            (Kind::Object, Some(v)) => v.is_object(),
            (Kind::Array, Some(v)) => v.is_array(),
            (Kind::Text, Some(v)) => v.is_string(),
            (Kind::Number, Some(v)) => v.is_number(),
            (_, None) => false,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Object => "object required",
            Kind::Array => "array required",
            Kind::Text => "string required",
            Kind::Number => "number required",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_missing_field_and_accepts_a_whole_entry() {
        let entry = serde_json::json!({
            "startedDateTime": "2024-05-01T10:00:00.000Z", "time": 1.5,
            "request": {"method": "POST", "url": "http://h/", "httpVersion": "HTTP/1.1",
                "cookies": [], "headers": [{"name": "a", "value": "b"}], "queryString": [],
                "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                "cookies": [], "headers": [], "content": {"size": 0, "mimeType": "text/plain"},
                "redirectURL": "", "headersSize": -1, "bodySize": 0},
            "cache": {}, "timings": {"send": 0, "wait": 1.5, "receive": 0}
        });
        let mut doc = serde_json::json!({"log": {"version": "1.2",
            "creator": {"name": "t", "version": "1"}, "entries": [entry]}});
        assert_eq!(har_1_2_problems(&doc), Vec::<String>::new());
        doc["log"]["entries"][0]["response"]
            .as_object_mut()
            .map(|r| r.remove("redirectURL"));
        doc["log"]["entries"][0]["timings"]["wait"] = "soon".into();
        assert_eq!(
            har_1_2_problems(&doc),
            vec![
                "/log/entries/0/response/redirectURL: string required".to_string(),
                "/log/entries/0/timings/wait: number required".to_string()
            ]
        );
    }
}

//! The workspace's live feed (`GET /api/v1/captures/live`): every capture any server of the
//! workspace commits, as Server-Sent Events (`event: capture`, `id:` its id, the data its JSON),
//! read as the local store's [`Capture`].
//!
//! Why a client of its own for it: the workspace's calls have a deadline for the whole answer
//! ([`crate::client::CALL_TIMEOUT`]), and a feed's answer never ends. This one has a deadline
//! for the connection and one for silence instead ([`SILENCE`]): the server sends a keep-alive
//! comment every 15 s, so a feed quiet for longer is a dead connection, not a quiet workspace.
//! Reconnecting is the caller's (the app's feed does it with a backoff), from the last id it
//! read ([`LiveFeed::last_id`]), so nothing falls between two connections.

use crate::client::WorkspaceClient;
use crate::error::{Error, Result};
use partner_listener::Capture;
use std::time::Duration;

/// A feed that says nothing for this long (not even the server's keep-alive) is given up.
pub const SILENCE: Duration = Duration::from_secs(45);
/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(10);
/// The most one event may hold (a capture's body is at most 1 MiB, Base64 in its JSON).
const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// One open feed.
pub struct LiveFeed {
    response: reqwest::Response,
    parser: SseParser,
    last_id: Option<i64>,
}

impl std::fmt::Debug for LiveFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFeed")
            .field("last_id", &self.last_id)
            .finish_non_exhaustive()
    }
}

impl WorkspaceClient {
    /// Opens the live feed: the captures committed after the id `after`, or, without one,
    /// those committed from now on.
    pub async fn captures_live(&self, after: Option<i64>) -> Result<LiveFeed> {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT)
            .read_timeout(SILENCE)
            .build()
            .map_err(|error| Error::Usage(format!("no HTTP client: {error}")))?;
        let url = format!("{}/api/v1/captures/live", self.describe());
        let mut request = http
            .get(&url)
            .bearer_auth(self.token().expose())
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(after) = after {
            request = request.query(&[("after", after)]);
        }
        let response = request.send().await.map_err(|error| {
            Error::Unreachable(format!("{} could not be reached: {error}", self.describe()))
        })?;
        let status = response.status();
        if !status.is_success() {
            let body = response.bytes().await.unwrap_or_default();
            return Err(Error::from_answer(status.as_u16(), &body, None));
        }
        Ok(LiveFeed {
            response,
            parser: SseParser::default(),
            last_id: after,
        })
    }
}

impl LiveFeed {
    /// The next capture; `None` when the server ended the feed (it stopped). An error when the
    /// connection broke or went silent, or an event is not what this version reads.
    pub async fn next(&mut self) -> Result<Option<Capture>> {
        loop {
            while let Some(event) = self.parser.next_event()? {
                if event.name != "capture" {
                    continue;
                }
                let capture: Capture = serde_json::from_str(&event.data).map_err(|error| {
                    Error::Unreadable(format!(
                        "a live capture is not what this version reads: {error}"
                    ))
                })?;
                self.last_id = Some(capture.id);
                return Ok(Some(capture));
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.parser.push(&bytes)?,
                Ok(None) => return Ok(None),
                Err(error) => {
                    return Err(Error::Unreachable(format!(
                        "the workspace's live feed broke off: {error}"
                    )))
                }
            }
        }
    }

    /// The id of the last capture read (or the `after` it was opened with): where a new feed
    /// goes on from.
    pub fn last_id(&self) -> Option<i64> {
        self.last_id
    }
}

/// One Server-Sent Event: its name (`message` when none is given) and its data lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SseEvent {
    name: String,
    data: String,
}

/// Reads Server-Sent Events from bytes as they arrive (a line may be split across chunks).
#[derive(Debug, Default)]
struct SseParser {
    buffer: Vec<u8>,
    name: Option<String>,
    data: Option<String>,
}

impl SseParser {
    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        if self.buffer.len() + bytes.len() > MAX_EVENT_BYTES {
            return Err(Error::Unreadable(format!(
                "a live event is larger than {MAX_EVENT_BYTES} bytes"
            )));
        }
        self.buffer.extend_from_slice(bytes);
        Ok(())
    }

    /// The next whole event in what was pushed, if any.
    fn next_event(&mut self) -> Result<Option<SseEvent>> {
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8(line)
                .map_err(|_| Error::Unreadable("a live event is not UTF-8 text".to_string()))?;
            if line.is_empty() {
                let name = self.name.take();
                if let Some(data) = self.data.take() {
                    return Ok(Some(SseEvent {
                        name: name.unwrap_or_else(|| "message".to_string()),
                        data,
                    }));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => self.name = Some(value.to_string()),
                "data" => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                },
                _ => {}
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&str]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut found = Vec::new();
        for chunk in chunks {
            parser.push(chunk.as_bytes()).expect("push");
            while let Some(event) = parser.next_event().expect("event") {
                found.push(event);
            }
        }
        found
    }

    #[test]
    fn events_split_anywhere_read_whole_and_comments_are_skipped() {
        let found = events(&[
            ":keep-alive\n\nevent: cap",
            "ture\nid: 7\r\ndata: {\"a\":",
            "1}\n\n",
            "data: one\ndata: two\n\n",
        ]);
        assert_eq!(
            found,
            [
                SseEvent {
                    name: "capture".into(),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    name: "message".into(),
                    data: "one\ntwo".into()
                }
            ]
        );
    }

    #[test]
    fn an_event_without_its_blank_line_is_not_yet_read() {
        assert!(events(&["event: capture\ndata: {}\n"]).is_empty());
    }

    #[test]
    fn an_endless_line_is_refused_rather_than_held() {
        let mut parser = SseParser::default();
        let chunk = vec![b'x'; 1024 * 1024];
        let mut refused = false;
        for _ in 0..10 {
            if parser.push(&chunk).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused);
    }
}

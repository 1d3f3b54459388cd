//! The team's webhook endpoint: each request judged as the local listener judges it (the same
//! [`partner_listener::judge_at`] over the exact bytes, the same verdicts, statuses and junk
//! meter), stored through the [`CaptureWriter`] and answered only once committed.
//!
//! Why not the listener's own hyper server: it stores into the local SQLite store and feeds an
//! in-process live view; here the store is PostgreSQL, shared by several servers, and the live
//! view is every server's (LISTEN/NOTIFY). What decides a verdict is the listener's, called
//! from here, so the two cannot judge a notification differently.

use crate::capture_writer::CaptureWriter;
use crate::signing_keys::WorkspaceKeys;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use http_body_util::{BodyExt as _, Limited};
use partner_api::signature::{SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_listener::capture::header_value;
use partner_listener::outbound::{marks_replay, REPLAY_HEADER};
use partner_listener::verdict::Judgement;
use partner_listener::{
    Capture, Fate, Header, JunkFlood, NotificationFields, ResponseRecord, RetentionClass, Verdict,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the endpoint takes requests.
#[derive(Debug, Clone)]
pub struct IntakeConfig {
    /// The webhook path (`/webhooks`).
    pub path: String,
    /// Bodies over this are recorded without their bytes (413).
    pub body_limit: usize,
    /// A body not received whole in this time is `incomplete` (408).
    pub body_read_timeout: Duration,
}

impl Default for IntakeConfig {
    fn default() -> Self {
        Self {
            path: "/webhooks".into(),
            body_limit: partner_listener::DEFAULT_BODY_LIMIT,
            body_read_timeout: Duration::from_secs(30),
        }
    }
}

/// What the endpoint's handler shares.
#[derive(Debug)]
pub struct Intake {
    pub config: IntakeConfig,
    pub keys: WorkspaceKeys,
    pub writer: CaptureWriter,
    pub flood: JunkFlood,
}

enum BodyRead {
    Complete(Vec<u8>),
    TooLarge(u64),
    Incomplete,
}

/// Takes one request on the webhook path, or junk on any path the API does not serve.
pub async fn take(
    State(intake): State<Arc<Intake>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request<Body>,
) -> Response {
    let started = Instant::now();
    let received_at = Utc::now();
    let (parts, body) = request.into_parts();
    let headers: Vec<Header> = parts
        .headers
        .iter()
        .map(|(name, value)| Header::new(name.as_str(), String::from_utf8_lossy(value.as_bytes())))
        .collect();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let limit = intake.config.body_limit;
    let announced: Option<u64> =
        header_value(&headers, "content-length").and_then(|v| v.trim().parse().ok());
    let read = if let Some(size) = announced.filter(|&n| n > limit as u64) {
        BodyRead::TooLarge(size)
    } else {
        match tokio::time::timeout(
            intake.config.body_read_timeout,
            Limited::new(body, limit).collect(),
        )
        .await
        {
            Ok(Ok(collected)) => BodyRead::Complete(collected.to_bytes().to_vec()),
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
                BodyRead::TooLarge(limit as u64 + 1)
            }
            Ok(Err(_)) | Err(_) => BodyRead::Incomplete,
        }
    };
    let (status, answer) = judged_and_stored(
        &intake,
        Arrived {
            started,
            received_at,
            is_post: parts.method == axum::http::Method::POST,
            method: parts.method.to_string(),
            uri_path: parts.uri.path().to_string(),
            path,
            headers,
            read,
            peer: Some(peer.to_string()),
        },
    )
    .await;
    text(status, answer)
}

/// Takes a notification made on this server (a missed one recovered, `crate::missed`) as if it
/// had been POSTed to the webhook path: the same verdict over the same bytes, the same store,
/// the same answer, whose status is returned. It comes over no connection, so it has no peer;
/// and it reaches the workspace whatever stands in front of the servers (TLS, a proxy, an
/// address bound to every interface), which a request to its own URL would not always.
pub async fn take_made_here(intake: &Intake, headers: Vec<Header>, body: Vec<u8>) -> u16 {
    let path = intake.config.path.clone();
    let (status, _) = judged_and_stored(
        intake,
        Arrived {
            started: Instant::now(),
            received_at: Utc::now(),
            is_post: true,
            method: axum::http::Method::POST.to_string(),
            uri_path: path.clone(),
            path,
            headers,
            read: BodyRead::Complete(body),
            peer: None,
        },
    )
    .await;
    status
}

/// A request as it arrived, its body read (or not).
struct Arrived {
    started: Instant,
    received_at: chrono::DateTime<Utc>,
    is_post: bool,
    method: String,
    /// The path alone, which decides whether it is the webhook path.
    uri_path: String,
    /// The path with its query, as captured.
    path: String,
    headers: Vec<Header>,
    read: BodyRead,
    peer: Option<String>,
}

/// Judges `arrived` and stores it; the status and body to answer with.
async fn judged_and_stored(intake: &Intake, arrived: Arrived) -> (u16, &'static str) {
    let Arrived {
        started,
        received_at,
        is_post,
        method,
        uri_path,
        path,
        headers,
        read,
        peer,
    } = arrived;
    let on_path = uri_path.trim_end_matches('/') == intake.config.path.trim_end_matches('/');
    let subscription_id = header_value(&headers, SUBSCRIPTION_HEADER).map(str::to_string);
    let (body, body_size, judgement) = match read {
        BodyRead::TooLarge(size) => (None, size, plain(Verdict::TooLarge, &[])),
        BodyRead::Incomplete => (None, 0, plain(Verdict::Incomplete, &[])),
        BodyRead::Complete(bytes) => {
            let judgement = if !on_path {
                plain(Verdict::WrongPath, &bytes)
            } else if !is_post {
                plain(Verdict::WrongMethod, &bytes)
            } else {
                partner_listener::judge_at(
                    header_value(&headers, SIGNATURE_HEADER),
                    subscription_id.as_deref(),
                    Some(uri_path.as_str()),
                    &bytes,
                    &intake.keys,
                    received_at,
                )
            };
            let size = bytes.len() as u64;
            (Some(bytes), size, judgement)
        }
    };
    let (status, answer) = judgement.verdict.response();
    // Junk past the rate: answered as always, counted, not stored (the listener's meter).
    if judgement.verdict.retention_class() == RetentionClass::Junk
        && intake.flood.fate(judgement.verdict) == Fate::Summarise
    {
        return (status, answer);
    }
    let capture = Capture {
        id: 0,
        received_at,
        method,
        path,
        replay: header_value(&headers, REPLAY_HEADER).is_some_and(marks_replay),
        headers,
        body,
        body_size,
        peer,
        verdict: judgement.verdict,
        matched_key: judgement.matched_key,
        subscription_id,
        fields: judgement.fields,
        attempt: 0,
        notification_id: None,
        response: ResponseRecord {
            status,
            body: answer.to_string(),
            from_test_mode: false,
            delay_ms: 0,
        },
        processing_micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    match intake.writer.insert(capture).await {
        Ok(_) => (status, answer),
        // Not committed means not acknowledged: the sender will retry.
        Err(_) => (503, "storage unavailable\n"),
    }
}

fn plain(verdict: Verdict, body: &[u8]) -> Judgement {
    Judgement {
        verdict,
        matched_key: None,
        fields: NotificationFields::read(body).0,
    }
}

fn text(status: u16, body: &'static str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

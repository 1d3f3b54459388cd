//! Captures into PostgreSQL, acknowledged once committed, many to a commit.
//!
//! Why one writer task per server: each request's task hands its capture over and waits; the
//! writer takes whatever is queued (up to [`MAX_BATCH`]), numbers the attempts, inserts them in
//! one statement and commits once, then answers every waiting task. A commit is the expensive
//! part (PostgreSQL flushes its WAL), so under load one flush serves many notifications, and
//! alone a notification waits for no one. Only then is the sender answered 2xx: a server killed
//! mid-batch acknowledged nothing of it, and the service retries.
//!
//! Attempts are numbered in the database, not in memory: several servers take the same
//! notification's retries, so the count is one row per notification (`notifications`), upserted
//! in the commit that stores the attempt. The same commit sends `NOTIFY partner_captures` with
//! the newest id, which every server's live feeds wait on ([`crate::live`]).

use crate::error::{Error, Result};
use partner_listener::Capture;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

/// The most captures one commit takes.
pub const MAX_BATCH: usize = 256;
/// The channel each commit notifies, with the newest capture's id.
pub const CAPTURES_CHANNEL: &str = "partner_captures";
/// Requests waiting for the writer, past which a new one is answered 503 (the sender retries)
/// rather than held in memory.
const QUEUE: usize = 4096;

struct Pending {
    capture: Capture,
    done: oneshot::Sender<Result<Capture>>,
}

/// The handle request tasks queue captures on.
#[derive(Debug, Clone)]
pub struct CaptureWriter {
    queue: mpsc::Sender<Pending>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").finish_non_exhaustive()
    }
}

impl CaptureWriter {
    /// Starts the writer task on the current runtime.
    pub fn start(pool: PgPool) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(run(pool, receiver));
        Self { queue }
    }

    /// Stores one capture; answers once it is committed, with its id, attempt and notification.
    pub async fn insert(&self, capture: Capture) -> Result<Capture> {
        let (done, answer) = oneshot::channel();
        self.queue
            .try_send(Pending { capture, done })
            .map_err(|_| Error::Database("the capture writer is busy or stopped".into()))?;
        answer
            .await
            .map_err(|_| Error::Database("the capture writer stopped".into()))?
    }
}

async fn run(pool: PgPool, mut receiver: mpsc::Receiver<Pending>) {
    let mut batch: Vec<Pending> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = receiver.recv().await {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let mut captures: Vec<Capture> = batch.iter().map(|p| p.capture.clone()).collect();
        match write(&pool, &mut captures).await {
            Ok(()) => {
                for (pending, stored) in batch.drain(..).zip(captures) {
                    let _ = pending.done.send(Ok(stored));
                }
            }
            Err(error) => {
                tracing::error!(%error, "a batch of captures could not be committed");
                for pending in batch.drain(..) {
                    let _ = pending.done.send(Err(Error::Database(error.to_string())));
                }
            }
        }
    }
}

/// Inserts `captures` in one transaction, setting their ids, attempts and notifications.
pub(crate) async fn write(pool: &PgPool, captures: &mut [Capture]) -> Result<()> {
    let mut tx = pool.begin().await?;
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT nextval('captures_id_seq') FROM generate_series(1, $1)")
            .bind(i32::try_from(captures.len()).unwrap_or(i32::MAX))
            .fetch_all(&mut *tx)
            .await?;
    for (capture, id) in captures.iter_mut().zip(&ids) {
        capture.id = *id;
        capture.attempt = 1;
        capture.notification_id = None;
        if let Some((subscription, resource_type, event_id)) = capture.notification_of() {
            let (attempts, first): (i32, i64) = sqlx::query_as(
                "INSERT INTO notifications AS n \
                 (subscription_id, resource_type, event_id, attempts, first_capture_id) \
                 VALUES ($1, $2, $3, 1, $4) \
                 ON CONFLICT (subscription_id, resource_type, event_id) \
                 DO UPDATE SET attempts = n.attempts + 1 \
                 RETURNING attempts, first_capture_id",
            )
            .bind(crate::captures::without_nul(subscription))
            .bind(crate::captures::without_nul(resource_type))
            .bind(crate::captures::without_nul(event_id))
            .bind(*id)
            .fetch_one(&mut *tx)
            .await?;
            capture.attempt = u32::try_from(attempts).unwrap_or(1);
            capture.notification_id = Some(first);
        }
    }
    let mut columns = Columns::default();
    for capture in captures.iter() {
        columns.push(capture)?;
    }
    sqlx::query(
        "INSERT INTO captures (id, received_at, verdict, subscription_id, event_type, \
         resource_type, event_id, attempt, notification_id, status, record, search) \
         SELECT id, received_at, verdict, subscription_id, event_type, resource_type, event_id, \
         attempt, notification_id, status, record, to_tsvector('simple', words) \
         FROM UNNEST($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], \
         $6::text[], $7::text[], $8::int[], $9::bigint[], $10::smallint[], $11::bytea[], \
         $12::text[]) AS t(id, received_at, verdict, subscription_id, event_type, \
         resource_type, event_id, attempt, notification_id, status, record, words)",
    )
    .bind(&ids)
    .bind(&columns.received_at)
    .bind(&columns.verdict)
    .bind(&columns.subscription_id)
    .bind(&columns.event_type)
    .bind(&columns.resource_type)
    .bind(&columns.event_id)
    .bind(&columns.attempt)
    .bind(&columns.notification_id)
    .bind(&columns.status)
    .bind(&columns.record)
    .bind(&columns.words)
    .execute(&mut *tx)
    .await?;
    if let Some(newest) = ids.iter().max() {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CAPTURES_CHANNEL)
            .bind(newest.to_string())
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The batch as one array per column, for `UNNEST`.
#[derive(Default)]
struct Columns {
    received_at: Vec<chrono::DateTime<chrono::Utc>>,
    verdict: Vec<String>,
    subscription_id: Vec<Option<String>>,
    event_type: Vec<Option<String>>,
    resource_type: Vec<Option<String>>,
    event_id: Vec<Option<String>>,
    attempt: Vec<i32>,
    notification_id: Vec<Option<i64>>,
    status: Vec<i16>,
    record: Vec<Vec<u8>>,
    words: Vec<String>,
}

impl Columns {
    fn push(&mut self, capture: &Capture) -> Result<()> {
        self.received_at.push(capture.received_at);
        self.verdict.push(capture.verdict.as_str().to_string());
        // PostgreSQL's text holds no NUL, which a junk request may send: the columns are
        // what filters match (the record keeps everything exactly).
        let column = |value: &Option<String>| value.as_deref().map(crate::captures::without_nul);
        self.subscription_id.push(column(&capture.subscription_id));
        self.event_type.push(column(&capture.fields.event_type));
        self.resource_type
            .push(column(&capture.fields.resource_type));
        self.event_id.push(column(&capture.fields.event_id));
        self.attempt
            .push(i32::try_from(capture.attempt).unwrap_or(i32::MAX));
        self.notification_id.push(capture.notification_id);
        self.status
            .push(i16::try_from(capture.response.status).unwrap_or(i16::MAX));
        self.record.push(
            serde_json::to_vec(capture)
                .map_err(|error| Error::Database(format!("a capture as JSON: {error}")))?,
        );
        self.words.push(crate::captures::search_words(capture));
        Ok(())
    }
}

//! The webhook dispatcher: every notification the sandbox fires goes out through here.
//!
//! Why it is shaped so:
//! - [`Dispatcher::enqueue`] is a plain function that never blocks and never fails, so an API
//!   call that fires notifications answers at once whatever the receivers do. Each notification
//!   becomes its own task (cheap in Tokio), so a receiver that hangs for its whole timeout never
//!   delays a delivery to another one. A semaphore caps the requests in flight at
//!   [`MAX_IN_FLIGHT`] so a burst cannot exhaust file descriptors; it is held only during an
//!   attempt, never during the wait before a retry.
//! - The body is serialised to bytes once and signed once with
//!   [`partner_api::SignedNotification`]; every attempt sends those very bytes, so a receiver that
//!   deduplicates or verifies sees exactly the same message each time.
//! - The wait before a retry sleeps on the sandbox [`Clock`], so `POST /sandbox/v1/clock/advance`
//!   fires a due retry at once (demos, tests). The deadline is computed and recorded *before*
//!   sleeping on it, so an advance can never slip between the two. The attempt timeout is real
//!   time: a receiver gets its full 30 seconds whatever the sandbox clock says.
//! - Redirects are never followed: the spec's rule is that a status of 200-399 delivers.
//! - At most [`DeliveryConfig::max_pending`] notifications wait for delivery at once (default
//!   [`DEFAULT_MAX_PENDING`]); past it a notification is recorded as discarded, unsent, with
//!   the reason, so a flood of events to receivers that are down cannot exhaust memory.
//! - What happened is kept as [`DeliveryRecord`]s for `GET /sandbox/v1/deliveries`: the newest
//!   [`DEFAULT_RECORD_LIMIT`] only, so a long demo cannot grow memory without end. The records
//!   and the log lines name the subscription, URL, status or error, never the signing key or
//!   the signature.
//! - In the persistent mode (`data_file`) every record is written through to the data file,
//!   with the signed body of a notification still pending. A task sends nothing before the
//!   change that fired it is durable (a receiver never hears of an event a crash then
//!   un-happens), and a notification pending at shutdown (or a kill) is resumed at the next
//!   start ([`Dispatcher::restore`]): waiting out the retry it was waiting for, else attempting
//!   at once with the next attempt number. An attempt in flight at a kill was not recorded, so
//!   its receiver may hear the notification twice (at least once, as the spec promises).

use crate::clock::Clock;
pub use crate::config::{DeliveryConfig, DEFAULT_MAX_PENDING};
use crate::data_file::{Journal, Row, StoredDelivery, Ticket};
pub use crate::delivery_record::{DeliveryAttempt, DeliveryRecord, DeliveryState};
use bytes::Bytes;
use chrono::{DateTime, TimeDelta, Utc};
use partner_api::delivery;
use partner_api::{Notification, Secret, SignedNotification};
use std::collections::VecDeque;
use std::error::Error as _;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How many delivery records are kept by [`Dispatcher::start`]; the oldest go first.
pub const DEFAULT_RECORD_LIMIT: usize = 10_000;

/// How many delivery attempts may be in flight at once, over all receivers.
pub const MAX_IN_FLIGHT: usize = 512;

/// One notification for one subscription.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub subscription_id: String,
    pub url: String,
    pub signing_key: Secret,
    pub notification: Notification,
}

/// Why an attempt got no HTTP status. The text is what a record and a log line show.
#[derive(Debug, thiserror::Error)]
enum AttemptError {
    #[error("timed out after {}", humantime::format_duration(*.0))]
    TimedOut(Duration),
    #[error("connection refused")]
    ConnectionRefused,
    #[error("connection reset")]
    ConnectionReset,
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("request failed: {0}")]
    Request(String),
    #[error("the HTTP client could not be built: {0}")]
    NoClient(String),
    #[error("the body could not be serialised: {0}")]
    Body(String),
}

impl AttemptError {
    /// Names the failure from the innermost cause. `reqwest::Error`'s own text carries the URL,
    /// so it is never used; the URL is in the record anyway.
    fn from_reqwest(error: &reqwest::Error) -> Self {
        let mut innermost: Option<&(dyn std::error::Error + 'static)> = None;
        let mut cause = error.source();
        while let Some(current) = cause {
            if let Some(io) = current.downcast_ref::<std::io::Error>() {
                match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => return Self::ConnectionRefused,
                    std::io::ErrorKind::ConnectionReset => return Self::ConnectionReset,
                    _ => {}
                }
            }
            innermost = Some(current);
            cause = current.source();
        }
        let text = innermost.map_or_else(
            || {
                if error.is_builder() {
                    "the request could not be built".to_owned()
                } else {
                    "unknown error".to_owned()
                }
            },
            |cause| cause.to_string(),
        );
        if error.is_connect() {
            Self::Connect(text)
        } else {
            Self::Request(text)
        }
    }
}

/// Sends notifications and remembers what happened to them. Cheap to clone: clones share the
/// queue and the records.
#[derive(Clone)]
pub struct Dispatcher {
    shared: Arc<Shared>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("config", &self.shared.config)
            .field("deliveries_in_progress", &self.shared.tasks.len())
            .finish_non_exhaustive()
    }
}

struct Shared {
    config: DeliveryConfig,
    clock: Clock,
    shutdown: CancellationToken,
    client: Result<reqwest::Client, String>,
    records: Mutex<Records>,
    /// Bumped on every change of a record, for whoever waits on one (tests, a live view).
    changes: watch::Sender<u64>,
    in_flight: Semaphore,
    tasks: TaskTracker,
    runtime: tokio::runtime::Handle,
    /// The data file's write-through (none in memory).
    journal: Journal,
}

/// The newest records, addressed by a sequence number so a task finds its own in O(1) and
/// finds nothing once it has been evicted.
struct Records {
    limit: usize,
    /// Sequence number of `items[0]`.
    first: u64,
    items: VecDeque<DeliveryRecord>,
}

impl Records {
    /// Adds a record; returns its sequence number and whether older ones were evicted.
    fn push(&mut self, make: impl FnOnce(u64) -> DeliveryRecord) -> (u64, bool) {
        let sequence = self.first + self.items.len() as u64;
        self.items.push_back(make(sequence));
        let mut evicted = false;
        while self.items.len() > self.limit {
            self.items.pop_front();
            self.first += 1;
            evicted = true;
        }
        (sequence, evicted)
    }

    fn get_mut(&mut self, sequence: u64) -> Option<&mut DeliveryRecord> {
        let index = usize::try_from(sequence.checked_sub(self.first)?).ok()?;
        self.items.get_mut(index)
    }
}

impl Dispatcher {
    /// Starts a dispatcher that keeps the newest [`DEFAULT_RECORD_LIMIT`] records. Deliveries
    /// stop when `shutdown` is cancelled.
    ///
    /// # Panics
    /// Outside a Tokio runtime (as `tokio::spawn` does): its tasks run on the current runtime.
    pub fn start(config: DeliveryConfig, clock: Clock, shutdown: CancellationToken) -> Self {
        Self::start_with_record_limit(config, clock, shutdown, DEFAULT_RECORD_LIMIT)
    }

    /// As [`Dispatcher::start`], keeping the newest `record_limit` records (at least one).
    pub fn start_with_record_limit(
        config: DeliveryConfig,
        clock: Clock,
        shutdown: CancellationToken,
        record_limit: usize,
    ) -> Self {
        Self::start_inner(config, clock, shutdown, record_limit, Journal::none())
    }

    /// As [`Dispatcher::start`], writing every record through `journal`.
    pub(crate) fn start_persistent(
        config: DeliveryConfig,
        clock: Clock,
        shutdown: CancellationToken,
        journal: Journal,
    ) -> Self {
        Self::start_inner(config, clock, shutdown, DEFAULT_RECORD_LIMIT, journal)
    }

    fn start_inner(
        config: DeliveryConfig,
        clock: Clock,
        shutdown: CancellationToken,
        record_limit: usize,
        journal: Journal,
    ) -> Self {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Callbacks are reached directly, never through a proxy from the environment.
            .no_proxy()
            .build()
            .map_err(|error| {
                error
                    .source()
                    .map_or_else(|| "unknown error".to_owned(), |cause| cause.to_string())
            });
        if let Err(error) = &client {
            tracing::error!(%error, "the webhook HTTP client could not be built; every delivery will fail");
        }
        Self {
            shared: Arc::new(Shared {
                config,
                clock,
                shutdown,
                client,
                records: Mutex::new(Records {
                    limit: record_limit.max(1),
                    first: 1,
                    items: VecDeque::new(),
                }),
                changes: watch::Sender::new(0),
                in_flight: Semaphore::new(MAX_IN_FLIGHT),
                tasks: TaskTracker::new(),
                runtime: tokio::runtime::Handle::current(),
                journal,
            }),
        }
    }

    /// The rules this dispatcher applies.
    pub fn config(&self) -> DeliveryConfig {
        self.shared.config
    }

    /// Never blocks and never fails: queues one notification for one subscription. After
    /// shutdown the notification is dropped (and logged); in the persistent mode it is kept as
    /// pending instead, and sent after the next start.
    pub fn enqueue(&self, outgoing: Outgoing) {
        self.enqueue_after(outgoing, Ticket::Ready);
    }

    /// As [`Dispatcher::enqueue`], for a notification of a change that is durable once
    /// `change` is: nothing is sent before.
    pub(crate) fn enqueue_after(&self, outgoing: Outgoing, change: Ticket) {
        let shared = &self.shared;
        let shutting_down = shared.shutdown.is_cancelled();
        if shutting_down && !shared.journal.is_persistent() {
            tracing::debug!(
                subscription_id = %outgoing.subscription_id,
                event_id = %outgoing.notification.event_id,
                "the sandbox is shutting down; notification not sent"
            );
            return;
        }
        let Outgoing {
            subscription_id,
            url,
            signing_key,
            notification,
        } = outgoing;
        // Serialised and signed once: every attempt, after a restart too, sends these bytes.
        let signed = SignedNotification::new(&notification, &signing_key)
            .map(|signed| (Bytes::from(signed.body), signed.signature))
            .map_err(|error| AttemptError::Body(error.to_string()).to_string());
        drop(signing_key);
        let enqueued_at = shared.clock.now();
        let waiting = shared.tasks.len();
        let limit = shared.config.max_pending.max(1);
        let not_sent_because = match &signed {
            Err(error) => Some(error.clone()),
            Ok(_) if waiting >= limit => Some(format!(
                "{waiting} notifications were already waiting for delivery; the sandbox holds \
                 at most {limit}"
            )),
            Ok(_) => None,
        };
        let mut records = shared.records();
        let (sequence, evicted) = records.push(|sequence| DeliveryRecord {
            id: format!("dlv_{sequence}"),
            event_id: notification.event_id.clone(),
            subscription_id: subscription_id.clone(),
            url: url.clone(),
            resource_type: notification.meta.resource_type,
            resource_id: notification.meta.resource_id.clone(),
            event_type: notification.event_type,
            state: if not_sent_because.is_some() {
                DeliveryState::Discarded
            } else {
                DeliveryState::Pending
            },
            enqueued_at,
            attempts: Vec::new(),
            next_attempt_at: None,
            not_sent_because: not_sent_because.clone(),
        });
        let mut durable = change;
        if shared.journal.is_persistent() {
            let first_kept = records.first;
            let rows = || {
                records.get_mut(sequence).map_or_else(
                    || Ok(Vec::new()),
                    |record| {
                        let mut rows = vec![Row::NewDelivery {
                            sequence,
                            record: record_json(record)?,
                            // A discarded one has nothing to resume: no body kept.
                            pending: match &signed {
                                Ok(pending) if not_sent_because.is_none() => Some(pending.clone()),
                                _ => None,
                            },
                        }];
                        if evicted {
                            rows.push(Row::DeliveriesBefore(first_kept));
                        }
                        Ok(rows)
                    },
                )
            };
            durable = shared.journal.submit(rows);
        }
        drop(records);
        shared.changed();
        if let Some(reason) = not_sent_because {
            tracing::warn!(
                %subscription_id,
                event_id = %notification.event_id,
                %reason,
                "notification discarded unsent"
            );
            return;
        }
        let Ok((body, signature)) = signed else {
            return;
        };
        if shutting_down {
            tracing::info!(
                %subscription_id,
                event_id = %notification.event_id,
                "the sandbox is shutting down; notification kept to be sent after the next start"
            );
            return;
        }
        let task = deliver(
            Arc::clone(shared),
            sequence,
            Prepared {
                subscription_id,
                url,
                event_id: notification.event_id,
                body,
                signature,
            },
            Resume::default(),
            durable,
        );
        shared.tasks.spawn_on(task, &shared.runtime);
    }

    /// Every notification kept (optionally only those of one `eventId`), oldest first, for
    /// `GET /sandbox/v1/deliveries`.
    pub fn deliveries(&self, event_id: Option<&str>) -> Vec<DeliveryRecord> {
        self.shared
            .records()
            .items
            .iter()
            .filter(|record| event_id.is_none_or(|wanted| record.event_id == wanted))
            .cloned()
            .collect()
    }

    /// A receiver whose value changes whenever a record does (queued, an attempt finished, a
    /// retry scheduled, delivered, discarded): wait on it instead of polling.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Resolves once shutdown was requested and every delivery task has ended.
    pub async fn stopped(&self) {
        self.shared.shutdown.cancelled().await;
        self.shared.tasks.close();
        self.shared.tasks.wait().await;
    }
}

impl Shared {
    fn records(&self) -> MutexGuard<'_, Records> {
        // A panic elsewhere while holding the lock leaves the records usable: they are only data.
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self) {
        self.changes
            .send_modify(|version| *version = version.wrapping_add(1));
    }

    fn update(&self, sequence: u64, change: impl FnOnce(&mut DeliveryRecord)) {
        let mut records = self.records();
        if let Some(record) = records.get_mut(sequence) {
            change(record);
            if self.journal.is_persistent() {
                let row = || {
                    record_json(record).map(|text| {
                        vec![Row::DeliveryChanged {
                            sequence,
                            record: text,
                            finished: record.state != DeliveryState::Pending,
                        }]
                    })
                };
                // Not waited for: a record's progress is kept as soon as the disk allows,
                // and nobody is answered on it.
                drop(self.journal.submit(row));
            }
        }
        drop(records);
        self.changed();
    }

    /// One HTTP POST of `body`; the status, or why there is none.
    async fn attempt(
        &self,
        url: &str,
        subscription_id: &str,
        signature: &str,
        body: Bytes,
    ) -> Result<u16, AttemptError> {
        let client = self
            .client
            .as_ref()
            .map_err(|error| AttemptError::NoClient(error.clone()))?;
        let mut request = client.post(url).body(body);
        for (name, value) in delivery::headers(subscription_id, signature) {
            request = request.header(name, value);
        }
        let timeout = self.config.attempt_timeout;
        match tokio::time::timeout(timeout, request.send()).await {
            Err(_elapsed) => Err(AttemptError::TimedOut(timeout)),
            Ok(Err(error)) => Err(AttemptError::from_reqwest(&error)),
            Ok(Ok(response)) => Ok(response.status().as_u16()),
        }
    }
}

/// Whether a status acknowledges the notification (the spec: 200-399).
fn delivers(status: u16) -> bool {
    delivery::acknowledges(status)
}

fn record_json(record: &DeliveryRecord) -> Result<String, String> {
    serde_json::to_string(record)
        .map_err(|e| format!("a delivery record could not be serialised ({e})"))
}

/// A notification ready to send: serialised and signed.
struct Prepared {
    subscription_id: String,
    url: String,
    event_id: String,
    body: Bytes,
    signature: String,
}

/// Where a delivery resumed after a restart starts again.
#[derive(Debug, Clone, Copy)]
struct Resume {
    /// The number of the next attempt (1 for a new notification).
    next_attempt: u32,
    /// A retry that was waiting: its due time (sandbox clock).
    due: Option<DateTime<Utc>>,
}

impl Default for Resume {
    fn default() -> Self {
        Self {
            next_attempt: 1,
            due: None,
        }
    }
}

impl Dispatcher {
    /// Takes back the records a data file kept (oldest first, their sequence numbers
    /// contiguous) and resumes each pending one: it waits out the retry it was waiting for,
    /// else attempts at once with the next attempt number. Call it once, before anything is
    /// enqueued.
    pub(crate) fn restore(&self, stored: Vec<StoredDelivery>) {
        let shared = &self.shared;
        let max_attempts = shared.config.max_attempts.max(1);
        let mut resumed = Vec::new();
        {
            let mut records = shared.records();
            if let Some(first) = stored.first() {
                records.first = first.sequence;
            }
            for delivery in stored {
                let StoredDelivery {
                    sequence,
                    mut record,
                    pending,
                } = delivery;
                if record.state == DeliveryState::Pending {
                    let done = u32::try_from(record.attempts.len()).unwrap_or(u32::MAX);
                    match pending {
                        Some((body, signature)) if done < max_attempts => {
                            let resume = Resume {
                                next_attempt: done + 1,
                                due: record.next_attempt_at,
                            };
                            resumed.push((
                                sequence,
                                Prepared {
                                    subscription_id: record.subscription_id.clone(),
                                    url: record.url.clone(),
                                    event_id: record.event_id.clone(),
                                    body,
                                    signature,
                                },
                                resume,
                            ));
                        }
                        _ => {
                            record.state = DeliveryState::Discarded;
                            record.next_attempt_at = None;
                            if record.not_sent_because.is_none() && record.attempts.is_empty() {
                                record.not_sent_because = Some(
                                    "the sandbox restarted and had not kept the notification's body"
                                        .into(),
                                );
                            }
                            let row = || {
                                record_json(&record).map(|text| {
                                    vec![Row::DeliveryChanged {
                                        sequence,
                                        record: text,
                                        finished: true,
                                    }]
                                })
                            };
                            drop(shared.journal.submit(row));
                        }
                    }
                }
                records.items.push_back(record);
            }
            while records.items.len() > records.limit {
                records.items.pop_front();
                records.first += 1;
            }
        }
        if !resumed.is_empty() {
            tracing::info!(
                count = resumed.len(),
                "resuming the webhook deliveries pending at the last stop"
            );
        }
        for (sequence, prepared, resume) in resumed {
            let task = deliver(
                Arc::clone(shared),
                sequence,
                prepared,
                resume,
                Ticket::Ready,
            );
            shared.tasks.spawn_on(task, &shared.runtime);
        }
        shared.changed();
    }
}

/// The life of one notification: attempts, waits, and the final state. Nothing is sent
/// before `durable` (the change that fired it is kept).
async fn deliver(
    shared: Arc<Shared>,
    sequence: u64,
    prepared: Prepared,
    resume: Resume,
    durable: Ticket,
) {
    let Prepared {
        subscription_id,
        url,
        event_id,
        body,
        signature,
    } = prepared;
    let kept = tokio::select! {
        biased;
        () = shared.shutdown.cancelled() => return,
        kept = durable.durable() => kept,
    };
    if kept.is_err() {
        tracing::error!(%subscription_id, %event_id, "the change was not saved; notification not sent");
        shared.update(sequence, |record| {
            record.state = DeliveryState::Discarded;
            record.not_sent_because =
                Some("the change that fired it could not be saved to the data file".into());
        });
        return;
    }
    if let Some(due) = resume.due {
        tokio::select! {
            biased;
            () = shared.shutdown.cancelled() => return,
            () = shared.clock.sleep_until(due) => {}
        }
        shared.update(sequence, |record| record.next_attempt_at = None);
    }

    let max_attempts = shared.config.max_attempts.max(1);
    for number in resume.next_attempt..=max_attempts {
        let permit = tokio::select! {
            biased;
            () = shared.shutdown.cancelled() => return,
            permit = shared.in_flight.acquire() => permit,
        };
        let started_at = shared.clock.now();
        let started = Instant::now();
        let result = tokio::select! {
            biased;
            () = shared.shutdown.cancelled() => return,
            // Boxed: the HTTP future is large, and only the attempts in flight need it, not
            // every task still waiting for its turn or its retry.
            result = Box::pin(shared.attempt(&url, &subscription_id, &signature, body.clone())) => result,
        };
        drop(permit);
        let duration = started.elapsed();
        let finished_at = shared.clock.now();
        let delivered = matches!(result, Ok(status) if delivers(status));
        let last = number == max_attempts;
        match &result {
            Ok(status) if delivered => tracing::info!(
                %subscription_id, %url, %event_id, attempt = number, status, "notification delivered"
            ),
            Ok(status) => tracing::warn!(
                %subscription_id, %url, %event_id, attempt = number, status, "delivery attempt failed"
            ),
            Err(error) => tracing::warn!(
                %subscription_id, %url, %event_id, attempt = number, %error, "delivery attempt failed"
            ),
        }
        let next_attempt_at = (!delivered && !last).then(|| {
            TimeDelta::from_std(shared.config.retry_delay)
                .ok()
                .and_then(|delay| finished_at.checked_add_signed(delay))
                .unwrap_or(DateTime::<Utc>::MAX_UTC)
        });
        shared.update(sequence, |record| {
            record.attempts.push(DeliveryAttempt {
                number,
                started_at,
                finished_at,
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                status: result.as_ref().ok().copied(),
                error: result.as_ref().err().map(ToString::to_string),
            });
            record.next_attempt_at = next_attempt_at;
            if delivered {
                record.state = DeliveryState::Delivered;
            } else if last {
                record.state = DeliveryState::Discarded;
            }
        });
        if delivered {
            return;
        }
        let Some(due) = next_attempt_at else {
            tracing::warn!(
                %subscription_id, %url, %event_id, attempts = number, "notification discarded"
            );
            return;
        };
        tokio::select! {
            biased;
            () = shared.shutdown.cancelled() => return,
            () = shared.clock.sleep_until(due) => {}
        }
        shared.update(sequence, |record| record.next_attempt_at = None);
    }
}

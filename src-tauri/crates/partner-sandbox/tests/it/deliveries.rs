//! The delivery rules of the spec against real receivers on 127.0.0.1 that answer 200, 302, 500,
//! hang, or are not listening, with short delays (retry 200 ms, timeout 300 ms) so the whole
//! three-attempts-then-discard cycle takes about a second. Signatures are checked with an HMAC
//! computed here with the `hmac` crate directly, not with `partner_api::signature`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{TimeDelta, Utc};
use hmac::{Hmac, Mac};
use partner_api::{EventType, Notification, NotificationMeta, ResourceType};
use partner_sandbox::dispatch::{
    DeliveryConfig, DeliveryRecord, DeliveryState, Dispatcher, Outgoing,
};
use partner_sandbox::Clock;
use partner_testkit::receiver::REDIRECT_PATH;
use partner_testkit::{refused_url, ReceivedRequest, Reply, TestReceiver};
use sha2::Sha256;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// 32 characters; the dispatcher does not judge keys, the product endpoints do.
const KEY: &str = "Kp9!rT2#vX8@mQ4$zL6%wN1^bH3&jF5*";
const RETRY: Duration = Duration::from_millis(200);
/// The attempt timeout where a receiver hangs on purpose.
const TIMEOUT: Duration = Duration::from_millis(300);
/// The attempt timeout where every receiver answers: long enough that a loaded machine never
/// turns an answer into a timeout.
const ANSWERS: Duration = Duration::from_secs(5);
/// Generous: the machine is shared with other builds.
const WAIT: Duration = Duration::from_secs(10);

fn config(retry_delay: Duration, attempt_timeout: Duration) -> DeliveryConfig {
    DeliveryConfig {
        retry_delay,
        attempt_timeout,
        max_attempts: 3,
        ..DeliveryConfig::default()
    }
}

fn notification(event_id: &str) -> Notification {
    Notification {
        event_id: event_id.to_owned(),
        event_time: Utc::now(),
        event_type: EventType::Created,
        meta: NotificationMeta {
            instance_id: "acme-valuation".to_owned(),
            resource_id: event_id.to_owned(),
            resource_type: ResourceType::TransactionEvent,
            resource_ref: format!(
                "http://127.0.0.1:7001/partner/v2/transactions/t1/events/{event_id}"
            ),
        },
    }
}

fn outgoing(url: &str, event_id: &str) -> Outgoing {
    Outgoing {
        subscription_id: format!("sub-{event_id}"),
        url: url.to_owned(),
        signing_key: KEY.into(),
        notification: notification(event_id),
    }
}

/// A dispatcher with its clock; dropping it shuts the dispatcher down.
struct Fixture {
    dispatcher: Dispatcher,
    clock: Clock,
    shutdown: CancellationToken,
}

impl Fixture {
    fn start(config: DeliveryConfig) -> Self {
        let clock = Clock::new();
        let shutdown = CancellationToken::new();
        let dispatcher = Dispatcher::start(config, clock.clone(), shutdown.clone());
        Self {
            dispatcher,
            clock,
            shutdown,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Waits (on the dispatcher's change signal, not by polling) until `check` finds something.
async fn wait_for<T>(
    dispatcher: &Dispatcher,
    within: Duration,
    mut check: impl FnMut(&[DeliveryRecord]) -> Option<T>,
) -> Option<T> {
    let mut changes = dispatcher.changes();
    let deadline = tokio::time::Instant::now() + within;
    loop {
        changes.borrow_and_update();
        if let Some(found) = check(&dispatcher.deliveries(None)) {
            return Some(found);
        }
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            return None;
        }
    }
}

/// The record of `event_id` once it is delivered or discarded.
async fn settled(dispatcher: &Dispatcher, event_id: &str) -> DeliveryRecord {
    wait_for(dispatcher, WAIT, |records| {
        records
            .iter()
            .find(|r| r.event_id == event_id && r.state != DeliveryState::Pending)
            .cloned()
    })
    .await
    .unwrap_or_else(|| panic!("{event_id} neither delivered nor discarded within {WAIT:?}"))
}

fn statuses(record: &DeliveryRecord) -> Vec<Option<u16>> {
    record.attempts.iter().map(|a| a.status).collect()
}

fn errors(record: &DeliveryRecord) -> Vec<Option<&str>> {
    record.attempts.iter().map(|a| a.error.as_deref()).collect()
}

fn assert_spaced(requests: &[ReceivedRequest], at_least: Duration) {
    for pair in requests.windows(2) {
        let gap = pair[1].received_at - pair[0].received_at;
        assert!(
            gap >= at_least,
            "attempts {gap:?} apart, expected ≥ {at_least:?}"
        );
    }
}

fn assert_attempts_spaced(record: &DeliveryRecord, at_least: Duration) {
    let at_least = TimeDelta::from_std(at_least).expect("a short test delay");
    for pair in record.attempts.windows(2) {
        let gap = pair[1].started_at - pair[0].finished_at;
        assert!(gap >= at_least, "next attempt {gap} after the failure");
    }
}

/// The signature as the spec defines it, computed here without `partner_api`.
fn independent_signature(key: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes any key");
    mac.update(body);
    STANDARD.encode(mac.finalize().into_bytes())
}

#[tokio::test]
async fn a_200_delivers_on_the_first_attempt() {
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-200"));

    let record = settled(&fixture.dispatcher, "ev-200").await;
    assert_eq!(record.state, DeliveryState::Delivered);
    assert_eq!(statuses(&record), [Some(200)]);
    assert_eq!(errors(&record), [None]);
    assert_eq!(record.attempts[0].number, 1);
    assert_eq!(record.next_attempt_at, None);
    assert!(receiver.next(WAIT).await.is_some());
    assert!(
        receiver.next(RETRY * 3).await.is_none(),
        "no retry after a 200"
    );
}

#[tokio::test]
async fn past_the_pending_limit_a_notification_is_discarded_unsent_with_the_reason() {
    // A receiver that never answers keeps every notification waiting.
    let mut receiver = TestReceiver::start([Reply::Hang, Reply::Hang, Reply::Hang])
        .await
        .unwrap();
    let fixture = Fixture::start(DeliveryConfig {
        max_pending: 2,
        ..config(RETRY, ANSWERS)
    });
    for event_id in ["ev-wait-1", "ev-wait-2", "ev-over"] {
        fixture
            .dispatcher
            .enqueue(outgoing(&receiver.url(), event_id));
    }
    let over = settled(&fixture.dispatcher, "ev-over").await;
    assert_eq!(over.state, DeliveryState::Discarded);
    assert!(over.attempts.is_empty(), "never sent");
    assert_eq!(
        over.not_sent_because.as_deref(),
        Some("2 notifications were already waiting for delivery; the sandbox holds at most 2")
    );
    let records = fixture.dispatcher.deliveries(None);
    for waiting in ["ev-wait-1", "ev-wait-2"] {
        let record = records.iter().find(|r| r.event_id == waiting).unwrap();
        assert_eq!(record.state, DeliveryState::Pending, "{waiting}");
        assert_eq!(record.not_sent_because, None);
    }
    let arrived: HashSet<String> = receiver
        .take(2, WAIT)
        .await
        .into_iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(arrived.len(), 2);
    assert!(arrived.iter().all(|body| !body.contains("ev-over")));
    assert!(
        receiver.next(RETRY).await.is_none(),
        "the third was never sent"
    );
}

#[tokio::test]
async fn a_302_delivers_without_retry_and_is_not_followed() {
    let mut receiver = TestReceiver::always(302).await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-302"));

    let record = settled(&fixture.dispatcher, "ev-302").await;
    assert_eq!(record.state, DeliveryState::Delivered);
    assert_eq!(statuses(&record), [Some(302)]);
    let first = receiver.next(WAIT).await.unwrap();
    assert_eq!(first.path, "/hook");
    let more = receiver.next(RETRY * 3).await;
    assert!(
        more.is_none(),
        "nothing after a 302, got a request for {:?} (a redirect to {REDIRECT_PATH} followed?)",
        more.map(|r| r.path)
    );
}

#[tokio::test]
async fn a_500_is_tried_three_times_then_discarded() {
    let mut receiver = TestReceiver::always(500).await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-500"));

    let record = settled(&fixture.dispatcher, "ev-500").await;
    assert_eq!(record.state, DeliveryState::Discarded);
    assert_eq!(statuses(&record), [Some(500); 3]);
    assert_eq!(errors(&record), [None; 3]);
    assert_eq!(
        record.attempts.iter().map(|a| a.number).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(record.next_attempt_at, None);
    assert_attempts_spaced(&record, RETRY);

    let requests = receiver.take(3, WAIT).await;
    assert_eq!(requests.len(), 3);
    assert_spaced(&requests, RETRY);
    assert!(
        receiver.next(RETRY * 3).await.is_none(),
        "no fourth attempt"
    );
}

#[tokio::test]
async fn a_hanging_receiver_times_out_three_times_then_is_discarded() {
    let mut receiver = TestReceiver::start([Reply::Hang]).await.unwrap();
    let fixture = Fixture::start(config(RETRY, TIMEOUT));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-hang"));

    let record = settled(&fixture.dispatcher, "ev-hang").await;
    assert_eq!(record.state, DeliveryState::Discarded);
    assert_eq!(statuses(&record), [None; 3]);
    assert_eq!(errors(&record), [Some("timed out after 300ms"); 3]);
    for attempt in &record.attempts {
        assert!(attempt.duration_ms >= 300, "{attempt:?}");
    }
    // The retry delay counts from the timeout (the end of the attempt, not its start).
    assert_attempts_spaced(&record, RETRY);
    let requests = receiver.take(3, WAIT).await;
    assert_eq!(requests.len(), 3);
    // Arrival times include connect time, which differs per attempt: only the delay is certain.
    assert_spaced(&requests, RETRY);
    assert!(receiver.next(RETRY * 3).await.is_none());
}

#[tokio::test]
async fn a_refused_connection_is_tried_three_times_then_discarded() {
    let url = refused_url().await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    fixture.dispatcher.enqueue(outgoing(&url, "ev-refused"));

    let record = settled(&fixture.dispatcher, "ev-refused").await;
    assert_eq!(record.state, DeliveryState::Discarded);
    assert_eq!(statuses(&record), [None; 3]);
    assert_eq!(errors(&record), [Some("connection refused"); 3]);
    assert_attempts_spaced(&record, RETRY);
}

#[tokio::test]
async fn a_receiver_that_fails_twice_gets_it_on_the_third_attempt() {
    let mut receiver = TestReceiver::start([Reply::Status(500), Reply::Hang, Reply::Status(200)])
        .await
        .unwrap();
    let fixture = Fixture::start(config(RETRY, Duration::from_secs(1)));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-third"));

    let record = settled(&fixture.dispatcher, "ev-third").await;
    assert_eq!(record.state, DeliveryState::Delivered);
    assert_eq!(statuses(&record), [Some(500), None, Some(200)]);
    assert_eq!(errors(&record), [None, Some("timed out after 1s"), None]);
    assert_eq!(record.next_attempt_at, None);
    assert_eq!(receiver.take(3, WAIT).await.len(), 3);
}

#[tokio::test]
async fn every_attempt_sends_the_same_signed_bytes_with_the_spec_headers() {
    let mut receiver =
        TestReceiver::start([Reply::Status(500), Reply::Status(503), Reply::Status(200)])
            .await
            .unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    let sent = outgoing(&receiver.url(), "ev-signed");
    let sent_notification = sent.notification.clone();
    fixture.dispatcher.enqueue(sent);

    let requests = receiver.take(3, WAIT).await;
    assert_eq!(requests.len(), 3);
    let first_body = requests[0].body.clone();
    let expected_signature = independent_signature(KEY, &first_body);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/hook");
        assert_eq!(request.body, first_body, "identical bytes on every attempt");
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(
            request.header("content-length"),
            Some(first_body.len().to_string().as_str())
        );
        assert_eq!(request.header("svc-subscriptionid"), Some("sub-ev-signed"));
        assert_eq!(request.header("svc-environment"), Some("prod"));
        assert_eq!(
            request.header("svc-signature"),
            Some(expected_signature.as_str())
        );
        // And with the constant-time check a receiver would use.
        let mut mac = Hmac::<Sha256>::new_from_slice(KEY.as_bytes()).unwrap();
        mac.update(&request.body);
        let received = STANDARD
            .decode(request.header("svc-signature").unwrap())
            .unwrap();
        mac.verify_slice(&received).unwrap();
    }
    // The bytes are the spec's body for the notification that was queued.
    let received: Notification = serde_json::from_slice(&first_body).unwrap();
    assert_eq!(received, sent_notification);
    let json: serde_json::Value = serde_json::from_slice(&first_body).unwrap();
    assert_eq!(json["eventId"], "ev-signed");
    assert_eq!(
        json["meta"]["resourceType"],
        "urn:svc:partner:transaction:event"
    );

    // A different key does not verify these bytes.
    assert_ne!(
        independent_signature("another-key-another-key-another-key", &first_body),
        expected_signature
    );
    let record = settled(&fixture.dispatcher, "ev-signed").await;
    assert_eq!(statuses(&record), [Some(500), Some(503), Some(200)]);
}

#[tokio::test]
async fn advancing_the_clock_fires_a_due_retry_at_once() {
    let hour = Duration::from_secs(3600);
    let mut receiver = TestReceiver::start([Reply::Status(500), Reply::Status(200)])
        .await
        .unwrap();
    let fixture = Fixture::start(config(hour, ANSWERS));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-clock"));

    let waiting = wait_for(&fixture.dispatcher, WAIT, |records| {
        records
            .iter()
            .find(|r| r.event_id == "ev-clock" && r.next_attempt_at.is_some())
            .cloned()
    })
    .await
    .expect("a retry is scheduled after the 500");
    assert_eq!(waiting.state, DeliveryState::Pending);
    assert_eq!(statuses(&waiting), [Some(500)]);
    let due = waiting.next_attempt_at.unwrap();
    assert_eq!(due - waiting.attempts[0].finished_at, TimeDelta::hours(1));
    assert!(receiver.next(WAIT).await.is_some(), "the first attempt");
    assert!(
        receiver.next(Duration::from_millis(300)).await.is_none(),
        "the retry waits for its hour"
    );

    let advanced = Instant::now();
    fixture.clock.advance(hour);
    let retry = receiver.next(WAIT).await.expect("the retry fired");
    assert!(
        retry.received_at - advanced < Duration::from_secs(3),
        "the retry came {:?} after the advance",
        retry.received_at - advanced
    );
    let record = settled(&fixture.dispatcher, "ev-clock").await;
    assert_eq!(record.state, DeliveryState::Delivered);
    assert_eq!(statuses(&record), [Some(500), Some(200)]);
    assert!(record.attempts[1].started_at >= due);
}

#[tokio::test]
async fn a_hanging_receiver_does_not_delay_another_delivery() {
    let hanging = TestReceiver::start([Reply::Hang]).await.unwrap();
    let fast = TestReceiver::always(200).await.unwrap();
    let fixture = Fixture::start(config(RETRY, Duration::from_secs(30)));
    fixture
        .dispatcher
        .enqueue(outgoing(&hanging.url(), "ev-slow"));
    let queued = Instant::now();
    fixture.dispatcher.enqueue(outgoing(&fast.url(), "ev-fast"));

    let record = settled(&fixture.dispatcher, "ev-fast").await;
    assert_eq!(record.state, DeliveryState::Delivered);
    assert!(
        queued.elapsed() < Duration::from_secs(5),
        "delivered {:?} after queueing, behind a 30 s hang",
        queued.elapsed()
    );
    let slow = fixture.dispatcher.deliveries(Some("ev-slow"));
    assert_eq!(slow.len(), 1);
    assert_eq!(slow[0].state, DeliveryState::Pending);
    assert!(
        slow[0].attempts.is_empty(),
        "its first attempt is still hanging"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_from_many_tasks_at_once_delivers_each_notification_once() {
    const TASKS: usize = 20;
    const EACH: usize = 10;
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    let url = receiver.url();
    let enqueuers: Vec<_> = (0..TASKS)
        .map(|task| {
            let dispatcher = fixture.dispatcher.clone();
            let url = url.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    dispatcher.enqueue(outgoing(&url, &format!("ev-many-{task}-{n}")));
                }
            })
        })
        .collect();
    for enqueuer in enqueuers {
        enqueuer.await.unwrap();
    }

    let total = TASKS * EACH;
    let delivered = wait_for(&fixture.dispatcher, WAIT * 3, |records| {
        let delivered = records
            .iter()
            .filter(|r| r.state == DeliveryState::Delivered)
            .count();
        (delivered == total).then_some(delivered)
    })
    .await;
    assert_eq!(delivered, Some(total));
    let records = fixture.dispatcher.deliveries(None);
    assert_eq!(records.len(), total);
    assert_eq!(
        records.iter().map(|r| &r.id).collect::<HashSet<_>>().len(),
        total,
        "each record has its own id"
    );

    let requests = receiver.take(total, WAIT).await;
    assert_eq!(requests.len(), total);
    let event_ids: HashSet<String> = requests
        .iter()
        .map(|r| {
            let n: Notification = serde_json::from_slice(&r.body).unwrap();
            n.event_id
        })
        .collect();
    assert_eq!(event_ids.len(), total, "each notification arrived once");
    assert!(receiver.next(RETRY * 2).await.is_none());
}

#[tokio::test]
async fn only_the_newest_records_are_kept() {
    let mut receiver = TestReceiver::always(200).await.unwrap();
    let shutdown = CancellationToken::new();
    let dispatcher = Dispatcher::start_with_record_limit(
        config(RETRY, ANSWERS),
        Clock::new(),
        shutdown.clone(),
        5,
    );
    for n in 0..8 {
        dispatcher.enqueue(outgoing(&receiver.url(), &format!("ev-keep-{n}")));
    }
    // Evicted ones are still delivered.
    assert_eq!(receiver.take(8, WAIT).await.len(), 8);
    let kept = wait_for(&dispatcher, WAIT, |records| {
        records
            .iter()
            .all(|r| r.state == DeliveryState::Delivered)
            .then(|| records.to_vec())
    })
    .await
    .unwrap();
    assert_eq!(
        kept.iter().map(|r| r.event_id.as_str()).collect::<Vec<_>>(),
        [
            "ev-keep-3",
            "ev-keep-4",
            "ev-keep-5",
            "ev-keep-6",
            "ev-keep-7"
        ]
    );
    assert!(dispatcher.deliveries(Some("ev-keep-0")).is_empty());
    shutdown.cancel();
}

#[tokio::test]
async fn records_filter_by_event_and_serialise_as_camel_case() {
    let ok = TestReceiver::always(200).await.unwrap();
    let failing = TestReceiver::always(500).await.unwrap();
    let fixture = Fixture::start(config(Duration::from_secs(3600), ANSWERS));
    fixture.dispatcher.enqueue(outgoing(&ok.url(), "ev-a"));
    fixture.dispatcher.enqueue(outgoing(&failing.url(), "ev-b"));
    // The same event to a second subscription.
    fixture.dispatcher.enqueue(Outgoing {
        subscription_id: "sub-second".to_owned(),
        ..outgoing(&ok.url(), "ev-a")
    });

    settled(&fixture.dispatcher, "ev-a").await;
    let pending = wait_for(&fixture.dispatcher, WAIT, |records| {
        records
            .iter()
            .find(|r| r.event_id == "ev-b" && r.next_attempt_at.is_some())
            .cloned()
    })
    .await
    .unwrap();
    wait_for(&fixture.dispatcher, WAIT, |records| {
        records
            .iter()
            .filter(|r| r.event_id == "ev-a" && r.state == DeliveryState::Delivered)
            .nth(1)
            .map(|_| ())
    })
    .await
    .unwrap();

    let a = fixture.dispatcher.deliveries(Some("ev-a"));
    assert_eq!(
        a.iter()
            .map(|r| r.subscription_id.as_str())
            .collect::<Vec<_>>(),
        ["sub-ev-a", "sub-second"]
    );
    assert_eq!(fixture.dispatcher.deliveries(Some("ev-b")).len(), 1);
    assert!(fixture.dispatcher.deliveries(Some("ev-none")).is_empty());
    assert_eq!(fixture.dispatcher.deliveries(None).len(), 3);

    let delivered = serde_json::to_value(&a[0]).unwrap();
    assert_eq!(delivered["eventId"], "ev-a");
    assert_eq!(delivered["subscriptionId"], "sub-ev-a");
    assert_eq!(delivered["url"], ok.url());
    assert_eq!(
        delivered["resourceType"],
        "urn:svc:partner:transaction:event"
    );
    assert_eq!(delivered["resourceId"], "ev-a");
    assert_eq!(delivered["eventType"], "created");
    assert_eq!(delivered["state"], "delivered");
    assert!(delivered["id"].is_string());
    assert!(delivered["enqueuedAt"].is_string());
    assert!(delivered.get("nextAttemptAt").is_none());
    let attempt = &delivered["attempts"][0];
    assert_eq!(attempt["number"], 1);
    assert_eq!(attempt["status"], 200);
    assert!(attempt["startedAt"].is_string());
    assert!(attempt["finishedAt"].is_string());
    assert!(attempt["durationMs"].is_u64());
    assert!(attempt.get("error").is_none());

    let waiting = serde_json::to_value(&pending).unwrap();
    assert_eq!(waiting["state"], "pending");
    assert!(waiting["nextAttemptAt"].is_string());
    assert_eq!(waiting["attempts"][0]["status"], 500);
}

#[tokio::test]
async fn shutdown_stops_deliveries_and_later_enqueues() {
    let mut receiver = TestReceiver::start([Reply::Hang]).await.unwrap();
    let fixture = Fixture::start(config(RETRY, Duration::from_secs(30)));
    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-stop"));
    assert!(receiver.next(WAIT).await.is_some(), "the attempt started");

    fixture.shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(2), fixture.dispatcher.stopped())
        .await
        .expect("the hanging delivery stopped with the dispatcher");

    fixture
        .dispatcher
        .enqueue(outgoing(&receiver.url(), "ev-after"));
    assert!(fixture.dispatcher.deliveries(Some("ev-after")).is_empty());
    assert!(receiver.next(Duration::from_millis(300)).await.is_none());
    let stopped = fixture.dispatcher.deliveries(Some("ev-stop"));
    assert_eq!(stopped[0].state, DeliveryState::Pending);
}

/// The sandbox's log lines written while one test's capture is installed.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl LogBuffer {
    fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures the sandbox's log lines on this thread (a `#[tokio::test]` runs the dispatcher's
/// tasks on its own thread) until the guard is dropped, so a test sees its own lines only and
/// no test changes another's subscriber.
///
/// A do-nothing global subscriber is installed once first. With a single dispatcher in the
/// process, tracing-core computes a callsite's cached interest from the default subscriber of
/// whichever thread reaches the callsite first (tokio-rs/tracing#3611): a sibling test thread
/// with no subscriber would cache "never" and this capture would miss the event. With two
/// dispatchers, the interest is the union over all of them, so the capture always sees its
/// events.
fn capture_logs() -> (LogBuffer, tracing::subscriber::DefaultGuard) {
    static BASE: OnceLock<()> = OnceLock::new();
    BASE.get_or_init(|| {
        let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    });
    let logs = LogBuffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("partner_sandbox=trace")
        .with_ansi(false)
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    (logs, guard)
}

#[tokio::test]
async fn neither_logs_nor_records_carry_the_key_or_the_signature() {
    let (logs, _capturing) = capture_logs();

    let mut receiver = TestReceiver::start([Reply::Status(500), Reply::Status(200)])
        .await
        .unwrap();
    let refused = refused_url().await.unwrap();
    let fixture = Fixture::start(config(RETRY, ANSWERS));
    let sent = outgoing(&receiver.url(), "ev-secret");
    assert!(!format!("{sent:?}").contains(KEY));
    fixture.dispatcher.enqueue(sent);
    fixture
        .dispatcher
        .enqueue(outgoing(&refused, "ev-secret-refused"));
    settled(&fixture.dispatcher, "ev-secret").await;
    settled(&fixture.dispatcher, "ev-secret-refused").await;
    let request = receiver.next(WAIT).await.unwrap();
    let signature = request.header("svc-signature").unwrap().to_owned();

    let logs = logs.text();
    assert!(
        logs.contains("sub-ev-secret"),
        "the logs were captured: {logs}"
    );
    assert!(logs.contains("notification delivered"));
    assert!(logs.contains("connection refused"));
    assert!(logs.contains("notification discarded"));
    assert!(
        !logs.contains(KEY),
        "the signing key leaked into a log line"
    );
    assert!(
        !logs.contains(&signature),
        "the signature leaked into a log line"
    );

    let records = serde_json::to_string(&fixture.dispatcher.deliveries(None)).unwrap();
    assert!(!records.contains(KEY));
    assert!(!records.contains(&signature));
    let debug = format!(
        "{:?} {:?}",
        fixture.dispatcher,
        fixture.dispatcher.deliveries(None)
    );
    assert!(!debug.contains(KEY));
    assert!(!debug.contains(&signature));
}

#[tokio::test]
async fn a_url_or_header_that_cannot_be_sent_fails_with_a_reason_and_nothing_panics() {
    let fixture = Fixture::start(config(Duration::from_millis(20), ANSWERS));
    fixture
        .dispatcher
        .enqueue(outgoing("not a url at all", "ev-bad-url"));
    fixture.dispatcher.enqueue(Outgoing {
        subscription_id: "sub\nwith a newline".to_owned(),
        ..outgoing(&refused_url().await.unwrap(), "ev-bad-header")
    });

    for event_id in ["ev-bad-url", "ev-bad-header"] {
        let record = settled(&fixture.dispatcher, event_id).await;
        assert_eq!(record.state, DeliveryState::Discarded, "{record:?}");
        assert_eq!(record.attempts.len(), 3);
        for attempt in &record.attempts {
            let error = attempt.error.as_deref().unwrap_or_default();
            assert!(error.starts_with("request failed: "), "{error}");
            assert!(!error.contains(KEY));
        }
    }
}

//! The missed-notification check end to end: the real sandbox (fast retries) delivering to the
//! real listener over HTTP; the listener stopped while the lender and the partner change
//! transactions and the sandbox gives up on their notifications; the listener started again
//! on the same store and port; `find_missed` lists exactly what the sandbox discarded.

#![allow(clippy::unwrap_used)]

use chrono::Utc;
use partner_api::{
    EventType, NewProduct, ResourceType, ResponseStatus, Secret, TransactionResponse,
    WebhookSubscriptionInput,
};
use partner_client::{ConnectionConfig, PartnerClient};
use partner_listener::{Listener, ListenerConfig, MemoryKeys, Retention, Store};
use partner_local::missed::{find_missed, MissedNotification, MissedQuery, SinceSource};
use partner_sandbox::dispatch::DeliveryConfig;
use partner_sandbox::SandboxConfig;
use partner_testkit::TestSandbox;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const KEY: &str = "Kp9!rT2#vX8@mQ4$zL6^wN1^bH3&jF5*";

struct Running {
    listener: Listener,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn start_listener(
    db: &Path,
    addr: SocketAddr,
    keys: Arc<MemoryKeys>,
) -> (Running, SocketAddr) {
    let store = Store::open(db, Retention::default()).unwrap();
    let listener = Listener::new(ListenerConfig::default(), store, keys).unwrap();
    let tcp = tokio::net::TcpListener::bind(addr).await.unwrap();
    let bound = tcp.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = listener.clone();
    let task = tokio::spawn(async move {
        serving
            .serve(tcp, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    // Serving has recorded its run once the store shows it.
    for _ in 0..200 {
        if listener
            .store()
            .listener_runs()
            .unwrap()
            .iter()
            .any(|r| r.stopped_at.is_none())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (
        Running {
            listener,
            stop,
            task,
        },
        bound,
    )
}

impl Running {
    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap();
        drop(self.listener);
    }
}

/// A sandbox whose retries are quick to watch: attempts of 2 s, 50 ms apart (a give-up
/// window of 6.1 s).
async fn quick_sandbox() -> TestSandbox {
    TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        delivery: DeliveryConfig {
            retry_delay: Duration::from_millis(50),
            attempt_timeout: Duration::from_secs(2),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ..SandboxConfig::default()
    })
    .await
}

/// A client of `sandbox`'s demo client.
fn client_of(sandbox: &TestSandbox) -> PartnerClient {
    PartnerClient::new(
        ConnectionConfig::new(
            sandbox.base_url(),
            sandbox.client_id(),
            sandbox.client_secret().clone(),
        )
        .unwrap(),
    )
    .unwrap()
}

struct World {
    sandbox: TestSandbox,
    client: PartnerClient,
    http: reqwest::Client,
}

impl World {
    async fn product(
        &self,
        name: &str,
        url: &str,
        subscriptions: &[(ResourceType, &[EventType])],
    ) -> (String, Vec<String>) {
        let product = self
            .client
            .create_product(&NewProduct {
                name: name.into(),
                listing_name: format!("{name} listing"),
                request_types: vec!["NEW_REQUEST".into()],
                webhooks: subscriptions
                    .iter()
                    .map(|(resource, events)| WebhookSubscriptionInput {
                        url: Some(url.into()),
                        resource: Some(*resource),
                        events: Some(events.to_vec()),
                        signing_key: Some(Secret::new(KEY)),
                        ..WebhookSubscriptionInput::default()
                    })
                    .collect(),
                ..NewProduct::default()
            })
            .await
            .unwrap();
        let ids = product
            .webhooks
            .iter()
            .map(|w| {
                w.subscription_id
                    .clone()
                    .expect("the sandbox names every subscription")
            })
            .collect();
        (product.id.clone(), ids)
    }

    async fn lender(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let response = self
            .http
            .request(method, self.sandbox.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    async fn creates(&self, product_id: &str) -> String {
        let created = self
            .lender(
                reqwest::Method::POST,
                "/sandbox/v1/transactions",
                json!({"productId": product_id, "requestType": "NEW_REQUEST"}),
            )
            .await;
        created["id"].as_str().unwrap().to_string()
    }

    async fn updates(&self, transaction_id: &str) {
        self.lender(
            reqwest::Method::PATCH,
            &format!("/sandbox/v1/transactions/{transaction_id}"),
            json!({"loan": {"loanAmount": 300000}}),
        )
        .await;
    }

    async fn adds_event(&self, transaction_id: &str) {
        self.lender(
            reqwest::Method::POST,
            &format!("/sandbox/v1/transactions/{transaction_id}/events"),
            json!({"type": "urn:acme:note", "text": "Appraiser called"}),
        )
        .await;
    }

    async fn deliveries(&self) -> Vec<Value> {
        let records = self
            .lender(reqwest::Method::GET, "/sandbox/v1/deliveries", Value::Null)
            .await;
        records.as_array().unwrap().clone()
    }

    /// Waits until no delivery is pending; returns them all.
    async fn settled(&self) -> Vec<Value> {
        for _ in 0..300 {
            let records = self.deliveries().await;
            if records.iter().all(|r| r["state"] != "pending") {
                return records;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("deliveries still pending");
    }
}

type Identity = (String, String, String);

fn identity_of_record(record: &Value) -> Identity {
    (
        record["subscriptionId"].as_str().unwrap().to_string(),
        record["resourceType"].as_str().unwrap().to_string(),
        record["eventId"].as_str().unwrap().to_string(),
    )
}

fn identity(missed: &MissedNotification) -> Identity {
    (
        missed.subscription_id.clone(),
        missed.resource_type.as_str().to_string(),
        missed.event_id.clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missed_lists_exactly_what_the_service_gave_up_on_while_the_listener_was_down() {
    let sandbox = quick_sandbox().await;
    let client = client_of(&sandbox);
    let world = World {
        sandbox,
        client,
        http: reqwest::Client::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("captures.sqlite3");
    let keys = Arc::new(MemoryKeys::new());
    let (running, addr) = start_listener(&db, "127.0.0.1:0".parse().unwrap(), keys.clone()).await;
    let url = format!("http://{addr}/webhooks");

    use EventType::{Created, Updated};
    use ResourceType::{Transaction, TransactionEvent};
    // Product A: every change (SA), updates only (SU), events (SE). Product B: its own
    // subscription at the same listener. Product C: no subscription at all.
    let (a, subs_a) = world
        .product(
            "missed-a",
            &url,
            &[
                (Transaction, &[Created, Updated]),
                (Transaction, &[Updated]),
                (TransactionEvent, &[Created]),
            ],
        )
        .await;
    let (b, subs_b) = world
        .product("missed-b", &url, &[(Transaction, &[Created, Updated])])
        .await;
    let (c, _) = world.product("missed-c", &url, &[]).await;
    for id in subs_a.iter().chain(&subs_b) {
        keys.insert(id, KEY);
    }
    let (sa, su, se, sb) = (&subs_a[0], &subs_a[1], &subs_a[2], &subs_b[0]);

    // While the listener is up: delivered and captured.
    let t1 = world.creates(&a).await;
    world.updates(&t1).await;
    world.adds_event(&t1).await;
    let t0 = world.creates(&b).await;
    let before = world.settled().await;
    assert!(
        before.iter().all(|r| r["state"] == "delivered"),
        "{before:?}"
    );
    assert_eq!(before.len(), 2 + 3 + 1 + 1);
    running.stop().await;

    // The listener is down: the lender and the partner change things, the sandbox gives up.
    let t2 = world.creates(&a).await;
    world.updates(&t2).await;
    world
        .client
        .respond_to_transaction(
            &t2,
            &TransactionResponse {
                status: ResponseStatus::Processing,
                partner_status: Some("Ordered".into()),
                reference_number: None,
                responding_party: None,
                loan: None,
                resources: None,
                errors: None,
            },
        )
        .await
        .unwrap();
    world.adds_event(&t2).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mid = Utc::now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let t3 = world.creates(&b).await;
    world.updates(&t3).await;
    let t4 = world.creates(&c).await;
    world.updates(&t4).await;
    let all = world.settled().await;
    let discarded: BTreeSet<Identity> = all
        .iter()
        .filter(|r| r["state"] == "discarded")
        .map(identity_of_record)
        .collect();
    let delivered: BTreeSet<Identity> = all
        .iter()
        .filter(|r| r["state"] == "delivered")
        .map(identity_of_record)
        .collect();
    // By hand: t2 created (SA, SE), updated (SA, SU, SE), answered (SA, SU, SE twice), a custom
    // event (SE); t3 created and updated (SB); t4 nothing (no subscription).
    assert_eq!(discarded.len(), 2 + 3 + 4 + 1 + 2, "{discarded:?}");
    assert_eq!(delivered.len(), 7);

    // The listener is back, on the same store and port.
    let (running, _) = start_listener(&db, addr, keys.clone()).await;
    let store = running.listener.store().clone();
    let down = store.last_down_time(true).unwrap().unwrap();
    let query = MissedQuery {
        listening_now: true,
        until: Some(Utc::now()),
        ..MissedQuery::default()
    };
    let mut steps = Vec::new();
    let report = find_missed(
        &world.client,
        &store,
        &query,
        &CancellationToken::new(),
        |p| steps.push(p),
    )
    .await
    .unwrap();
    assert!(!report.cancelled);
    let found: BTreeSet<Identity> = report.missed.iter().map(identity).collect();
    assert_eq!(found, discarded, "exactly what the service gave up on");
    assert_eq!(report.missed.len(), discarded.len(), "each once");
    assert!(found.is_disjoint(&delivered));
    for missed in &report.missed {
        let product = if missed.subscription_id == *sb {
            &b
        } else {
            &a
        };
        assert_eq!(&missed.product_id, product, "{missed:?}");
        assert_ne!(
            missed.transaction_id, t1,
            "from before the listener went down"
        );
        assert_ne!(
            missed.transaction_id, t0,
            "from before the listener went down"
        );
        assert_ne!(missed.transaction_id, t4, "a product without subscriptions");
        assert!(missed.sent_at >= down);
        let tx_ref = format!(
            "{}/partner/v2/transactions/{}",
            world.sandbox.public_url(),
            missed.transaction_id
        );
        match missed.resource_type {
            Transaction => assert_eq!(missed.resource_ref, tx_ref),
            TransactionEvent => {
                assert_eq!(
                    missed.resource_ref,
                    format!("{tx_ref}/events/{}", missed.event_id)
                );
                assert_eq!(missed.event_type, Created);
            }
        }
    }
    // Only the types each subscription takes.
    let of = |sub: &String| {
        report
            .missed
            .iter()
            .filter(|m| &m.subscription_id == sub)
            .count()
    };
    assert_eq!((of(sa), of(su), of(se), of(sb)), (3, 2, 5, 2));
    assert!(report
        .missed
        .iter()
        .filter(|m| &m.subscription_id == su)
        .all(|m| m.event_type == Updated));
    for check in &report.subscriptions {
        assert_eq!(check.since, Some(down), "{check:?}");
        assert_eq!(check.since_source, Some(SinceSource::ListenerDown));
        assert_eq!(check.missed as usize, of(&check.subscription_id));
        assert_eq!(check.not_yet_due, 0);
    }
    assert!(report
        .missed
        .windows(2)
        .all(|w| w[0].sent_at <= w[1].sent_at));
    assert!(steps
        .iter()
        .any(|s| matches!(s, partner_local::missed::MissedProgress::Walking(_))));
    assert!(steps
        .iter()
        .any(|s| matches!(s, partner_local::missed::MissedProgress::Events { done, total } if done == total && *total > 0)));

    // Since a later time: nothing from before it.
    let later = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            since: Some(mid),
            ..query.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let later_found: BTreeSet<Identity> = later.missed.iter().map(identity).collect();
    assert_eq!(later.missed.len(), 2);
    assert!(later
        .missed
        .iter()
        .all(|m| m.transaction_id == t3 && &m.subscription_id == sb));
    assert!(later_found.is_subset(&discarded));

    // Since before the listener went down: the delivered ones are still not listed.
    let long_ago = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            since: Some(down - chrono::Duration::hours(1)),
            ..query.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let long_ago_found: BTreeSet<Identity> = long_ago.missed.iter().map(identity).collect();
    assert_eq!(long_ago_found, discarded);

    // One subscription.
    let only_su = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            subscription_id: Some(su.clone()),
            ..query.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(only_su.missed.len(), 2);
    assert_eq!(only_su.subscriptions.len(), 1);
    let unknown = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            subscription_id: Some("no-such-subscription".into()),
            ..query.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(
        unknown.to_string().contains("no-such-subscription"),
        "{unknown}"
    );

    // Events younger than `until` may still be on their way: counted, not listed.
    let early = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            until: Some(mid),
            ..query.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    assert!(early.missed.iter().all(|m| m.sent_at < mid));
    assert_eq!(early.missed.len(), discarded.len() - 2);
    let not_yet: u64 = early.subscriptions.iter().map(|s| s.not_yet_due).sum();
    assert_eq!(not_yet, 2);

    // A subscription this store never captured anything of (it points elsewhere) is left out
    // unless asked for: everything of it would look missed.
    let (d, subs_d) = world
        .product(
            "missed-d",
            "http://127.0.0.1:9/elsewhere",
            &[(Transaction, &[Created])],
        )
        .await;
    let t5 = world.creates(&d).await;
    world.settled().await;
    let now = MissedQuery {
        until: Some(Utc::now()),
        ..query.clone()
    };
    let scoped = find_missed(
        &world.client,
        &store,
        &now,
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    assert!(scoped.missed.iter().all(|m| m.transaction_id != t5));
    assert_eq!(scoped.missed.len(), discarded.len());
    let elsewhere = scoped
        .subscriptions
        .iter()
        .find(|c| c.subscription_id == subs_d[0])
        .unwrap();
    assert_eq!(elsewhere.since, None);
    assert_eq!(
        elsewhere.not_checked_because,
        Some(partner_local::missed::NotChecked::NeverCaptured)
    );
    let everything = find_missed(
        &world.client,
        &store,
        &MissedQuery {
            all_subscriptions: true,
            ..now.clone()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let of_d: Vec<_> = everything
        .missed
        .iter()
        .filter(|m| m.subscription_id == subs_d[0])
        .collect();
    assert_eq!(of_d.len(), 1);
    assert_eq!(of_d[0].transaction_id, t5);

    // Cancelled before it starts: says so, lists nothing.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let cancelled = find_missed(&world.client, &store, &query, &cancel, |_| {})
        .await
        .unwrap();
    assert!(cancelled.cancelled);
    assert!(cancelled.missed.is_empty());
    running.stop().await;
}

/// The check reads the API tolerantly: against another implementation of the service, which
/// leaves out what the spec does not pin or sends values the console does not know, it still
/// runs, checking what it can and leaving out (in the log) a subscription it cannot read.
#[tokio::test]
async fn the_check_reads_a_service_that_is_not_our_sandbox() {
    use partner_testkit::{Dialect, OtherService, Seed};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("captures.sqlite3"), Retention::default()).unwrap();
    let query = MissedQuery {
        since: Some(Utc::now() - chrono::Duration::days(3650)),
        until: Some(Utc::now()),
        all_subscriptions: true,
        ..MissedQuery::default()
    };
    let seed = Seed {
        products: 1,
        transactions: 60,
    };
    let mut expected = Vec::new();
    for dialect in [Dialect::default(), Dialect::minimal(), Dialect::extra()] {
        let service = OtherService::start_with(dialect, seed).await;
        let client = PartnerClient::new(
            ConnectionConfig::new(
                &service.base_url(),
                service.client_id(),
                service.client_secret().clone(),
            )
            .unwrap(),
        )
        .unwrap();
        let report = find_missed(
            &client,
            store.reader(),
            &query,
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        expected.push(
            report
                .subscriptions
                .iter()
                .map(|s| (s.subscription_id.clone(), s.expected, s.missed))
                .collect::<Vec<_>>(),
        );
    }
    // Our own product's subscription is checked from when the product last changed (a day
    // after it was made): the 21 transactions created after that each fired one notification
    // to it, none captured here.
    assert_eq!(expected[0], [("sub-0-transactions".to_string(), 21, 21)]);
    // Transactions without a product reference are on no checked product.
    assert_eq!(expected[1], [("sub-0-transactions".to_string(), 0, 0)]);
    // Subscriptions with an event or resource type the console does not know are not checked.
    assert_eq!(expected[2], []);
}

/// A sandbox's own delivery rules set the window in which a notification may still be on its
/// way (its retries after 50 ms, attempts of 2 s: 6.1 s, not the spec's 130); a service that is
/// not a sandbox has no such rules, and the spec's window stands.
#[tokio::test]
async fn a_sandbox_s_own_retry_settings_are_the_window_in_flight() {
    use partner_client::SandboxControl;
    use partner_local::missed::sandbox_give_up_window;
    let sandbox = quick_sandbox().await;
    let control = SandboxControl::new(sandbox.base_url(), None).unwrap();
    let window = sandbox_give_up_window(&control).await;
    assert_eq!(window, Some(Duration::from_millis(6_100)));
    let client = client_of(&sandbox);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("captures.sqlite3"), Retention::default()).unwrap();
    let asked = Utc::now();
    let report = find_missed(
        &client,
        store.reader(),
        &MissedQuery {
            give_up_window: window,
            ..MissedQuery::default()
        },
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let behind = asked - report.until;
    assert!(
        behind >= chrono::Duration::milliseconds(6_000) && behind < chrono::Duration::seconds(60),
        "up to the sandbox's window ago, not the spec's 130 s: {behind}"
    );

    let other = partner_testkit::OtherService::start(partner_testkit::Dialect::default()).await;
    let not_a_sandbox = SandboxControl::new(&other.base_url(), None).unwrap();
    assert_eq!(sandbox_give_up_window(&not_a_sandbox).await, None);
}

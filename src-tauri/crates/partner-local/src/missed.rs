//! The notifications that never arrived: what the service should have sent each subscription
//! since a point in time, worked out from the API itself, less what the listener captured.
//!
//! Why here: it needs the API client (`partner-client`) and the capture store
//! (`partner-listener`), and neither of those depends on the other; this crate already joins
//! them for the app and the CLI, so calls still go one way.
//!
//! How:
//! 1. The subscriptions come from the products, or the one asked for. By default only those this
//!    store has ever captured something of are checked: a subscription pointing at another
//!    receiver (the partner's own server) would otherwise show every notification as missed.
//!    [`MissedQuery::all_subscriptions`] or naming one checks it anyway.
//! 2. Each subscription is checked from its own `since`: the one given, else the last time the
//!    listener went down ([`partner_listener::runs`]), else its first capture. A subscription
//!    with none of them is not checked (said so in the report). One with no capture before its
//!    `since` may have been made after it: its `since` is then moved up to its product's
//!    `updated` (the latest the subscription can have been made), so events from before it
//!    existed are never reported.
//! 3. The transactions changed since the earliest `since` are walked newest first
//!    ([`PartnerClient::walk_updated_since`]: sorted by `-updated`, pages of at most 50, stopping
//!    at older ones), and the events of those on a checked product are read.
//! 4. Each event gives the notifications it fires (`partner_api::firing`: resource type, event
//!    type, eventId), each subscription of the transaction's product that takes one expects it
//!    when the event is at or after the subscription's `since` and before `until`.
//! 5. **Matching rule**: an expected notification arrived when the store holds a capture, of any
//!    verdict, with the same subscription (`Svc-SubscriptionId`), resource type and eventId,
//!    received at or after `since` less [`CLOCK_MARGIN`]. These three are what the service
//!    repeats on every attempt and what receivers deduplicate on (field notes, "Webhooks"):
//!    eventIds are the ids of the transaction events, not made per delivery, so they can be
//!    worked out again later. Times are not matched (the service's clock and this machine's
//!    differ; a retry arrives later than its event).
//!
//! Where the service does not sort by `updated` (the spec does not say it must), the walk reads
//! every transaction instead and the report says so (`full_walk`); transactions that name no
//! product cannot be matched to a subscription and are counted, not passed over
//! (`transactions_without_product`).
//!
//! What is not reported, on purpose (no false alarms): events before `since`; events younger
//! than `until` (by default the service's give-up window, [`GIVE_UP_AFTER`], before now: their
//! notifications may still be on their way); resource and event types a subscription does not
//! take; other products' transactions. Known limits: a custom event added to a transaction that
//! did not otherwise change since `since` is not seen (the listing is walked by the
//! transaction's `updated`, which a custom event leaves alone in the sandbox); captures removed
//! by retention or a clear look like notifications that never arrived.
//!
//! Where the arrivals come from is an [`ArrivalLog`]: this machine's capture store
//! ([`StoreReader`], and a [`Store`] through it), or a team workspace's database (partner-server
//! implements it over its captures table and calls this same [`find_missed`]), so the matching
//! rule has one home whichever store the notifications reached.

use crate::{Error, Result};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use partner_api::delivery::GIVE_UP_AFTER;
use partner_api::firing::fired_by_event;
use partner_api::read::{self, Document};
use partner_api::{EventType, ResourceType, SortSpec, WebhookSubscription};
use partner_client::{PagerOptions, PartnerClient, WalkEnd, WalkProgress, WALK_PAGER};
use partner_listener::{Store, StoreReader};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::ops::ControlFlow;
use tokio_util::sync::CancellationToken;

/// Captures received this long before a subscription's `since` still count as arrivals: the
/// service stamps events with its clock, the listener captures with this machine's.
pub const CLOCK_MARGIN: chrono::Duration = chrono::Duration::minutes(10);

/// Event lists read at once after the walk.
const EVENT_READS_IN_FLIGHT: usize = 4;

/// What [`find_missed`] reads of the notifications that arrived: three facts, whatever holds
/// them. Async, so a database across the network can answer; `Send` futures, so a server can
/// run the check in its handlers.
pub trait ArrivalLog {
    /// The last time the receiver went down; `None` when there is no such record (a team
    /// workspace's servers keep none: each subscription's `since` is then its first capture).
    /// `listening_now`: the receiver is serving now, so its current run has not ended.
    fn last_down(
        &self,
        listening_now: bool,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send;

    /// When the first capture of `subscription_id` still held was received.
    fn first_capture(
        &self,
        subscription_id: &str,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send;

    /// The (resource type, eventId) of every notification of `subscription_id` received at or
    /// after `since`, of any verdict (a request that arrived was not missed), each once.
    fn arrived_since(
        &self,
        subscription_id: &str,
        since: DateTime<Utc>,
    ) -> impl Future<Output = Result<HashSet<(String, String)>>> + Send;
}

/// This machine's capture store, read as it always was (its reads are local and quick, so each
/// answer is ready at once).
impl ArrivalLog for StoreReader {
    fn last_down(
        &self,
        listening_now: bool,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send {
        std::future::ready(self.last_down_time(listening_now).map_err(Error::from))
    }

    fn first_capture(
        &self,
        subscription_id: &str,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send {
        std::future::ready(self.first_capture_of(subscription_id).map_err(Error::from))
    }

    fn arrived_since(
        &self,
        subscription_id: &str,
        since: DateTime<Utc>,
    ) -> impl Future<Output = Result<HashSet<(String, String)>>> + Send {
        std::future::ready(
            StoreReader::arrived_since(self, subscription_id, since)
                .map(|arrived| {
                    arrived
                        .into_iter()
                        .map(|a| (a.resource_type, a.event_id))
                        .collect()
                })
                .map_err(Error::from),
        )
    }
}

/// The store a listener writes, read through its reader (the app holds one).
impl ArrivalLog for Store {
    fn last_down(
        &self,
        listening_now: bool,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send {
        ArrivalLog::last_down(&**self, listening_now)
    }

    fn first_capture(
        &self,
        subscription_id: &str,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>>> + Send {
        ArrivalLog::first_capture(&**self, subscription_id)
    }

    fn arrived_since(
        &self,
        subscription_id: &str,
        since: DateTime<Utc>,
    ) -> impl Future<Output = Result<HashSet<(String, String)>>> + Send {
        ArrivalLog::arrived_since(&**self, subscription_id, since)
    }
}

/// A notification the service should have sent a subscription, of which nothing arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MissedNotification {
    pub subscription_id: String,
    pub product_id: String,
    /// The product's `name` (`$.meta.instanceId`).
    pub product_name: String,
    pub resource_type: ResourceType,
    pub event_type: EventType,
    /// `$.eventId`: the id of the transaction event behind it.
    pub event_id: String,
    /// `$.meta.resourceId`: the transaction's id or the event's.
    pub resource_id: String,
    /// `$.meta.resourceRef`: where to open the resource.
    pub resource_ref: String,
    pub transaction_id: String,
    /// When the service would have sent it (`$.eventTime`, the service's clock).
    pub sent_at: DateTime<Utc>,
}

/// Where a subscription's `since` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SinceSource {
    /// Given by the caller.
    Given,
    /// The last time the listener went down.
    ListenerDown,
    /// The subscription's first capture (the listener has no record of going down).
    FirstCapture,
    /// Moved up to the product's last change: the subscription may not have existed before.
    ProductChanged,
}

/// Why a subscription was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum NotChecked {
    /// This store never captured anything of it: it may point at another receiver.
    NeverCaptured,
    /// No `since` given, no record of the listener going down, no capture of it.
    NoSince,
}

/// How one subscription was checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionCheck {
    pub subscription_id: String,
    pub product_id: String,
    pub resource: ResourceType,
    pub events: Vec<EventType>,
    /// From when it was checked; `None`: not checked (see `not_checked_because`).
    pub since: Option<DateTime<Utc>>,
    /// Why it was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub not_checked_because: Option<NotChecked>,
    pub since_source: Option<SinceSource>,
    /// Notifications it should have had in `[since, until)`.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub expected: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub missed: u64,
    /// Notifications of events after `until`, which may still be on their way.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub not_yet_due: u64,
}

/// What [`find_missed`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MissedReport {
    /// Oldest first.
    pub missed: Vec<MissedNotification>,
    pub subscriptions: Vec<SubscriptionCheck>,
    pub until: DateTime<Utc>,
    /// Transactions read from the listing and those whose events were read.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub transactions_read: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub transactions_checked: u64,
    /// Transactions changed in the window that name no product (a faithful service may leave
    /// `product` out): which subscription should have heard of them cannot be told, so they
    /// are not checked, and said so here rather than passed over.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    #[serde(default)]
    pub transactions_without_product: u64,
    /// The service refused `sort=-updated`, so every transaction was read (the service's
    /// words); the answer is complete, only slower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub full_walk: Option<String>,
    /// The walk was cancelled: `missed` covers what was read until then.
    pub cancelled: bool,
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct MissedQuery {
    /// Only this subscription.
    pub subscription_id: Option<String>,
    /// From this time for every subscription; `None`: each one's default (see the module).
    pub since: Option<DateTime<Utc>>,
    /// Up to this time (service clock); `None`: now less the service's give-up window.
    pub until: Option<DateTime<Utc>>,
    /// The service's give-up window: how long a notification may still be on its way (a
    /// sandbox's own, from [`sandbox_give_up_window`]); `None`: the spec's, [`GIVE_UP_AFTER`].
    pub give_up_window: Option<std::time::Duration>,
    /// Check every subscription of the products, also those this store never captured
    /// anything of (by default they are left out: they may point at another receiver).
    pub all_subscriptions: bool,
    /// A listener is serving the store now (its run has not ended), so the last time it went
    /// down is the end of the run before. `partner_listener::writer_lock::is_held` tells.
    pub listening_now: bool,
}

/// Where a check is.
#[derive(Debug, Clone, PartialEq)]
pub enum MissedProgress {
    /// Reading the products and their subscriptions.
    Subscriptions,
    /// Walking the transactions changed since the earliest `since`.
    Walking(WalkProgress),
    /// Reading the events of the transactions found.
    Events { done: u64, total: u64 },
}

/// A subscription being checked, with its product and `since`.
struct Checked {
    subscription: WebhookSubscription,
    product_id: String,
    since: DateTime<Utc>,
    arrived: HashSet<(String, String)>,
}

/// A sandbox's own give-up window, from its delivery rules (`GET /sandbox/v1/delivery`): a demo
/// sandbox that retries after 2 s gives a notification up in seconds, so waiting the spec's
/// 130 s before calling it missed would hide it. `None` (the spec's window applies) when the
/// service does not answer as a sandbox; said in the log, never an error.
pub async fn sandbox_give_up_window(
    control: &partner_client::SandboxControl,
) -> Option<std::time::Duration> {
    match control.delivery_settings().await {
        Ok(settings) => Some(settings.give_up_after()),
        Err(error) => {
            tracing::info!(%error, "no delivery rules from the sandbox: the spec's window applies");
            None
        }
    }
}

/// Finds the notifications the service should have sent since each subscription's `since` and
/// that never reached `store` (this machine's capture store, or a workspace's: see
/// [`ArrivalLog`] and the module's notes for the rules).
pub async fn find_missed<A: ArrivalLog>(
    client: &PartnerClient,
    store: &A,
    query: &MissedQuery,
    cancel: &CancellationToken,
    mut progress: impl FnMut(MissedProgress),
) -> Result<MissedReport> {
    progress(MissedProgress::Subscriptions);
    let window = query.give_up_window.unwrap_or(GIVE_UP_AFTER);
    let until = query.until.unwrap_or_else(|| {
        Utc::now() - chrono::Duration::from_std(window).unwrap_or(chrono::Duration::zero())
    });
    let products = all_products(client).await?;
    let down = store.last_down(query.listening_now).await?;
    let mut found_asked = query.subscription_id.is_none();
    let mut checks = Vec::new();
    let mut checked: Vec<Checked> = Vec::new();
    for product in &products {
        for shown in &product.webhooks {
            // Which notifications a subscription takes is known only for the resource and
            // event types the spec shows; one with another (or without an id) is left out,
            // and said so in the log.
            let Ok(subscription) =
                partner_client::to_record::<WebhookSubscription>("a subscription", shown)
            else {
                tracing::warn!(
                    product = %product.id,
                    subscription = shown.subscription_id.as_deref().unwrap_or("(no id)"),
                    "a subscription with a resource or event type the console does not know is not checked"
                );
                continue;
            };
            let subscription = &subscription;
            if let Some(asked) = &query.subscription_id {
                if &subscription.subscription_id != asked {
                    continue;
                }
            }
            found_asked = true;
            let id = &subscription.subscription_id;
            let first_capture = store.first_capture(id).await?;
            let in_scope = first_capture.is_some()
                || query.all_subscriptions
                || query.subscription_id.is_some();
            let chosen = match (query.since, down) {
                (Some(since), _) => Some((since, SinceSource::Given)),
                (None, Some(down)) => Some((down, SinceSource::ListenerDown)),
                (None, None) => first_capture.map(|first| (first, SinceSource::FirstCapture)),
            };
            let chosen = match chosen {
                _ if !in_scope => None,
                Some((since, source)) => {
                    let known_before = first_capture.is_some_and(|first| first <= since);
                    // A product that does not say when it changed cannot move `since` up.
                    let changed = product.updated.filter(|updated| *updated > since);
                    if let (false, Some(updated)) = (known_before, changed) {
                        Some((updated, SinceSource::ProductChanged))
                    } else {
                        Some((since, source))
                    }
                }
                None => None,
            };
            checks.push(SubscriptionCheck {
                subscription_id: id.clone(),
                product_id: product.id.clone(),
                resource: subscription.resource,
                events: subscription.events.clone(),
                since: chosen.map(|(since, _)| since),
                not_checked_because: match (in_scope, chosen) {
                    (false, _) => Some(NotChecked::NeverCaptured),
                    (true, None) => Some(NotChecked::NoSince),
                    (true, Some(_)) => None,
                },
                since_source: chosen.map(|(_, source)| source),
                expected: 0,
                missed: 0,
                not_yet_due: 0,
            });
            if let Some((since, _)) = chosen {
                let arrived = store.arrived_since(id, since - CLOCK_MARGIN).await?;
                checked.push(Checked {
                    subscription: subscription.clone(),
                    product_id: product.id.clone(),
                    since,
                    arrived,
                });
            }
        }
    }
    if !found_asked {
        return Err(Error::Invalid(format!(
            "no subscription {} on this connection's products",
            query.subscription_id.as_deref().unwrap_or_default()
        )));
    }
    let mut report = MissedReport {
        missed: Vec::new(),
        subscriptions: checks,
        until,
        transactions_read: 0,
        transactions_checked: 0,
        transactions_without_product: 0,
        full_walk: None,
        cancelled: false,
    };
    let Some(earliest) = checked.iter().map(|c| c.since).min() else {
        return Ok(report);
    };
    let products_checked: HashSet<&str> = checked.iter().map(|c| c.product_id.as_str()).collect();

    // The transactions changed since the earliest `since`, on a checked product, once each.
    let mut transactions: BTreeMap<String, Document<read::TransactionView>> = BTreeMap::new();
    let walk = client
        .walk_updated_since::<read::TransactionView>(
            earliest,
            WALK_PAGER,
            cancel,
            |walked| progress(MissedProgress::Walking(walked.clone())),
            |transaction| {
                report.transactions_read += 1;
                match transaction.product_id() {
                    Some(id) if products_checked.contains(id) => {
                        transactions.insert(transaction.id.clone(), transaction);
                    }
                    Some(_) => {}
                    None => report.transactions_without_product += 1,
                }
                ControlFlow::Continue(())
            },
        )
        .await?;
    report.full_walk = walk.progress.fallback.clone();
    if walk.end == WalkEnd::Cancelled {
        report.cancelled = true;
        return Ok(report);
    }

    let total = transactions.len() as u64;
    progress(MissedProgress::Events { done: 0, total });
    let mut reads = futures::stream::iter(transactions.into_values().map(|transaction| {
        let client = client.clone();
        async move {
            let events = client.list_events(&transaction.id).await;
            (transaction, events)
        }
    }))
    .buffer_unordered(EVENT_READS_IN_FLIGHT);
    let base_url = client.base_url().as_str().to_owned();
    let mut by_subscription: HashMap<&str, usize> = HashMap::new();
    for (index, check) in report.subscriptions.iter().enumerate() {
        by_subscription.insert(check.subscription_id.as_str(), index);
    }
    let mut counts = vec![(0u64, 0u64, 0u64); report.subscriptions.len()];
    let mut missed = Vec::new();
    let mut done = 0;
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                report.cancelled = true;
                break;
            }
            next = reads.next() => next,
        };
        let Some((transaction, events)) = next else {
            break;
        };
        let events = match events {
            Ok(events) => events,
            // Gone since the walk (or no longer ours): nothing to expect of it.
            Err(error) if error.kind() == partner_client::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(error.into()),
        };
        let product_id = transaction.product_id().unwrap_or_default();
        for event in &events {
            // An event without a type or a time cannot be told what it fired, nor when.
            let (Some(event_type), Some(sent)) = (event.event_type.as_deref(), event.sent) else {
                continue;
            };
            for fired in fired_by_event(&transaction.id, &event.id, event_type, sent) {
                for check in &checked {
                    if check.product_id != product_id
                        || !fired.is_taken_by(&check.subscription)
                        || fired.event_time < check.since
                    {
                        continue;
                    }
                    let slot = by_subscription
                        .get(check.subscription.subscription_id.as_str())
                        .copied();
                    let Some(slot) = slot else { continue };
                    if fired.event_time >= until {
                        counts[slot].2 += 1;
                        continue;
                    }
                    counts[slot].0 += 1;
                    let key = (
                        fired.resource_type.as_str().to_owned(),
                        fired.event_id.clone(),
                    );
                    if check.arrived.contains(&key) {
                        continue;
                    }
                    counts[slot].1 += 1;
                    missed.push(MissedNotification {
                        subscription_id: check.subscription.subscription_id.clone(),
                        product_id: product_id.to_owned(),
                        product_name: transaction.product_name().unwrap_or_default().to_owned(),
                        resource_type: fired.resource_type,
                        event_type: fired.event_type,
                        event_id: fired.event_id.clone(),
                        resource_id: fired.resource_id.clone(),
                        resource_ref: fired.resource_ref(&base_url),
                        transaction_id: transaction.id.clone(),
                        sent_at: fired.event_time,
                    });
                }
            }
        }
        done += 1;
        report.transactions_checked = done;
        progress(MissedProgress::Events { done, total });
    }
    for (check, (expected, missed, not_yet_due)) in report.subscriptions.iter_mut().zip(counts) {
        check.expected = expected;
        check.missed = missed;
        check.not_yet_due = not_yet_due;
    }
    missed.sort_by(|a, b| {
        (
            a.sent_at,
            &a.subscription_id,
            a.resource_type.as_str(),
            &a.event_id,
        )
            .cmp(&(
                b.sent_at,
                &b.subscription_id,
                b.resource_type.as_str(),
                &b.event_id,
            ))
    });
    report.missed = missed;
    Ok(report)
}

/// Every product of the connection (their subscriptions, and when each last changed).
async fn all_products(client: &PartnerClient) -> Result<Vec<Document<read::ProductView>>> {
    let mut pages =
        client.pager::<read::ProductView>(SortSpec::default(), PagerOptions::default())?;
    let mut products = Vec::new();
    while let Some(product) = pages.next().await {
        products.push(product?);
    }
    Ok(products)
}

//! "Did they get it?": a transaction's notifications, from what the console already records.
//!
//! Every notification about a transaction carries the id of one of its events as `eventId`
//! (field notes, "Webhooks"), and names the transaction in its `resourceRef`, so:
//! - the listener's captures are those the store finds for the transaction's id (the search
//!   index; what it has not indexed yet is scanned), kept when their resource is the transaction,
//!   one of its events, or a `resourceRef` under it; each with its forwards and replays;
//! - the service's own delivery records, where it keeps them (a sandbox), are read per event id.
//!
//! They are grouped per notification (subscription, resource type, eventId: what the service
//! repeats on every attempt) and each group is told in order: the service's attempts, each with
//! the listener's capture of it, then what the console sent (see `in_causal_order`: the two
//! sides' times come from two clocks). Nothing new is stored.
use crate::bridge::{NotificationStory, StoryEntry, StoryStep, TransactionNotifications};
use crate::error::{AppError, Result};
use crate::state::AppState;
use partner_api::DeliveryRecord;
use partner_listener::capture::{Capture, OutboundKind, OutboundRecord};
use partner_listener::outbound::{RECOVERY, REPLAY_HEADER};
use partner_listener::CaptureFilter;
use partner_local::Environment;
use std::collections::{BTreeMap, BTreeSet};

/// A capture and the forwards and replays made from it.
type CaptureWithSends = (Capture, Vec<OutboundRecord>);

/// The most captures read for one transaction (the newest).
const CAPTURES_READ: u64 = 500;
/// The most events whose delivery records are read from a sandbox over HTTP.
const EVENTS_ASKED: usize = 100;

/// Everything the console knows about the notifications of transaction `transaction_id`.
pub async fn timeline(state: &AppState, transaction_id: &str) -> Result<TransactionNotifications> {
    let transaction_id = transaction_id.trim().to_string();
    if transaction_id.is_empty() {
        return Err(AppError::invalid("Name the transaction."));
    }
    let client = state.client()?;
    let event_ids: BTreeSet<String> = client
        .list_events(&transaction_id)
        .await?
        .iter()
        .map(|event| event.id.clone())
        .collect();
    timeline_of(state, transaction_id, event_ids).await
}

/// The timeline of a transaction whose events' ids are already read.
async fn timeline_of(
    state: &AppState,
    transaction_id: String,
    event_ids: BTreeSet<String>,
) -> Result<TransactionNotifications> {
    let (captured, captures_capped, captures_note) = match state.captures() {
        Ok(store) => {
            let id = transaction_id.clone();
            let events = event_ids.clone();
            let read = crate::services::captures::read(store, move |store| {
                Ok(captures_of(store, &id, &events)?)
            })
            .await?;
            (read.0, read.1, None)
        }
        Err(error) => (Vec::new(), false, Some(error.message)),
    };

    let (deliveries, deliveries_note) = delivery_records(state, &event_ids).await;
    Ok(TransactionNotifications {
        notifications: stories(&captured, &deliveries),
        transaction_id,
        deliveries_note,
        captures_note,
        captures_capped,
    })
}

/// The story of one notification (subscription, resource type, eventId), from the captures
/// that carry its eventId and, for a sandbox, the service's record of that event. `None` when
/// the console knows nothing of it.
pub async fn story_of(state: &AppState, key: NotificationKey) -> Result<Option<NotificationStory>> {
    let event_id = key.2.clone();
    let captured = match state.captures() {
        Ok(store) => {
            let wanted = key.clone();
            crate::services::captures::read(store, move |store| {
                Ok(captures_of_notification(store, &wanted)?)
            })
            .await?
        }
        Err(_) => Vec::new(),
    };
    let (deliveries, _) = delivery_records(state, &BTreeSet::from([event_id])).await;
    Ok(stories(&captured, &deliveries).into_iter().find(|story| {
        story.subscription_id == key.0 && story.resource_type == key.1 && story.event_id == key.2
    }))
}

/// The captures of one notification (found by its eventId), each with its forwards and replays.
fn captures_of_notification(
    store: &partner_listener::Store,
    key: &NotificationKey,
) -> partner_listener::Result<Vec<CaptureWithSends>> {
    let filter = CaptureFilter {
        text: Some(key.2.clone()),
        ..CaptureFilter::default()
    };
    let mut kept = Vec::new();
    for capture in store.query(&filter, 0, CAPTURES_READ)?.items {
        let same = capture.subscription_id.as_deref().unwrap_or_default() == key.0
            && capture.fields.resource_type.as_deref().unwrap_or_default() == key.1
            && capture.fields.event_id.as_deref() == Some(key.2.as_str());
        if same {
            let outbound = store.outbound_of(capture.id)?;
            kept.push((capture, outbound));
        }
    }
    Ok(kept)
}

/// What a transaction's evidence file holds, in this order.
const EVIDENCE_KIND: &str = "partner-console transaction evidence";

/// The transaction's evidence for a support ticket, written where the user chooses in the save
/// dialog: the transaction and its events exactly as the service sent them, and the
/// notifications' timeline, with the connection they came from. It holds what the service
/// answered and what the console recorded of the notifications (no header, no body, so no
/// signature or secret): `count` is the number of notifications in it.
pub async fn save_evidence(
    app: &crate::console::Console,
    transaction_id: &str,
) -> Result<crate::bridge::FileJobResult> {
    let state = app.state();
    let transaction_id = transaction_id.trim();
    if transaction_id.is_empty() {
        return Err(AppError::invalid("Name the transaction."));
    }
    let client = state.client()?;
    let transaction = client.get_transaction(transaction_id).await?.into_raw();
    let events = client.list_events(transaction_id).await?;
    let event_ids = events.iter().map(|event| event.id.clone()).collect();
    let events: Vec<serde_json::Map<String, serde_json::Value>> = events
        .into_iter()
        .map(partner_api::read::Document::into_raw)
        .collect();
    let timeline = timeline_of(state, transaction_id.to_string(), event_ids).await?;
    let connection = state.lock().active.as_ref().map(|a| {
        serde_json::json!({
            "label": a.view.label,
            "baseUrl": a.view.base_url,
            "environment": a.view.environment,
        })
    });
    let bundle = serde_json::json!({
        "kind": EVIDENCE_KIND,
        "version": 1,
        "generatedAt": chrono::Utc::now(),
        "connection": connection,
        "transaction": transaction,
        "events": events,
        "notifications": timeline,
    });
    let short: String = transaction_id.chars().take(8).collect();
    let choice = crate::services::file_dialog::FileChoice {
        title: "Save the transaction's evidence".into(),
        suggested_name: crate::services::file_dialog::suggested_name(
            &format!("transaction-{short}-evidence"),
            "json",
        ),
        folder: state.exports_dir(),
        kind: "JSON",
        extensions: &["json"],
    };
    let Some(path) = crate::services::file_dialog::save(app, choice).await else {
        return Ok(crate::bridge::FileJobResult::closed());
    };
    let count = timeline.notifications.len() as u64;
    let target = path.clone();
    tokio::task::spawn_blocking(move || {
        crate::services::captures::write_replacing(&target, |out| {
            serde_json::to_writer_pretty(&mut *out, &bundle)
                .map_err(|e| AppError::io("write the evidence", &std::io::Error::other(e)))?;
            Ok((true, ()))
        })
    })
    .await
    .map_err(|e| {
        AppError::new(
            crate::error::ErrorKind::Internal,
            format!("Writing the evidence failed: {e}."),
            "Try again.",
        )
    })??;
    Ok(crate::bridge::FileJobResult {
        path: Some(path.display().to_string()),
        count,
        skipped: 0,
        cancelled: false,
    })
}

/// The captures about the transaction, newest first, each with its forwards and replays, and
/// whether more matched than were read.
fn captures_of(
    store: &partner_listener::Store,
    transaction_id: &str,
    event_ids: &BTreeSet<String>,
) -> partner_listener::Result<(Vec<CaptureWithSends>, bool)> {
    let filter = CaptureFilter {
        text: Some(transaction_id.to_string()),
        ..CaptureFilter::default()
    };
    let found = store.query(&filter, 0, CAPTURES_READ)?;
    let capped = found.total > found.items.len() as u64;
    let under = format!("/transactions/{transaction_id}");
    let mut kept = Vec::new();
    for capture in found.items {
        let fields = &capture.fields;
        let about = fields.resource_id.as_deref() == Some(transaction_id)
            || fields
                .resource_id
                .as_deref()
                .is_some_and(|id| event_ids.contains(id))
            || fields
                .resource_ref
                .as_deref()
                .is_some_and(|r| r.contains(&under));
        if about {
            let outbound = store.outbound_of(capture.id)?;
            kept.push((capture, outbound));
        }
    }
    Ok((kept, capped))
}

/// The service's delivery records of the events, where it keeps them (a sandbox connection),
/// or why there are none.
async fn delivery_records(
    state: &AppState,
    event_ids: &BTreeSet<String>,
) -> (Vec<DeliveryRecord>, Option<String>) {
    let Some(view) = state.lock().active.as_ref().map(|a| a.view.clone()) else {
        return (Vec::new(), Some("No connection is active.".into()));
    };
    if !view.embedded && view.environment != Environment::Sandbox {
        return (
            Vec::new(),
            Some("A production service keeps no delivery records the console can read: only what the listener received is shown.".into()),
        );
    }
    let mut records = Vec::new();
    for event_id in event_ids.iter().take(EVENTS_ASKED) {
        match crate::services::deliveries::records(state, &view, Some(event_id)).await {
            Ok(found) => records.extend(found),
            Err(error) => {
                return (
                    records,
                    Some(format!(
                        "The service's delivery records could not be read: {}",
                        error.message
                    )),
                )
            }
        }
    }
    let note = (event_ids.len() > EVENTS_ASKED).then(|| {
        format!(
            "The service's delivery records of the first {EVENTS_ASKED} of {} events are shown.",
            event_ids.len()
        )
    });
    (records, note)
}

/// What identifies a notification: subscription, resource type, eventId.
pub type NotificationKey = (String, String, String);

/// The timeline of each notification, newest notification first.
fn stories(captured: &[CaptureWithSends], deliveries: &[DeliveryRecord]) -> Vec<NotificationStory> {
    let mut by_key: BTreeMap<NotificationKey, NotificationStory> = BTreeMap::new();
    for record in deliveries {
        let key = (
            record.subscription_id.clone(),
            record.resource_type.as_str().to_string(),
            record.event_id.clone(),
        );
        let entry = entry_of(&mut by_key, key, record.event_type.as_str());
        for attempt in &record.attempts {
            entry.entries.push(StoryEntry {
                at: attempt.started_at,
                step: StoryStep::ServiceAttempt,
                capture_id: None,
                attempt: Some(attempt.number),
                status: attempt.status,
                verdict: None,
                matched_key: None,
                error: attempt.error.clone(),
                url: Some(record.url.clone()),
                elapsed_ms: Some(attempt.duration_ms),
            });
        }
        if record.state.as_str() == "discarded" {
            let at = record
                .attempts
                .last()
                .map(|a| a.finished_at)
                .unwrap_or(record.enqueued_at);
            entry.entries.push(StoryEntry {
                at,
                step: StoryStep::ServiceGaveUp,
                capture_id: None,
                attempt: record.attempts.last().map(|a| a.number),
                status: None,
                verdict: None,
                matched_key: None,
                error: record.not_sent_because.clone(),
                url: Some(record.url.clone()),
                elapsed_ms: None,
            });
        }
        entry.outcome = record.state.as_str().to_string();
        entry.queued_at = Some(record.enqueued_at);
    }

    for (capture, outbound) in captured {
        let fields = &capture.fields;
        let key = (
            capture.subscription_id.clone().unwrap_or_default(),
            fields.resource_type.clone().unwrap_or_default(),
            fields.event_id.clone().unwrap_or_default(),
        );
        let entry = entry_of(
            &mut by_key,
            key,
            fields.event_type.as_deref().unwrap_or_default(),
        );
        let recovery = capture
            .header(REPLAY_HEADER)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(RECOVERY));
        entry.entries.push(StoryEntry {
            at: capture.received_at,
            step: match (capture.replay, recovery) {
                (true, true) => StoryStep::RecoveryCaptured,
                (true, false) => StoryStep::ReplayCaptured,
                (false, _) => StoryStep::Captured,
            },
            capture_id: Some(capture.id),
            attempt: (!capture.replay).then_some(capture.attempt),
            status: Some(capture.response.status),
            verdict: Some(capture.verdict),
            matched_key: capture.matched_key,
            error: None,
            url: None,
            elapsed_ms: None,
        });
        for record in outbound {
            entry.entries.push(StoryEntry {
                at: record.sent_at,
                step: match record.kind {
                    OutboundKind::Forward => StoryStep::Forwarded,
                    OutboundKind::Replay | OutboundKind::ReplayEdited => StoryStep::Replayed,
                },
                capture_id: Some(capture.id),
                attempt: None,
                status: record.status,
                verdict: None,
                matched_key: None,
                error: record.error.clone(),
                url: Some(record.url.clone()),
                elapsed_ms: Some(record.elapsed_ms),
            });
        }
    }

    let mut stories: Vec<NotificationStory> = by_key
        .into_values()
        .map(|mut story| {
            story.entries = in_causal_order(std::mem::take(&mut story.entries));
            if story.outcome.is_empty() {
                story.outcome = outcome_from_captures(&story.entries).to_string();
            }
            story
        })
        .collect();
    stories.sort_by_key(|s| std::cmp::Reverse(s.entries.first().map(|e| e.at)));
    stories
}

/// The service's steps and the console's are stamped by two clocks (the service's, which a
/// sandbox can move on, and this machine's), so a story is not sorted by time across them: each
/// of the service's attempts is followed by the listener's capture of it (the same attempt
/// number) and the forward made from that capture; the console's other steps (replays,
/// recoveries, captures the service's record does not name) follow in their own time order.
fn in_causal_order(entries: Vec<StoryEntry>) -> Vec<StoryEntry> {
    let (mut service, mut console): (Vec<StoryEntry>, Vec<StoryEntry>) = entries
        .into_iter()
        .partition(|e| matches!(e.step, StoryStep::ServiceAttempt | StoryStep::ServiceGaveUp));
    service.sort_by_key(|e| (e.step == StoryStep::ServiceGaveUp, e.attempt, e.at));
    console.sort_by_key(|e| e.at);
    let mut ordered = Vec::with_capacity(service.len() + console.len());
    for step in service {
        let attempt = (step.step == StoryStep::ServiceAttempt)
            .then_some(step.attempt)
            .flatten();
        ordered.push(step);
        let Some(number) = attempt else { continue };
        let Some(at) = console
            .iter()
            .position(|e| e.step == StoryStep::Captured && e.attempt == Some(number))
        else {
            continue;
        };
        let capture = console.remove(at);
        let id = capture.capture_id;
        ordered.push(capture);
        let (forwards, rest): (Vec<StoryEntry>, Vec<StoryEntry>) = console
            .into_iter()
            .partition(|e| e.step == StoryStep::Forwarded && e.capture_id == id);
        ordered.extend(forwards);
        console = rest;
    }
    ordered.extend(console);
    ordered
}

fn entry_of<'a>(
    by_key: &'a mut BTreeMap<NotificationKey, NotificationStory>,
    key: NotificationKey,
    event_type: &str,
) -> &'a mut NotificationStory {
    let (subscription_id, resource_type, event_id) = key.clone();
    let story = by_key.entry(key).or_insert_with(|| NotificationStory {
        subscription_id,
        resource_type,
        event_type: String::new(),
        event_id,
        outcome: String::new(),
        queued_at: None,
        entries: Vec::new(),
    });
    if story.event_type.is_empty() {
        story.event_type = event_type.to_string();
    }
    story
}

/// Without the service's record: the listener's last answer to the service, else what the
/// console itself sent.
fn outcome_from_captures(entries: &[StoryEntry]) -> &'static str {
    let last_answer = entries
        .iter()
        .rev()
        .find(|e| e.step == StoryStep::Captured)
        .and_then(|e| e.status);
    match last_answer {
        Some(status) if partner_api::delivery::acknowledges(status) => "acknowledged",
        Some(_) => "refused",
        None if entries
            .iter()
            .any(|e| e.step == StoryStep::RecoveryCaptured) =>
        {
            "recovered"
        }
        None => "replayed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn entry(
        step: StoryStep,
        minute: u32,
        attempt: Option<u32>,
        capture_id: Option<i64>,
    ) -> StoryEntry {
        StoryEntry {
            at: chrono::Utc
                .with_ymd_and_hms(2026, 1, 1, 0, minute, 0)
                .unwrap(),
            step,
            capture_id,
            attempt,
            status: None,
            verdict: None,
            matched_key: None,
            error: None,
            url: None,
            elapsed_ms: None,
        }
    }

    #[test]
    fn each_service_attempt_is_followed_by_its_capture_whatever_the_clocks_say() {
        use StoryStep::*;
        // The service's clock runs 30 minutes ahead of this machine's.
        let told = in_causal_order(vec![
            entry(RecoveryCaptured, 50, None, Some(9)),
            entry(Forwarded, 1, None, Some(4)),
            entry(ServiceGaveUp, 32, Some(3), None),
            entry(ServiceAttempt, 31, Some(2), None),
            entry(Captured, 1, Some(2), Some(4)),
            entry(ServiceAttempt, 30, Some(1), None),
            entry(Replayed, 45, None, Some(4)),
        ]);
        let steps: Vec<(StoryStep, Option<u32>)> =
            told.iter().map(|e| (e.step, e.attempt)).collect();
        assert_eq!(
            steps,
            vec![
                (ServiceAttempt, Some(1)),
                (ServiceAttempt, Some(2)),
                (Captured, Some(2)),
                (Forwarded, None),
                (ServiceGaveUp, Some(3)),
                (Replayed, None),
                (RecoveryCaptured, None),
            ]
        );
    }

    #[test]
    fn without_the_service_s_record_the_console_s_steps_are_in_time_order() {
        use StoryStep::*;
        let mut refused = entry(Captured, 1, Some(1), Some(1));
        refused.status = Some(503);
        let told = in_causal_order(vec![entry(ReplayCaptured, 5, None, Some(2)), refused]);
        assert_eq!(told[0].step, Captured);
        assert_eq!(outcome_from_captures(&told), "refused");
        let mut taken = entry(Captured, 9, Some(2), Some(3));
        taken.status = Some(200);
        assert_eq!(
            outcome_from_captures(&[told[0].clone(), taken]),
            "acknowledged"
        );
        assert_eq!(
            outcome_from_captures(&[entry(RecoveryCaptured, 1, None, Some(4))]),
            "recovered"
        );
    }
}

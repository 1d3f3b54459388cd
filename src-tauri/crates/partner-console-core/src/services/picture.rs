//! The life of a notification, drawn (`crate::notification_diagram`): for the window, the inspector's and a
//! transaction's picture and the Demo's live one, and exported as SVG or PNG for slides.
//!
//! The story is read as "Did they get it?" reads it (`transaction_notifications`: the listener's
//! captures, forwards and replays, and a sandbox's delivery records), so the picture shows
//! exactly what the timeline says.
use crate::bridge::{
    FileJobResult, NotificationPicture, NotificationStory, OpenResource, PictureFormat, PictureOf,
};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::notification_diagram::{self as diagram, Answer, Palette, Setting};
use crate::services::transaction_notifications::{self, NotificationKey};
use crate::state::AppState;
use chrono::{DateTime, Utc};
use partner_client::{WriteAction, WriteOutcome};

/// A PNG is drawn at twice the picture's size, sharp on a slide.
pub const PNG_SCALE: f32 = 2.0;

/// The picture of the notification `of` names; `None` while the console knows nothing of it
/// (a transaction none of whose notifications has been sent yet).
pub async fn draw(state: &AppState, of: PictureOf) -> Result<Option<NotificationPicture>> {
    let Some((story, transaction)) = story(state, of).await? else {
        return Ok(None);
    };
    let setting = setting(state, &story, transaction.as_deref()).await;
    let drawn = diagram::draw(&story, &setting, Palette::Screen);
    Ok(Some(NotificationPicture {
        svg: drawn.svg,
        width: drawn.width,
        height: drawn.height,
        title: setting.title,
        story,
    }))
}

/// The picture written as an SVG (fixed colours on white) or a PNG at [`PNG_SCALE`], where the
/// user chooses in the save dialog.
pub async fn export(app: &Console, of: PictureOf, format: PictureFormat) -> Result<FileJobResult> {
    let state = app.state();
    let (story, transaction) = story(state, of).await?.ok_or_else(|| {
        AppError::invalid(
            "The console knows nothing of this notification yet, so there is nothing to draw.",
        )
    })?;
    let setting = setting(state, &story, transaction.as_deref()).await;
    let drawn = diagram::draw(&story, &setting, Palette::Print);
    let extension = match format {
        PictureFormat::Svg => "svg",
        PictureFormat::Png => "png",
    };
    let short: String = story.event_id.chars().take(8).collect();
    let choice = crate::services::file_dialog::FileChoice {
        title: "Save the notification's picture".into(),
        suggested_name: crate::services::file_dialog::suggested_name(
            &format!("notification-{short}"),
            extension,
        ),
        folder: state.exports_dir(),
        kind: if format == PictureFormat::Svg {
            "SVG image"
        } else {
            "PNG image"
        },
        extensions: if format == PictureFormat::Svg {
            &["svg"]
        } else {
            &["png"]
        },
    };
    let Some(path) = crate::services::file_dialog::save(app, choice).await else {
        return Ok(FileJobResult::closed());
    };
    let target = path.clone();
    tokio::task::spawn_blocking(move || {
        let bytes = encoded(drawn.svg, format)?;
        crate::services::captures::write_replacing(&target, |out| {
            std::io::Write::write_all(out, &bytes)
                .map_err(|e| AppError::io("write the picture", &e))?;
            Ok((true, ()))
        })
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Writing the picture failed: {e}."),
            "Try again.",
        )
    })??;
    Ok(FileJobResult {
        path: Some(path.display().to_string()),
        count: 1,
        skipped: 0,
        cancelled: false,
    })
}

/// The picture as a file holds it: the SVG (fixed colours on white), or a PNG of it at
/// [`PNG_SCALE`]. PNG drawing is CPU work: call it on the blocking pool.
fn encoded(svg: String, format: PictureFormat) -> Result<Vec<u8>> {
    match format {
        PictureFormat::Svg => Ok(svg.into_bytes()),
        PictureFormat::Png => diagram::png(&svg, PNG_SCALE).map_err(|why| {
            AppError::new(
                ErrorKind::Internal,
                format!("The picture could not be drawn as a PNG: {why}."),
                "Export it as SVG instead.",
            )
        }),
    }
}

/// The picture of `of` as [`export`] writes it, for a caller that writes the file itself
/// (`partner demo run --picture`); `None` while the console knows nothing of it.
pub async fn file_bytes(
    state: &AppState,
    of: PictureOf,
    format: PictureFormat,
) -> Result<Option<Vec<u8>>> {
    let Some((story, transaction)) = story(state, of).await? else {
        return Ok(None);
    };
    let setting = setting(state, &story, transaction.as_deref()).await;
    let drawn = diagram::draw(&story, &setting, Palette::Print);
    tokio::task::spawn_blocking(move || encoded(drawn.svg, format))
        .await
        .map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Drawing the picture failed: {e}."),
                "Try again.",
            )
        })?
        .map(Some)
}

/// The notification's story, and the transaction it is about where the console can tell.
async fn story(
    state: &AppState,
    of: PictureOf,
) -> Result<Option<(NotificationStory, Option<String>)>> {
    let key: NotificationKey = match of {
        PictureOf::Capture { capture_id } => {
            crate::services::captures::local_only(state, "The picture of a capture")?;
            let store = state.captures()?;
            crate::services::captures::read(store, move |store| {
                let capture = store.get(capture_id)?;
                Ok(capture.fields.event_id.clone().map(|event_id| {
                    (
                        capture.subscription_id.clone().unwrap_or_default(),
                        capture.fields.resource_type.clone().unwrap_or_default(),
                        event_id,
                    )
                }))
            })
            .await?
            .ok_or_else(|| {
                AppError::invalid(
                    "This capture carries no eventId, so it belongs to no notification to draw.",
                )
            })?
        }
        PictureOf::Notification {
            subscription_id,
            resource_type,
            event_id,
        } => (subscription_id, resource_type, event_id),
        PictureOf::NewestOfTransaction { transaction_id } => {
            let stories = transaction_notifications::timeline(state, &transaction_id)
                .await?
                .notifications;
            let newest = newest_of_the_console(state, stories);
            return Ok(newest.map(|story| (story, Some(transaction_id))));
        }
    };
    let Some(story) = transaction_notifications::story_of(state, key).await? else {
        return Ok(None);
    };
    let transaction = transaction_of(state, &story).await;
    Ok(Some((story, transaction)))
}

/// The newest of a transaction's notifications (newest first) that were meant for this
/// console: one its listener received something of, or one the service sent to the listener's
/// address or the tunnel; else the newest of all. A sandbox's products also notify other
/// receivers (the demo data's), whose notifications are not the ones a demo is about.
pub(crate) fn newest_of_the_console(
    state: &AppState,
    stories: Vec<NotificationStory>,
) -> Option<NotificationStory> {
    let routes = crate::services::listener::own_callback_routes(state);
    let meant_for_us = |story: &NotificationStory| {
        story.entries.iter().any(|entry| {
            entry.capture_id.is_some()
                || entry
                    .url
                    .as_deref()
                    .is_some_and(|url| routes.iter().any(|(_, base)| base.holds(url)))
        })
    };
    let ours = stories.iter().position(meant_for_us);
    match ours {
        Some(index) => stories.into_iter().nth(index),
        None => stories.into_iter().next(),
    }
}

/// The transaction a notification is about: the first of its captures whose `resourceRef`
/// names one of the active connection's transactions or events (a verified capture only).
async fn transaction_of(state: &AppState, story: &NotificationStory) -> Option<String> {
    let base_url = state
        .lock()
        .active
        .as_ref()
        .map(|a| a.view.base_url.clone())?;
    let ids: Vec<i64> = story.entries.iter().filter_map(|e| e.capture_id).collect();
    let store = state.captures().ok()?;
    crate::services::captures::read(store, move |store| {
        for id in ids {
            let capture = store.get(id)?;
            match crate::services::captures::open_resource(&capture, Some(&base_url)) {
                OpenResource::Transaction { transaction_id }
                | OpenResource::Event { transaction_id, .. } => return Ok(Some(transaction_id)),
                OpenResource::Refused { .. } => {}
            }
        }
        Ok(None)
    })
    .await
    .ok()
    .flatten()
}

/// The most audit entries read for a picture's answers (the newest).
const AUDIT_READ: usize = 500;
/// The most answers drawn.
const ANSWERS_DRAWN: usize = 5;

/// The console's responses about `transaction_id` on the active connection after `after`
/// (the audit log's, which survive a restart), each with how many times it was sent and what it
/// waited for where the call log still holds its call: where a fault bit.
async fn answers(state: &AppState, transaction_id: &str, after: DateTime<Utc>) -> Vec<Answer> {
    let Some((base_url, calls)) = state
        .lock()
        .active
        .as_ref()
        .map(|a| (a.view.base_url.clone(), a.client.calls().snapshot().calls))
    else {
        return Vec::new();
    };
    let Ok(log) = crate::services::audit::log(state).await else {
        return Vec::new();
    };
    let Ok(Ok(read)) = tokio::task::spawn_blocking(move || log.read(Some(AUDIT_READ))).await else {
        return Vec::new();
    };
    let same_service = |url: &str| url.trim_end_matches('/') == base_url.trim_end_matches('/');
    let target = partner_client::transaction_target(transaction_id);
    let mut answers: Vec<Answer> = read
        .entries
        .iter()
        .map(|entry| &entry.write)
        .filter(|write| {
            write.action == WriteAction::Respond
                && write.target == target
                && write.at >= after
                && same_service(&write.base_url)
        })
        .map(|write| {
            let (status, error) = match &write.outcome {
                WriteOutcome::Done { status, .. } => (Some(*status), None),
                WriteOutcome::Failed { status, error, .. } => (*status, Some(error.clone())),
                WriteOutcome::Refused { reason } => (None, Some(reason.clone())),
            };
            let call = calls.iter().rev().find(|call| {
                format!("{} {}", call.method, call.path) == write.call
                    && call.started_at <= write.at
                    && (write.at - call.started_at).to_std().unwrap_or_default()
                        <= call.duration + std::time::Duration::from_secs(5)
            });
            let what = match write.sent.get("status").and_then(|s| s.as_str()) {
                Some(to) => format!("respond: {to}"),
                None => "respond".to_string(),
            };
            Answer {
                at: write.at,
                what,
                status,
                error,
                attempts: call.map_or(1, |c| c.attempts),
                waited_ms: call.map_or(0, |c| c.waited().as_millis() as u64),
            }
        })
        .collect();
    // The log is read newest first: the first answers after the notification, oldest first.
    answers.reverse();
    answers.truncate(ANSWERS_DRAWN);
    answers
}

/// The heading, the tunnel the service sent through, who received its attempts, and the
/// console's answers about the transaction after the notification arrived.
async fn setting(
    state: &AppState,
    story: &NotificationStory,
    transaction: Option<&str>,
) -> Setting {
    // The console's clock: the first capture of the notification, else its first step.
    let arrived = story
        .entries
        .iter()
        .filter(|e| e.capture_id.is_some())
        .map(|e| e.at)
        .min()
        .or_else(|| story.entries.first().map(|e| e.at));
    let answers = match (transaction, arrived) {
        (Some(transaction), Some(after)) => answers(state, transaction, after).await,
        _ => Vec::new(),
    };
    let listener_url = state.listener().ok().map(|l| l.url());
    let own_routes = crate::services::listener::own_callback_routes(state);
    let sent_to = story
        .entries
        .iter()
        .filter(|e| e.step == crate::bridge::StoryStep::ServiceAttempt)
        .find_map(|e| e.url.clone());
    let host = |url: &str| {
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
    };
    let loopback = |url: &str| {
        host(url).is_some_and(|h| matches!(h.as_str(), "127.0.0.1" | "localhost" | "[::1]" | "::1"))
    };
    let tunnel_host = sent_to.as_deref().filter(|u| !loopback(u)).and_then(host);
    let captured = story
        .entries
        .iter()
        .any(|e| matches!(e.step, crate::bridge::StoryStep::Captured));
    let receiver_is_listener = captured
        || sent_to
            .as_deref()
            .is_none_or(|url| loopback(url) || own_routes.iter().any(|(_, base)| base.holds(url)));
    let short = diagram::short;
    let what = if story.event_type.is_empty() {
        "notification"
    } else {
        story.event_type.as_str()
    };
    Setting {
        title: format!(
            "{what} · event {} · subscription {}",
            short(&story.event_id),
            short(&story.subscription_id)
        ),
        tunnel_host,
        receiver_is_listener,
        listener_url,
        answers,
    }
}

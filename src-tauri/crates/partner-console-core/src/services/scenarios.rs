//! Scenarios played on the embedded sandbox (`crate::scenario` reads and checks the files):
//! step by step from the Demo screen (Next, or paced by the window), or to the end by
//! `partner demo run`, through the same services the screens use: the lender's buttons
//! (`embedded`), the listener's test mode, start and stop (`listener`), key rotation
//! (`subscriptions`), the missed-notification check and recovery (`missed`), the partner's
//! response (`transactions`) and the signature debugger (`signatures`). Nothing is faked for
//! the show: every notification in a scenario is a real one, signed and sent by the sandbox.
//!
//! After each step the play waits until the sandbox has nothing due (no attempt in flight, no
//! retry whose time has come), so the next step, and the picture, start from a settled stage.
//! With the sandbox clock a `wait` is instant; in real time it really waits.
//!
//! A play starts from a clean stage (the listener running, its test mode off) and leaves it as
//! it found it: when it ends (played out, or stopped) the listener's test mode is put back and
//! a listener the play stopped is started again.
use crate::bridge::{
    MissedForm, NotificationStory, PictureOf, PlayStepView, RecoverForm, RespondForm, ScenarioList,
    ScenarioPlayView, ScenarioProblem, ScenarioStartForm, ScenarioSummary, StoryStep, TestMode,
};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::scenario::{Action, Catalogue, Play, Scenario};
use crate::services::{embedded, listener, missed, signatures, transaction_notifications};
use crate::state::AppState;
use partner_api::DeliveryState;
use partner_listener::Verdict;
use std::path::PathBuf;
use std::time::Duration;

/// The longest the play waits for the sandbox to settle after a step.
const SETTLE_LIMIT: Duration = Duration::from_secs(15);
/// How often it looks.
const SETTLE_POLL: Duration = Duration::from_millis(20);
/// The header the demo proxy adds, as a proxy would.
const VIA: &str = "1.1 partner-console-demo-proxy";

/// Where the user's own scenario files go: `scenarios/` in the data folder.
pub fn folder(state: &AppState) -> PathBuf {
    crate::scenario::user_folder(&state.data_dir)
}

/// The built-in scenarios and the user's, read afresh (a file saved a moment ago is listed).
pub async fn catalogue(state: &AppState) -> Catalogue {
    let folder = folder(state);
    tokio::task::spawn_blocking(move || Catalogue::load(Some(&folder)))
        .await
        .unwrap_or_default()
}

pub async fn list(state: &AppState) -> ScenarioList {
    let catalogue = catalogue(state).await;
    ScenarioList {
        scenarios: catalogue.scenarios.iter().map(summary).collect(),
        problems: catalogue
            .problems
            .into_iter()
            .map(|p| ScenarioProblem {
                file: p.file.display().to_string(),
                error: p.error,
            })
            .collect(),
        folder: folder(state).display().to_string(),
    }
}

pub fn summary(scenario: &Scenario) -> ScenarioSummary {
    ScenarioSummary {
        name: scenario.name.clone(),
        title: scenario.title.clone(),
        summary: scenario.summary.clone(),
        steps: u32::try_from(scenario.steps.len()).unwrap_or(u32::MAX),
        source: scenario.source.describe(),
    }
}

/// Starts playing the scenario `form.name` names (a built-in's or a user's name, or a file's
/// path) from its first step.
pub async fn start(app: &Console, form: ScenarioStartForm) -> Result<ScenarioPlayView> {
    let scenario = catalogue(app.state())
        .await
        .find(form.name.trim())
        .map_err(|why| AppError::invalid(format!("{}.", crate::error::capitalised(&why))))?;
    begin(app, scenario, form.real_time).await
}

/// Starts playing `scenario` from its first step; a play under way is ended first. The
/// listener is started if it is not running, and its test mode turned off.
pub async fn begin(app: &Console, scenario: Scenario, real_time: bool) -> Result<ScenarioPlayView> {
    let state = app.state();
    let sandbox = embedded::active_sandbox(state)?;
    let mut play = state.scenario_play.lock().await;
    if let Some(mut ended) = play.take() {
        restore_stage(app, &mut ended).await;
    }
    if state.lock().listener.is_none() {
        listener::start(app).await?;
    }
    let mut started = Play::new(scenario, real_time, sandbox.clock().now());
    // Found now, while the listener runs: a step may stop it before the first transaction.
    started.product_id = listener_product(state).await.ok();
    // A clean stage: the listener answers with its verdicts until a step says otherwise (a
    // test mode the user left on is put back when the play ends).
    if listener::view(state).test_mode.enabled {
        remember_test_mode(state, &mut started);
        listener::set_test_mode(state, TestMode::default())?;
    }
    let view = view(&started, sandbox.clock().now());
    *play = Some(started);
    Ok(view)
}

/// Plays the next step, and waits until the sandbox has settled after it. A step that fails
/// is not counted as played: Next tries it again.
pub async fn next(app: &Console) -> Result<ScenarioPlayView> {
    let state = app.state();
    let sandbox = embedded::active_sandbox(state)?;
    let mut guard = state.scenario_play.lock().await;
    let play = guard.as_mut().ok_or_else(|| {
        AppError::invalid("No scenario is being played: choose one and press Play.")
    })?;
    let Some(step) = play.next_step().cloned() else {
        return Err(AppError::invalid(
            "The scenario has been played to its end: play it again, or choose another.",
        ));
    };
    let outcome = run(app, play, &step.action).await?;
    settle(&sandbox, play.started_at).await;
    if let (Some(resource_type), Some(transaction_id)) =
        (step.action.notifies_about(), play.transaction_id.clone())
    {
        play.focus = focus_after(state, &transaction_id, resource_type)
            .await
            .or(play.focus.take());
    }
    play.outcomes.push(outcome);
    play.next += 1;
    if play.finished() {
        restore_stage(app, play).await;
    }
    Ok(view(play, sandbox.clock().now()))
}

/// The scenario being played, if any.
pub async fn current(state: &AppState) -> Option<ScenarioPlayView> {
    let now = embedded::active_sandbox(state).ok()?.clock().now();
    state
        .scenario_play
        .lock()
        .await
        .as_ref()
        .map(|play| view(play, now))
}

/// Ends the play (the stage as it was before it).
pub async fn stop(app: &Console) {
    let ended = app.state().scenario_play.lock().await.take();
    if let Some(mut ended) = ended {
        restore_stage(app, &mut ended).await;
    }
}

fn view(play: &Play, sandbox_now: chrono::DateTime<chrono::Utc>) -> ScenarioPlayView {
    ScenarioPlayView {
        name: play.scenario.name.clone(),
        title: play.scenario.title.clone(),
        summary: play.scenario.summary.clone(),
        real_time: play.real_time,
        steps: play
            .scenario
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| PlayStepView {
                caption: step.caption.clone(),
                does: step.action.describe(),
                outcome: play.outcomes.get(i).cloned(),
            })
            .collect(),
        next: u32::try_from(play.next).unwrap_or(u32::MAX),
        finished: play.finished(),
        transaction_id: play.transaction_id.clone(),
        picture: play.focus.clone(),
        sandbox_now: sandbox_now.to_rfc3339(),
    }
}

/// Does one step; what it did, in words.
async fn run(app: &Console, play: &mut Play, action: &Action) -> Result<String> {
    let state = app.state();
    match action {
        Action::CreateTransaction { product } => {
            let product_id = match (product, &play.product_id) {
                (Some(named), _) => product_named(state, named).await?,
                (None, Some(listener_product)) => listener_product.clone(),
                (None, None) => listener_product(state).await?,
            };
            let made = embedded::new_transaction(state, product_id.clone()).await?;
            play.transaction_id = made.transaction_id;
            play.product_id = Some(product_id);
            Ok(made.message)
        }
        Action::UpdateTransaction => {
            let transaction = transaction(play)?;
            Ok(embedded::update_transaction(state, transaction)
                .await?
                .message)
        }
        Action::AddEvent { text } => {
            let transaction = transaction(play)?;
            Ok(embedded::custom_event(state, transaction, text.clone())
                .await?
                .message)
        }
        Action::ReceiverFails { status, attempts } => {
            remember_test_mode(state, play);
            let status = status.unwrap_or(503);
            listener::set_test_mode(
                state,
                TestMode {
                    enabled: true,
                    fail_first_attempts: *attempts,
                    failure_status: status,
                    ..TestMode::default()
                },
            )?;
            Ok(format!(
                "The listener now answers {status} to each notification's first {attempts} attempt{}.",
                if *attempts == 1 { "" } else { "s" }
            ))
        }
        Action::ReceiverRecovers => {
            remember_test_mode(state, play);
            listener::set_test_mode(state, TestMode::default())?;
            Ok("The listener answers every attempt with its verdict again.".into())
        }
        Action::Wait { seconds } => {
            if play.real_time {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(*seconds)) => {}
                    () = state.shutdown.cancelled() => {}
                }
                Ok(format!("{seconds} s passed."))
            } else {
                embedded::active_sandbox(state)?
                    .clock()
                    .advance(Duration::from_secs(*seconds));
                Ok(format!("The sandbox clock moved {seconds} s ahead."))
            }
        }
        Action::RotateKey => {
            let product_id = match &play.product_id {
                Some(id) => id.clone(),
                None => listener_product(state).await?,
            };
            let subscriptions: Vec<String> =
                crate::services::receiver_check::listener_subscriptions(state)
                    .await?
                    .into_iter()
                    .filter(|s| s.product_id == product_id)
                    .map(|s| s.subscription.subscription_id)
                    .collect();
            if subscriptions.is_empty() {
                return Err(AppError::invalid(
                    "The scenario's product has no subscription to the listener, so there is no key to rotate.",
                ));
            }
            for subscription_id in &subscriptions {
                // The new key stays in the keychain and the listener: never on screen.
                crate::services::subscriptions::rotate(state, &product_id, subscription_id, None)
                    .await?;
            }
            Ok(format!(
                "Rotated the signing key of {} subscription{} to the listener; the previous key{} still verif{}.",
                subscriptions.len(),
                if subscriptions.len() == 1 { "" } else { "s" },
                if subscriptions.len() == 1 { "" } else { "s" },
                if subscriptions.len() == 1 { "ies" } else { "y" },
            ))
        }
        Action::StopListener => {
            if state.lock().listener.is_some() {
                listener::stop(app);
                play.stopped_listener = true;
            }
            Ok("The listener stopped: nothing answers at its address.".into())
        }
        Action::StartListener => {
            if state.lock().listener.is_none() {
                listener::start(app).await?;
            }
            play.stopped_listener = false;
            Ok("The listener is serving again.".into())
        }
        Action::RecoverMissed => recover_missed(app, play).await,
        Action::Respond { status, note } => {
            let transaction = transaction(play)?;
            let mut response = serde_json::json!({ "status": status });
            if let Some(note) = note {
                response["partnerStatus"] = serde_json::Value::String(note.clone());
            }
            crate::services::transactions::respond(
                state,
                RespondForm {
                    transaction_id: transaction.clone(),
                    response: response.to_string(),
                    // The scenario's author chose the final status; it is the sandbox's.
                    confirm: Some(transaction.clone()),
                },
            )
            .await?;
            Ok(format!(
                "The partner answered {status} on transaction {transaction}."
            ))
        }
        Action::ProxyReserialises => proxy_reserialised(state, play).await,
        Action::Diagnose => diagnose(state, play).await,
    }
}

fn transaction(play: &Play) -> Result<String> {
    play.transaction_id.clone().ok_or_else(|| {
        AppError::invalid("This step needs the scenario's transaction: no step has created one.")
    })
}

fn remember_test_mode(state: &AppState, play: &mut Play) {
    if play.test_mode_before.is_none() {
        play.test_mode_before = Some(listener::view(state).test_mode);
    }
}

/// Puts back what the play changed: the listener's test mode, and the listener itself. Once:
/// what the user changes after a play ended is theirs, and a later stop must not undo it.
async fn restore_stage(app: &Console, play: &mut Play) {
    let state = app.state();
    if let Some(before) = play.test_mode_before.take() {
        if let Err(error) = listener::set_test_mode(state, before) {
            tracing::warn!(%error, "the listener's test mode could not be put back");
        }
    }
    if std::mem::take(&mut play.stopped_listener) && state.lock().listener.is_none() {
        if let Err(error) = listener::start(app).await {
            tracing::warn!(%error, "the listener could not be started again");
        }
    }
}

/// The product of the first subscription to the listener (the demo product, on a fresh start).
async fn listener_product(state: &AppState) -> Result<String> {
    crate::services::receiver_check::listener_subscriptions(state)
        .await?
        .into_iter()
        .next()
        .map(|s| s.product_id)
        .ok_or_else(|| {
            AppError::new(
                ErrorKind::InvalidInput,
                "No product is subscribed to the listener, so its notifications would go nowhere to see.",
                "Wait for the demo product's subscription (Demo shows it), or name a product in the step.",
            )
        })
}

/// The product called `named` (its name or listing name).
async fn product_named(state: &AppState, named: &str) -> Result<String> {
    let client = state.client()?;
    let page =
        partner_client::PageRequest::new(0, 50).map_err(|e| AppError::invalid(format!("{e}.")))?;
    let products = client.list_products(&page).await?;
    products
        .items
        .iter()
        .find(|p| p.name.as_deref() == Some(named) || p.listing_name.as_deref() == Some(named))
        .map(|p| p.id.clone())
        .ok_or_else(|| {
            AppError::invalid(format!(
                "The sandbox has no product called “{named}” (its first 50: {}).",
                products
                    .items
                    .iter()
                    .map(|p| p.display_name().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// Waits until none of the notifications queued since `since` has an attempt in flight or
/// due (a retry still waiting for its time is settled).
async fn settle(sandbox: &partner_sandbox::SandboxHandle, since: chrono::DateTime<chrono::Utc>) {
    let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
    loop {
        let now = sandbox.clock().now();
        let busy = sandbox.deliveries(None).iter().any(|record| {
            record.enqueued_at >= since
                && record.state == DeliveryState::Pending
                && record.next_attempt_at.is_none_or(|due| due <= now)
        });
        if !busy {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!("the sandbox still had notifications on their way after a step");
            return;
        }
        tokio::time::sleep(SETTLE_POLL).await;
    }
}

/// The notification a lender step just sent the console about `resource_type` (the newest
/// of the transaction's notifications meant for the console, of that type), as the picture
/// names it.
async fn focus_after(
    state: &AppState,
    transaction_id: &str,
    resource_type: &str,
) -> Option<PictureOf> {
    let stories = transaction_notifications::timeline(state, transaction_id)
        .await
        .ok()?
        .notifications;
    let of_the_type: Vec<NotificationStory> = stories
        .into_iter()
        .filter(|story| story.resource_type == resource_type)
        .collect();
    let story = crate::services::picture::newest_of_the_console(state, of_the_type)?;
    Some(PictureOf::Notification {
        subscription_id: story.subscription_id,
        resource_type: story.resource_type,
        event_id: story.event_id,
    })
}

/// The story of the notification the play is about, else the transaction's newest meant for
/// the console.
async fn focused_story(
    state: &AppState,
    play: &Play,
    transaction_id: &str,
) -> Result<Option<NotificationStory>> {
    if let Some(PictureOf::Notification {
        subscription_id,
        resource_type,
        event_id,
    }) = &play.focus
    {
        let key = (
            subscription_id.clone(),
            resource_type.clone(),
            event_id.clone(),
        );
        if let Some(story) = transaction_notifications::story_of(state, key).await? {
            return Ok(Some(story));
        }
    }
    let timeline = transaction_notifications::timeline(state, transaction_id).await?;
    Ok(crate::services::picture::newest_of_the_console(
        state,
        timeline.notifications,
    ))
}

/// The missed-notification check of the play product's subscriptions to the listener (from
/// the listener's last down time: when the play stopped it), and what it found sent again to
/// the listener. Each subscription is named, so one the store never captured anything of (a
/// fresh console's) is checked too, and the sandbox's other receivers are not.
async fn recover_missed(app: &Console, play: &Play) -> Result<String> {
    let state = app.state();
    let subscriptions: Vec<String> = crate::services::receiver_check::listener_subscriptions(state)
        .await?
        .into_iter()
        .filter(|s| play.product_id.as_deref().is_none_or(|p| p == s.product_id))
        .map(|s| s.subscription.subscription_id)
        .collect();
    let mut found = Vec::new();
    for subscription_id in subscriptions {
        let report = missed::find(
            app,
            MissedForm {
                subscription_id: Some(subscription_id),
                since: None,
                include_recent: true,
                all_subscriptions: true,
            },
        )
        .await?;
        found.extend(report.missed);
    }
    if found.is_empty() {
        return Ok(
            "The check compared the service's events with the captures: nothing was missed.".into(),
        );
    }
    let count = found.len();
    let recovered = missed::resend(
        state,
        RecoverForm {
            notifications: found,
            target: None,
        },
    )
    .await?;
    Ok(format!(
        "The check found {count} missed notification{}; sent again, the listener acknowledged {}.",
        if count == 1 { "" } else { "s" },
        recovered.acknowledged()
    ))
}

/// The newest verified capture of the notification the play is about (the one the picture
/// draws), sent to the listener once more
/// as a proxy that re-writes JSON would pass it on: the body parsed and written out
/// pretty-printed, every header (the signature too) as it came.
async fn proxy_reserialised(state: &AppState, play: &Play) -> Result<String> {
    let running = state.listener()?;
    // The notification the Demo's picture draws, so the picture shows the proxy's copy.
    let focused = focused_story(state, play, &transaction(play)?).await?;
    let capture_id = focused
        .iter()
        .flat_map(|n| n.entries.iter())
        .filter(|e| e.step == StoryStep::Captured && e.verdict == Some(Verdict::Valid))
        .max_by_key(|e| e.at)
        .and_then(|e| e.capture_id)
        .ok_or_else(|| {
            AppError::invalid(
                "No verified notification of the scenario's transaction has arrived yet, so there is nothing for the proxy to pass on.",
            )
        })?;
    let capture =
        crate::services::captures::read(state.captures()?, move |store| Ok(store.get(capture_id)?))
            .await?;
    let original = capture.body.clone().unwrap_or_default();
    // Laid out again as a JavaScript proxy would (`JSON.stringify(JSON.parse(body), null, 2)`):
    // the same keys in the same order, other whitespace.
    let rewritten = std::str::from_utf8(&original)
        .ok()
        .filter(|text| serde_json::from_str::<serde_json::Value>(text).is_ok())
        .and_then(|text| partner_listener::debugger::reformat(text, Some("  ")))
        .ok_or_else(|| {
            AppError::invalid(
                "The notification's body is not JSON, so a JSON proxy would refuse it.",
            )
        })?
        .into_bytes();
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| AppError::new(ErrorKind::Internal, format!("{e}."), "Try again."))?;
    let mut request = http
        .post(format!("http://{}{}", running.addr, capture.path))
        .header("Via", VIA);
    // The proxy's own `Via` replaces the one that came, if any.
    for header in &capture.headers {
        if !partner_listener::outbound::is_hop_header(&header.name)
            && !header.name.eq_ignore_ascii_case("via")
        {
            request = request.header(header.name.as_str(), header.value.as_str());
        }
    }
    let answer = request.body(rewritten.clone()).send().await.map_err(|e| {
        AppError::new(
            ErrorKind::Listener,
            format!("The proxy could not reach the listener: {e}."),
            "Check that the listener is running, then play the step again.",
        )
    })?;
    Ok(format!(
        "The proxy passed the notification on re-serialised: {} bytes where the service sent {}, the same signature. The listener answered {}.",
        rewritten.len(),
        original.len(),
        answer.status().as_u16()
    ))
}

/// The signature debugger's diagnosis of the newest capture since the play started that failed
/// verification.
async fn diagnose(state: &AppState, play: &Play) -> Result<String> {
    let failed = match &play.transaction_id {
        Some(transaction_id) => transaction_notifications::timeline(state, transaction_id)
            .await?
            .notifications
            .iter()
            .flat_map(|n| n.entries.iter())
            .filter(|e| {
                e.step == StoryStep::Captured && e.verdict.is_some_and(|v| v != Verdict::Valid)
            })
            .max_by_key(|e| e.at)
            .and_then(|e| e.capture_id),
        None => None,
    };
    let Some(capture_id) = failed else {
        return Ok(
            "Every notification of the scenario verified: the debugger has nothing to diagnose."
                .into(),
        );
    };
    let report = signatures::report(state, capture_id, None)?;
    Ok(format!("Capture {capture_id}: {}", report.explanation))
}

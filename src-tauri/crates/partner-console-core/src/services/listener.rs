//! The app's webhook listener: one capture store shared with `partner listen`, one fixed
//! address a tunnel can point at, the tunnel URL kept per connection.
//!
//! Why a fixed address: a tunnel forwards to one local port and every subscription behind it
//! points at the tunnel, so the listener binds the address in the settings (or
//! `PARTNER_LISTENER_ADDR` for one run) and never a random one. A taken port leaves the
//! listener off with a problem that names the port and offers a free one; moving the listener
//! binds the new address before the old one is let go, so a failed move changes nothing.
use crate::bridge::{
    ForwardRuleView, JunkView, ListenerAddressForm, ListenerRoute, ListenerView, ReplayForm,
    ReplayResult, RetentionForm, TestMode,
};
use crate::console::Console;
use crate::error::{AppError, ErrorKind, Result};
use crate::state::{AppState, ListenerProblem, RunningListener};
use partner_listener::{ForwardRule, Listener, ListenerConfig, Retention, Store};
use partner_local::listener_address::{self, BindError};
use partner_local::settings::TestModeSettings;
use partner_local::ListenerAddress;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The store's retention from the settings.
pub fn retention_of(form: &partner_local::settings::RetentionSettings) -> Retention {
    Retention {
        max_count: form.max_captures,
        max_bytes: form.max_bytes,
        max_age: form
            .max_age_days
            .map(|days| chrono::Duration::days(i64::from(days))),
    }
}

/// How long the capture store waits at start for the window's first screen (see
/// `services::startup`): a page that never says it drew it (it failed to load) delays the
/// listener's captures by this much at most.
pub const FIRST_SCREEN_WAIT: Duration = Duration::from_secs(2);

/// Opens the capture store once (on the blocking pool: opening reads the notifications of the
/// redelivery window into the store's map); every listener of this run uses it.
pub async fn open_store(app: &Console) -> Result<Store> {
    let state = app.state();
    if let Some(store) = state.lock().captures.clone() {
        return Ok(store);
    }
    let path = state.data_dir.join(partner_local::paths::CAPTURE_STORE);
    let retention = retention_of(&state.lock().settings.retention);
    let data_dir = state.data_dir.clone();
    // The data key as the audit log and the sandbox's data find it (one lookup per run).
    let lookup = crate::services::data_key::KeyLookup::of(state);
    let opened = tokio::task::spawn_blocking(move || {
        partner_local::paths::create_private_dir(&data_dir).map_err(|e| {
            AppError::new(
                ErrorKind::Io,
                format!("{e}."),
                "Check the data folder's permissions.",
            )
        })?;
        let resolved = lookup.resolve()?;
        Store::open_with(
            &path,
            partner_listener::StoreOptions {
                retention,
                holder: "Partner Console app",
                key: Some(resolved.store_key()),
                ..partner_listener::StoreOptions::default()
            },
        )
        .map(|store| (store, resolved.home.to_string()))
        .map_err(AppError::from)
    })
    .await
    .map_err(|e| {
        AppError::new(
            ErrorKind::Internal,
            format!("Opening the capture store failed: {e}."),
            "Restart the app.",
        )
    })?;
    match opened {
        Ok((store, key_home)) => {
            let mut inner = state.lock();
            inner.captures = Some(store.clone());
            inner.data_key_home = Some(key_home);
            Ok(store)
        }
        Err(error) => {
            let error = AppError::new(
                ErrorKind::Listener,
                format!("The capture store could not be opened: {}", error.message),
                "Stop the other listener using it (`partner listen`, or another Partner Console), or give the data key it names (README, \"Data at rest\"), then turn the listener on in Webhooks.",
            );
            app.announce(|inner| {
                inner.listener_problem = Some(ListenerProblem {
                    error: error.clone(),
                    suggestion: None,
                });
            });
            Err(error)
        }
    }
}

/// Starts the listener on this run's address, unless it runs.
pub async fn start(app: &Console) -> Result<RunningListener> {
    let state = app.state();
    if let Some(running) = state.lock().listener.clone() {
        return Ok(running);
    }
    let (address, stopping) = {
        let mut inner = state.lock();
        (
            inner.listener_address.clone(),
            inner.listener_stopping.take(),
        )
    };
    // A listener stopped a moment ago lets its port go first (its requests in flight answered).
    if let Some(stopping) = stopping {
        let _ = tokio::time::timeout(STOP_WAIT, stopping.cancelled()).await;
    }
    let socket = match bind(&address) {
        Ok(socket) => socket,
        Err(problem) => {
            let error = problem.error.clone();
            app.announce(|inner| inner.listener_problem = Some(problem));
            return Err(error);
        }
    };
    serve(app, socket, address).await
}

/// Binds exactly the address, or says why not (with a free address to offer).
fn bind(address: &ListenerAddress) -> std::result::Result<std::net::TcpListener, ListenerProblem> {
    listener_address::bind(address.address).map_err(|error| match error {
        BindError::Taken(taken) => ListenerProblem {
            error: AppError::new(
                ErrorKind::Listener,
                format!(
                    "The listener's address {} is already in use by another program (`partner listen`, another console, or something else).",
                    taken.address
                ),
                match taken.suggestion {
                    Some(free) => format!("Use {free}, which is free (and point your tunnel at it), or stop the other program and turn the listener on again."),
                    None => "Stop the other program, or choose another port in Webhooks.".into(),
                },
            ),
            suggestion: taken.suggestion,
        },
        BindError::Other { address, source } => ListenerProblem {
            error: AppError::new(
                ErrorKind::Listener,
                format!("The listener could not listen on {address}: {source}."),
                "Choose another address in Webhooks.",
            ),
            suggestion: None,
        },
    })
}

/// Serves the listener on a bound socket, with the capture store and the keychain's keys, and
/// the feed of its captures to the UI.
async fn serve(
    app: &Console,
    socket: std::net::TcpListener,
    address: ListenerAddress,
) -> Result<RunningListener> {
    let state = app.state();
    // Bound already: a notification sent meanwhile waits in the socket's queue.
    state.first_screen_drawn(FIRST_SCREEN_WAIT).await;
    let store = open_store(app).await?;
    let (test_mode, forward_rules, junk_rate) = {
        let inner = state.lock();
        (
            inner.settings.listener.test_mode.in_effect(),
            inner.settings.listener.forward_rules.clone(),
            inner.settings.retention.junk_rate,
        )
    };
    let config = ListenerConfig {
        path: address.path.clone(),
        test_mode,
        forward_rules,
        junk_rate,
        ..ListenerConfig::default()
    };
    let keys: Arc<dyn partner_listener::KeySource> = state.keys.clone();
    let listener = Listener::new(config, store, keys)?;
    let socket = tokio::net::TcpListener::from_std(socket).map_err(partner_listener::Error::Io)?;
    let addr = socket.local_addr().map_err(partner_listener::Error::Io)?;
    let stop = state.shutdown.child_token();
    let finished = CancellationToken::new();
    let serving = listener.clone();
    let stopped = stop.clone();
    let done = finished.clone();
    app.spawn(async move {
        if let Err(error) = serving.serve(socket, stopped.cancelled_owned()).await {
            tracing::error!(%error, "the listener stopped with an error");
        }
        done.cancel();
    });
    crate::events::spawn_capture_feed(app, &listener, stop.clone());
    crate::services::support::follow_captures(app.clone(), &listener, stop.clone());
    let running = RunningListener {
        listener,
        addr,
        stop,
        finished,
    };
    // A listener asked for any free port (a headless console's) keeps the one it got, so when
    // it is stopped and started again it is still where the service sends.
    let mut address = address;
    if address.address.port() == 0 {
        address.address.set_port(addr.port());
    }
    app.announce(|inner| {
        inner.listener = Some(running.clone());
        inner.listener_problem = None;
        inner.listener_address = address;
    });
    Ok(running)
}

/// The longest a start waits for the listener stopped before it to let its port go (it lets
/// requests in flight finish for up to 5 s).
const STOP_WAIT: Duration = Duration::from_secs(6);

/// Stops the listener (its captures stay in the store).
pub fn stop(app: &Console) -> ListenerView {
    app.announce(|inner| {
        if let Some(running) = inner.listener.take() {
            running.stop.cancel();
            inner.listener_stopping = Some(running.finished.clone());
        }
    });
    view(app)
}

/// Moves the listener to a new address and path, kept in the settings. The new address is
/// bound before the old listener stops, so a taken port leaves everything as it was.
pub async fn move_to(app: &Console, form: ListenerAddressForm) -> Result<()> {
    let state = app.state();
    let address = listener_address::parse_address(&form.address)
        .map_err(|e| AppError::invalid(format!("The listener's address: {e}.")))?;
    partner_local::settings::check_listener_path(form.path.trim())
        .map_err(|e| AppError::invalid(format!("{}.", crate::error::capitalised(&e))))?;
    let path = partner_listener::server::normalise_path(form.path.trim())
        .map_err(|e| AppError::invalid(format!("The listener's path: {e}.")))?;
    let target = ListenerAddress {
        address,
        path: path.clone(),
        from_environment: false,
    };
    let current = state.lock().listener.clone();
    let unchanged = current
        .as_ref()
        .is_some_and(|r| r.addr == address && r.listener.config().path == path);
    if !unchanged {
        let socket = match current.as_ref().filter(|r| r.addr == address) {
            // Same port, new path: the old listener lets the port go first.
            Some(running) => {
                running.stop.cancel();
                rebind_released(&target).await.map_err(|p| p.error)?
            }
            None => bind(&target).map_err(|problem| {
                let error = problem.error.clone();
                if current.is_none() {
                    app.announce(|inner| inner.listener_problem = Some(problem));
                }
                error
            })?,
        };
        if let Some(running) = &current {
            running.stop.cancel();
        }
        state.lock().listener = None;
        serve(app, socket, target).await?;
    }
    crate::services::settings::update(state, |settings| {
        settings.listener.address = address;
        settings.listener.path = path;
    })?;
    Ok(())
}

/// Binds an address a stopping listener is letting go (its accept loop ends within moments).
async fn rebind_released(
    target: &ListenerAddress,
) -> std::result::Result<std::net::TcpListener, ListenerProblem> {
    let mut attempt = 0;
    loop {
        match bind(target) {
            Ok(socket) => return Ok(socket),
            Err(_) if attempt < 40 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(problem) => return Err(problem),
        }
    }
}

/// The test mode as the screen gives it (on/off, status, delay, failures), as it is kept.
fn test_mode_settings(mode: &TestMode) -> TestModeSettings {
    TestModeSettings {
        enabled: mode.enabled,
        answer: partner_listener::TestMode {
            status: Some(mode.status),
            delay: (mode.delay_ms > 0).then(|| Duration::from_millis(mode.delay_ms)),
            fail_rate: mode.fail_rate,
            fail_first_attempts: mode.fail_first_attempts,
            failure_status: Some(mode.failure_status),
        },
    }
}

/// The test mode as the screen shows it, from what is kept.
fn test_mode_view(kept: &TestModeSettings) -> TestMode {
    let shown = TestMode::default();
    TestMode {
        enabled: kept.enabled,
        status: kept.answer.status.unwrap_or(shown.status),
        delay_ms: kept
            .answer
            .delay
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        fail_rate: kept.answer.fail_rate,
        fail_first_attempts: kept.answer.fail_first_attempts,
        failure_status: kept.answer.failure_status.unwrap_or(shown.failure_status),
    }
}

/// The test mode: checked, saved (so it is still on after a restart), and applied to the
/// running listener at once.
pub fn set_test_mode(state: &AppState, mode: TestMode) -> Result<()> {
    let kept = test_mode_settings(&mode);
    kept.answer.validate()?;
    if let Some(running) = state.lock().listener.as_ref() {
        running.listener.set_test_mode(kept.in_effect())?;
    }
    crate::services::settings::update(state, |s| s.listener.test_mode = kept)?;
    Ok(())
}

/// The forward rules (the first that matches a valid notification sends it on): checked,
/// saved, and applied to the running listener at once.
pub fn set_forward_rules(state: &AppState, rules: Vec<ForwardRuleView>) -> Result<()> {
    let rules = rules
        .into_iter()
        .enumerate()
        .map(|(index, rule)| forward_rule(index, rule))
        .collect::<Result<Vec<_>>>()?;
    if let Some(running) = state.lock().listener.as_ref() {
        running.listener.set_forward_rules(rules.clone())?;
    }
    crate::services::settings::update(state, |s| s.listener.forward_rules = rules)?;
    Ok(())
}

/// A rule as the screen gives it, checked: the row number in each error.
fn forward_rule(index: usize, rule: ForwardRuleView) -> Result<ForwardRule> {
    let named = |value: Option<String>| {
        value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && v != "*")
    };
    let url = partner_listener::outbound::parse_target(rule.url.trim())
        .map_err(|e| AppError::invalid(format!("Forward rule {}: {e}.", index + 1)))?;
    Ok(ForwardRule {
        resource_type: named(rule.resource_type),
        event_type: named(rule.event_type),
        url,
    })
}

/// The rules as the screen shows them.
pub fn forward_rule_views(rules: &[ForwardRule]) -> Vec<ForwardRuleView> {
    rules
        .iter()
        .map(|rule| ForwardRuleView {
            resource_type: rule.resource_type.clone(),
            event_type: rule.event_type.clone(),
            url: rule.url.to_string(),
        })
        .collect()
}

/// Where the console sends something again: the URL the user typed (`what` names it in the
/// error: "The replay's target URL …"), or, when none, this app's listener.
pub fn target_or_listener(state: &AppState, typed: Option<&str>, what: &str) -> Result<url::Url> {
    match typed.map(str::trim).filter(|t| !t.is_empty()) {
        Some(url) => partner_listener::outbound::parse_target(url)
            .map_err(|e| AppError::invalid(format!("{what} {e}."))),
        None => partner_listener::outbound::parse_target(&state.listener()?.url()).map_err(|e| {
            AppError::new(
                ErrorKind::Internal,
                format!("Bad listener URL: {e}."),
                "Restart the listener.",
            )
        }),
    }
}

/// Replays capture `form.capture_id` to `form.target` (this listener when none), unchanged or
/// edited; returns the target's answer and, when it was this listener, the replay's verdict.
///
/// While a team workspace is joined, the capture is the workspace's and its server sends it
/// (only it holds the subscription's key to re-sign an edited body), to the URL typed or, when
/// none, to the workspace's own webhook endpoint; a role that may not replay (below developer)
/// is refused before anything is sent.
pub async fn replay(state: &AppState, form: ReplayForm) -> Result<ReplayResult> {
    if let Some(joined) = crate::services::workspace::joined(state) {
        return replay_in_workspace(state, &joined, form).await;
    }
    let running = state.listener()?;
    let to_listener = form
        .target
        .as_deref()
        .map(str::trim)
        .is_none_or(str::is_empty);
    let target = target_or_listener(state, form.target.as_deref(), "The replay's")?;
    let outcome = running
        .listener
        .replay(
            form.capture_id,
            Some(target),
            form.body.map(String::into_bytes),
        )
        .await?;
    let verdict = match (to_listener, outcome.capture_id) {
        (true, Some(id)) => Some(running.listener.store().get(id)?.verdict),
        _ => None,
    };
    Ok(ReplayResult {
        answer: crate::services::captures::outbound_view(&outcome.record),
        verdict,
    })
}

/// Where a workspace's server takes notifications (`partner server run` prints it).
pub const WORKSPACE_WEBHOOK_PATH: &str = "/webhooks";

async fn replay_in_workspace(
    state: &AppState,
    joined: &crate::services::workspace::Joined,
    form: ReplayForm,
) -> Result<ReplayResult> {
    joined.may(partner_workspace::roles::Action::Replay)?;
    let to = match form
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(url) => partner_listener::outbound::parse_target(url)
            .map_err(|e| AppError::invalid(format!("The replay's {e}.")))?
            .to_string(),
        None => format!("{}{WORKSPACE_WEBHOOK_PATH}", joined.describe()),
    };
    let record = crate::services::workspace::answered(
        state,
        joined
            .client
            .replay(form.capture_id, &to, form.body.as_deref())
            .await,
    )?;
    Ok(ReplayResult {
        answer: crate::services::captures::outbound_view(&record),
        verdict: None,
    })
}

/// The smallest byte budget the app takes: one body of the listener's limit.
const MIN_MAX_BYTES: u64 = partner_listener::DEFAULT_BODY_LIMIT as u64;

/// How many captures are kept, how many bytes of them and for how long: saved, and applied to
/// the store now.
pub async fn set_retention(state: &AppState, form: RetentionForm) -> Result<()> {
    if form.max_captures == Some(0) {
        return Err(AppError::invalid(
            "Keep at least one capture, or set no limit.",
        ));
    }
    if form.max_bytes.is_some_and(|bytes| bytes < MIN_MAX_BYTES) {
        return Err(AppError::invalid(
            "Keep at least 1 MiB of captures (one body may be that large), or set no limit.",
        ));
    }
    if form.max_age_days == Some(0) {
        return Err(AppError::invalid(
            "Keep captures for at least one day, or set no limit.",
        ));
    }
    if form.junk_rate == Some(0) {
        return Err(AppError::invalid(
            "Store at least one junk request a second before counting the rest, or set no limit.",
        ));
    }
    let settings = partner_local::settings::RetentionSettings {
        max_captures: form.max_captures,
        max_bytes: form.max_bytes,
        max_age_days: form.max_age_days,
        junk_rate: form.junk_rate,
    };
    let retention = retention_of(&settings);
    crate::services::settings::update(state, |s| s.retention = settings)?;
    if let Some(running) = state.lock().listener.as_ref() {
        running.listener.set_junk_rate(form.junk_rate);
    }
    if let Ok(store) = state.captures() {
        store.set_retention(retention).await?;
    }
    Ok(())
}

/// The active connection's tunnel URL.
pub fn tunnel_url(state: &AppState) -> Option<String> {
    let inner = state.lock();
    let id = inner.active.as_ref()?.view.id.clone();
    inner.settings.tunnel_urls.get(&id).cloned()
}

/// The base URLs under which a callback URL reaches this console's listener, each with the way
/// it does, the tunnel's first: the active connection's tunnel URL (as the service reaches it),
/// then the listener's URL when it runs, its address as configured, and, for a loopback
/// address, the same as `localhost`. Compared as URLs ([`partner_client::CallbackBase::holds`]),
/// never as text: port 7070 does not take in 70701, nor a tunnel's host a longer one it begins.
pub fn own_callback_routes(state: &AppState) -> Vec<(ListenerRoute, partner_client::CallbackBase)> {
    let tunnel = tunnel_url(state);
    let (address, running) = {
        let inner = state.lock();
        (
            inner.listener_address.address,
            inner.listener.as_ref().map(RunningListener::url),
        )
    };
    let mut urls: Vec<(ListenerRoute, String)> = Vec::new();
    urls.extend(tunnel.map(|url| (ListenerRoute::Tunnel, url)));
    urls.extend(running.map(|url| (ListenerRoute::Direct, url)));
    urls.push((ListenerRoute::Direct, format!("http://{address}")));
    if address.ip().is_loopback() {
        urls.push((
            ListenerRoute::Direct,
            format!("http://localhost:{}", address.port()),
        ));
    }
    urls.into_iter()
        .filter_map(|(via, url)| Some((via, partner_client::CallbackBase::parse(&url).ok()?)))
        .collect()
}

/// How `url` reaches the console's own listener, if it does ([`own_callback_routes`]).
pub fn own_route_of(state: &AppState, url: &str) -> Option<ListenerRoute> {
    own_callback_routes(state)
        .into_iter()
        .find(|(_, base)| base.holds(url))
        .map(|(via, _)| via)
}

/// Saves the active connection's tunnel URL (none clears it). Returns the URL it replaced.
pub fn set_tunnel_url(state: &AppState, url: Option<String>) -> Result<Option<String>> {
    let url = url
        .map(|u| u.trim().trim_end_matches('/').to_string())
        .filter(|u| !u.is_empty());
    if let Some(url) = &url {
        partner_api::product::check_callback_url(url, true)
            .map_err(|e| AppError::invalid(format!("The tunnel {e}.")))?;
    }
    let id = state.active_id().ok_or_else(AppError::not_connected)?;
    crate::services::settings::update(state, |settings| match url {
        Some(url) => settings.tunnel_urls.insert(id, url),
        None => settings.tunnel_urls.remove(&id),
    })
}

/// The Webhooks screen's view of the listener.
pub fn view(state: &AppState) -> ListenerView {
    let tunnel = tunnel_url(state);
    let inner = state.lock();
    let running = inner.listener.as_ref();
    ListenerView {
        running: running.is_some(),
        address: running.map(|r| r.addr.ip().to_string()),
        port: running
            .map(|r| r.addr.port())
            .or(Some(inner.listener_address.address.port())),
        path: running
            .map(|r| r.listener.config().path.clone())
            .unwrap_or_else(|| inner.listener_address.path.clone()),
        configured_address: inner.settings.listener.address.to_string(),
        address_from_environment: inner.listener_address.from_environment,
        callback_url: tunnel.clone().or_else(|| running.map(RunningListener::url)),
        tunnel_url: tunnel,
        test_mode: test_mode_view(&inner.settings.listener.test_mode),
        problem: inner.listener_problem.as_ref().map(|p| p.error.clone()),
        suggested_address: inner
            .listener_problem
            .as_ref()
            .and_then(ListenerProblem::suggested_address),
        retention: RetentionForm {
            max_captures: inner.settings.retention.max_captures,
            max_bytes: inner.settings.retention.max_bytes,
            max_age_days: inner.settings.retention.max_age_days,
            junk_rate: inner.settings.retention.junk_rate,
        },
        junk: running.map(|r| JunkView {
            flood: r.listener.flood_summary(),
            sizes: r.listener.store().retention_sizes(),
        }),
        forward_rules: forward_rule_views(&inner.settings.listener.forward_rules),
        data_key_home: inner.data_key_home.clone(),
        store_path: state
            .data_dir
            .join(partner_local::paths::CAPTURE_STORE)
            .display()
            .to_string(),
    }
}

/// The listener's view after `done`, or `done`'s error: what a command that changes the
/// listener answers.
pub fn view_after<T>(state: &AppState, done: Result<T>) -> Result<ListenerView> {
    done.map(|_| view(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_that_only_begins_like_the_listeners_is_not_the_console_s() {
        let dir = tempfile::tempdir().unwrap();
        let state = crate::state::test_state(dir.path().to_path_buf());
        state.lock().listener_address.address = "127.0.0.1:7070".parse().unwrap();
        let ours = |url: &str| own_route_of(&state, url).is_some();
        assert!(ours("http://127.0.0.1:7070/webhooks"));
        assert!(ours("http://localhost:7070/webhooks"));
        assert!(!ours("http://127.0.0.1:70701/webhooks"));
        assert!(!ours("http://localhost:7070.example/webhooks"));
        assert!(!ours("http://127.0.0.1:707/webhooks"));
    }
}

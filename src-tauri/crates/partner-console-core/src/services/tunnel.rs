//! The tunnel check (Webhooks screen, and in the background at start and after the tunnel URL
//! changes, its outcome in the top bar), over `partner_listener::tunnel`.
//!
//! The library does the check (https-only rule, a probe signed with a one-time key, arrival seen
//! on the running listener's live feed, failure classified as DNS, TLS, refused, timeout, status
//! or wrong path) and tests it against a real TLS tunnel. The shell only gathers the tunnel URL
//! and the running listener from the app state and puts the report into words: the library's
//! sentence for what happened, plus what the user can do about that class of failure.

use crate::bridge::{StepPhase, TunnelStatus};
use crate::bridge::{TunnelCheck, TunnelFailureKind};
use crate::console::Console;
use crate::state::{AppState, RunningListener};
use partner_listener::tunnel::{self, TunnelFailure, TunnelReport};
use std::net::SocketAddr;
use std::time::Duration;

/// Runs the library's check against `running` and words its report.
pub async fn run_tunnel_check(
    running: &RunningListener,
    tunnel_url: &str,
    timeout: Duration,
) -> TunnelCheck {
    let client = tunnel::tunnel_client(timeout);
    let report = tunnel::check_tunnel(&running.listener, tunnel_url, &client, timeout).await;
    tunnel_check_view(report, running.addr)
}

/// Checks the active connection's tunnel URL in the background, its progress and outcome in
/// the status (the top bar). Nothing to do when no tunnel URL is set or the listener is off.
/// Checks the active connection's tunnel URL now, through the running listener.
pub async fn check_now(state: &AppState) -> crate::error::Result<TunnelCheck> {
    let running = state.listener()?;
    let Some(tunnel) = crate::services::listener::tunnel_url(state) else {
        return Err(crate::error::AppError::new(
            crate::error::ErrorKind::InvalidInput,
            "No tunnel URL is set.",
            "Paste the https:// URL your tunnel tool (ngrok, cloudflared) prints, save it, then check.",
        ));
    };
    Ok(run_tunnel_check(&running, &tunnel, tunnel::DEFAULT_TIMEOUT).await)
}

/// Saves the active connection's tunnel URL, checks it in the background, and offers to
/// re-point the subscriptions that still use the URL it replaced.
pub async fn save_url(
    app: &Console,
    url: Option<String>,
) -> crate::error::Result<crate::bridge::TunnelSaved> {
    let replaced = crate::services::listener::set_tunnel_url(app, url)?;
    check_in_background(app.clone());
    let repoint = crate::services::subscriptions::repoint_offer(app, replaced).await?;
    Ok(crate::bridge::TunnelSaved {
        listener: crate::services::listener::view(app),
        repoint,
    })
}

pub fn check_in_background(app: Console) {
    let state = app.state();
    let Some(url) = crate::services::listener::tunnel_url(state) else {
        app.announce(|inner| inner.tunnel = None);
        return;
    };
    let Ok(running) = state.listener() else {
        app.announce(|inner| inner.tunnel = None);
        return;
    };
    // One check of a URL at a time: at start, opening the connection and the end of start-up
    // both ask for one.
    let started = {
        let mut inner = state.lock();
        let running =
            matches!(&inner.tunnel, Some(t) if t.url == url && t.phase == StepPhase::Running);
        if !running {
            inner.tunnel = Some(TunnelStatus {
                url: url.clone(),
                phase: StepPhase::Running,
                check: None,
            });
        }
        (!running).then(|| state.announce_locked(&inner))
    };
    let Some(status) = started else {
        return;
    };
    app.emit_status(status);
    let stop = state.shutdown.child_token();
    app.clone().spawn(async move {
        let check = tokio::select! {
            check = run_tunnel_check(&running, &url, tunnel::DEFAULT_TIMEOUT) => check,
            () = stop.cancelled() => return,
        };
        let state = app.state();
        // A result for a URL that has since changed is not shown.
        if crate::services::listener::tunnel_url(state).as_deref() != Some(url.as_str()) {
            return;
        }
        crate::milestones::milestone("tunnel checked");
        app.announce(|inner| {
            inner.tunnel = Some(TunnelStatus {
                url: url.clone(),
                phase: if check.ok {
                    StepPhase::Done
                } else {
                    StepPhase::Failed
                },
                check: Some(check),
            });
        });
    });
}

/// A [`TunnelReport`] as the Webhooks screen shows it: the library's words for what happened,
/// and what the user can do about it (`listening_on` is where the tunnel must point).
pub fn tunnel_check_view(report: TunnelReport, listening_on: SocketAddr) -> TunnelCheck {
    let (message, hint, failure) =
        match &report.failure {
            None => (
                format!(
                "The tunnel reaches this listener: the probe arrived and came back {} in {} ms.",
                report.status.map_or_else(|| "answered".into(), |s| s.to_string()),
                report.round_trip_ms.unwrap_or_default()
            ),
                None,
                None,
            ),
            Some(failure) => {
                let (kind, hint) = failure_hint(failure, listening_on);
                (sentence(&failure.to_string()), Some(hint), Some(kind))
            }
        };
    TunnelCheck {
        ok: report.ok,
        url: report.url,
        message,
        hint,
        failure,
        arrived: report.arrived,
        round_trip_ms: report.round_trip_ms,
        status: report.status,
        capture_id: report.capture_id,
    }
}

fn failure_hint(failure: &TunnelFailure, listening_on: SocketAddr) -> (TunnelFailureKind, String) {
    let port = listening_on.port();
    match failure {
        TunnelFailure::InvalidUrl { .. } => (
            TunnelFailureKind::InvalidUrl,
            "Paste the whole public URL your tunnel tool prints, e.g. https://example.ngrok.app/webhooks.".into(),
        ),
        TunnelFailure::NotHttps { .. } => (
            TunnelFailureKind::NotHttps,
            "Use the https:// address of the tunnel: the service never calls plain http.".into(),
        ),
        TunnelFailure::Dns { .. } => (
            TunnelFailureKind::Dns,
            "Check the host name for typos and that the tunnel tool is still running: many tunnels get a new name each time they start.".into(),
        ),
        TunnelFailure::Tls { .. } => (
            TunnelFailureKind::Tls,
            "Use the https:// address the tunnel tool gives: a certificate the system does not trust (self-signed, or for another name) is refused by the service too.".into(),
        ),
        TunnelFailure::Refused { .. } => (
            TunnelFailureKind::Refused,
            "Start the tunnel tool, and check the host and port of the URL.".into(),
        ),
        TunnelFailure::Connect { .. } => (
            TunnelFailureKind::Connect,
            "Check this computer's network connection and that the tunnel tool is running.".into(),
        ),
        TunnelFailure::Timeout { .. } => (
            TunnelFailureKind::Timeout,
            format!("Check that the tunnel tool is running and forwards to {listening_on} (e.g. `ngrok http {port}`); a tunnel whose target never answers looks like this."),
        ),
        TunnelFailure::Status { arrived: true, .. } => (
            TunnelFailureKind::Status,
            "The probe reached the listener: open it in the inspector to see what the listener answered, and turn test mode off if it is on.".into(),
        ),
        TunnelFailure::Status { arrived: false, .. } => (
            TunnelFailureKind::Status,
            format!("The tunnel tool answered by itself: check that it forwards to {listening_on} (e.g. `ngrok http {port}`) and that the listener is on."),
        ),
        TunnelFailure::ArrivedAtOtherPath { expected, .. } => (
            TunnelFailureKind::WrongPath,
            format!("End the tunnel URL with {expected}, the listener's path, and save it again."),
        ),
        TunnelFailure::NotArrived { .. } => (
            TunnelFailureKind::NotArrived,
            format!("Another server answered: point the tunnel at {listening_on} (e.g. `ngrok http {port}`)."),
        ),
    }
}

/// `the tunnel …` → `The tunnel ….`
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use partner_listener::{Listener, ListenerConfig, MemoryKeys, Retention, Store};
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    const LISTENING_ON: &str = "127.0.0.1:41234";

    fn report(failure: Option<TunnelFailure>) -> TunnelReport {
        TunnelReport {
            url: "https://abc.example.app/webhooks".into(),
            ok: failure.is_none(),
            arrived: false,
            round_trip_ms: Some(42),
            status: Some(200),
            capture_id: None,
            failure,
        }
    }

    fn every_failure() -> Vec<(TunnelFailure, TunnelFailureKind)> {
        vec![
            (
                TunnelFailure::InvalidUrl {
                    reason: "relative URL without a base".into(),
                },
                TunnelFailureKind::InvalidUrl,
            ),
            (
                TunnelFailure::NotHttps {
                    scheme: "http".into(),
                },
                TunnelFailureKind::NotHttps,
            ),
            (
                TunnelFailure::Dns {
                    detail: "failed to lookup address information".into(),
                },
                TunnelFailureKind::Dns,
            ),
            (
                TunnelFailure::Tls {
                    detail: "invalid peer certificate: UnknownIssuer".into(),
                },
                TunnelFailureKind::Tls,
            ),
            (
                TunnelFailure::Refused {
                    detail: "connection refused".into(),
                },
                TunnelFailureKind::Refused,
            ),
            (
                TunnelFailure::Connect {
                    detail: "network unreachable".into(),
                },
                TunnelFailureKind::Connect,
            ),
            (
                TunnelFailure::Timeout { after_ms: 10_000 },
                TunnelFailureKind::Timeout,
            ),
            (
                TunnelFailure::Status {
                    status: 500,
                    arrived: true,
                },
                TunnelFailureKind::Status,
            ),
            (
                TunnelFailure::Status {
                    status: 502,
                    arrived: false,
                },
                TunnelFailureKind::Status,
            ),
            (
                TunnelFailure::ArrivedAtOtherPath {
                    path: "/hooks".into(),
                    expected: "/webhooks".into(),
                },
                TunnelFailureKind::WrongPath,
            ),
            (
                TunnelFailure::NotArrived { status: 200 },
                TunnelFailureKind::NotArrived,
            ),
        ]
    }

    #[test]
    fn a_passing_check_says_so_with_its_round_trip() {
        let mut passed = report(None);
        passed.arrived = true;
        passed.capture_id = Some(7);
        let view = tunnel_check_view(passed, LISTENING_ON.parse().unwrap());
        assert!(view.ok && view.arrived);
        assert_eq!(view.failure, None);
        assert_eq!(view.hint, None);
        assert_eq!(view.round_trip_ms, Some(42));
        assert_eq!(view.capture_id, Some(7));
        assert_eq!(
            view.message,
            "The tunnel reaches this listener: the probe arrived and came back 200 in 42 ms."
        );
    }

    #[test]
    fn each_failure_class_is_named_and_says_what_to_do() {
        let mut hints = std::collections::HashSet::new();
        for (failure, kind) in every_failure() {
            let library_words = failure.to_string();
            let view =
                tunnel_check_view(report(Some(failure.clone())), LISTENING_ON.parse().unwrap());
            assert!(!view.ok, "{failure:?}");
            assert_eq!(view.failure, Some(kind), "{failure:?}");
            // What happened: the library's sentence, as a sentence.
            assert!(
                view.message.starts_with(|c: char| c.is_uppercase()),
                "{}",
                view.message
            );
            assert!(view.message.ends_with('.'), "{}", view.message);
            assert!(
                view.message
                    .to_lowercase()
                    .contains(&library_words.to_lowercase()),
                "{} does not carry {library_words}",
                view.message
            );
            // What to do: its own advice for each class, never a Debug print.
            let hint = view.hint.clone().unwrap_or_default();
            assert!(hint.len() > 30, "{failure:?}: {hint}");
            assert!(
                !hint.contains('{') && !view.message.contains("Some("),
                "{hint}"
            );
            assert!(
                hints.insert(hint),
                "{failure:?} repeats another class's hint"
            );
            assert_eq!(view.url, "https://abc.example.app/webhooks");
        }
    }

    #[test]
    fn hints_name_what_to_change() {
        let hint_for = |failure| {
            tunnel_check_view(report(Some(failure)), LISTENING_ON.parse().unwrap())
                .hint
                .unwrap()
        };
        let wrong_path = hint_for(TunnelFailure::ArrivedAtOtherPath {
            path: "/hooks".into(),
            expected: "/webhooks".into(),
        });
        assert!(wrong_path.contains("/webhooks"), "{wrong_path}");
        for failure in [
            TunnelFailure::NotArrived { status: 200 },
            TunnelFailure::Status {
                status: 502,
                arrived: false,
            },
            TunnelFailure::Timeout { after_ms: 10_000 },
        ] {
            let hint = hint_for(failure);
            assert!(hint.contains(LISTENING_ON), "{hint}");
            assert!(hint.contains("ngrok http 41234"), "{hint}");
        }
        assert!(hint_for(TunnelFailure::NotHttps {
            scheme: "http".into()
        })
        .contains("https://"));
    }

    /// A real listener on 127.0.0.1:0 with `keys`, and its scratch folder.
    pub(crate) async fn running_listener_with(
        keys: Arc<MemoryKeys>,
    ) -> (RunningListener, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("partner-tunnel-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::open(dir.join("captures.db"), Retention::default()).unwrap();
        let listener = Listener::new(ListenerConfig::default(), store, keys).unwrap();
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = CancellationToken::new();
        let serving = listener.clone();
        let stopped = stop.clone();
        let finished = CancellationToken::new();
        let done = finished.clone();
        tokio::spawn(async move {
            let served = serving.serve(socket, stopped.cancelled_owned()).await;
            done.cancel();
            served
        });
        (
            RunningListener {
                listener,
                addr,
                stop,
                finished,
            },
            dir,
        )
    }

    /// The command's own path (library check, then words) against a real listener, for the
    /// failures a loopback test can really produce.
    #[tokio::test]
    async fn the_adapter_runs_the_library_check_against_the_running_listener() {
        let (running, dir) = running_listener_with(Arc::new(MemoryKeys::new())).await;

        let plain = run_tunnel_check(&running, &running.url(), Duration::from_secs(2)).await;
        assert_eq!(plain.failure, Some(TunnelFailureKind::NotHttps));
        assert!(!plain.arrived && plain.round_trip_ms.is_none());

        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let refused = run_tunnel_check(
            &running,
            &format!("https://127.0.0.1:{closed_port}/webhooks"),
            Duration::from_secs(2),
        )
        .await;
        assert_eq!(
            refused.failure,
            Some(TunnelFailureKind::Refused),
            "{refused:?}"
        );
        assert!(refused.message.contains("refused"), "{}", refused.message);

        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent_port = silent.local_addr().unwrap().port();
        let holder = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = silent.accept().await {
                held.push(stream);
            }
        });
        let hanging = run_tunnel_check(
            &running,
            &format!("https://127.0.0.1:{silent_port}/webhooks"),
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(
            hanging.failure,
            Some(TunnelFailureKind::Timeout),
            "{hanging:?}"
        );
        assert!(
            hanging.hint.unwrap().contains(&running.addr.to_string()),
            "the hint names where the tunnel must point"
        );
        holder.abort();
        running.stop.cancel();
        let _ = std::fs::remove_dir_all(dir);
    }
}

//! Desktop notifications, opt-in per kind (`partner_local::DesktopNotices` in the settings): a
//! notification that failed verification, a receiver check with a rule failed, missed
//! notifications found. Sent through the console's sink ([`EventSink::notify_desktop`]), which
//! the app shows with Tauri's notification plugin; tests record them.
//!
//! Failed verifications come in bursts (a receiver forging, a key rotated on one side only), so
//! they are told at most once per [`VERIFICATION_QUIET`]: what fails meanwhile is counted and
//! told when the quiet time ends. No notice names a header, a body or a key: only counts, verdicts
//! and a receiver's URL.
use crate::bridge::CaptureSummary;
use crate::console::Console;
use partner_listener::Verdict;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::console::{DesktopNotice, NoticeKind};

/// The least time between two notices of failed verification.
pub const VERIFICATION_QUIET: Duration = Duration::from_secs(10);

/// Captures the listener just kept: those that failed verification are told, when the user
/// asked for it. Replays the console sent and the receiver check's probes are not the
/// service's, so they are left out.
pub fn captures_arrived(console: &Console, captures: &[CaptureSummary]) {
    if !console
        .state()
        .lock()
        .settings
        .desktop_notices
        .failed_verification
    {
        return;
    }
    let failed: Vec<&CaptureSummary> = captures
        .iter()
        .filter(|c| c.verdict != Verdict::Valid && !c.replayed)
        .collect();
    if failed.is_empty() {
        return;
    }
    let flush_after = {
        let mut throttle = lock(&console.state().verification_notices);
        for capture in &failed {
            *throttle.held.entry(capture.verdict.as_str()).or_default() += 1;
        }
        let now = Instant::now();
        match throttle.last_told {
            Some(told) if now.duration_since(told) < VERIFICATION_QUIET => {
                if throttle.flush_due {
                    None
                } else {
                    throttle.flush_due = true;
                    Some(VERIFICATION_QUIET - now.duration_since(told))
                }
            }
            _ => Some(Duration::ZERO),
        }
    };
    match flush_after {
        Some(Duration::ZERO) => tell_held(console),
        Some(wait) => {
            let console_later = console.clone();
            console.spawn(async move {
                tokio::time::sleep(wait).await;
                tell_held(&console_later);
            });
        }
        None => {}
    }
}

/// Tells what is held, as one notice.
fn tell_held(console: &Console) {
    let held = {
        let mut throttle = lock(&console.state().verification_notices);
        throttle.flush_due = false;
        if throttle.held.is_empty() {
            return;
        }
        throttle.last_told = Some(Instant::now());
        std::mem::take(&mut throttle.held)
    };
    let total: u64 = held.values().sum();
    let verdicts: Vec<String> = held
        .iter()
        .map(|(verdict, count)| format!("{count} {}", verdict.replace('-', " ")))
        .collect();
    let title = if total == 1 {
        "A notification failed verification".to_string()
    } else {
        format!("{total} notifications failed verification")
    };
    console.notify_desktop(DesktopNotice {
        kind: NoticeKind::FailedVerification,
        title,
        body: format!("{}. Open Webhooks to see why.", verdicts.join(", ")),
    });
}

/// A receiver check ended with `failed` rules failed (none: nothing is told).
pub fn receiver_check_ended(console: &Console, url: &str, failed: &[String]) {
    if failed.is_empty()
        || !console
            .state()
            .lock()
            .settings
            .desktop_notices
            .receiver_check_failed
    {
        return;
    }
    console.notify_desktop(DesktopNotice {
        kind: NoticeKind::ReceiverCheckFailed,
        title: format!(
            "Receiver check: {} rule{} failed",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" }
        ),
        body: format!("{url}: {}.", failed.join(", ")),
    });
}

/// The missed-notification check ended finding `missed` notifications that never arrived.
pub fn missed_found(console: &Console, missed: usize) {
    if missed == 0 || !console.state().lock().settings.desktop_notices.missed_found {
        return;
    }
    console.notify_desktop(DesktopNotice {
        kind: NoticeKind::MissedFound,
        title: if missed == 1 {
            "A notification never arrived".into()
        } else {
            format!("{missed} notifications never arrived")
        },
        body: "The service sent them while the listener could not take them. Open Webhooks, Missed, to send them again.".into(),
    });
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

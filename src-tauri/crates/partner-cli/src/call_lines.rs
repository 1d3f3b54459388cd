//! `partner --verbose` and `partner --curl`: each call to the service on stderr as it ends.
//!
//! Why here and not in a tracing layer: the lines are for the person at the terminal, in the
//! client's [`CallLog`] words (status, time, retries and waits, the service's request id), and
//! the curl form is the log's, where the token and client secret are variables. Every client a
//! command makes is watched ([`watch`]); [`finish`] prints what is left before `partner` exits,
//! so the last call's line is never lost to the process ending.

use partner_client::{CallLog, CallRecord, PartnerClient};
use std::sync::{Mutex, OnceLock};

/// What to print for each call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Show {
    /// One line per call: method, path and query, status, time, retries and waits, request id.
    pub lines: bool,
    /// The call as a curl command.
    pub curl: bool,
}

static SHOW: OnceLock<Show> = OnceLock::new();

/// The logs watched in this run, each with the number of the last call printed.
static WATCHED: Mutex<Vec<(CallLog, u64)>> = Mutex::new(Vec::new());

/// Sets what every watched client prints (once, from `main`).
pub fn show(show: Show) {
    let _ = SHOW.set(show);
}

fn wanted() -> Option<Show> {
    SHOW.get().copied().filter(|s| s.lines || s.curl)
}

/// Prints `client`'s calls as they end, when `--verbose` or `--curl` asked for them.
pub fn watch(client: &PartnerClient) {
    if wanted().is_none() {
        return;
    }
    let log = client.calls().clone();
    let mut live = log.subscribe();
    {
        let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
        if watched.iter().any(|(known, _)| known.same_log(&log)) {
            return;
        }
        watched.push((log, 0));
    }
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match live.recv().await {
                // A receiver that fell behind catches up from the log itself.
                Ok(_) | Err(RecvError::Lagged(_)) => print_pending(),
                Err(RecvError::Closed) => return,
            }
        }
    });
}

/// Prints the calls that ended and were not printed yet (before `partner` exits).
pub fn finish() {
    if wanted().is_some() {
        print_pending();
    }
}

fn print_pending() {
    let Some(show) = wanted() else { return };
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    let mut err = std::io::stderr().lock();
    for (log, printed) in watched.iter_mut() {
        for call in log.since(*printed) {
            *printed = call.seq;
            // stderr gone (a closed pipe) is no reason to fail the command.
            let _ = write_call(&mut err, &call, show);
        }
    }
}

fn write_call(out: &mut impl std::io::Write, call: &CallRecord, show: Show) -> std::io::Result<()> {
    if show.lines {
        writeln!(out, "call: {call}")?;
    }
    if show.curl {
        writeln!(out, "{}", call.curl())?;
    }
    Ok(())
}

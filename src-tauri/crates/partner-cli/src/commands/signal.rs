//! Stopping a long-running command (`partner sandbox`, `partner listen`) on Ctrl-C or SIGTERM,
//! or on Windows Ctrl+C, Ctrl+Break or its console closed.
//!
//! The handlers are installed before the command prints its first line, so a script that reads
//! `listening on …` and sends SIGTERM at once still gets a clean stop rather than the default
//! (immediate) termination.

use crate::error::{CliError, Result};

/// A future that completes on Ctrl-C or SIGTERM (on Windows: Ctrl+C, Ctrl+Break or the console
/// window closed, which gives a program a few seconds to stop). The handlers are installed here,
/// before the first line is printed, so a script that reads that line and stops the command at
/// once still gets a clean stop.
pub fn stop_signal() -> Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).map_err(CliError::Signal)?;
        Ok(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        })
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
        let mut c = ctrl_c().map_err(CliError::Signal)?;
        let mut brk = ctrl_break().map_err(CliError::Signal)?;
        let mut close = ctrl_close().map_err(CliError::Signal)?;
        Ok(async move {
            tokio::select! {
                _ = c.recv() => {}
                _ = brk.recv() => {}
                _ = close.recv() => {}
            }
        })
    }
    #[cfg(not(any(unix, windows)))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// A cancellation token that Ctrl-C or SIGTERM cancels while this guard lives: how a walk, a
/// check or a run of sends stops part-way and still prints what it did.
#[derive(Debug)]
pub struct CancelOnStop {
    pub token: tokio_util::sync::CancellationToken,
    watcher: tokio::task::JoinHandle<()>,
}

impl Drop for CancelOnStop {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// Starts watching for Ctrl-C and SIGTERM (installed now, see [`stop_signal`]).
pub fn cancel_on_stop() -> Result<CancelOnStop> {
    let stop = stop_signal()?;
    let token = tokio_util::sync::CancellationToken::new();
    let watcher = tokio::spawn({
        let token = token.clone();
        async move {
            stop.await;
            token.cancel();
        }
    });
    Ok(CancelOnStop { token, watcher })
}

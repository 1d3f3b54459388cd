//! Stopping a long-running command (`partner sandbox`, `partner listen`) on Ctrl-C or SIGTERM.
//!
//! The handlers are installed before the command prints its first line, so a script that reads
//! `listening on …` and sends SIGTERM at once still gets a clean stop rather than the default
//! (immediate) termination.

use crate::error::{CliError, Result};

/// A future that completes on Ctrl-C or SIGTERM. The SIGTERM handler is installed here, before
/// the first line is printed, so a script that reads that line and sends SIGTERM at once still
/// gets a clean stop.
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
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

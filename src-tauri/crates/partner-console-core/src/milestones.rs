//! Start-up milestones in the log (`PARTNER_LOG=info`), each with the milliseconds since the
//! process started: where start-up time goes, without a profiler. Every part of start-up logs
//! through here, so it sits below the services.
use std::sync::OnceLock;
use std::time::Instant;

static PROCESS_START: OnceLock<Instant> = OnceLock::new();

/// Marks the process start (first thing in `run`), for the start-up milestones in the log.
pub fn mark_process_start() {
    PROCESS_START.get_or_init(Instant::now);
}

/// A start-up milestone in the log (`PARTNER_LOG=info`), with the milliseconds since the
/// process started: where start-up time goes, without a profiler.
pub fn milestone(what: &str) {
    let ms = PROCESS_START.get().map_or(0, |t| t.elapsed().as_millis());
    tracing::info!(since_start_ms = ms, "start-up: {what}");
}

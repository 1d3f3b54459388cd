//! Long file jobs the user can watch and stop: exports of captures and listings, imports of
//! captures. Each runs under an id the UI chose, reports `job-progress` events (so the UI can
//! show a bar) and stops when `cancel` names it or the app exits.
use crate::bridge::JobProgress;
use crate::console::{AppEvent, Console};
use crate::state::locked;
use crate::state::AppState;
use tokio_util::sync::CancellationToken;

/// A running job: its stop signal, and what reports its progress. Dropping it forgets the job.
/// It owns what it needs, so it can move onto the blocking pool with the file work.
#[derive(Debug)]
pub struct Job {
    app: Console,
    id: String,
    pub stop: CancellationToken,
}

impl Job {
    /// Registers job `id` (a second job under the same id replaces the first's stop signal).
    pub fn start(app: &Console, id: &str) -> Self {
        let state = app.state();
        let stop = state.shutdown.child_token();
        locked(&state.jobs).insert(id.to_string(), stop.clone());
        Self {
            app: app.clone(),
            id: id.to_string(),
            stop,
        }
    }

    /// Tells the UI how far the job is (`total` when known).
    pub fn progress(&self, done: u64, total: Option<u64>) {
        self.app.emit(AppEvent::JobProgress(JobProgress {
            job_id: self.id.clone(),
            done,
            total,
        }));
    }

    pub fn cancelled(&self) -> bool {
        self.stop.is_cancelled()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        locked(&self.app.state().jobs).remove(&self.id);
    }
}

/// Stops job `id`, if it is still running.
pub fn cancel(state: &AppState, id: &str) {
    if let Some(stop) = locked(&state.jobs).remove(id) {
        stop.cancel();
    }
}

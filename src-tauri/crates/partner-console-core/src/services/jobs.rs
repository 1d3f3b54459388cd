//! Long file jobs the user can watch and stop: exports of captures and listings, imports of
//! captures. Each runs under an id the UI chose, reports `job-progress` events (so the UI can
//! show a bar) and stops when `cancel` names it or the app exits.
use crate::bridge::Progress;
use crate::console::{AppEvent, Console};
use crate::state::locked;
use crate::state::AppState;
use partner_client::PartnerClient;
use tokio_util::sync::CancellationToken;

/// A running job: its stop signal, and what reports its progress. Dropping it forgets the job.
/// It owns what it needs, so it can move onto the blocking pool with the file work.
#[derive(Debug)]
pub struct Job {
    app: Console,
    id: String,
    pub stop: CancellationToken,
    /// The last progress told, so a wait can be told beside it.
    last: std::sync::Arc<std::sync::Mutex<(u64, Option<u64>)>>,
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
            last: Default::default(),
        }
    }

    /// Tells the UI how far the job is (`total` when known).
    pub fn progress(&self, done: u64, total: Option<u64>) {
        *locked(&self.last) = (done, total);
        self.app.emit(AppEvent::JobProgress(Progress {
            job_id: Some(self.id.clone()),
            phase: None,
            done,
            total,
            note: None,
        }));
    }

    /// Tells the UI how far the job is, and what it is doing now ("indexing for search").
    pub fn progress_noted(&self, done: u64, total: Option<u64>, note: &str) {
        *locked(&self.last) = (done, total);
        self.app.emit(AppEvent::JobProgress(Progress {
            job_id: Some(self.id.clone()),
            phase: None,
            done,
            total,
            note: Some(note.to_string()),
        }));
    }

    /// Tells the UI, beside the last progress, each wait the service asks of `client` while
    /// the returned guard lives ("waiting 2 s: rate limited").
    pub fn tell_waits(&self, client: &PartnerClient) -> WaitWatch {
        let app = self.app.clone();
        let id = self.id.clone();
        let last = self.last.clone();
        watch_waits(client, move |note| {
            let (done, total) = *locked(&last);
            app.emit(AppEvent::JobProgress(Progress {
                job_id: Some(id.clone()),
                phase: None,
                done,
                total,
                note,
            }));
        })
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

/// Watches the waits the service asks of a client (429 or 503 with `Retry-After`: the client
/// waits and sends again, see `partner_client::Waiting`) until dropped.
#[derive(Debug)]
pub struct WaitWatch(tokio::task::JoinHandle<()>);

impl Drop for WaitWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Calls `tell` with "waiting N s: rate limited" each time the service makes a call of
/// `client` wait, and with `None` once it is sent again, while the guard lives: how every walk
/// of the app says it is waiting rather than stuck.
pub fn watch_waits(
    client: &PartnerClient,
    tell: impl Fn(Option<String>) + Send + 'static,
) -> WaitWatch {
    let mut waiting = client.waiting();
    WaitWatch(tokio::spawn(async move {
        while waiting.changed().await.is_ok() {
            let note = waiting
                .borrow_and_update()
                .as_ref()
                .map(ToString::to_string);
            tell(note);
        }
    }))
}

/// Stops job `id`, if it is still running.
pub fn cancel(state: &AppState, id: &str) {
    if let Some(stop) = locked(&state.jobs).remove(id) {
        stop.cancel();
    }
}

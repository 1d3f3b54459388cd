//! The console: the app's state, and the three things its services reach outside themselves
//! through: an [`EventSink`] (the window, in the app), [`FileDialogs`] (the desktop's save and
//! open dialogs) and the async runtime they spawn their background work on.
//!
//! Why a handle of our own instead of Tauri's app handle: with it every service runs without a
//! window. The Tauri shell builds one `Console` over a sink that forwards to the webview and
//! dialogs from its dialog plugin; a test builds one over a [`RecordingSink`] and
//! [`FolderDialogs`], and drives the same service code a command calls (as Yaak's proxy
//! library and GitButler's Tauri-free API crates do).
//!
//! The events are declared once, in [`for_each_event!`](crate::for_each_event), which makes
//! [`AppEvent`] here and the UI's event map.
//!
//! `Console` dereferences to its [`AppState`], so a service that only reads the state takes
//! `&AppState` and is handed a `&Console` as it is.

use crate::bridge::{
    AppStatus, CallBatch, CaptureBatch, CheckStepEvent, Progress, SearchProgress, TokenView,
};
use crate::state::{AppState, Inner};
use partner_local::updates::UpdateView;
use serde::Serialize;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// The one list of the events the window hears: calls `$callback! { entries }`, each entry
/// `Variant("bridge-name") => Payload;` with its doc comment. From it come [`AppEvent`] and its
/// [`AppEvent::name`] here, and `ui/src/bindings/Events.ts` (the map `name → payload` and the
/// names the UI listens by) in [`crate::bindings`]: an event is declared once, as a command is
/// ([`crate::for_each_command!`]). The payload types are those of
/// [`crate::commands::prelude`].
#[macro_export]
macro_rules! for_each_event {
    ($callback:ident) => {
        $callback! {
            /// Captures the listener committed, coalesced (at most one event per 100 ms window).
            Captures("captures") => CaptureBatch;
            /// A change of the active connection's token.
            Token("token") => TokenView;
            /// How far a search across a listing's pages is.
            SearchProgress("search-progress") => SearchProgress;
            /// The app's status after an announced change (see [`AppState::announce`]).
            Status("status") => Box<AppStatus>;
            /// How far the missed-notification check is.
            MissedProgress("missed-progress") => Progress;
            /// How far an export or import is.
            JobProgress("job-progress") => Progress;
            /// How far the support desk's sync is.
            SupportSyncProgress("support-sync-progress") => Progress;
            /// A route a `partner-console://` link asked for.
            OpenLink("open-link") => String;
            /// New calls of the active connection's client (at most ~5 events a second).
            Calls("calls") => CallBatch;
            /// A step of a connection check that just ended.
            ConnectionCheck("connection-check") => CheckStepEvent;
            /// The app's update state, each time it changes (sent by the shell, whose updater
            /// it is).
            Update("update") => UpdateView;
        }
    };
}

/// Makes [`AppEvent`] from the list.
macro_rules! app_event {
    ($( $(#[doc = $doc:literal])* $variant:ident($name:literal) => $payload:ty; )*) => {
        /// Everything the services tell the window, each under the event name the UI listens
        /// for ([`crate::for_each_event!`]). Serialised untagged: the window receives the payload
        /// alone, as it always has.
        #[derive(Debug, Clone, Serialize)]
        #[serde(untagged)]
        pub enum AppEvent {
            $( $(#[doc = $doc])* $variant($payload), )*
        }

        impl AppEvent {
            /// The event's name on the bridge.
            pub fn name(&self) -> &'static str {
                match self {
                    $( AppEvent::$variant(_) => $name, )*
                }
            }
        }
    };
}

crate::for_each_event!(app_event);

/// Where the services' events go: the window in the app, a recording in tests. Sending never
/// fails a service: a window that is gone simply misses the event.
pub trait EventSink: Send + Sync + 'static {
    fn send(&self, event: AppEvent);

    /// Brings the window to the front (a link was opened); nothing where there is no window.
    fn bring_to_front(&self) {}

    /// Shows a notification on the desktop (its notification area); nothing where there is
    /// no desktop. Which are sent is the user's choice (`crate::notices`).
    fn notify_desktop(&self, _notice: DesktopNotice) {}
}

/// Which of the opt-in desktop notifications a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    FailedVerification,
    ReceiverCheckFailed,
    MissedFound,
}

/// A notification for the desktop: a title and one or two sentences. It never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopNotice {
    pub kind: NoticeKind,
    pub title: String,
    pub body: String,
}

/// A sink that keeps every event, for tests.
#[derive(Debug, Default)]
pub struct RecordingSink {
    events: Mutex<Vec<AppEvent>>,
    notices: Mutex<Vec<DesktopNotice>>,
}

impl RecordingSink {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Every event so far, oldest first.
    pub fn events(&self) -> Vec<AppEvent> {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The desktop notifications so far, oldest first.
    pub fn notices(&self) -> Vec<DesktopNotice> {
        self.notices
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The names of the events so far, oldest first.
    pub fn names(&self) -> Vec<&'static str> {
        self.events().iter().map(AppEvent::name).collect()
    }
}

impl EventSink for RecordingSink {
    fn send(&self, event: AppEvent) {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(event);
    }

    fn notify_desktop(&self, notice: DesktopNotice) {
        self.notices
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(notice);
    }
}

/// What a file dialog asks for: its title, the name it suggests, the folder it opens in, and
/// the one kind of file it offers (a name and its extensions).
#[derive(Debug, Clone)]
pub struct FileChoice {
    pub title: String,
    pub suggested_name: String,
    pub folder: PathBuf,
    pub kind: &'static str,
    pub extensions: &'static [&'static str],
}

/// The desktop's save and open dialogs: the path the user chose, or `None` when they closed
/// the dialog. The services go on with the file itself; the UI never handles paths it did not
/// show.
pub trait FileDialogs: Send + Sync + 'static {
    fn save(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>>;
    fn open(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>>;
}

/// Dialogs answered from a folder without a window: a save goes to the folder under the
/// suggested name, an open reads the suggested name from it. Tests and `partner demo` use it,
/// and so does the app built with its `test-hooks` feature when `PARTNER_TEST_DIALOG_DIR` is
/// set (the end-to-end tests drive the real app through WebDriver, which cannot reach a GTK
/// file dialog). The core reads no variable for it: the app's hook does
/// (`src-tauri/src/test_hooks.rs`), and the packages are built without it.
#[derive(Debug, Clone)]
pub struct FolderDialogs {
    pub folder: PathBuf,
}

impl FileDialogs for FolderDialogs {
    fn save(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>> {
        let path = self.folder.join(&choice.suggested_name);
        Box::pin(async move { Some(path) })
    }

    fn open(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>> {
        let path = self.folder.join(&choice.suggested_name);
        Box::pin(async move { Some(path) })
    }
}

/// The console's state with its sink, dialogs and runtime: cheap to clone, one per app.
#[derive(Clone)]
pub struct Console {
    parts: Arc<Parts>,
}

struct Parts {
    state: AppState,
    sink: Arc<dyn EventSink>,
    dialogs: Arc<dyn FileDialogs>,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("state", &self.parts.state)
            .finish_non_exhaustive()
    }
}

impl Console {
    /// A console over `state`; background work is spawned on `runtime`.
    pub fn new(
        state: AppState,
        sink: Arc<dyn EventSink>,
        dialogs: Arc<dyn FileDialogs>,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        Self {
            parts: Arc::new(Parts {
                state,
                sink,
                dialogs,
                runtime,
            }),
        }
    }

    pub fn state(&self) -> &AppState {
        &self.parts.state
    }

    /// Tells the window (or whatever the sink is).
    pub fn emit(&self, event: AppEvent) {
        self.parts.sink.send(event);
    }

    /// Shows a desktop notification (whether to is decided in `crate::notices`).
    pub fn notify_desktop(&self, notice: DesktopNotice) {
        self.parts.sink.notify_desktop(notice);
    }

    /// Brings the window to the front, where there is one.
    pub fn bring_to_front(&self) {
        self.parts.sink.bring_to_front();
    }

    pub fn dialogs(&self) -> &dyn FileDialogs {
        self.parts.dialogs.as_ref()
    }

    /// Runs `task` in the background on the console's runtime (callable from any thread).
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.parts.runtime.spawn(task)
    }

    /// Runs a service that waits on the disk, the capture store or the keychain on the
    /// runtime's blocking pool, and answers when it is done.
    ///
    /// Why: a Tauri command that is not `async` runs on the window's own thread, which also
    /// paints the window and hands every other command's answer to the page; a store read or a
    /// keychain call there freezes the window and holds up every answer meanwhile (a search's
    /// page and counts would arrive late, and together). Such commands are `async` and call
    /// their service through this.
    pub async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Console) -> crate::error::Result<T> + Send + 'static,
    ) -> crate::error::Result<T> {
        let console = self.clone();
        self.parts
            .runtime
            .spawn_blocking(move || work(&console))
            .await
            .map_err(|e| {
                crate::error::AppError::new(
                    crate::error::ErrorKind::Internal,
                    format!("The work stopped before it was done: {e}."),
                    "Try again.",
                )
            })?
    }

    /// Makes a change of the status and tells the window, under a new version (see
    /// [`AppState::announce`]).
    pub fn announce(&self, change: impl FnOnce(&mut Inner)) -> AppStatus {
        let status = self.state().announce(change);
        self.emit_status(status.clone());
        status
    }

    /// The app's status after `done`, or `done`'s error: what a command that changes the
    /// status answers.
    pub fn status_after<T>(
        &self,
        done: crate::error::Result<T>,
    ) -> crate::error::Result<AppStatus> {
        done.map(|_| self.status())
    }

    /// Tells the window of a status already announced (by [`AppState::announce_locked`]).
    pub fn emit_status(&self, status: AppStatus) {
        self.emit(AppEvent::Status(Box::new(status)));
    }
}

impl std::ops::Deref for Console {
    type Target = AppState;

    fn deref(&self) -> &AppState {
        self.state()
    }
}

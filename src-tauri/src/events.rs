//! The one place the app's events reach the window: the console's [`EventSink`], forwarding
//! each event to the webview under its name and desktop notifications to the notification
//! plugin, and the desktop's file dialogs for [`FileDialogs`]. The services decide what to send (captures arrive already coalesced, one
//! event per 100 ms window at most); this module only delivers.

use partner_console_core::{AppEvent, DesktopNotice, EventSink, FileChoice, FileDialogs};
use std::path::PathBuf;
use tauri::{AppHandle, Emitter, Manager};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_notification::NotificationExt;

/// The window, as the console's event sink.
#[derive(Debug)]
pub struct WindowSink {
    pub app: AppHandle,
}

impl EventSink for WindowSink {
    fn send(&self, event: AppEvent) {
        let _ = self.app.emit(event.name(), &event);
    }

    fn bring_to_front(&self) {
        if let Some(window) = self.app.get_webview_window("main") {
            let _ = window.set_focus();
        }
    }

    /// Through the desktop's notification service (on Linux, D-Bus
    /// `org.freedesktop.Notifications`); a desktop without one only logs that it had none.
    fn notify_desktop(&self, notice: DesktopNotice) {
        let shown = self
            .app
            .notification()
            .builder()
            .title(&notice.title)
            .body(&notice.body)
            .show();
        if let Err(error) = shown {
            tracing::info!(%error, kind = ?notice.kind, "the desktop notification could not be shown");
        }
    }
}

/// The desktop's save and open dialogs (Tauri's dialog plugin).
#[derive(Debug)]
pub struct DesktopDialogs {
    pub app: AppHandle,
}

impl DesktopDialogs {
    fn builder(&self, choice: &FileChoice) -> tauri_plugin_dialog::FileDialogBuilder<tauri::Wry> {
        let _ = std::fs::create_dir_all(&choice.folder);
        self.app
            .dialog()
            .file()
            .set_title(&choice.title)
            .set_directory(&choice.folder)
            .add_filter(choice.kind, choice.extensions)
    }
}

impl FileDialogs for DesktopDialogs {
    fn save(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.builder(&choice)
            .set_file_name(&choice.suggested_name)
            .save_file(move |path| {
                let _ = tx.send(path.and_then(|p| p.into_path().ok()));
            });
        Box::pin(async move { rx.await.ok().flatten() })
    }

    fn open(&self, choice: FileChoice) -> futures::future::BoxFuture<'static, Option<PathBuf>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.builder(&choice).pick_file(move |path| {
            let _ = tx.send(path.and_then(|p| p.into_path().ok()));
        });
        Box::pin(async move { rx.await.ok().flatten() })
    }
}

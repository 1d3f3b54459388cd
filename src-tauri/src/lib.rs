//! The Partner Console app shell: the window, its plugins, and the Tauri commands over the
//! Tauri-free `partner-console-core`.
//!
//! Everything but the window lives in the core: the shell builds one [`Console`] over a
//! [`events::WindowSink`] (the one place events reach the webview) and the desktop's file
//! dialogs, registers it as Tauri state, and registers the commands generated from the core's
//! one list of them ([`commands`]: each hands its arguments to one core function). Long-running
//! parts hang off the console's one shutdown signal, cancelled when the app exits.

pub mod commands;
pub mod events;
mod test_hooks;
mod updates;

use partner_console_core::milestones;
use partner_console_core::services::{instance, links, startup};
use partner_console_core::{Console, FileDialogs};
use std::sync::Arc;
use tauri::Manager;

pub fn run() {
    milestones::mark_process_start();
    let compositing = partner_console_core::compositing::apply_compositing_choice();
    // The CLI's folder, by the same function: the two share one store. Without one (no HOME,
    // a folder another user owns) the app says so and does not start, rather than keep a
    // store of its own the CLI would not see.
    let data_dir = match startup::data_folder() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("partner-console could not start: {why}");
            std::process::exit(1);
        }
    };
    // A console already runs on this data folder: it takes this start's link, if any, and
    // this start ends (`services::instance`).
    let link = std::env::args()
        .nth(1)
        .filter(|a| a.starts_with("partner-console:"));
    if instance::hand_over(&data_dir, link.as_deref()) {
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PARTNER_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    milestones::milestone("logging ready");
    if let Some((choice, why)) = compositing {
        tracing::info!(?choice, %why, "rendering: WebKit compositing");
    }
    let keychain_probe = std::thread::spawn(startup::probe_keychain);
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(updates::plugin())
        .on_page_load(|_, payload| {
            milestones::milestone(&format!("page load {:?}", payload.event()));
        })
        .setup(move |app| {
            // Tauri builds the configured window before this hook: the time up to here is
            // the window's, the rest of the hook holds the page's load.
            milestones::milestone("window built");
            // Connections saved by consoles before the settings file, in Tauri's own folder.
            let legacy = app
                .path()
                .app_data_dir()
                .ok()
                .map(|dir| dir.join("connections.json"));
            let probe = keychain_probe
                .join()
                .unwrap_or_else(|_| Err("the keychain probe failed".into()));
            let state = startup::open_state(data_dir.clone(), legacy, probe);
            let handle = app.handle().clone();
            let dialogs: Arc<dyn FileDialogs> = match test_hooks::folder_dialogs() {
                Some(folder) => Arc::new(folder),
                None => Arc::new(events::DesktopDialogs {
                    app: handle.clone(),
                }),
            };
            let console = Console::new(
                state,
                Arc::new(events::WindowSink {
                    app: handle.clone(),
                }),
                dialogs,
                tauri::async_runtime::handle().inner().clone(),
            );
            app.manage(console.clone());
            milestones::milestone("setup");
            // The page says when its first screen is drawn (`first_screen_shown`).
            console.state().expect_first_screen();
            console.spawn(startup::first_run(console.clone()));
            console.spawn(async move {
                startup::termination().await;
                handle.exit(0);
            });
            follow_links(app.handle(), &console);
            instance::listen(&console, &data_dir);
            // Updates: checked at start unless the setting or the fleet says no (`updates`).
            app.manage(updates::Updates::new(
                app.package_info().version.to_string(),
                partner_console_core::services::updates::settings(console.state()),
            ));
            tracing::info!(
                "Partner Console {} starting (installed from {})",
                app.package_info().version,
                updates::installer().map_or("source", |i| i.name())
            );
            updates::check_at_start(app.handle());
            Ok(())
        })
        .invoke_handler(commands::handler())
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(error) => {
            eprintln!("partner-console could not start: {error}");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            let console = handle.state::<Console>().inner().clone();
            console.shutdown.cancel();
            tauri::async_runtime::block_on(startup::stop(console));
        }
    });
}

/// Opens the `partner-console://` link the app was started with, and every one handed to it
/// later (`services::links`).
fn follow_links(app: &tauri::AppHandle, console: &Console) {
    use tauri_plugin_deep_link::DeepLinkExt;
    let on_open = console.clone();
    app.deep_link().on_open_url(move |event| {
        let console = on_open.clone();
        let urls = event.urls();
        on_open.spawn(async move { links::open(&console, urls).await });
    });
    if let Ok(Some(urls)) = app.deep_link().get_current() {
        let console = console.clone();
        console
            .clone()
            .spawn(async move { links::open(&console, urls).await });
    }
}

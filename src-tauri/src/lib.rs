//! The Partner Console app shell: Tauri commands, events and state over the partner libraries.
//!
//! Nothing here knows a rule of the service. Calls go one way: [`commands`] (thin adapters from
//! the bridge) → [`services`] (connections, embedded sandbox, listener, keys, settings,
//! start-up) → the libraries (`partner-client`, `partner-listener`, `partner-sandbox`,
//! `partner-local`); [`events`] only sends to the UI. The types that cross the bridge live in
//! [`bridge`] (generated into `ui/src/bindings/`). Long-running parts (embedded sandbox,
//! listener, token watcher, live feeds) hang off one shutdown signal in [`AppState`], cancelled
//! when the app exits.

pub mod bindings;
pub mod bridge;
pub mod commands;
pub mod error;
pub mod events;
pub mod rendering;
pub mod services;
pub mod state;

use partner_client::{KeyringStore, SecretSlot, SecretStore};
use partner_local::{KeychainKeys, ListenerAddress, SettingsFile};
use services::startup;
use state::AppState;
use std::sync::Arc;
use tauri::Manager;

/// Asks the OS keychain once, on a thread of its own: a D-Bus round trip to the Secret Service
/// (100+ ms on a cold session) that `run` starts before Tauri, so it overlaps the window's
/// creation instead of holding the main thread (and the page load) in `setup`. Its answer only
/// sets the keychain's health (the banner); the keychain is used either way, and "Try again"
/// asks it again after an unlock.
fn probe_keychain(keyring: &KeyringStore) -> Result<(), String> {
    let probe = SecretSlot::SigningKey {
        subscription_id: "keychain-probe".into(),
    };
    keyring.get(&probe).map(|_| ()).map_err(|e| e.to_string())
}

/// The settings as loaded, with what the user must be told; a file that cannot be read at all
/// is never written over.
fn load_settings(
    data_dir: &std::path::Path,
    legacy: Option<std::path::PathBuf>,
) -> (partner_local::Settings, Vec<String>, bool) {
    let file = SettingsFile::new(data_dir.join(partner_local::paths::SETTINGS));
    match file.load(legacy.as_deref()) {
        Ok(loaded) => (loaded.settings, loaded.notice.into_iter().collect(), true),
        Err(error) => (
            partner_local::Settings::default(),
            vec![format!("The settings could not be read ({error}); the app runs on its defaults and will not write over the file.")],
            false,
        ),
    }
}

pub fn run() {
    startup::mark_process_start();
    rendering::apply_compositing_choice();
    // A console already runs on this data folder: it takes this start's link, if any, and
    // this start ends (`services::instance`).
    if let Ok(data_dir) = partner_local::paths::data_dir() {
        let link = std::env::args()
            .nth(1)
            .filter(|a| a.starts_with("partner-console:"));
        if services::instance::hand_over(&data_dir, link.as_deref()) {
            return;
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PARTNER_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    startup::milestone("logging ready");
    let keychain_probe = std::thread::spawn(|| probe_keychain(&KeyringStore::default()));
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_dialog::init())
        .on_page_load(|_, payload| {
            startup::milestone(&format!("page load {:?}", payload.event()));
        })
        .setup(|app| {
            let data_dir = match partner_local::paths::data_dir() {
                Ok(dir) => dir,
                Err(_) => app.path().app_data_dir()?,
            };
            // Connections saved by consoles before the settings file, in Tauri's own folder.
            let legacy = app
                .path()
                .app_data_dir()
                .ok()
                .map(|dir| dir.join("connections.json"));
            let (settings, mut notices, writable) = load_settings(&data_dir, legacy);
            let listener_address =
                ListenerAddress::from_env(&settings.listener).unwrap_or_else(|problem| {
                    notices.push(format!(
                        "{problem}; the listener uses the address in the settings."
                    ));
                    ListenerAddress::from_settings(&settings.listener)
                });
            let keyring = KeyringStore::default();
            let secrets: Arc<dyn SecretStore> = Arc::new(keyring);
            // A replaced key keeps verifying until the user retires it (Product detail).
            let keys = Arc::new(KeychainKeys::new(
                secrets.clone(),
                state::PREVIOUS_KEY_GRACE,
            ));
            let probe = keychain_probe
                .join()
                .unwrap_or_else(|_| Err("the keychain probe failed".into()));
            if let Err(why) = probe {
                keys.mark_unavailable(why);
            }
            let state = AppState::new(
                data_dir.clone(),
                SettingsFile::new(data_dir.join(partner_local::paths::SETTINGS)),
                settings,
                listener_address,
                secrets,
                keys,
            );
            {
                let mut inner = state.lock();
                inner.notices = notices;
                inner.settings_writable = writable;
            }
            app.manage(state);
            startup::milestone("setup");
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(startup::first_run(handle));
            tauri::async_runtime::spawn(exit_on_termination(app.handle().clone()));
            follow_links(app.handle());
            services::instance::listen(app.handle(), &data_dir);
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::app_status,
            commands::wait_for_start,
            commands::add_connection,
            commands::select_connection,
            commands::remove_connection,
            commands::token_state,
            commands::token_refresh,
            commands::token_revoke,
            commands::token_introspect,
            commands::sort_keys,
            commands::list_products,
            commands::list_transactions,
            commands::search_listing,
            commands::cancel_search,
            commands::export_listing,
            commands::get_product,
            commands::create_product,
            commands::add_subscription,
            commands::rotate_signing_key,
            commands::subscription_keys,
            commands::retire_previous_key,
            commands::update_subscription,
            commands::delete_subscription,
            commands::repoint_subscriptions,
            commands::check_receiver,
            commands::cancel_receiver_check,
            commands::listener_subscriptions,
            commands::find_missed,
            commands::cancel_missed,
            commands::evidence_bundle,
            commands::sandbox_deliveries,
            commands::signing_key_problems,
            commands::generate_signing_key,
            commands::get_transaction,
            commands::transaction_events,
            commands::respond_transaction,
            commands::listener_status,
            commands::listener_start,
            commands::listener_stop,
            commands::set_tunnel_url,
            commands::set_listener_address,
            commands::set_retention,
            commands::clear_captures,
            commands::reset_sandbox,
            commands::retry_keychain,
            commands::dismiss_notice,
            commands::check_tunnel,
            commands::set_test_mode,
            commands::inspector_page,
            commands::inspector_facets,
            commands::capture_attempts,
            commands::import_captures,
            commands::cancel_job,
            commands::set_forward_rules,
            commands::support_index,
            commands::support_sync,
            commands::support_find,
            commands::support_counts,
            commands::support_export,
            commands::support_forget,
            commands::go_to,
            commands::resource_link,
            commands::take_pending_link,
            commands::capture_detail,
            commands::signature_report,
            commands::replay_capture,
            commands::export_captures,
            commands::demo_new_transaction,
            commands::demo_update_transaction,
            commands::demo_custom_event,
            commands::demo_advance_clock,
            commands::retry_demo_subscription,
        ])
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
            let state = handle.state::<AppState>();
            state.shutdown.cancel();
            tauri::async_runtime::block_on(startup::stop(handle.clone()));
        }
    });
}

/// SIGTERM (a session logging out, `kill`, a test driver ending its session) and SIGINT quit
/// the app the way closing its window does, so the same clean stop runs: the listener answers
/// what is in flight and closes its run, the embedded sandbox stops.
async fn exit_on_termination(app: tauri::AppHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("termination signals cannot be watched; they end the app at once");
        return;
    };
    tokio::select! {
        _ = terminate.recv() => tracing::info!("SIGTERM: quitting"),
        _ = interrupt.recv() => tracing::info!("SIGINT: quitting"),
    }
    app.exit(0);
}

/// Opens the `partner-console://` link the app was started with, and every one handed to it
/// later (`services::links`).
fn follow_links(app: &tauri::AppHandle) {
    use tauri_plugin_deep_link::DeepLinkExt;
    let handle = app.clone();
    app.deep_link().on_open_url(move |event| {
        let handle = handle.clone();
        tauri::async_runtime::spawn(async move {
            services::links::open(&handle, event.urls()).await;
        });
    });
    if let Ok(Some(urls)) = app.deep_link().get_current() {
        let handle = app.clone();
        tauri::async_runtime::spawn(async move { services::links::open(&handle, urls).await });
    }
}

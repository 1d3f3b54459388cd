//! The Partner Console app shell: Tauri commands, events and state over the partner libraries.
//!
//! Nothing here knows a rule of the service: every command is a thin adapter over
//! `partner-client`, `partner-listener` or `partner-sandbox`, and the types that cross the
//! bridge live in [`bridge`] (generated into `ui/src/bindings/`). Long-running parts (embedded
//! sandbox, listener, token watcher, live feeds) hang off one shutdown signal in [`AppState`],
//! cancelled when the app exits.

pub mod bindings;
pub mod bridge;
pub mod commands;
pub mod embedded;
pub mod error;
pub mod events;
pub mod startup;
pub mod state;

use partner_client::{KeyringStore, MemoryStore, SecretSlot, SecretStore};
use partner_listener::MemoryKeys;
use state::AppState;
use std::sync::Arc;
use tauri::Manager;

/// The OS keychain when it answers, else memory for this session (the UI says so). The probe is
/// a D-Bus round trip to the Secret Service (100+ ms on a cold session): `run` starts it on a
/// thread of its own before Tauri starts, so it overlaps the window's creation instead of
/// holding the main thread (and the page load) in `setup`.
fn secret_store() -> (Arc<dyn SecretStore>, Option<error::AppError>) {
    let keyring = KeyringStore::default();
    let probe = SecretSlot::SigningKey {
        subscription_id: "keychain-probe".into(),
    };
    match keyring.get(&probe) {
        Ok(_) => (Arc::new(keyring), None),
        Err(error) => (
            Arc::new(MemoryStore::new()),
            Some(error::AppError::new(
                error::ErrorKind::Keychain,
                format!("The OS keychain is not available ({error}); secrets are kept in memory for this session only."),
                "Start a Secret Service keyring (e.g. gnome-keyring) and unlock it, then restart the app.",
            )),
        ),
    }
}

pub fn run() {
    startup::mark_process_start();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PARTNER_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    startup::milestone("logging ready");
    let keychain_probe = std::thread::spawn(secret_store);
    let app = tauri::Builder::default()
        .on_page_load(|_, payload| {
            startup::milestone(&format!("page load {:?}", payload.event()));
        })
        .setup(|app| {
            let data_dir = match std::env::var_os("PARTNER_DATA_DIR") {
                Some(dir) => dir.into(),
                None => app.path().app_data_dir()?,
            };
            let (secrets, keychain_warning) = keychain_probe.join().unwrap_or_else(|_| {
                (
                    Arc::new(MemoryStore::new()),
                    Some(error::AppError::new(
                        error::ErrorKind::Keychain,
                        "The OS keychain probe failed; secrets are kept in memory for this session only.",
                        "Restart the app.",
                    )),
                )
            });
            // A replaced key keeps verifying until the user retires it (Product detail).
            let keys = Arc::new(MemoryKeys::with_grace(startup::PREVIOUS_KEY_GRACE));
            let state = AppState::new(data_dir, secrets, keys);
            state.lock().startup_error = keychain_warning;
            app.manage(state);
            startup::milestone("setup");
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(startup::first_run(handle));
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
            commands::signing_key_problems,
            commands::generate_signing_key,
            commands::get_transaction,
            commands::transaction_events,
            commands::respond_transaction,
            commands::listener_status,
            commands::listener_start,
            commands::listener_stop,
            commands::set_tunnel_url,
            commands::check_tunnel,
            commands::set_test_mode,
            commands::captures,
            commands::capture_detail,
            commands::signature_report,
            commands::replay_capture,
            commands::export_captures,
            embedded::demo_new_transaction,
            embedded::demo_update_transaction,
            embedded::demo_custom_event,
            embedded::demo_advance_clock,
            embedded::retry_demo_subscription,
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

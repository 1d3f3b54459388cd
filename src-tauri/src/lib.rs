//! The Partner Console app shell: Tauri commands, events and state over the partner libraries.
//!
//! Nothing here knows a rule of the service: every command is a thin adapter over
//! `partner-client`, `partner-listener` or `partner-sandbox`, and the types that cross the
//! bridge live in [`bridge`] (generated into `ui/src/bindings/`).

pub mod bindings;
pub mod bridge;
pub mod error;

pub fn run() {
    let result = tauri::Builder::default().run(tauri::generate_context!());
    if let Err(error) = result {
        eprintln!("partner-console could not start: {error}");
        std::process::exit(1);
    }
}

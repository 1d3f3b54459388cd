//! A blank Tauri window built the same way as the app (same crate, features and profile, UI
//! embedded): the baseline of the start-up benchmark (`tests/e2e/bench.sh`).
fn main() {
    // Drawn as the app draws its page (`partner_console_core::rendering`), so the two compare
    // like for like.
    let _ = partner_console_core::compositing::apply_compositing_choice();
    let result = tauri::Builder::default().run(tauri::generate_context!("bench/tauri.conf.json"));
    if let Err(error) = result {
        eprintln!("blank window could not start: {error}");
        std::process::exit(1);
    }
}

// Hide the extra console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// The allocator `partner listen` uses too: the embedded listener and sandbox are servers whose
/// requests allocate and free many short-lived buffers, which mimalloc does for about a tenth
/// less CPU than the system allocator (measured with the listener's `ack` bench). The app's is
/// built without transparent huge pages (`no_thp`, see Cargo.toml): with them its arenas kept
/// 2 MiB pages resident for a few objects each, 30 MB of the app's memory at its first screen.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    partner_console_lib::run();
}

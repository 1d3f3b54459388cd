//! Build script: makes sure the UI that `tauri::generate_context!` embeds exists and is current,
//! then runs `tauri-build`.
//!
//! A plain `cargo build` (and `cargo clippy` on a fresh checkout, where `ui/dist` is not
//! committed) must work and give a binary that runs alone. So when `ui/dist` is missing the UI is
//! built here with Vite (a few seconds) if `ui/node_modules` is present; without it a one-page
//! notice is written instead, saying how to build the real UI.

use std::path::Path;
use std::process::Command;

fn main() {
    let ui = Path::new("../ui");
    let index = ui.join("dist/index.html");
    // Re-run only when the built UI disappears (a fresh checkout, a clean): `npm run build` in
    // `ui/` (or `tauri build`, or tests/e2e/run.sh) is what refreshes it during development.
    println!("cargo:rerun-if-changed=../ui/dist/index.html");
    if !index.exists() && ui.join("node_modules").exists() {
        let built = Command::new("npm")
            .args(["run", "--silent", "build:dist"])
            .current_dir(ui)
            .status();
        match built {
            Ok(status) if status.success() => {}
            Ok(status) => println!("cargo:warning=building the UI failed ({status})"),
            Err(error) => println!("cargo:warning=could not run npm to build the UI ({error})"),
        }
    }
    if !index.exists() {
        let notice = "<!doctype html><meta charset=utf-8><title>Partner Console</title>\
            <p style=\"font:14px sans-serif;padding:2em\">The UI was not built. Run <code>npm ci</code> \
            in <code>ui/</code>, then build the app again.</p>";
        if let Err(error) =
            std::fs::create_dir_all(ui.join("dist")).and_then(|()| std::fs::write(&index, notice))
        {
            println!("cargo:warning=could not write a placeholder UI ({error})");
        }
    }
    tauri_build::build()
}

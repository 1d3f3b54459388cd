//! How WebKitGTK draws the window's page: as WebKit chooses, or without accelerated compositing
//! when the user asks for it (`PARTNER_COMPOSITING=0`).
//!
//! Why the choice: on a machine without a GPU (a VM, a remote desktop, CI under Xvfb)
//! WebKitGTK composites through Mesa's software GL, which costs far more than painting the page
//! on the CPU. Measured with the app's benchmark at 100,000 captures (`tests/e2e/bench.sh`,
//! BENCHMARKS.md, desktop round 8): with compositing, WebKit's web process held 400 MB after the
//! inspector against 227 MB for a blank window, and a jump in the capture list took 75 ms at
//! p95; without it, 243 against 163 MB, and 27 ms. The console's page needs no compositor.
//!
//! Why not off by default: WebKitWebDriver's screenshots hung without compositing (a 5-minute
//! timeout in the end-to-end run, on the third screenshot), a sign that WebKitGTK 2.50 no longer
//! treats the mode as a first-class path; and on a desktop with a GPU compositing is what WebKit
//! is tuned for. So it stays WebKit's default, and the switch is there for machines without one.
//!
//! WebKitGTK reads `WEBKIT_DISABLE_COMPOSITING_MODE` when it starts, so this runs first thing
//! in `run()`, before any other thread; a value the user set there is kept.

/// Turns WebKitGTK's accelerated compositing off for this process and its web processes when
/// `PARTNER_COMPOSITING` is `0` or `off` (Linux only).
pub fn apply_compositing_choice() {
    const WEBKIT_SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if !cfg!(target_os = "linux") {
        return;
    }
    let off = std::env::var("PARTNER_COMPOSITING").is_ok_and(|v| v == "0" || v == "off");
    if off && std::env::var_os(WEBKIT_SWITCH).is_none() {
        std::env::set_var(WEBKIT_SWITCH, "1");
    }
}

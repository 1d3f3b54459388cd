//! How WebKitGTK draws the window's page: without accelerated compositing, unless the user
//! asks for it.
//!
//! Why: on a machine without a GPU (a VM, a remote desktop, CI under Xvfb) WebKitGTK composites
//! through Mesa's software GL, which costs far more than painting the page on the CPU, as it is
//! painted there anyway. Measured with the app's benchmark at 100,000 captures
//! (`tests/e2e/bench.sh`, BENCHMARKS.md, desktop round 8): with compositing, WebKit's web
//! process held 400 MB after the inspector against 227 MB for a blank window, and a jump in the
//! capture list took 75 ms at p95; without it, 243 against 163 MB, and 27 ms. The console's
//! page has no animation, video or 3D that needs a compositor.
//!
//! WebKitGTK reads `WEBKIT_DISABLE_COMPOSITING_MODE` when it starts, so this runs first thing
//! in `run()`, before any other thread. A value the user set is kept, and
//! `PARTNER_COMPOSITING=1` keeps WebKit's own choice (a desktop where GPU compositing works
//! well and is wanted).

/// Turns WebKitGTK's accelerated compositing off for this process and its web processes, as the
/// module notes say; does nothing elsewhere than Linux.
pub fn prefer_cpu_painting() {
    const WEBKIT_SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if !cfg!(target_os = "linux") {
        return;
    }
    let wanted = std::env::var_os("PARTNER_COMPOSITING").is_some_and(|v| v == "1");
    if !wanted && std::env::var_os(WEBKIT_SWITCH).is_none() {
        std::env::set_var(WEBKIT_SWITCH, "1");
    }
}

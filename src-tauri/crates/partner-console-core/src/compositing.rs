//! How WebKitGTK draws the window's page: with accelerated compositing where the machine has a
//! GPU, painted on the CPU where GL would be software, and as the user says when they say
//! (`PARTNER_COMPOSITING=1` or `0`).
//!
//! Why by the machine: without a GPU (a VM, a remote desktop, CI under Xvfb) WebKitGTK
//! composites through Mesa's software GL (llvmpipe), which costs far more than painting the page
//! on the CPU. Measured with the app's benchmark at 100,000 captures (`tests/e2e/bench.sh`,
//! BENCHMARKS.md, desktop round 8): with compositing, WebKit's web process held 400 MB after the
//! inspector against 227 MB for a blank window, and a jump in the capture list took 75 ms at
//! p95; without it, 243 against 163 MB, and 27 ms. The console's page needs no compositor. On a
//! desktop with a GPU, compositing is what WebKit is tuned for, so it stays on there.
//!
//! How "software GL" is told, before any GL is loaded (WebKit reads its switch when it starts):
//! Mesa is told to be software (`LIBGL_ALWAYS_SOFTWARE`, `GALLIUM_DRIVER=llvmpipe|softpipe`),
//! or the machine has no DRM render node (`/dev/dri/renderD*`), the device any hardware GL
//! driver on Linux renders through: without one, Mesa can only fall back to llvmpipe.
//!
//! WebKitGTK reads `WEBKIT_DISABLE_COMPOSITING_MODE` when it starts, so the shell runs this
//! first thing in `run()`, before any other thread; a value the user set there is kept. Here
//! rather than in the shell: it is a decision over the environment and `/dev/dri`, tested
//! without a window.

use std::path::Path;

/// How the page is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    /// WebKit's accelerated compositing, as WebKit decides.
    WebKitDefault,
    /// Painted on the CPU (`WEBKIT_DISABLE_COMPOSITING_MODE=1`).
    Off,
}

/// Why GL would be software here, if it would: read from the environment and `/dev/dri`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    pub libgl_always_software: Option<String>,
    pub gallium_driver: Option<String>,
    pub has_render_node: bool,
}

impl Machine {
    /// This machine, as WebKit's GL would find it.
    pub fn this_one() -> Self {
        Self {
            libgl_always_software: std::env::var("LIBGL_ALWAYS_SOFTWARE").ok(),
            gallium_driver: std::env::var("GALLIUM_DRIVER").ok(),
            has_render_node: has_render_node(Path::new("/dev/dri")),
        }
    }

    /// The reason GL would be software, or `None` when a GPU may draw.
    pub fn software_gl(&self) -> Option<&'static str> {
        let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty() && v != "0");
        if set(&self.libgl_always_software) {
            Some("LIBGL_ALWAYS_SOFTWARE is set")
        } else if matches!(
            self.gallium_driver.as_deref(),
            Some("llvmpipe" | "softpipe" | "swr")
        ) {
            Some("GALLIUM_DRIVER names a software renderer")
        } else if !self.has_render_node {
            Some("no GPU render node in /dev/dri")
        } else {
            None
        }
    }
}

/// Whether `dri` holds a render node (`renderD128`...).
fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// The choice for `setting` (the value of `PARTNER_COMPOSITING`) on `machine`, and why.
pub fn choose(setting: Option<&str>, machine: &Machine) -> (Compositing, String) {
    match setting.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("0" | "off" | "false" | "no") => {
            (Compositing::Off, "PARTNER_COMPOSITING turns it off".into())
        }
        Some("1" | "on" | "true" | "yes") => (
            Compositing::WebKitDefault,
            "PARTNER_COMPOSITING turns it on".into(),
        ),
        _ => match machine.software_gl() {
            Some(reason) => (Compositing::Off, format!("software GL here: {reason}")),
            None => (
                Compositing::WebKitDefault,
                "a GPU render node is here".into(),
            ),
        },
    }
}

/// Applies [`choose`] for this process and its web processes (Linux only); returns the choice
/// and why, for the log (which is not set up yet when this runs). A
/// `WEBKIT_DISABLE_COMPOSITING_MODE` the user set wins.
pub fn apply_compositing_choice() -> Option<(Compositing, String)> {
    const WEBKIT_SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if !cfg!(target_os = "linux") {
        return None;
    }
    if std::env::var_os(WEBKIT_SWITCH).is_some() {
        return Some((
            Compositing::WebKitDefault,
            format!("{WEBKIT_SWITCH} is set: WebKit decides"),
        ));
    }
    let setting = std::env::var("PARTNER_COMPOSITING").ok();
    let (choice, why) = choose(setting.as_deref(), &Machine::this_one());
    if choice == Compositing::Off {
        std::env::set_var(WEBKIT_SWITCH, "1");
    }
    Some((choice, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu() -> Machine {
        Machine {
            has_render_node: true,
            ..Machine::default()
        }
    }

    #[test]
    fn software_gl_turns_compositing_off_and_a_gpu_keeps_it() {
        assert_eq!(choose(None, &gpu()).0, Compositing::WebKitDefault);
        let (choice, why) = choose(None, &Machine::default());
        assert_eq!(choice, Compositing::Off);
        assert!(why.contains("no GPU render node"), "{why}");
        let forced_software = Machine {
            libgl_always_software: Some("1".into()),
            ..gpu()
        };
        assert_eq!(choose(None, &forced_software).0, Compositing::Off);
        let llvmpipe = Machine {
            gallium_driver: Some("llvmpipe".into()),
            ..gpu()
        };
        assert_eq!(choose(None, &llvmpipe).0, Compositing::Off);
        let not_forced = Machine {
            libgl_always_software: Some("0".into()),
            gallium_driver: Some("radeonsi".into()),
            ..gpu()
        };
        assert_eq!(choose(None, &not_forced).0, Compositing::WebKitDefault);
    }

    #[test]
    fn the_users_setting_wins_either_way() {
        assert_eq!(choose(Some("0"), &gpu()).0, Compositing::Off);
        assert_eq!(choose(Some(" OFF "), &gpu()).0, Compositing::Off);
        assert_eq!(
            choose(Some("1"), &Machine::default()).0,
            Compositing::WebKitDefault
        );
        assert_eq!(
            choose(Some("on"), &Machine::default()).0,
            Compositing::WebKitDefault
        );
        // Anything else is no setting: the machine decides.
        assert_eq!(
            choose(Some("maybe"), &Machine::default()).0,
            Compositing::Off
        );
    }

    #[test]
    fn a_render_node_is_found_in_the_folder() {
        let dir = std::env::temp_dir().join(format!("partner-dri-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!has_render_node(&dir));
        std::fs::write(dir.join("card0"), "").unwrap();
        assert!(!has_render_node(&dir));
        std::fs::write(dir.join("renderD128"), "").unwrap();
        assert!(has_render_node(&dir));
        assert!(!has_render_node(&dir.join("missing")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! One console per data folder: a second start (the desktop opening a `partner-console://` link
//! while the app runs, or the user starting it again) hands its link to the running app over a
//! Unix socket in the data folder and ends, instead of a second app fighting the first for the
//! listener's port and the capture store.
//!
//! Why not Tauri's single-instance plugin: under WebKitWebDriver it made reading an element's
//! text hang (the end-to-end tests read text everywhere), and the hand-over is a few lines.
use crate::console::Console;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The socket the running app listens on.
fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("console.sock")
}

/// When another console runs on this data folder, gives it `link` (or nothing, to be brought
/// forward) and returns true: this start should end.
pub fn hand_over(data_dir: &Path, link: Option<&str>) -> bool {
    let Ok(mut stream) = UnixStream::connect(socket_path(data_dir)) else {
        return false;
    };
    let _ = writeln!(stream, "{}", link.unwrap_or_default());
    true
}

/// Listens for what later starts hand over: a link is opened, and either way the window comes
/// forward. A socket file a crashed console left behind is replaced.
pub fn listen(app: &Console, data_dir: &Path) {
    let path = socket_path(data_dir);
    // The first start makes the data folder later in start-up: the socket needs it now.
    let _ = std::fs::create_dir_all(data_dir);
    let _ = std::fs::remove_file(&path);
    let listener = match UnixListener::bind(&path) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::warn!(%error, "a second start will not find this console (the hand-over socket could not be made)");
            return;
        }
    };
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("hand-over".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut line = String::new();
                if BufReader::new(stream).read_line(&mut line).is_err() {
                    continue;
                }
                app.bring_to_front();
                let link = line.trim().to_string();
                if let Ok(url) = url::Url::parse(&link) {
                    let app = app.clone();
                    app.clone().spawn(async move {
                        crate::services::links::open(&app, vec![url]).await;
                    });
                }
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "the hand-over listener could not start");
    }
}

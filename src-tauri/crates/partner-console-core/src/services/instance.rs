//! One console per data folder: a second start (the desktop opening a `partner-console://` link
//! while the app runs, or the user starting it again) hands its link to the running app over a
//! local socket and ends, instead of a second app fighting the first for the listener's port and
//! the capture store.
//!
//! Why not Tauri's single-instance plugin: under WebKitWebDriver it made reading an element's
//! text hang (the end-to-end tests read text everywhere), and the hand-over is a few lines.
//! The socket is each OS's own, through `interprocess`: a Unix socket in the data folder on
//! Linux and macOS (only the folder's owner can reach it), a named pipe on Windows, named after
//! the data folder so two folders (`PARTNER_DATA_DIR`) keep two consoles apart (a pipe's default
//! security descriptor lets only its creator, administrators and the system write to it).
use crate::console::Console;
use interprocess::local_socket::{prelude::*, ListenerOptions, Name, Stream};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The socket file the running app listens on (Unix), beside its data.
#[cfg_attr(not(unix), allow(dead_code))]
fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("console.sock")
}

/// The local socket's name for the console of `data_dir`.
fn socket_name(data_dir: &Path) -> std::io::Result<Name<'static>> {
    #[cfg(unix)]
    {
        use interprocess::local_socket::GenericFilePath;
        socket_path(data_dir).to_fs_name::<GenericFilePath>()
    }
    #[cfg(not(unix))]
    {
        use interprocess::local_socket::GenericNamespaced;
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(data_dir.to_string_lossy().as_bytes());
        let folder: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("partner-console-{folder}").to_ns_name::<GenericNamespaced>()
    }
}

/// When another console runs on this data folder, gives it `link` (or nothing, to be brought
/// forward) and returns true: this start should end.
pub fn hand_over(data_dir: &Path, link: Option<&str>) -> bool {
    let Ok(name) = socket_name(data_dir) else {
        return false;
    };
    let Ok(mut stream) = Stream::connect(name) else {
        return false;
    };
    let _ = writeln!(stream, "{}", link.unwrap_or_default());
    true
}

/// Listens for what later starts hand over: a link is opened, and either way the window comes
/// forward. A socket file a crashed console left behind is replaced.
pub fn listen(app: &Console, data_dir: &Path) {
    let app = app.clone();
    let served = serve(data_dir, move |line| {
        app.bring_to_front();
        if let Ok(url) = url::Url::parse(line.trim()) {
            let app = app.clone();
            app.clone().spawn(async move {
                crate::services::links::open(&app, vec![url]).await;
            });
        }
    });
    if let Err(error) = served {
        tracing::warn!(%error, "a second start will not find this console (the hand-over socket could not be made)");
    }
}

/// Stops taking hand-overs, before this console restarts itself (an update): the new process
/// must not find this one's socket and hand itself over to a console about to end. On Unix the
/// socket file goes (a connect then fails); a named pipe goes with its process.
pub fn release(data_dir: &Path) {
    #[cfg(unix)]
    let _ = std::fs::remove_file(socket_path(data_dir));
    #[cfg(not(unix))]
    let _ = data_dir;
}

/// Makes the hand-over socket of `data_dir` and gives each line a later start sends to
/// `handed`, on a thread of its own.
fn serve(data_dir: &Path, handed: impl Fn(String) + Send + 'static) -> std::io::Result<()> {
    // The first start makes the data folder later in start-up: the socket needs it now.
    std::fs::create_dir_all(data_dir)?;
    // A Unix socket is a file a crashed console leaves behind; a named pipe goes with its
    // process, so Windows has nothing to clear.
    #[cfg(unix)]
    let _ = std::fs::remove_file(socket_path(data_dir));
    let listener = ListenerOptions::new()
        .name(socket_name(data_dir)?)
        .create_sync()?;
    std::thread::Builder::new()
        .name("hand-over".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut line = String::new();
                if BufReader::new(stream).read_line(&mut line).is_ok() {
                    handed(line);
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_second_start_hands_its_link_to_the_first_and_finds_none_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let (first, other) = (dir.path().join("a"), dir.path().join("b"));
        assert!(
            !hand_over(&first, Some("partner-console://x")),
            "no console runs yet"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        serve(&first, move |line| {
            let _ = tx.send(line);
        })
        .unwrap();
        assert!(hand_over(
            &first,
            Some("partner-console://transactions/t-1")
        ));
        let line = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(line.trim(), "partner-console://transactions/t-1");
        assert!(hand_over(&first, None));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap().trim(), "");
        // Another data folder is another console's.
        assert!(!hand_over(&other, None));
        // Released before a restart: the next start finds no console to hand over to.
        release(&first);
        assert!(!hand_over(&first, None));
    }
}

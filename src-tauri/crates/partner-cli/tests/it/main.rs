//! The `partner` binary as a process: one test binary, one module per subcommand.

// Helpers of tests panic on failure like the tests themselves (clippy.toml allows unwrap in
// #[test] functions only).
#![allow(clippy::unwrap_used)]

mod check_receiver;
mod client_commands;
mod crash_readers;
mod data_at_rest;
mod demo;
mod evidence;
mod link;
mod listen;
mod listen_junk;
mod missed;
mod network;
mod other_service;
mod replay;
mod sandbox;
mod server;
mod team_process;
mod version;
mod workspace;

use partner_testkit::OtherService;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `partner ARGS` against `service` with `env` added, a home of its own, and no proxy or
/// trust settings from the environment that runs the tests.
pub async fn partner(service: &OtherService, args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = tempfile::Builder::new()
        .prefix("partner-cli-other-")
        .tempdir()
        .unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("PARTNER_BASE_URL", service.base_url())
        .env("PARTNER_CLIENT_ID", service.client_id())
        .env("PARTNER_CLIENT_SECRET", service.client_secret().expose())
        .env_remove("PARTNER_TOKEN")
        .env_remove("PARTNER_CONNECTION");
    for name in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().await.unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The JSON objects of a command's `--json` output, one a line.
pub fn json_lines(output: &str) -> Vec<Value> {
    output
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `partner listen captures --json --db DB ARGS` as rows, once `ready` holds for them (asked
/// again every 20 ms, for at most 10 s; then the last rows are returned for the test to judge).
///
/// Why: a listener in another process acknowledges from its journal and its tables take the
/// captures behind (`partner_listener::store`); a reader in another process sees them once the
/// tables have them, a few milliseconds after the last acknowledgement on a calm machine and
/// longer on a busy one (a CI run on a bare machine once read too early). The user running the
/// command a moment later sees them; so does the test, without guessing a sleep.
pub fn captures_once(db: &Path, args: &[&str], ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    loop {
        let rows: Vec<Value> = listen_captures(db, &json_args)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if ready(&rows) || Instant::now() >= deadline {
            return rows;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `partner listen captures --db DB ARGS`'s standard output; the command must succeed.
pub fn listen_captures(db: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["listen", "captures", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
}

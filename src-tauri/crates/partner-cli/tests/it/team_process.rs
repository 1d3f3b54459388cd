//! The `partner` command run as a process for the team workspace's tests (`server`,
//! `workspace`): in a home of its own, with nothing of the caller's environment that names a
//! data folder, a server key or a workspace.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `partner ARGS` in `home`, with `env` added and `stdin` written to its standard input.
pub fn partner(home: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("PARTNER_SERVER_KEY_FILE", home.join("server.key"))
        .env_remove("PARTNER_DATA_DIR")
        .env_remove("PARTNER_SERVER_KEY")
        .env_remove("PARTNER_WORKSPACE")
        .env_remove("PARTNER_WORKSPACE_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// The standard output of a run that must have succeeded (else its outputs, in the panic).
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The token on the output's last line, `token: TOKEN`.
pub fn token(out: &str) -> String {
    let last = out.lines().last().unwrap_or_default();
    last.strip_prefix("token: ")
        .unwrap_or_else(|| panic!("the last line is not the token: {out}"))
        .to_string()
}

//! `partner link`: the link the app opens, read back by the same code the app reads it with.

use partner_local::links::{Link, LinkTarget};
use std::process::Command;

#[test]
fn link_prints_what_the_app_reads_and_refuses_without_a_connection() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_partner"))
            .args(args)
            .env("PARTNER_DATA_DIR", data.path())
            .env_remove("PARTNER_CONNECTION")
            .output()
            .unwrap()
    };
    let printed = run(&["link", "--embedded", "transaction", "t 1", "--event", "e/2"]);
    assert!(printed.status.success(), "{printed:?}");
    let text = String::from_utf8(printed.stdout).unwrap();
    let link = Link::parse(text.trim()).unwrap();
    assert_eq!(link.connection, "embedded-sandbox");
    assert_eq!(
        link.target,
        LinkTarget::Transaction {
            transaction_id: "t 1".into(),
            event_id: Some("e/2".into())
        }
    );

    let refused = run(&["link", "product", "p-1"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--connection NAME"), "{said}");
    let unknown = run(&["--connection", "nowhere", "link", "product", "p-1"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no connection is called `nowhere`"));
}

/// `partner completions bash | head -c 10`: the reader goes away after a few bytes. The script
/// (over 100 kB) cannot fit in the pipe, so the write fails whatever the timing; the command
/// ends quietly with status 0, as `cat` would, instead of a panic's message and status 101.
#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let ended = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(0), "{said}");
    assert!(said.is_empty(), "nothing said on stderr: {said}");
}

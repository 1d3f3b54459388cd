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

//! `partner server` and a console joined to its workspace, as processes, with the commands
//! exactly as scripts outside the project write them (issue #50): init (twice), member add,
//! key set --key-stdin, run; then `listen captures --json` and `listen clear` with
//! PARTNER_WORKSPACE, a viewer's clear refused with exit 1 naming the role.

use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_testkit::postgres::Postgres;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn partner(home: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("PARTNER_SERVER_KEY_FILE", home.join("server.key"))
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

fn stdout(output: &Output) -> String {
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
fn token(out: &str) -> String {
    let last = out.lines().last().unwrap_or_default();
    last.strip_prefix("token: ")
        .unwrap_or_else(|| panic!("the last line is not the token: {out}"))
        .to_string()
}

fn run_server(home: &Path, database: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "server",
            "run",
            "--database",
            database,
            "--addr",
            "127.0.0.1:0",
        ])
        .env("HOME", home)
        .env("PARTNER_SERVER_KEY_FILE", home.join("server.key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/webhooks"),
        "{url}"
    );
    (child, url)
}

#[tokio::test]
async fn a_team_server_run_from_the_commands_and_a_console_joined_to_it() {
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();

    let first = stdout(&partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    ));
    let admin = token(&first);
    assert!(admin.starts_with("pcw_"), "{first}");
    let again = stdout(&partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    ));
    assert!(
        !again.contains("token:"),
        "init made a second admin: {again}"
    );
    assert!(again.contains("schema: up to date"), "{again}");

    let viewer = token(&stdout(&partner(
        home,
        &[
            "server",
            "member",
            "add",
            "vera",
            "--role",
            "viewer",
            "--database",
            &database,
        ],
        &[],
        None,
    )));
    let developer = token(&stdout(&partner(
        home,
        &[
            "server",
            "member",
            "add",
            "dev",
            "--role",
            "developer",
            "--database",
            &database,
        ],
        &[],
        None,
    )));
    let wrong_role = partner(
        home,
        &[
            "server",
            "member",
            "add",
            "x",
            "--role",
            "owner",
            "--database",
            &database,
        ],
        &[],
        None,
    );
    assert_eq!(wrong_role.status.code(), Some(2));
    stdout(&partner(
        home,
        &[
            "server",
            "key",
            "set",
            "sub-1",
            "--key-stdin",
            "--database",
            &database,
        ],
        &[],
        Some("whsec-team\n"),
    ));

    let (mut server, url) = run_server(home, &database);
    let body = br#"{"eventId":"e-1","eventType":"TransactionCreated","meta":{"resourceType":"transaction"}}"#;
    let status = reqwest::Client::new()
        .post(&url)
        .header(SIGNATURE_HEADER, sign(b"whsec-team", body))
        .header(SUBSCRIPTION_HEADER, "sub-1")
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);

    let workspace = url.trim_end_matches("/webhooks").to_string();
    let as_viewer = [
        ("PARTNER_WORKSPACE", workspace.as_str()),
        ("PARTNER_WORKSPACE_TOKEN", viewer.as_str()),
    ];
    let listed = stdout(&partner(
        home,
        &["listen", "captures", "--json"],
        &as_viewer,
        None,
    ));
    let captures: Vec<serde_json::Value> = listed
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(captures.len(), 1, "{listed}");
    assert_eq!(captures[0]["eventId"], "e-1");
    assert_eq!(captures[0]["verdict"], "valid");

    let refused = partner(home, &["listen", "clear", "--yes"], &as_viewer, None);
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("a viewer may not clear captures: it takes the developer role"),
        "{said}"
    );

    let as_developer = [
        ("PARTNER_WORKSPACE", workspace.as_str()),
        ("PARTNER_WORKSPACE_TOKEN", developer.as_str()),
    ];
    let cleared = stdout(&partner(
        home,
        &["listen", "clear", "--yes"],
        &as_developer,
        None,
    ));
    assert!(cleared.starts_with("deleted 1 "), "{cleared}");
    let listed = stdout(&partner(
        home,
        &["listen", "captures", "--json"],
        &as_viewer,
        None,
    ));
    assert_eq!(listed, "");

    // A workspace named without a token is a usage error, said before anything is sent.
    let no_token = partner(
        home,
        &["listen", "captures"],
        &[("PARTNER_WORKSPACE", workspace.as_str())],
        None,
    );
    assert_eq!(no_token.status.code(), Some(2));
    server.kill().unwrap();
    server.wait().unwrap();
}

//! `partner server` and a console joined to its workspace, as processes, with the commands
//! exactly as scripts outside the project write them (issue #50): init (twice), member add,
//! key set --key-stdin, run; then `listen captures --json`, `listen export` and `listen clear` with
//! PARTNER_WORKSPACE, a viewer's clear refused with exit 1 naming the role.

use crate::team_process::{partner, stdout, token};
use partner_api::signature::{sign, SIGNATURE_HEADER, SUBSCRIPTION_HEADER};
use partner_testkit::postgres::Postgres;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn run_server(home: &Path, database: &str) -> (Child, String) {
    run_server_logging(home, database, Stdio::null())
}

/// `partner server run`, logging everything (trace) to `log`.
fn run_server_logging(home: &Path, database: &str, log: Stdio) -> (Child, String) {
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
        .env("RUST_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(log)
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
    let captures = crate::json_lines(&listed);
    assert_eq!(captures.len(), 1, "{listed}");
    assert_eq!(captures[0]["eventId"], "e-1");
    assert_eq!(captures[0]["verdict"], "valid");

    // An export of the workspace, in both formats, as the local export writes them.
    let jsonl = stdout(&partner(home, &["listen", "export"], &as_viewer, None));
    let exported: serde_json::Value = serde_json::from_str(jsonl.trim()).unwrap();
    assert_eq!(exported["eventId"], "e-1");
    let har = stdout(&partner(
        home,
        &["listen", "export", "--format", "har"],
        &as_viewer,
        None,
    ));
    let har: serde_json::Value = serde_json::from_str(&har).unwrap();
    assert_eq!(har["log"]["entries"].as_array().unwrap().len(), 1);
    // Evidence of the workspace's captures is the server's to build: a viewer's is refused
    // naming the role, keys of this machine do not apply, a developer's is written.
    let out = home.join("evidence");
    let out = out.to_str().unwrap();
    let bundle = partner(
        home,
        &["listen", "export", "--redact", "--id", "1", "--out", out],
        &as_viewer,
        None,
    );
    assert_eq!(bundle.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bundle.stderr)
        .contains("a viewer may not export evidence: it takes the support role"));

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
    let with_key = partner(
        home,
        &[
            "listen", "export", "--redact", "--id", "1", "--out", out, "--key", "sub-1=k",
        ],
        &as_developer,
        None,
    );
    assert_eq!(with_key.status.code(), Some(2));
    let bundle = partner(
        home,
        &[
            "listen",
            "export",
            "--redact",
            "--notification",
            "e-1",
            "--out",
            out,
        ],
        &as_developer,
        None,
    );
    assert!(String::from_utf8_lossy(&bundle.stderr).contains("wrote the evidence of 1 captures"));
    let har = std::fs::read_to_string(home.join("evidence.har")).unwrap();
    let summary = std::fs::read_to_string(home.join("evidence.md")).unwrap();
    assert!(har.contains("e-1") && !har.contains("whsec-team") && !summary.contains("whsec-team"));
    // A replay of the workspace's captures: a viewer's refused by the server on the first send
    // (exit 1, naming the role); this machine's store and keys do not apply; a developer's
    // sent by the server (here to its own intake), judged and reported as a local replay is.
    let replay = partner(
        home,
        &["listen", "replay", "--to", &url, "--json"],
        &as_viewer,
        None,
    );
    assert_eq!(replay.status.code(), Some(1));
    let said = String::from_utf8_lossy(&replay.stderr);
    assert!(
        said.contains("a viewer may not replay captures: it takes the developer role"),
        "{said}"
    );
    for flag in [&["--db", "x.sqlite3"][..], &["--keychain"][..]] {
        let mut args = vec!["listen", "replay", "--to", &url];
        args.extend_from_slice(flag);
        let local = partner(home, &args, &as_developer, None);
        assert_eq!(local.status.code(), Some(2), "{flag:?}");
        assert!(
            String::from_utf8_lossy(&local.stderr)
                .contains(&format!("{} does not apply to a team workspace", flag[0])),
            "{}",
            String::from_utf8_lossy(&local.stderr)
        );
    }
    let junit = home.join("replay.xml");
    let replayed = partner(
        home,
        &[
            "listen",
            "replay",
            "--to",
            &url,
            "--event-type",
            "TransactionCreated",
            "--json",
            "--expect",
            "200",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &as_developer,
        None,
    );
    let said = String::from_utf8_lossy(&replayed.stderr);
    assert!(replayed.status.success(), "{said}");
    assert!(
        !said.contains("acts on this machine's capture store"),
        "{said}"
    );
    let sent = crate::json_lines(&String::from_utf8_lossy(&replayed.stdout));
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["eventId"], "e-1");
    assert_eq!(sent[0]["status"], 200);
    assert!(sent[0]["failure"].is_null(), "{sent:?}");
    assert!(
        said.contains(&format!("1 of 1 captures sent to {url} passed")),
        "{said}"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("tests=\"1\"") && report.contains("failures=\"0\""),
        "{report}"
    );
    // The server took its own replay: valid, marked as a replay.
    let listed = stdout(&partner(
        home,
        &["listen", "captures", "--json"],
        &as_viewer,
        None,
    ));
    let rows = crate::json_lines(&listed);
    assert_eq!(rows.len(), 2, "{listed}");
    assert!(
        rows[0]["replay"] == true && rows[0]["verdict"] == "valid",
        "{listed}"
    );

    // An import into the workspace: a viewer's refused naming the role; its own export
    // imported again adds nothing; a capture it does not hold (another arrival time) is added
    // with an id of the workspace's; --db does not apply.
    let file = home.join("workspace-export.jsonl");
    std::fs::write(&file, &jsonl).unwrap();
    let file = file.to_str().unwrap();
    let refused = partner(
        home,
        &["listen", "import", "--from", file],
        &as_viewer,
        None,
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("a viewer may not import captures: it takes the developer role"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let with_db = partner(
        home,
        &["listen", "import", "--from", file, "--db", "x.sqlite3"],
        &as_developer,
        None,
    );
    assert_eq!(with_db.status.code(), Some(2));
    let again = partner(
        home,
        &["listen", "import", "--from", file],
        &as_developer,
        None,
    );
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "imported 0 captures into the workspace {workspace}, skipped 1 already there"
        )),
        "{said}"
    );
    let mut other: serde_json::Value = serde_json::from_str(jsonl.trim()).unwrap();
    other["receivedAt"] = serde_json::json!("2026-01-02T03:04:05.000006Z");
    let bad_line = "{\"not\": \"a capture\"}";
    std::fs::write(home.join("other.jsonl"), format!("{other}\n{bad_line}\n")).unwrap();
    let other_file = home.join("other.jsonl");
    let added = partner(
        home,
        &["listen", "import", "--from", other_file.to_str().unwrap()],
        &as_developer,
        None,
    );
    let said = String::from_utf8_lossy(&added.stderr);
    assert_eq!(
        added.status.code(),
        Some(4),
        "a bad line, as locally: {said}"
    );
    assert!(
        said.contains("imported 1 captures into the workspace"),
        "{said}"
    );
    assert!(said.contains("line 2"), "{said}");
    let listed = stdout(&partner(
        home,
        &[
            "listen",
            "captures",
            "--json",
            "--event-type",
            "TransactionCreated",
        ],
        &as_viewer,
        None,
    ));
    let rows = crate::json_lines(&listed);
    assert_eq!(rows.len(), 3, "{listed}");
    assert!(
        rows.iter()
            .any(|row| row["receivedAt"] == "2026-01-02T03:04:05.000006Z"
                && row["id"] != other["id"]),
        "{listed}"
    );

    let cleared = stdout(&partner(
        home,
        &["listen", "clear", "--yes"],
        &as_developer,
        None,
    ));
    assert!(cleared.starts_with("deleted 3 "), "{cleared}");
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

#[tokio::test]
async fn a_server_killed_under_load_loses_no_acknowledged_capture() {
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let admin = token(&stdout(&partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    )));
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

    // Eight senders deliver as fast as they are answered; the server is killed -9 mid-stream.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut senders = Vec::new();
    for sender in 0..8 {
        let (url, acknowledged) = (url.clone(), acknowledged.clone());
        senders.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            for n in 0.. {
                let event_id = format!("e-{sender}-{n}");
                let body =
                    format!(r#"{{"eventId":"{event_id}","eventType":"TransactionCreated"}}"#);
                let sent = client
                    .post(&url)
                    .header(SIGNATURE_HEADER, sign(b"whsec-team", body.as_bytes()))
                    .header(SUBSCRIPTION_HEADER, "sub-1")
                    .body(body)
                    .send()
                    .await;
                match sent {
                    Ok(response) if response.status() == 200 => {
                        acknowledged.lock().unwrap().push(event_id)
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    server.kill().unwrap(); // SIGKILL on Unix
    server.wait().unwrap();
    for sender in senders {
        sender.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 50,
        "only {} acknowledged",
        acknowledged.len()
    );

    // Every acknowledged notification is in the workspace, read through a new server.
    let (mut second, url) = run_server(home, &database);
    let workspace = url.trim_end_matches("/webhooks").to_string();
    let env = [
        ("PARTNER_WORKSPACE", workspace.as_str()),
        ("PARTNER_WORKSPACE_TOKEN", admin.as_str()),
    ];
    let mut stored = std::collections::HashSet::new();
    let mut offset = 0;
    loop {
        let page = stdout(&partner(
            home,
            &[
                "listen",
                "captures",
                "--json",
                "--limit",
                "1000",
                "--offset",
                &offset.to_string(),
            ],
            &env,
            None,
        ));
        let lines: Vec<serde_json::Value> = page
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.is_empty() {
            break;
        }
        offset += lines.len();
        stored.extend(
            lines
                .iter()
                .map(|c| c["eventId"].as_str().unwrap().to_string()),
        );
    }
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|e| !stored.contains(*e))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged were lost: {lost:?}",
        lost.len(),
        acknowledged.len()
    );
    second.kill().unwrap();
    second.wait().unwrap();
}

#[tokio::test]
async fn no_secret_in_any_answer_log_output_or_the_database() {
    use partner_testkit::leaks::assert_no_secret;
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let signing_key = "whsec-never-shown-7f3a9c";
    let init = partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    );
    let admin = token(&stdout(&init));
    let add = partner(
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
    );
    let viewer = token(&stdout(&add));
    let set = partner(
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
        Some(signing_key),
    );
    stdout(&set);
    let log_path = home.join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (mut server, url) = run_server_logging(home, &database, Stdio::from(log));

    let client = reqwest::Client::new();
    let base = url.trim_end_matches("/webhooks").to_string();
    let mut answers = String::new();
    let body = br#"{"eventId":"e-1","eventType":"TransactionCreated"}"#;
    for key in [signing_key, "a-wrong-key"] {
        let response = client
            .post(&url)
            .header(SIGNATURE_HEADER, sign(key.as_bytes(), body))
            .header(SUBSCRIPTION_HEADER, "sub-1")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        answers.push_str(&response.text().await.unwrap());
    }
    let page = serde_json::json!({"filter": {}, "grouping": "everyAttempt", "offset": 0, "limit": 50, "count": "upToCap"});
    for (token, path, body) in [
        (admin.as_str(), "/api/v1/captures/page", Some(page.clone())),
        (admin.as_str(), "/api/v1/members", None),
        (admin.as_str(), "/api/v1/audit", None),
        (
            viewer.as_str(),
            "/api/v1/captures/clear",
            Some(serde_json::json!({"filter": {}})),
        ),
        ("pcw_wrong", "/api/v1/me", None),
        (
            admin.as_str(),
            "/api/v1/captures/page",
            Some(serde_json::json!({"limit": "x"})),
        ),
    ] {
        let request = match body {
            Some(body) => client.post(format!("{base}{path}")).json(&body),
            None => client.get(format!("{base}{path}")),
        };
        let response = request.bearer_auth(token).send().await.unwrap();
        answers.push_str(&format!("{:?}", response.headers()));
        answers.push_str(&response.text().await.unwrap());
    }
    assert!(
        answers.contains("a viewer may not clear captures"),
        "{answers}"
    );
    server.kill().unwrap();
    server.wait().unwrap();

    let dump = Command::new("pg_dump")
        .args(["--dbname", &database])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let texts = [
        (
            "the commands' output",
            format!("{:?}{:?}{:?}", init, add, set),
        ),
        (
            "the server's log",
            std::fs::read_to_string(&log_path).unwrap(),
        ),
        ("the workspace's answers", answers),
        (
            "a dump of the database",
            String::from_utf8_lossy(&dump.stdout).into_owned(),
        ),
    ];
    for (what, text) in &texts {
        assert_no_secret(what, text, "the signing key", signing_key);
        // The tokens are shown once, to whoever made them: in the commands' own output only.
        if *what != "the commands' output" {
            assert_no_secret(what, text, "the admin's token", &admin);
            assert_no_secret(what, text, "the viewer's token", &viewer);
        }
    }
    // The dump is real: it holds the sealed key's row and the captures.
    assert!(texts[3].1.contains("sub-1") && texts[3].1.contains("e-1"));
}

/// `partner server run --tls-cert FILE --tls-key FILE` (issue #50): HTTPS, said on its first
/// line, and the API answers over it to a client trusting the certificate; a key that is not the
/// certificate's, or a missing one named by PARTNER_SERVER_TLS_KEY, exits 2 naming the file
/// (and showing nothing of the key) before anything is bound.
#[tokio::test]
async fn a_team_server_run_with_a_certificate_serves_https_and_refuses_a_wrong_key() {
    use partner_testkit::webhook_receiver::ServerCert;
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let admin = token(&stdout(&partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    )));
    let cert = ServerCert::self_signed();
    let other = ServerCert::self_signed();
    let cert_file = home.join("cert.pem");
    let key_file = home.join("key.pem");
    let other_key_file = home.join("other-key.pem");
    std::fs::write(&cert_file, &cert.cert_pem).unwrap();
    std::fs::write(&key_file, &cert.key_pem).unwrap();
    std::fs::write(&other_key_file, &other.key_pem).unwrap();
    let cert_arg = cert_file.to_str().unwrap();
    let run = [
        "server",
        "run",
        "--database",
        &database,
        "--addr",
        "127.0.0.1:0",
    ];

    let wrong = partner(
        home,
        &[
            &run[..],
            &["--tls-cert", cert_arg, "--tls-key"],
            &[other_key_file.to_str().unwrap()],
        ]
        .concat(),
        &[],
        None,
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&wrong.stdout),
        String::from_utf8_lossy(&wrong.stderr)
    );
    assert_eq!(wrong.status.code(), Some(2), "{said}");
    assert!(
        said.contains("other-key.pem is not the key of the certificate"),
        "{said}"
    );
    assert!(!said.contains("listening"), "{said}");
    for line in other
        .key_pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
    {
        assert!(!said.contains(line), "{said}");
    }

    let missing = home.join("absent-key.pem");
    let absent = partner(
        home,
        &run,
        &[
            ("PARTNER_SERVER_TLS_CERT", cert_arg),
            ("PARTNER_SERVER_TLS_KEY", missing.to_str().unwrap()),
        ],
        None,
    );
    let said = String::from_utf8_lossy(&absent.stderr);
    assert_eq!(absent.status.code(), Some(2), "{said}");
    assert!(said.contains("absent-key.pem does not exist"), "{said}");

    let alone = partner(
        home,
        &[&run[..], &["--tls-cert", cert_arg]].concat(),
        &[],
        None,
    );
    assert_eq!(alone.status.code(), Some(2));

    let mut server = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(run)
        .args([
            "--tls-cert",
            cert_arg,
            "--tls-key",
            key_file.to_str().unwrap(),
        ])
        .env("HOME", home)
        .env("PARTNER_SERVER_KEY_FILE", home.join("server.key"))
        .env_remove("PARTNER_SERVER_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    assert!(
        url.starts_with("https://127.0.0.1:") && url.ends_with("/webhooks"),
        "{url}"
    );
    let api = lines.next().unwrap().unwrap();
    let base = url.trim_end_matches("/webhooks");
    assert_eq!(api, format!("workspace API on {base}/api/v1"));

    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(cert.cert_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let me = client
        .get(format!("{base}/api/v1/me"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status().as_u16(), 200);
    let me: serde_json::Value = me.json().await.unwrap();
    assert_eq!(me["name"], "admin", "{me}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// The team's support index from the commands: `server service set` (the secret from stdin,
/// never shown again), a server that syncs it, then members' `transactions sync|find` with
/// PARTNER_WORKSPACE: a viewer's sync refused naming the role, the same filters and outputs
/// (table, `--json`, `--csv`, `--counts`) as a laptop's copy.
// Multi-threaded: the sandbox answers the server while a command runs to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_team_support_index_from_the_commands() {
    use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
    let service = partner_testkit::TestSandbox::start_with(SandboxConfig {
        clients: vec![ClientCredentials::generate()],
        demo: Some(DemoData { transactions: 60 }),
        ..SandboxConfig::default()
    })
    .await;
    let secret = service.client_secret().expose().to_string();
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    stdout(&partner(
        home,
        &["server", "init", "--database", &database],
        &[],
        None,
    ));
    let member = |name: &str, role: &str| {
        token(&stdout(&partner(
            home,
            &[
                "server",
                "member",
                "add",
                name,
                "--role",
                role,
                "--database",
                &database,
            ],
            &[],
            None,
        )))
    };
    let (viewer, support) = (member("vera", "viewer"), member("sam", "support"));

    // A wrong secret is refused before it is kept (exit 2); the right one is kept.
    let refused = partner(
        home,
        &[
            "server",
            "service",
            "set",
            "--base-url",
            service.base_url(),
            "--client-id",
            service.client_id(),
            "--client-secret-stdin",
            "--database",
            &database,
        ],
        &[],
        Some("not-the-secret\n"),
    );
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("did not issue a token"));
    let set = stdout(&partner(
        home,
        &[
            "server",
            "service",
            "set",
            "--base-url",
            service.base_url(),
            "--client-id",
            service.client_id(),
            "--client-secret-stdin",
            "--database",
            &database,
        ],
        &[],
        Some(&format!("{secret}\n")),
    ));
    assert!(set.contains("a token was issued"), "{set}");
    let shown = stdout(&partner(
        home,
        &["server", "service", "show", "--database", &database],
        &[],
        None,
    ));
    assert!(
        shown.contains(service.client_id()) && !shown.contains(&secret),
        "{shown}"
    );

    let (mut server, url) = run_server(home, &database);
    let base = url.trim_end_matches("/webhooks").to_string();
    let as_member = |token: &str, args: &[&str]| {
        partner(
            home,
            args,
            &[
                ("PARTNER_WORKSPACE", &base),
                ("PARTNER_WORKSPACE_TOKEN", token),
            ],
            None,
        )
    };

    let refused = as_member(&viewer, &["transactions", "sync"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("it takes the support role"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let synced = as_member(&support, &["transactions", "sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&synced)).unwrap();
    assert_eq!(report["state"]["transactions"], 60, "{report}");

    // The viewer asks: every completed one, as JSON, as CSV, as a table, and counted.
    let found: Vec<serde_json::Value> = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &[
            "transactions",
            "find",
            "--status",
            "completed",
            "--json",
            "--limit",
            "1000",
        ],
    )))
    .unwrap();
    assert!(!found.is_empty());
    assert!(found.iter().all(|t| t["status"] == "completed"));
    let counts: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &["transactions", "find", "--counts", "--json"],
    )))
    .unwrap();
    let completed = counts["byStatus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pair| pair[0] == "completed")
        .map(|pair| pair[1].as_u64().unwrap());
    assert_eq!(completed, Some(found.len() as u64), "{counts}");
    assert_eq!(counts["total"], 60);
    let csv = stdout(&as_member(
        &viewer,
        &["transactions", "find", "--csv", "--limit", "5"],
    ));
    assert_eq!(csv.lines().count(), 6, "a header and five rows: {csv}");
    let id = found[0]["id"].as_str().unwrap();
    let table = as_member(&viewer, &["transactions", "find", "--text", id]);
    assert!(stdout(&table).contains(id));
    assert!(
        String::from_utf8_lossy(&table.stderr).contains("1 of 1 matching"),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );

    // An answer through the workspace: support's goes, a viewer's is refused naming the role,
    // a final status asks for the transaction's id, as on a production connection.
    let open: Vec<serde_json::Value> = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &[
            "transactions",
            "find",
            "--status",
            "created",
            "--json",
            "--limit",
            "1",
        ],
    )))
    .unwrap();
    let id = open[0]["id"].as_str().unwrap();
    let answer = home.join("answer.json");
    std::fs::write(
        &answer,
        r#"{"status": "processing", "partnerStatus": "Reviewing", "referenceNumber": "REF-CLI-1"}"#,
    )
    .unwrap();
    let answer = answer.to_str().unwrap();
    let refused = as_member(&viewer, &["transactions", "respond", id, "--file", answer]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("it takes the support role"));
    let sent = stdout(&as_member(
        &support,
        &[
            "transactions",
            "respond",
            id,
            "--file",
            answer,
            "--output",
            "json",
        ],
    ));
    let sent: serde_json::Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(sent["id"], id);
    let found: Vec<serde_json::Value> = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &["transactions", "find", "--reference", "ref-cli-1", "--json"],
    )))
    .unwrap();
    assert_eq!(found.len(), 1, "the index holds the answer");
    let last = home.join("final.json");
    std::fs::write(&last, r#"{"status": "completed"}"#).unwrap();
    let unconfirmed = as_member(
        &support,
        &[
            "transactions",
            "respond",
            id,
            "--file",
            last.to_str().unwrap(),
            "--yes",
        ],
    );
    assert_eq!(unconfirmed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unconfirmed.stderr).contains(&format!("--confirm {id}")));
    server.kill().unwrap();
    server.wait().unwrap();
}

// Multi-threaded: the sandbox delivers on this runtime while the commands run and are waited on.
/// A sandbox with a product, and a team workspace's database set up from the commands (`server
/// init`, a viewer and a developer, `server service set`): where the tests of the workspace's
/// calls through the service start.
struct ServiceTeam {
    service: partner_testkit::TestSandbox,
    product: String,
    _pg: Postgres,
    database: String,
    home: tempfile::TempDir,
    viewer: String,
    developer: String,
}

async fn service_team(
    delivery: partner_sandbox::dispatch::DeliveryConfig,
    (name, listing_name): (&str, &str),
) -> ServiceTeam {
    use partner_sandbox::{ClientCredentials, SandboxConfig};
    let service = partner_testkit::TestSandbox::start_with(SandboxConfig {
        allow_http_callbacks: true,
        clients: vec![ClientCredentials::generate()],
        delivery,
        ..SandboxConfig::default()
    })
    .await;
    let secret = service.client_secret().expose().to_string();
    let http = reqwest::Client::new();
    let issued: serde_json::Value = http
        .post(service.url("/oauth2/v1/token"))
        .basic_auth(service.client_id(), Some(&secret))
        .form(&[("grant_type", "client_credentials"), ("scope", "pc pcapi")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let product: serde_json::Value = http
        .post(service.url("/partner/v2/products"))
        .bearer_auth(issued["access_token"].as_str().unwrap())
        .json(&serde_json::json!({
            "name": name, "listingName": listing_name, "requestTypes": ["NEW_REQUEST"],
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let product = product["id"].as_str().unwrap().to_string();
    let pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .unwrap()
        .unwrap();
    let database = pg.create_database("team").unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    stdout(&partner(
        dir,
        &["server", "init", "--database", &database],
        &[],
        None,
    ));
    let member = |name: &str, role: &str| {
        token(&stdout(&partner(
            dir,
            &[
                "server",
                "member",
                "add",
                name,
                "--role",
                role,
                "--database",
                &database,
            ],
            &[],
            None,
        )))
    };
    let (viewer, developer) = (member("vera", "viewer"), member("dev", "developer"));
    stdout(&partner(
        dir,
        &[
            "server",
            "service",
            "set",
            "--base-url",
            service.base_url(),
            "--client-id",
            service.client_id(),
            "--client-secret-stdin",
            "--database",
            &database,
        ],
        &[],
        Some(&format!("{secret}\n")),
    ));
    ServiceTeam {
        service,
        product,
        _pg: pg,
        database,
        home,
        viewer,
        developer,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn products_subscribed_and_rotated_through_the_workspace_from_the_commands() {
    use partner_sandbox::dispatch::DeliveryConfig;
    use std::time::{Duration, Instant};
    let team = service_team(
        DeliveryConfig {
            retry_delay: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(5),
            max_attempts: 5,
            ..DeliveryConfig::default()
        },
        ("team-hooks", "Team hooks"),
    )
    .await;
    let (service, product, database) = (&team.service, team.product.clone(), team.database.clone());
    let (viewer, developer) = (team.viewer.clone(), team.developer.clone());
    let home = team.home.path();
    let http = reqwest::Client::new();
    let (mut server, url) = run_server(home, &database);
    let base = url.trim_end_matches("/webhooks").to_string();
    // No connection of this machine's: only the workspace's.
    let as_member = |token: &str, args: &[&str]| {
        partner(
            home,
            args,
            &[
                ("PARTNER_WORKSPACE", &base),
                ("PARTNER_WORKSPACE_TOKEN", token),
            ],
            None,
        )
    };

    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &["products", "list", "--all", "--output", "json"],
    )))
    .unwrap();
    assert!(
        listed.iter().any(|p| p["id"] == product.as_str()),
        "{listed:?}"
    );

    let webhook = format!("transaction={url}");
    let refused = as_member(
        &viewer,
        &["products", "subscribe", &product, "--webhook", &webhook],
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("it takes the developer role"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let own_key = as_member(
        &developer,
        &[
            "products",
            "subscribe",
            &product,
            "--webhook",
            &webhook,
            "--key-stdin",
        ],
    );
    assert_eq!(own_key.status.code(), Some(2), "{own_key:?}");

    let subscribed: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &developer,
        &[
            "products",
            "subscribe",
            &product,
            "--webhook",
            &webhook,
            "--output",
            "json",
        ],
    )))
    .unwrap();
    let id = subscribed["subscriptionId"].as_str().unwrap().to_string();
    assert_eq!(subscribed["generated"], true);

    let deliver_and_see = |valid: usize| {
        let (http, service, product, id) = (&http, &service, &product, &id);
        let as_member = &as_member;
        let viewer = &viewer;
        async move {
            let created = http
                .post(service.url("/sandbox/v1/transactions"))
                .json(&serde_json::json!({"productId": product, "requestType": "NEW_REQUEST"}))
                .send()
                .await
                .unwrap();
            assert_eq!(created.status(), 201);
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let seen = stdout(&as_member(viewer, &["listen", "captures", "--json"]));
                let count = seen
                    .lines()
                    .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                    .filter(|c| c["verdict"] == "valid" && c["subscriptionId"] == id.as_str())
                    .count();
                if count >= valid {
                    break;
                }
                assert!(Instant::now() < deadline, "{seen}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    deliver_and_see(1).await;

    let rotated: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &developer,
        &["products", "rotate-key", &product, &id, "--output", "json"],
    )))
    .unwrap();
    assert_eq!(rotated["subscription"], id.as_str(), "{rotated}");
    deliver_and_see(2).await;

    // Where the service names no subscription id: a key set by product and URL, bound to the
    // id the first notification that verifies with it names.
    let element = format!("transaction={url}");
    let unnamed = partner(
        home,
        &[
            "server",
            "key",
            "set",
            &element,
            "--key-stdin",
            "--database",
            &database,
        ],
        &[],
        Some("whsec-element\n"),
    );
    assert_eq!(unnamed.status.code(), Some(2), "{unnamed:?}");
    let set = stdout(&partner(
        home,
        &[
            "server",
            "key",
            "set",
            &element,
            "--product",
            &product,
            "--key-stdin",
            "--database",
            &database,
        ],
        &[],
        Some("whsec-element\n"),
    ));
    assert!(set.contains("is set"), "{set}");
    let deadline = Instant::now() + Duration::from_secs(10);
    for n in 0.. {
        let body = format!(
            r#"{{"eventId":"e-unbound-{n}","eventType":"created","meta":{{"resourceType":"urn:svc:partner:transaction"}}}}"#
        );
        let status = http
            .post(&url)
            .header(SIGNATURE_HEADER, sign(b"whsec-element", body.as_bytes()))
            .header(SUBSCRIPTION_HEADER, "sub-unnamed-1")
            .body(body)
            .send()
            .await
            .unwrap()
            .status();
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seen = stdout(&as_member(&viewer, &["listen", "captures", "--json"]));
    assert!(
        seen.lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .any(|c| c["verdict"] == "valid" && c["subscriptionId"] == "sub-unnamed-1"),
        "{seen}"
    );

    // The product's subscriptions listed, changed and deleted through the workspace too.
    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(&as_member(
        &viewer,
        &[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["subscriptionId"], id.as_str());
    let updated: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &developer,
        &[
            "products",
            "subscriptions",
            "update",
            &product,
            &id,
            "--event",
            "created",
            "--output",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(
        updated["events"],
        serde_json::json!(["created"]),
        "{updated}"
    );
    let refused = as_member(
        &viewer,
        &["products", "subscriptions", "delete", &product, &id],
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let deleted: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &developer,
        &[
            "products",
            "subscriptions",
            "delete",
            &product,
            &id,
            "--output",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(deleted["remaining"], 0, "{deleted}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `partner listen missed` and `partner listen recover` with a workspace in effect: the check
/// and the recovery are the servers' (`POST /api/v1/missed`, `…/missed/recover`), printed as
/// locally; `--db` and `--key` refused, a viewer's recovery refused naming the role.
// Multi-threaded: the sandbox delivers on this runtime while the commands run and are waited on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn missed_and_recover_through_the_workspace_from_the_commands() {
    use partner_sandbox::dispatch::DeliveryConfig;
    use std::collections::BTreeSet;
    use std::time::{Duration, Instant};
    // Quick to give up: three attempts of at most 2 s, 50 ms apart.
    let team = service_team(
        DeliveryConfig {
            retry_delay: Duration::from_millis(50),
            attempt_timeout: Duration::from_secs(2),
            max_attempts: 3,
            ..DeliveryConfig::default()
        },
        ("team-missed", "Team missed"),
    )
    .await;
    let (service, product, database) = (&team.service, team.product.clone(), team.database.clone());
    let (viewer, developer) = (team.viewer.clone(), team.developer.clone());
    let home = team.home.path();
    let http = reqwest::Client::new();
    // The receiver the subscription names, stopped later.
    let (mut receiver, url) = run_server(home, &database);
    let member_of = |base: String| {
        move |token: &str, args: &[&str]| {
            partner(
                home,
                args,
                &[
                    ("PARTNER_WORKSPACE", base.as_str()),
                    ("PARTNER_WORKSPACE_TOKEN", token),
                ],
                None,
            )
        }
    };
    let as_member = member_of(url.trim_end_matches("/webhooks").to_string());
    let subscribed: serde_json::Value = serde_json::from_str(&stdout(&as_member(
        &developer,
        &[
            "products",
            "subscribe",
            &product,
            "--webhook",
            &format!("transaction={url}"),
            "--output",
            "json",
        ],
    )))
    .unwrap();
    let id = subscribed["subscriptionId"].as_str().unwrap().to_string();

    let lender = |method: reqwest::Method, path: String, body: serde_json::Value| {
        let (http, service) = (&http, &service);
        async move {
            let response = http
                .request(method, service.url(&path))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success(), "{path}");
            response.json::<serde_json::Value>().await.unwrap()
        }
    };
    let settled = || async {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let records = lender(
                reqwest::Method::GET,
                "/sandbox/v1/deliveries".into(),
                serde_json::Value::Null,
            )
            .await;
            let records = records.as_array().unwrap().clone();
            if records.iter().all(|r| r["state"] != "pending") {
                return records;
            }
            assert!(Instant::now() < deadline, "{records:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let transaction = |updated: bool| {
        let (lender, product) = (&lender, &product);
        async move {
            let created = lender(
                reqwest::Method::POST,
                "/sandbox/v1/transactions".into(),
                serde_json::json!({"productId": product, "requestType": "NEW_REQUEST"}),
            )
            .await;
            if updated {
                let id = created["id"].as_str().unwrap();
                lender(
                    reqwest::Method::PATCH,
                    format!("/sandbox/v1/transactions/{id}"),
                    serde_json::json!({"loan": {"loanAmount": 300000}}),
                )
                .await;
            }
        }
    };

    // Up: delivered and captured. Then the receiver is gone and the sandbox gives up.
    transaction(false).await;
    let before = settled().await;
    assert!(
        before.iter().all(|r| r["state"] == "delivered"),
        "{before:?}"
    );
    receiver.kill().unwrap();
    receiver.wait().unwrap();
    transaction(true).await;
    let discarded: BTreeSet<(String, String)> = settled()
        .await
        .iter()
        .filter(|r| r["state"] == "discarded")
        .map(|r| {
            (
                r["subscriptionId"].as_str().unwrap().to_string(),
                r["eventId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(!discarded.is_empty());
    assert!(discarded
        .iter()
        .all(|(subscription, _)| *subscription == id));

    // Another server of the workspace answers the members.
    let (mut server, url) = run_server(home, &database);
    let as_member = member_of(url.trim_end_matches("/webhooks").to_string());
    let pairs = |out: &str| -> BTreeSet<(String, String)> {
        out.lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .map(|m| {
                (
                    m["subscriptionId"].as_str().unwrap().to_string(),
                    m["eventId"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let checked = as_member(&viewer, &["listen", "missed", "--until", "now", "--json"]);
    let listed = stdout(&checked);
    assert_eq!(pairs(&listed), discarded, "{listed}");
    assert_eq!(listed.lines().count(), discarded.len());
    let said = String::from_utf8_lossy(&checked.stderr);
    assert!(said.contains("(its first capture)"), "{said}");
    assert!(!said.contains("this machine's capture store"), "{said}");

    // This machine's store and keys do not apply to a workspace: refused, not ignored.
    let with_db = as_member(&viewer, &["listen", "missed", "--db", "x.sqlite3"]);
    assert_eq!(with_db.status.code(), Some(2), "{with_db:?}");
    assert!(String::from_utf8_lossy(&with_db.stderr)
        .contains("--db does not apply to a team workspace"));
    let with_key = as_member(&developer, &["listen", "recover", "--key", "sub=k"]);
    assert_eq!(with_key.status.code(), Some(2), "{with_key:?}");
    assert!(String::from_utf8_lossy(&with_key.stderr)
        .contains("--key does not apply to a team workspace"));

    // A viewer may not recover: exit 1, the role named.
    let refused = as_member(&viewer, &["listen", "recover", "--until", "now"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("a viewer may not recover missed notifications: it takes the developer role"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // A developer's: each sent to the workspace's own intake and acknowledged.
    let recovered = as_member(
        &developer,
        &["listen", "recover", "--until", "now", "--json"],
    );
    let outcomes = stdout(&recovered);
    assert_eq!(pairs(&outcomes), discarded, "{outcomes}");
    for line in outcomes.lines() {
        let outcome: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(outcome["status"], 200, "{outcome}");
        assert_eq!(outcome["acknowledged"], true, "{outcome}");
    }
    let n = discarded.len();
    assert!(
        String::from_utf8_lossy(&recovered.stderr)
            .contains(&format!("{n} of {n} recovered notifications acknowledged")),
        "{}",
        String::from_utf8_lossy(&recovered.stderr)
    );

    // The workspace captured them valid, as replays; the check finds nothing missed now.
    let seen = stdout(&as_member(&viewer, &["listen", "captures", "--json"]));
    let replays: BTreeSet<(String, String)> = seen
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|c| c["replay"] == true && c["verdict"] == "valid")
        .map(|c| {
            (
                c["subscriptionId"].as_str().unwrap().to_string(),
                c["eventId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(replays, discarded, "{seen}");
    let again = stdout(&as_member(
        &viewer,
        &["listen", "missed", "--until", "now", "--json"],
    ));
    assert!(again.is_empty(), "{again}");
    server.kill().unwrap();
    server.wait().unwrap();
}

//! `partner demo`: the scenarios listed, with the user's own and a broken file reported, and a
//! user-written scenario played to its end by its path, as the README writes it; a scenario
//! plays on its own sandbox whatever connection the environment names.
use partner_testkit::TestReceiver;
use std::process::Output;
use std::time::Duration;

/// Runs `partner demo ARGS` with `data` as the data folder.
async fn demo(data: &std::path::Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .arg("demo")
        .args(args)
        .env("PARTNER_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .output()
        .await
        .unwrap()
}

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../docs/scenarios/back-in-time.toml"
);

#[tokio::test]
async fn list_shows_the_built_ins_and_the_users_and_names_a_broken_file() {
    let data = tempfile::tempdir().unwrap();
    let folder = data.path().join("scenarios");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(EXAMPLE, folder.join("back-in-time.toml")).unwrap();
    std::fs::write(
        folder.join("broken.toml"),
        "title = \"B\"\n[[steps]]\ndo = \"jump\"\ncaption = \"c\"\n",
    )
    .unwrap();

    let listed = demo(data.path(), &["list"]).await;
    assert!(listed.status.success(), "{listed:?}");
    let out = String::from_utf8_lossy(&listed.stdout);
    for name in [
        "happy-path",
        "failing-receiver",
        "key-rotation",
        "offline-recovered",
        "reserialised-json",
        "back-in-time",
    ] {
        assert!(out.contains(name), "{name} in {out}");
    }
    let err = String::from_utf8_lossy(&listed.stderr);
    assert!(
        err.contains("broken.toml: step 1: unknown variant `jump`"),
        "{err}"
    );

    let json = demo(data.path(), &["list", "--output", "json"]).await;
    let listed: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(listed["scenarios"].as_array().map(Vec::len), Some(6));
    assert_eq!(
        listed["problems"][0]["file"],
        folder.join("broken.toml").display().to_string()
    );
}

#[tokio::test]
async fn run_plays_a_users_file_to_its_end_and_writes_its_picture() {
    let data = tempfile::tempdir().unwrap();
    let picture = data.path().join("picture.svg");
    let run = demo(
        data.path(),
        &[
            "run",
            EXAMPLE,
            "--output",
            "json",
            "--picture",
            picture.to_str().unwrap(),
        ],
    )
    .await;
    assert!(run.status.success(), "{run:?}");
    let played: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(played["play"]["finished"], true);
    let steps = played["play"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 7);
    assert!(steps.iter().all(|s| s["outcome"].is_string()), "{steps:?}");
    assert_eq!(played["notification"]["outcome"], "delivered");
    let svg = std::fs::read_to_string(&picture).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("data-step=\"attempt\""), "{svg}");

    let unknown = demo(data.path(), &["run", "no-such-scenario"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("there are: happy-path"));
    let bad_picture = demo(data.path(), &["run", "happy-path", "--picture", "x.gif"]).await;
    assert_eq!(bad_picture.status.code(), Some(2));
}

#[tokio::test]
async fn run_prints_each_caption_and_what_it_did() {
    let data = tempfile::tempdir().unwrap();
    let run = demo(data.path(), &["run", "reserialised-json"]).await;
    assert!(run.status.success(), "{run:?}");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("1/3  The lender orders."), "{out}");
    assert!(
        out.contains("the JSON was re-serialised after signing"),
        "{out}"
    );
    assert!(
        out.contains("the listener receives   attempt 2  invalid-signature  answered 401"),
        "{out}"
    );
    // Logs stay out of the way: the failed check is the scenario, not an error.
    assert!(
        run.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Why: a partner developer's shell often exports `PARTNER_BASE_URL`, `PARTNER_CLIENT_ID` and
/// `PARTNER_CLIENT_SECRET` for the real service (and `PARTNER_CONNECTION`, a workspace, …). A
/// scenario once signed in there (two token requests) and then waited 30 s for a subscription
/// of the embedded sandbox that never came. Here the variables name a recording server that
/// must see nothing at all while every built-in scenario plays to its end.
#[tokio::test]
async fn every_built_in_scenario_plays_on_its_own_sandbox_whatever_the_environment_names() {
    let mut configured = TestReceiver::always(200).await.unwrap();
    let base_url = format!("http://{}", configured.addr());
    let data = tempfile::tempdir().unwrap();
    for scenario in [
        "happy-path",
        "failing-receiver",
        "key-rotation",
        "offline-recovered",
        "reserialised-json",
    ] {
        let begun = std::time::Instant::now();
        let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
            .args(["demo", "run", scenario, "--output", "json"])
            .env("PARTNER_DATA_DIR", data.path())
            .env("PARTNER_BASE_URL", &base_url)
            .env("PARTNER_CLIENT_ID", "a-real-client")
            .env("PARTNER_CLIENT_SECRET", "a-real-secret")
            .env("PARTNER_CONNECTION", "production")
            .env("PARTNER_WORKSPACE", "production")
            .env_remove("RUST_LOG")
            .output()
            .await
            .unwrap();
        assert!(
            run.status.success(),
            "{scenario}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let played: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(played["play"]["finished"], true, "{scenario}");
        assert!(
            begun.elapsed() < Duration::from_secs(25),
            "{scenario} waited for something: {:?}",
            begun.elapsed()
        );
        let seen = configured.drain();
        assert!(
            seen.is_empty(),
            "{scenario} sent {} request(s) to the configured service: {:?}",
            seen.len(),
            seen.iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
        );
    }
    // Nothing late either (a background task of the last run, say).
    assert!(configured.next(Duration::from_millis(200)).await.is_none());
}

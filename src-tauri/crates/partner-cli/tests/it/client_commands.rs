//! `partner token|products|transactions` run as processes against a real sandbox on port 0.

use partner_api::{Sortable, Transaction};
use partner_sandbox::{ClientCredentials, DemoData, SandboxConfig};
use partner_testkit::TestSandbox;
use std::path::{Path, PathBuf};
use std::process::Output;

struct Cli {
    sandbox: TestSandbox,
    /// HOME, XDG_* and the working directory of every run: whatever the CLI writes lands here.
    /// Removed when the test ends, whatever its outcome.
    home: tempfile::TempDir,
    /// Every stdout and stderr, to look for secrets afterwards.
    seen: std::sync::Mutex<Vec<(String, String)>>,
}

impl Cli {
    async fn start(transactions: usize) -> Self {
        let sandbox = TestSandbox::start_with(SandboxConfig {
            allow_http_callbacks: true,
            clients: vec![ClientCredentials::generate()],
            demo: Some(DemoData { transactions }),
            ..SandboxConfig::default()
        })
        .await;
        let home = tempfile::Builder::new()
            .prefix("partner-cli-test-")
            .tempdir()
            .unwrap();
        Self {
            sandbox,
            home,
            seen: Default::default(),
        }
    }

    /// Runs `partner ARGS` with the connection in the environment, as a script would.
    async fn run(&self, args: &[&str], extra_env: &[(&str, &str)]) -> Output {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"));
        command
            .args(args)
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("XDG_CACHE_HOME", self.home.path().join("cache"))
            .env("RUST_LOG", "trace")
            .env("PARTNER_BASE_URL", self.sandbox.base_url())
            .env("PARTNER_CLIENT_ID", self.sandbox.client_id())
            .env(
                "PARTNER_CLIENT_SECRET",
                self.sandbox.client_secret().expose(),
            )
            .env_remove("PARTNER_TOKEN");
        for (key, value) in extra_env {
            command.env(key, value);
        }
        let output = command.output().await.unwrap();
        self.seen.lock().unwrap().push((
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
        output
    }

    async fn json(&self, args: &[&str]) -> serde_json::Value {
        let output = self.run(args, &[]).await;
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn a_descending_first_key_is_a_value_with_or_without_the_equals_sign() {
    let cli = Cli::start(30).await;
    let list = |sort: &'static [&'static str]| {
        let mut args = vec!["products", "list"];
        args.extend_from_slice(sort);
        args.extend_from_slice(&["--output", "json"]);
        args
    };
    let spaced = cli.json(&list(&["--sort", "-listingName"])).await;
    let joined = cli.json(&list(&["--sort=-listingName"])).await;
    assert_eq!(spaced, joined);
    let names: Vec<String> = spaced
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["listingName"].as_str().unwrap().to_string())
        .collect();
    let mut descending = names.clone();
    descending.sort_by_key(|name| std::cmp::Reverse(name.to_lowercase()));
    assert_eq!(names, descending, "sorted by listing name, descending");
    assert!(names.len() > 1);
}

#[tokio::test]
async fn lists_page_sort_and_export_in_three_formats() {
    let cli = Cli::start(120).await;
    let page = cli
        .json(&[
            "transactions",
            "list",
            "--limit",
            "5",
            "--start",
            "5",
            "--sort",
            "status,-created",
            "--output",
            "json",
        ])
        .await;
    let page: Vec<Transaction> = serde_json::from_value(page).unwrap();
    assert_eq!(page.len(), 5);

    let all = cli
        .json(&[
            "transactions",
            "list",
            "--all",
            "--sort",
            "status,-created",
            "--output",
            "json",
        ])
        .await;
    let all_json = all.clone();
    let all: Vec<Transaction> = serde_json::from_value(all).unwrap();
    assert_eq!(all.len(), 120);
    assert_eq!(
        page,
        all[5..10].to_vec(),
        "a page is the same slice of the whole"
    );
    let mut independent = all.clone();
    independent.sort_by(|a, b| {
        a.status
            .as_str()
            .cmp(b.status.as_str())
            .then_with(|| b.created.cmp(&a.created))
    });
    let ids = |v: &[Transaction]| v.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&all), ids(&independent));

    let csv = cli
        .run(
            &[
                "transactions",
                "list",
                "--all",
                "--sort",
                "status,-created",
                "--output",
                "csv",
            ],
            &[],
        )
        .await;
    assert!(csv.status.success());
    let text = stdout(&csv);
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let columns: Vec<&str> = header.split(',').collect();
    for field in ["id", "status", "product", "request", "created", "updatedBy"] {
        assert!(
            columns.contains(&field),
            "one column per field of the API object: {header}"
        );
    }
    // The same flattening as the desktop app's export, from the same objects.
    let rows = all_json.as_array().unwrap();
    let expected = partner_client::listing_export::write_csv(Vec::new(), rows).unwrap();
    assert_eq!(text, String::from_utf8(expected).unwrap());
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.records().count(), 120);

    let table = cli
        .run(&["products", "list", "--sort", "listingName"], &[])
        .await;
    assert!(table.status.success());
    let text = stdout(&table);
    assert!(text.lines().next().unwrap().starts_with("ID"), "{text}");
    assert!(
        stderr(&table).contains(" of "),
        "the summary goes to stderr"
    );
}

#[tokio::test]
async fn rule_violations_fail_with_words_and_a_non_zero_exit() {
    let cli = Cli::start(3).await;
    for (args, words) in [
        (vec!["transactions", "list", "--limit", "51"], "at most 50"),
        (
            vec!["transactions", "list", "--sort", "listingName"],
            "cannot be sorted on",
        ),
        (
            vec!["products", "list", "--sort", "name,name"],
            "more than once",
        ),
        (
            vec!["transactions", "get", "no-such-transaction"],
            "not found",
        ),
    ] {
        let output = cli.run(&args, &[]).await;
        assert!(!output.status.success(), "{args:?}");
        assert!(
            stderr(&output).contains(words),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let no_secret = cli
        .run(&["products", "list"], &[("PARTNER_CLIENT_SECRET", "")])
        .await;
    assert!(!no_secret.status.success());
    assert!(
        stderr(&no_secret).contains("PARTNER_CLIENT_SECRET"),
        "{}",
        stderr(&no_secret)
    );
    let wrong = cli
        .run(
            &["products", "list"],
            &[("PARTNER_CLIENT_SECRET", "wrong-secret-value")],
        )
        .await;
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("not authorised"));
    assert!(!stderr(&wrong).contains("wrong-secret-value"));
}

#[tokio::test]
async fn tokens_products_and_transactions_end_to_end_with_no_secret_left_behind() {
    let cli = Cli::start(10).await;
    let issued = cli.run(&["token", "issue"], &[]).await;
    assert!(issued.status.success(), "{}", stderr(&issued));
    let token = stdout(&issued).trim().to_string();
    assert!(!token.is_empty() && !token.contains(' '));

    let introspection = cli
        .run(
            &["token", "introspect", "--output", "json"],
            &[("PARTNER_TOKEN", token.as_str())],
        )
        .await;
    let body: serde_json::Value = serde_json::from_slice(&introspection.stdout).unwrap();
    assert_eq!(body["active"], true);
    assert_eq!(body["client_id"], cli.sandbox.client_id());

    let revoked = cli
        .run(&["token", "revoke"], &[("PARTNER_TOKEN", token.as_str())])
        .await;
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    let after = cli
        .run(
            &["token", "introspect"],
            &[("PARTNER_TOKEN", token.as_str())],
        )
        .await;
    assert!(!after.status.success(), "a revoked token is not active");
    let missing = cli.run(&["token", "revoke"], &[]).await;
    assert!(!missing.status.success() && stderr(&missing).contains("PARTNER_TOKEN"));

    let created = cli
        .json(&[
            "products",
            "create",
            "--name",
            "cli-made",
            "--listing-name",
            "Made by the CLI",
            "--output",
            "json",
        ])
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    let fetched = cli
        .json(&["products", "get", &id, "--output", "json"])
        .await;
    assert_eq!(fetched["name"], "cli-made");

    let transactions = cli
        .json(&["transactions", "list", "--limit", "1", "--output", "json"])
        .await;
    let transaction_id = transactions[0]["id"].as_str().unwrap().to_string();
    let one = cli
        .json(&["transactions", "get", &transaction_id, "--output", "json"])
        .await;
    assert_eq!(one["id"], transaction_id.as_str());
    let events = cli
        .json(&[
            "transactions",
            "events",
            &transaction_id,
            "--output",
            "json",
        ])
        .await;
    let event_id = events[0]["id"].as_str().unwrap().to_string();
    let event = cli
        .json(&[
            "transactions",
            "events",
            &transaction_id,
            &event_id,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(event["id"], event_id.as_str());

    // The client secret never appears in any output, and no secret in any file under HOME.
    let secret = cli.sandbox.client_secret().expose().to_string();
    for (out, err) in cli.seen.lock().unwrap().iter() {
        assert!(!out.contains(&secret) && !err.contains(&secret));
        assert!(!err.contains(&token), "the token reached a log line");
    }
    for file in files_under(cli.home.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains(&secret) && !text.contains(&token),
            "{}",
            file.display()
        );
    }
}

#[tokio::test]
async fn rotate_key_and_subscribe_keep_keys_in_the_keychain() {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() != Ok("1") {
        // Straight to stderr, past the test harness's capture, so a skip is never silent.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED rotate_key_and_subscribe_keep_keys_in_the_keychain: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring");
        return;
    }
    let cli = Cli::start(1).await;
    // `token login` stores the secret; later runs without PARTNER_CLIENT_SECRET read it from
    // the keychain.
    let login = cli.run(&["token", "login"], &[]).await;
    assert!(login.status.success(), "{}", stderr(&login));
    let from_keychain = cli
        .run(
            &["products", "list", "--output", "json"],
            &[("PARTNER_CLIENT_SECRET", "")],
        )
        .await;
    assert!(from_keychain.status.success(), "{}", stderr(&from_keychain));
    let created = cli
        .json(&[
            "products",
            "create",
            "--name",
            "cli-rotating",
            "--listing-name",
            "Rotating",
            "--webhook",
            "transaction=http://127.0.0.1:9/hook",
            "--output",
            "json",
        ])
        .await;
    let product = created["id"].as_str().unwrap().to_string();
    let subscription = created["webhooks"][0]["subscriptionId"]
        .as_str()
        .unwrap()
        .to_string();
    let store = partner_client::KeyringStore::default();
    let first = partner_client::signing_keys(&store, &subscription)
        .unwrap()
        .unwrap();

    let rotation = cli
        .json(&[
            "products",
            "rotate-key",
            &product,
            &subscription,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(rotation["subscriptionId"], subscription.as_str());
    assert_eq!(rotation["generated"], true);
    let keys = partner_client::signing_keys(&store, &subscription)
        .unwrap()
        .unwrap();
    assert!(!keys.current.ct_eq(first.current.expose()));
    assert!(keys.previous.unwrap().key.ct_eq(first.current.expose()));
    for (out, err) in cli.seen.lock().unwrap().iter() {
        assert!(!out.contains(keys.current.expose()) && !err.contains(keys.current.expose()));
    }

    // A subscription added to the existing product: its key is in the keychain, never shown.
    let added = cli
        .json(&[
            "products",
            "subscribe",
            &product,
            "--webhook",
            "event=http://127.0.0.1:9/events",
            "--event",
            "created",
            "--output",
            "json",
        ])
        .await;
    let added_subscription = added["subscriptionId"].as_str().unwrap().to_string();
    assert_eq!(added["product"], product.as_str());
    assert_eq!(added["resource"], "urn:svc:partner:transaction:event");
    assert_eq!(added["events"], serde_json::json!(["created"]));
    assert_eq!(added["generated"], true);
    let added_key = partner_client::signing_keys(&store, &added_subscription)
        .unwrap()
        .expect("the new subscription's key is in the keychain")
        .current;
    let now = cli
        .json(&["products", "get", &product, "--output", "json"])
        .await;
    let urls: Vec<&str> = now["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        ["http://127.0.0.1:9/hook", "http://127.0.0.1:9/events"]
    );
    for (out, err) in cli.seen.lock().unwrap().iter() {
        assert!(!out.contains(added_key.expose()) && !err.contains(added_key.expose()));
    }
    partner_client::forget_signing_keys(&store, &added_subscription).unwrap();

    partner_client::forget_signing_keys(&store, &subscription).unwrap();
    let base_url = url::Url::parse(cli.sandbox.base_url()).unwrap();
    partner_client::forget_client_secret(&store, &base_url, cli.sandbox.client_id()).unwrap();
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test]
async fn subscribe_refuses_a_bad_webhook_or_event_in_words_and_changes_nothing() {
    let cli = Cli::start(0).await;
    let products = cli.json(&["products", "list", "--output", "json"]).await;
    let product = products[0]["id"].as_str().unwrap().to_string();
    let hooks_before = products[0]["webhooks"].clone();
    for (args, says) in [
        (
            vec!["--webhook", "http://127.0.0.1:9/hook"],
            "expected RESOURCE=URL",
        ),
        (
            vec!["--webhook", "payments=http://127.0.0.1:9/hook"],
            "unknown resource `payments`",
        ),
        (
            vec![
                "--webhook",
                "event=http://127.0.0.1:9/e",
                "--event",
                "deleted",
            ],
            "unknown event `deleted`",
        ),
    ] {
        let mut all = vec!["products", "subscribe", product.as_str()];
        all.extend(args);
        let output = cli.run(&all, &[]).await;
        assert!(!output.status.success(), "{all:?}");
        assert!(
            stderr(&output).contains(says),
            "{all:?}: {}",
            stderr(&output)
        );
    }
    let after = cli
        .json(&["products", "get", &product, "--output", "json"])
        .await;
    assert_eq!(after["webhooks"], hooks_before);
}

/// The demo product with two subscriptions: its id and its `webhooks` as JSON.
async fn demo_product_with_two_subscriptions(cli: &Cli) -> (String, serde_json::Value) {
    let products = cli.json(&["products", "list", "--output", "json"]).await;
    let product = products
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["webhooks"].as_array().is_some_and(|w| w.len() == 2))
        .expect("a demo product with two subscriptions");
    (
        product["id"].as_str().unwrap().to_string(),
        product["webhooks"].clone(),
    )
}

#[tokio::test]
async fn subscriptions_list_and_update_keep_the_others_and_refuse_bad_input_in_words() {
    let cli = Cli::start(0).await;
    let (product, hooks) = demo_product_with_two_subscriptions(&cli).await;
    let first = hooks[0]["subscriptionId"].as_str().unwrap().to_string();

    // list: the API's own objects as JSON, a row each in a table.
    let listed = cli
        .json(&[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(listed, hooks);
    let table = cli
        .run(&["products", "subscriptions", "list", &product], &[])
        .await;
    assert!(table.status.success(), "{}", stderr(&table));
    let lines: Vec<String> = stdout(&table).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("SUBSCRIPTION") && lines[0].contains("URL"));
    for (line, hook) in lines[1..].iter().zip(hooks.as_array().unwrap()) {
        assert!(line.starts_with(hook["subscriptionId"].as_str().unwrap()));
        assert!(line.contains(hook["url"].as_str().unwrap()));
    }

    // update: only what is named changes; the other subscription stays as it was.
    let updated = cli
        .json(&[
            "products",
            "subscriptions",
            "update",
            &product,
            &first,
            "--url",
            "https://example.test/moved",
            "--event",
            "updated",
            "--resource",
            "event",
            "--output",
            "json",
        ])
        .await;
    assert_eq!(
        updated,
        serde_json::json!({
            "subscriptionId": first,
            "url": "https://example.test/moved",
            "events": ["updated"],
            "resource": "urn:svc:partner:transaction:event",
        })
    );
    let now = cli
        .json(&[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(now[0], updated);
    assert_eq!(now[1], hooks[1]);
    // A URN names a resource too; the URL alone keeps the events.
    let urn = cli
        .json(&[
            "products",
            "subscriptions",
            "update",
            &product,
            &first,
            "--resource",
            "urn:svc:partner:transaction",
            "--output",
            "json",
        ])
        .await;
    assert_eq!(urn["resource"], "urn:svc:partner:transaction");
    assert_eq!(urn["events"], serde_json::json!(["updated"]));

    for (args, says) in [
        (vec![first.as_str()], "nothing to change"),
        (
            vec![first.as_str(), "--event", "deleted"],
            "unknown event `deleted`",
        ),
        (
            vec![first.as_str(), "--resource", "payments"],
            "unknown resource `payments`; use transaction or event",
        ),
        (
            vec![first.as_str(), "--url", "ftp://example.test/x"],
            "https://",
        ),
        (
            vec!["no-such-subscription", "--url", "https://example.test/x"],
            "has no subscription no-such-subscription",
        ),
    ] {
        let mut all = vec!["products", "subscriptions", "update", product.as_str()];
        all.extend(args);
        let output = cli.run(&all, &[]).await;
        assert!(!output.status.success(), "{all:?}");
        assert!(
            stderr(&output).contains(says),
            "{all:?}: {}",
            stderr(&output)
        );
    }
    let after = cli
        .json(&[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(after[0], urn, "the refused updates changed nothing");
    assert_eq!(after[1], hooks[1]);
}

#[tokio::test]
async fn subscriptions_delete_needs_the_keychain_before_it_changes_anything() {
    let cli = Cli::start(0).await;
    let (product, hooks) = demo_product_with_two_subscriptions(&cli).await;
    let first = hooks[0]["subscriptionId"].as_str().unwrap().to_string();
    // A session bus that is not there: the keychain cannot be reached.
    let output = cli
        .run(
            &["products", "subscriptions", "delete", &product, &first],
            &[(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/partner-cli-test-bus",
            )],
        )
        .await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("the keychain, which is not available"),
        "{}",
        stderr(&output)
    );
    let after = cli
        .json(&[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(after, hooks, "nothing deleted");
}

#[tokio::test]
async fn subscriptions_delete_removes_the_subscription_and_its_keys() {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() != Ok("1") {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED subscriptions_delete_removes_the_subscription_and_its_keys: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring");
        return;
    }
    let cli = Cli::start(0).await;
    let created = cli
        .json(&[
            "products",
            "create",
            "--name",
            "cli-deleting",
            "--listing-name",
            "Deleting",
            "--webhook",
            "transaction=http://127.0.0.1:9/a",
            "--webhook",
            "event=http://127.0.0.1:9/b",
            "--output",
            "json",
        ])
        .await;
    let product = created["id"].as_str().unwrap().to_string();
    let (gone, kept) = (
        created["webhooks"][0]["subscriptionId"]
            .as_str()
            .unwrap()
            .to_string(),
        created["webhooks"][1]["subscriptionId"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    // A rotation leaves a previous key, which must go too.
    let rotated = cli
        .run(&["products", "rotate-key", &product, &gone], &[])
        .await;
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let store = partner_client::KeyringStore::default();
    let previous = partner_client::SecretSlot::PreviousSigningKey {
        subscription_id: gone.clone(),
    };
    assert!(partner_client::SecretStore::get(&store, &previous)
        .unwrap()
        .is_some());

    let deleted = cli
        .json(&[
            "products",
            "subscriptions",
            "delete",
            &product,
            &gone,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(
        deleted,
        serde_json::json!({
            "product": product,
            "subscriptionId": gone,
            "remaining": 1,
            "keysRemoved": true,
        })
    );
    assert!(partner_client::signing_keys(&store, &gone)
        .unwrap()
        .is_none());
    assert!(partner_client::SecretStore::get(&store, &previous)
        .unwrap()
        .is_none());
    assert!(partner_client::signing_keys(&store, &kept)
        .unwrap()
        .is_some());
    let now = cli
        .json(&[
            "products",
            "subscriptions",
            "list",
            &product,
            "--output",
            "json",
        ])
        .await;
    assert_eq!(now, serde_json::json!([created["webhooks"][1]]));

    // Deleting it again: the service no longer has it, said in words.
    let again = cli
        .run(
            &["products", "subscriptions", "delete", &product, &gone],
            &[],
        )
        .await;
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains(&format!("product {product} has no subscription {gone}")),
        "{}",
        stderr(&again)
    );

    partner_client::forget_signing_keys(&store, &kept).unwrap();
}

#[test]
fn sort_keys_named_in_the_help_are_the_rules_keys() {
    // The help text of `transactions list` names the keys partner-api allows.
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["transactions", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for key in Transaction::SORT_KEYS {
        assert!(text.contains(key), "{key} in {text}");
    }
}

#[tokio::test]
async fn version_completions_and_man_pages_come_from_the_same_definitions_as_help() {
    let cli = Cli::start(1).await;
    let version = cli.run(&["--version"], &[]).await;
    assert!(version.status.success());
    let shown = stdout(&version);
    assert!(
        shown.starts_with(&format!("partner {} (build ", env!("CARGO_PKG_VERSION"))),
        "{shown}"
    );

    let bash = cli.run(&["completions", "bash"], &[]).await;
    assert!(bash.status.success());
    let script = cli.home.path().join("partner.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(
        stdout(&bash).contains("connections"),
        "every subcommand completes"
    );
    for shell in ["zsh", "fish", "powershell"] {
        let out = cli.run(&["completions", shell], &[]).await;
        assert!(out.status.success(), "{shell}");
        assert!(stdout(&out).contains("partner"), "{shell}");
    }

    let pages = cli.home.path().join("man");
    let man = cli
        .run(&["man", "--out", pages.to_str().unwrap()], &[])
        .await;
    assert!(
        man.status.success(),
        "{}",
        String::from_utf8_lossy(&man.stderr)
    );
    assert!(stdout(&man).is_empty(), "the count goes to stderr");
    let list = std::fs::read_to_string(pages.join("partner-transactions-list.1")).unwrap();
    assert!(list.contains("sort"), "the page documents --sort");
    let top = std::fs::read_to_string(pages.join("partner.1")).unwrap();
    assert!(
        top.contains("Exit status"),
        "the exit statuses are in the top page"
    );
}

#[tokio::test]
async fn exit_statuses_tell_refused_from_unreachable_from_bad_usage_and_errors_stay_off_stdout() {
    let cli = Cli::start(5).await;
    let refused = cli
        .run(
            &["products", "get", "00000000-0000-0000-0000-000000000000"],
            &[],
        )
        .await;
    assert_eq!(
        refused.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(stdout(&refused).is_empty());

    let rule = cli
        .run(&["transactions", "list", "--limit", "51"], &[])
        .await;
    assert_eq!(rule.status.code(), Some(2));
    assert!(stdout(&rule).is_empty());

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let unreachable = cli
        .run(
            &["products", "list"],
            &[("PARTNER_BASE_URL", nowhere.as_str())],
        )
        .await;
    assert_eq!(
        unreachable.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&unreachable.stderr)
    );
    assert!(stdout(&unreachable).is_empty());
}

#[tokio::test]
async fn a_connection_saved_in_the_app_is_used_by_name() {
    let cli = Cli::start(5).await;
    let data = cli.home.path().join("app-data");
    let mut settings = partner_local::Settings::default();
    settings.connections.push(partner_local::SavedConnection {
        id: "c-1".into(),
        label: "Staging".into(),
        base_url: cli.sandbox.base_url().to_string(),
        client_id: cli.sandbox.client_id().to_string(),
        environment: partner_local::Environment::Sandbox,
        sorts_tried: Default::default(),
        read_only: false,
        network: partner_local::ConnectionNetwork::default(),
    });
    settings.last_active = Some("c-1".into());
    partner_local::SettingsFile::new(data.join("settings.json"))
        .save(&settings)
        .unwrap();
    let data = data.to_str().unwrap();
    // The base URL and client id of the environment point nowhere: only the saved connection's
    // can answer. (The secret still comes from PARTNER_CLIENT_SECRET, as the keychain would.)
    let env = [
        ("PARTNER_DATA_DIR", data),
        ("PARTNER_BASE_URL", "http://127.0.0.1:9"),
        ("PARTNER_CLIENT_ID", "someone-else"),
    ];
    let listed = cli
        .run(
            &[
                "--connection",
                "staging",
                "products",
                "list",
                "--output",
                "json",
            ],
            &env,
        )
        .await;
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let products: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(!products.as_array().unwrap().is_empty());
    let by_variable = cli
        .run(
            &["transactions", "list", "--limit", "2", "--output", "json"],
            &[env[0], env[1], env[2], ("PARTNER_CONNECTION", "Staging")],
        )
        .await;
    assert!(
        by_variable.status.success(),
        "{}",
        String::from_utf8_lossy(&by_variable.stderr)
    );

    let saved = cli
        .run(&["connections", "list", "--output", "json"], &env)
        .await;
    assert!(saved.status.success());
    let saved: serde_json::Value = serde_json::from_slice(&saved.stdout).unwrap();
    assert_eq!(saved[0]["name"], "Staging");
    assert_eq!(saved[0]["environment"], "sandbox");
    assert_eq!(saved[0]["lastActive"], true);

    let unknown = cli
        .run(&["--connection", "Production", "products", "list"], &env)
        .await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("the saved ones: Staging"));
}

#[tokio::test]
async fn trigger_plays_the_lender_and_lists_the_notifications_it_queued() {
    let cli = Cli::start(3).await;
    let mut receiver = partner_testkit::TestReceiver::always(200).await.unwrap();
    // A product with a subscription to the receiver (its key kept in a memory keychain here).
    let created = cli
        .json(&[
            "products",
            "create",
            "--name",
            "trig",
            "--listing-name",
            "Trigger",
            "--output",
            "json",
        ])
        .await;
    let product = created["id"].as_str().unwrap().to_string();
    let client = partner_client::PartnerClient::new(
        partner_client::ConnectionConfig::new(
            cli.sandbox.base_url(),
            cli.sandbox.client_id().to_string(),
            cli.sandbox.client_secret().clone(),
        )
        .unwrap(),
    )
    .unwrap();
    let keychain: std::sync::Arc<dyn partner_client::SecretStore> =
        std::sync::Arc::new(partner_client::MemoryStore::new());
    let subscribed = client
        .add_subscription(
            &keychain,
            &product,
            &partner_client::NewSubscription {
                url: receiver.url(),
                events: partner_api::EventType::ALL.to_vec(),
                resource: partner_api::ResourceType::Transaction,
            },
            None,
        )
        .await
        .unwrap();

    let triggered = cli
        .json(&[
            "trigger",
            "transaction-created",
            "--product",
            &product,
            "--loan",
            r#"{"loanNumber":"L-9","amount":325000}"#,
            "--output",
            "json",
        ])
        .await;
    let transaction = triggered["created"]["id"].as_str().unwrap().to_string();
    assert_eq!(triggered["created"]["request"]["loan"]["loanNumber"], "L-9");
    let queued = triggered["notifications"].as_array().unwrap();
    assert_eq!(
        queued.len(),
        1,
        "one subscription, one notification: {queued:?}"
    );
    assert_eq!(queued[0]["resourceId"], transaction.as_str());
    assert_eq!(
        queued[0]["subscriptionId"],
        subscribed.subscription_id.as_str()
    );
    assert_eq!(queued[0]["url"], receiver.url().as_str());
    let arrived = receiver
        .next(std::time::Duration::from_secs(10))
        .await
        .expect("the notification arrived");
    assert_eq!(
        arrived.header("svc-subscriptionid"),
        Some(subscribed.subscription_id.as_str())
    );

    let updated = cli
        .run(
            &[
                "trigger",
                "transaction-updated",
                "--transaction",
                &transaction,
            ],
            &[],
        )
        .await;
    assert!(
        updated.status.success(),
        "{}",
        String::from_utf8_lossy(&updated.stderr)
    );
    assert!(stdout(&updated).contains(&format!("transaction {transaction}")));
    assert!(stdout(&updated).contains("queued"), "{}", stdout(&updated));
    let event = cli
        .json(&[
            "trigger",
            "event",
            "--transaction",
            &transaction,
            "--type",
            "urn:acme:note",
            "--text",
            "called the borrower",
            "--output",
            "json",
        ])
        .await;
    assert_eq!(event["created"]["text"], "called the borrower");

    let unknown = cli
        .run(
            &[
                "trigger",
                "transaction-created",
                "--product",
                "no-such-product",
            ],
            &[],
        )
        .await;
    assert_eq!(unknown.status.code(), Some(1), "the sandbox refused it");
    assert!(stdout(&unknown).is_empty());
    let bad_loan = cli
        .run(
            &[
                "trigger",
                "transaction-created",
                "--product",
                &product,
                "--loan",
                "[1]",
            ],
            &[],
        )
        .await;
    assert_eq!(bad_loan.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_loan.stderr).contains("JSON object"));
}

#[tokio::test]
async fn sync_refuses_a_production_connection_without_yes_and_makes_nothing() {
    let cli = Cli::start(5).await;
    let data = cli.home.path().join("app-data");
    let mut settings = partner_local::Settings::default();
    settings.connections.push(partner_local::SavedConnection {
        id: "p-1".into(),
        label: "Live".into(),
        base_url: cli.sandbox.base_url().to_string(),
        client_id: cli.sandbox.client_id().to_string(),
        environment: partner_local::Environment::Production,
        sorts_tried: Default::default(),
        read_only: false,
        network: partner_local::ConnectionNetwork::default(),
    });
    partner_local::SettingsFile::new(data.join("settings.json"))
        .save(&settings)
        .unwrap();
    let env = [("PARTNER_DATA_DIR", data.to_str().unwrap())];
    let refused = cli
        .run(&["--connection", "Live", "transactions", "sync"], &env)
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(said.contains("production connection"), "{said}");
    assert!(said.contains("lenders' and borrowers' data"), "{said}");
    assert!(said.contains("--yes"), "{said}");
    assert!(!data.join("index").exists(), "no local copy was made");

    // A connection named only by the environment is judged as the app judges one it adopts:
    // anything but loopback is production. Refused before any request (the host is invalid).
    let unnamed = cli
        .run(
            &["transactions", "sync"],
            &[
                ("PARTNER_DATA_DIR", data.to_str().unwrap()),
                ("PARTNER_BASE_URL", "https://partner.example.invalid"),
            ],
        )
        .await;
    assert_eq!(unnamed.status.code(), Some(2), "{}", stderr(&unnamed));
    assert!(stderr(&unnamed).contains("--yes"));
    assert!(!data.join("index").exists());

    // Nothing to find before a sync, said in words.
    let nothing = cli.run(&["transactions", "find"], &env).await;
    assert_eq!(nothing.status.code(), Some(2));
    assert!(stderr(&nothing).contains("partner transactions sync"));
    // Bad filters are usage errors.
    let bad = cli
        .run(&["transactions", "find", "--status", "lost"], &env)
        .await;
    assert_eq!(bad.status.code(), Some(2));
    let bad = cli
        .run(&["transactions", "find", "--loan", "noequals"], &env)
        .await;
    assert_eq!(bad.status.code(), Some(2));
}

#[tokio::test]
async fn sync_find_and_forget_through_the_keychain() {
    if std::env::var("PARTNER_KEYCHAIN_TESTS").as_deref() != Ok("1") {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED sync_find_and_forget_through_the_keychain: set PARTNER_KEYCHAIN_TESTS=1 under dbus-run-session with an unlocked gnome-keyring");
        return;
    }
    let cli = Cli::start(120).await;
    let synced = cli.run(&["transactions", "sync", "--json"], &[]).await;
    assert!(synced.status.success(), "{}", stderr(&synced));
    let report: serde_json::Value = serde_json::from_slice(&synced.stdout).unwrap();
    assert_eq!(report["state"]["transactions"], 120);
    assert_eq!(report["end"], "complete");
    let files = files_under(&cli.home.path().join("data/partner-console/index"));
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "sqlite3")),
        "{files:?}"
    );
    // Unix alone: on Windows the files take the profile folder's ACL, with no mode to check.
    #[cfg(unix)]
    for file in &files {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }

    let found = cli
        .json(&[
            "transactions",
            "find",
            "--status",
            "completed",
            "--limit",
            "1000",
            "--json",
        ])
        .await;
    let listed = cli
        .json(&["transactions", "list", "--all", "--output", "json"])
        .await;
    let want = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "completed")
        .count();
    assert_eq!(found.as_array().unwrap().len(), want);
    let csv = cli
        .run(
            &["transactions", "find", "--text", "LN-000007", "--csv"],
            &[],
        )
        .await;
    assert!(csv.status.success());
    let text = stdout(&csv);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("LN-000007"));

    let forgot = cli.run(&["transactions", "forget"], &[]).await;
    assert!(forgot.status.success(), "{}", stderr(&forgot));
    assert!(files_under(&cli.home.path().join("data/partner-console/index")).is_empty());
    let after = cli.run(&["transactions", "find"], &[]).await;
    assert_eq!(after.status.code(), Some(2));
}

/// Ids of transactions no final response has locked yet.
async fn open_transactions(cli: &Cli) -> Vec<String> {
    let listed = cli
        .json(&["transactions", "list", "--all", "--output", "json"])
        .await;
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] != "completed")
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn respond_sends_every_field_and_asks_before_a_final_status() {
    let cli = Cli::start(12).await;
    let open = open_transactions(&cli).await;
    assert!(open.len() >= 3, "{open:?}");
    let id = open[0].as_str();
    let write = |name: &str, body: &str| {
        let path = cli.home.path().join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_string()
    };
    let status_of = |transaction: &serde_json::Value| transaction["response"]["status"].clone();

    // Every field of the field notes, sent as written.
    let processing = write(
        "processing.json",
        r#"{"status": "processing", "partnerStatus": "Inspector booked", "referenceNumber": "R-7",
            "respondingParty": {"name": "Acme Appraisals", "pointOfContact": {"name": "Ana", "email": "ana@acme.test"}},
            "loan": {"appraisedValue": 412000}, "resources": [{"id": "r1", "name": "order.pdf", "mimeType": "application/pdf"}]}"#,
    );
    let sent = cli
        .run(
            &[
                "transactions",
                "respond",
                id,
                "--file",
                &processing,
                "--output",
                "json",
            ],
            &[],
        )
        .await;
    assert!(sent.status.success(), "{}", stderr(&sent));
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_eq!(status_of(&read), "processing");
    assert_eq!(read["response"]["loan"]["appraisedValue"], 412000);
    assert_eq!(
        read["response"]["respondingParty"]["pointOfContact"]["email"],
        "ana@acme.test"
    );
    assert_eq!(read["response"]["resources"][0]["name"], "order.pdf");

    // A misspelt field is refused before anything is sent.
    let typo = write(
        "typo.json",
        r#"{"status": "processing", "partnerstatus": "x"}"#,
    );
    let refused = cli
        .run(&["transactions", "respond", id, "--file", &typo], &[])
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("partnerstatus"),
        "{}",
        stderr(&refused)
    );

    // A final status is not sent without a yes (no terminal to ask at here).
    let completed = write(
        "completed.json",
        r#"{"status": "completed", "partnerStatus": "Report delivered"}"#,
    );
    let unasked = cli
        .run(&["transactions", "respond", id, "--file", &completed], &[])
        .await;
    assert_eq!(unasked.status.code(), Some(2), "{}", stderr(&unasked));
    let said = stderr(&unasked);
    assert!(
        said.contains("locks transaction") && said.contains("--yes"),
        "{said}"
    );
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_eq!(status_of(&read), "processing", "nothing was sent");

    let locked = cli
        .run(
            &[
                "transactions",
                "respond",
                id,
                "--file",
                &completed,
                "--yes",
                "--output",
                "json",
            ],
            &[],
        )
        .await;
    assert!(locked.status.success(), "{}", stderr(&locked));
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_eq!(
        (status_of(&read), read["status"].clone()),
        ("completed".into(), "completed".into())
    );
    // Locked for good: the service refuses a later response, in its words.
    let again = cli
        .run(&["transactions", "respond", id, "--file", &processing], &[])
        .await;
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(stderr(&again).contains("409"), "{}", stderr(&again));

    // Standard input.
    let mut piped = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["transactions", "respond", &open[1], "--file", "-"])
        .current_dir(cli.home.path())
        .env("HOME", cli.home.path())
        .env("XDG_DATA_HOME", cli.home.path().join("data"))
        .env("PARTNER_BASE_URL", cli.sandbox.base_url())
        .env("PARTNER_CLIENT_ID", cli.sandbox.client_id())
        .env(
            "PARTNER_CLIENT_SECRET",
            cli.sandbox.client_secret().expose(),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = piped.stdin.take().unwrap();
    stdin
        .write_all(br#"{"status": "inputRequired", "partnerStatus": "Need the survey"}"#)
        .await
        .unwrap();
    drop(stdin);
    let piped = piped.wait_with_output().await.unwrap();
    assert!(piped.status.success(), "{}", stderr(&piped));
    let read = cli
        .json(&["transactions", "get", &open[1], "--output", "json"])
        .await;
    assert_eq!(status_of(&read), "inputRequired");
}

#[tokio::test]
async fn a_final_response_on_production_needs_the_transaction_s_id_typed() {
    let cli = Cli::start(12).await;
    let open = open_transactions(&cli).await;
    let id = open[0].as_str();
    let data = cli.home.path().join("app-data");
    let mut settings = partner_local::Settings::default();
    settings.connections.push(partner_local::SavedConnection {
        id: "p-1".into(),
        label: "Live".into(),
        base_url: cli.sandbox.base_url().to_string(),
        client_id: cli.sandbox.client_id().to_string(),
        environment: partner_local::Environment::Production,
        sorts_tried: Default::default(),
        read_only: false,
        network: partner_local::ConnectionNetwork::default(),
    });
    partner_local::SettingsFile::new(data.join("settings.json"))
        .save(&settings)
        .unwrap();
    let env = [("PARTNER_DATA_DIR", data.to_str().unwrap())];
    let failed = cli.home.path().join("failed.json");
    std::fs::write(&failed, r#"{"status": "failed", "errors": [{"code": "E1", "description": "No access to the property"}]}"#).unwrap();
    let file = failed.to_str().unwrap();
    let respond = |extra: &'static [&'static str]| {
        let mut args = vec![
            "--connection",
            "Live",
            "transactions",
            "respond",
            id,
            "--file",
            file,
        ];
        args.extend_from_slice(extra);
        args
    };

    let with_yes = cli.run(&respond(&["--yes"]), &env).await;
    assert_eq!(with_yes.status.code(), Some(2), "{}", stderr(&with_yes));
    assert!(
        stderr(&with_yes).contains(&format!("--confirm {id}")),
        "{}",
        stderr(&with_yes)
    );
    let wrong = cli
        .run(&respond(&["--confirm", "someone-else"]), &env)
        .await;
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("not this transaction"),
        "{}",
        stderr(&wrong)
    );
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_ne!(read["status"], "completed", "nothing was sent");

    let mut confirmed = respond(&[]);
    confirmed.extend(["--confirm", id]);
    let sent = cli.run(&confirmed, &env).await;
    assert!(sent.status.success(), "{}", stderr(&sent));
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_eq!(read["response"]["status"], "failed");
    assert_eq!(read["response"]["errors"][0]["code"], "E1");
}

#[tokio::test]
async fn a_read_only_connection_refuses_writes_and_the_audit_log_keeps_every_one() {
    let cli = Cli::start(12).await;
    let open = open_transactions(&cli).await;
    let id = open[0].as_str();
    let data = cli.home.path().join("app-data");
    let save = |read_only: bool| {
        let mut settings = partner_local::Settings::default();
        settings.connections.push(partner_local::SavedConnection {
            id: "s-1".into(),
            label: "Live support".into(),
            base_url: cli.sandbox.base_url().to_string(),
            client_id: cli.sandbox.client_id().to_string(),
            environment: partner_local::Environment::Sandbox,
            sorts_tried: Default::default(),
            read_only,
            network: partner_local::ConnectionNetwork::default(),
        });
        partner_local::SettingsFile::new(data.join("settings.json"))
            .save(&settings)
            .unwrap();
    };
    save(true);
    // A log written before encryption: one plain JSON line per write (sealed at the first
    // write below, and never lost).
    let earlier = r#"{"connection":"Earlier desk","via":"app","at":"2026-01-02T03:04:05Z","baseUrl":"https://svc.test/","clientId":"c0","action":"respond","target":"transaction t_earlier","call":"PATCH /partner/v2/transactions/t_earlier/response","sent":{"status":"processing"},"outcome":{"kind":"done","status":200,"requestId":"r-0"}}"#;
    std::fs::write(data.join("audit-log.jsonl"), format!("{earlier}\n")).unwrap();
    // The data key in a key file named by the variable (no secret store in this test).
    let key_file = cli.home.path().join("keys/data.key");
    let env = [
        ("PARTNER_DATA_DIR", data.to_str().unwrap()),
        ("PARTNER_DATA_KEY_FILE", key_file.to_str().unwrap()),
    ];
    let answer = cli.home.path().join("processing.json");
    std::fs::write(
        &answer,
        r#"{"status": "processing", "partnerStatus": "Booked"}"#,
    )
    .unwrap();
    let file = answer.to_str().unwrap();
    let respond = ["transactions", "respond", id, "--file", file];

    // Named, and by the same URL and client id: refused before sending either way.
    let mut named = vec!["--connection", "Live support"];
    named.extend_from_slice(&respond);
    for args in [named.as_slice(), respond.as_slice()] {
        let refused = cli.run(args, &env).await;
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert!(
            stderr(&refused).contains("read-only") && stderr(&refused).contains("was not sent"),
            "{}",
            stderr(&refused)
        );
    }
    let read = cli
        .json(&["transactions", "get", id, "--output", "json"])
        .await;
    assert_ne!(read["response"]["status"], "processing", "nothing was sent");
    let listed = cli
        .run(&["connections", "list", "--output", "json"], &env)
        .await;
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["readOnly"], true);

    save(false);
    let sent = cli.run(&named, &env).await;
    assert!(sent.status.success(), "{}", stderr(&sent));

    let audit = cli.run(&["audit", "--json"], &env).await;
    assert!(audit.status.success(), "{}", stderr(&audit));
    let mut entries: Vec<serde_json::Value> = stdout(&audit)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(entries.len(), 4, "{entries:?}");
    let oldest = entries.pop().unwrap();
    assert_eq!(
        oldest["target"], "transaction t_earlier",
        "the earlier entry"
    );
    assert_eq!(oldest["connection"], "Earlier desk");
    assert_eq!(entries[0]["outcome"]["kind"], "done", "newest first");
    assert_eq!(entries[0]["outcome"]["status"], 200);
    assert_eq!(entries[0]["sent"]["partnerStatus"], "Booked");
    for refused in &entries[1..] {
        assert_eq!(refused["outcome"]["kind"], "refused");
    }
    // Encrypted at rest: the log's bytes name no connection, transaction or answer.
    let bytes = std::fs::read(data.join("audit-log.jsonl")).unwrap();
    for needle in ["Live support", "Earlier desk", "Booked", id, "t_earlier"] {
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "{needle} is in the audit log's file"
        );
    }
    assert!(key_file.exists(), "the key file named by the variable");
    for entry in &entries {
        assert_eq!(entry["connection"], "Live support");
        assert_eq!(entry["via"], "cli");
        assert_eq!(entry["action"], "respond");
        assert_eq!(entry["target"], format!("transaction {id}"));
    }
    let table = cli.run(&["audit"], &env).await;
    assert!(
        stdout(&table).contains("respond to a transaction"),
        "{}",
        stdout(&table)
    );

    let export = cli.home.path().join("audit.csv");
    let exported = cli
        .run(&["audit", "--export", export.to_str().unwrap()], &env)
        .await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    let mut reader = csv::Reader::from_path(&export).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let outcomes: Vec<&str> = rows.iter().map(|r| &r[8]).collect();
    assert_eq!(
        outcomes,
        ["done", "refused", "refused", "done"],
        "oldest first"
    );
    assert_eq!(&rows[0][6], "transaction t_earlier");

    // Under another key the lines are kept, counted, and the key named as maybe the cause.
    let other_key = cli.home.path().join("keys/other.key");
    let other_env = [
        ("PARTNER_DATA_DIR", data.to_str().unwrap()),
        ("PARTNER_DATA_KEY_FILE", other_key.to_str().unwrap()),
    ];
    let other = cli.run(&["audit", "--json"], &other_env).await;
    assert!(other.status.success(), "{}", stderr(&other));
    assert_eq!(stdout(&other).trim(), "");
    assert!(
        stderr(&other).contains("4 of them do not open with the data key")
            && stderr(&other).contains("the key may differ"),
        "{}",
        stderr(&other)
    );
    assert_eq!(std::fs::read(data.join("audit-log.jsonl")).unwrap(), bytes);
    let text = std::fs::read_to_string(&export).unwrap();
    assert!(!text.contains(cli.sandbox.client_secret().expose()));
}

#[tokio::test]
async fn trigger_makes_the_sandbox_misbehave_on_demand_and_the_commands_cope() {
    let cli = Cli::start(3).await;
    let added = cli
        .run(
            &[
                "trigger",
                "fault",
                "--endpoint",
                "products",
                "--status",
                "429",
                "--retry-after",
                "1",
                "--count",
                "1",
            ],
            &[],
        )
        .await;
    assert!(added.status.success(), "{}", stderr(&added));
    assert!(
        stdout(&added).contains("products → 429 (Retry-After 1 s) · next call"),
        "{}",
        stdout(&added)
    );
    let listed = cli
        .run(&["--verbose", "products", "list", "--output", "json"], &[])
        .await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(
        stderr(&listed).contains("waiting 1 s: rate limited"),
        "{}",
        stderr(&listed)
    );
    assert_eq!(
        cli.json(&["trigger", "faults", "--output", "json"]).await,
        serde_json::json!([])
    );

    // A write meets a 503 once: reported as the service's failure, not sent again.
    cli.json(&[
        "trigger",
        "fault",
        "--endpoint",
        "products",
        "--status",
        "503",
        "--count",
        "1",
        "--output",
        "json",
    ])
    .await;
    let refused = cli
        .run(
            &[
                "products",
                "create",
                "--name",
                "faulted",
                "--listing-name",
                "Faulted",
            ],
            &[],
        )
        .await;
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("fault on demand"),
        "{}",
        stderr(&refused)
    );
    let created = cli
        .run(
            &[
                "products",
                "create",
                "--name",
                "faulted",
                "--listing-name",
                "Faulted",
            ],
            &[],
        )
        .await;
    assert!(
        created.status.success(),
        "nothing was created the first time: {}",
        stderr(&created)
    );

    let shared = cli
        .run(
            &[
                "trigger",
                "fault",
                "--endpoint",
                "transactions",
                "--latency",
                "50ms",
                "--share",
                "0.5",
                "--count",
                "10",
            ],
            &[],
        )
        .await;
    assert!(
        stdout(&shared).contains("wait 50 ms · 50% of calls, 10 at most"),
        "{}",
        stdout(&shared)
    );
    let revoked = cli.run(&["trigger", "revoke-tokens"], &[]).await;
    assert!(
        stdout(&revoked).contains("live token(s) revoked"),
        "{}",
        stdout(&revoked)
    );
    let transactions = cli
        .run(
            &["--verbose", "transactions", "list", "--output", "json"],
            &[],
        )
        .await;
    assert!(transactions.status.success(), "{}", stderr(&transactions));
    let cleared = cli.run(&["trigger", "clear-faults"], &[]).await;
    assert_eq!(stdout(&cleared).trim(), "1 fault(s) ended");

    let bad = cli
        .run(
            &["trigger", "fault", "--status", "200", "--count", "1"],
            &[],
        )
        .await;
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("between 400 and 599"),
        "{}",
        stderr(&bad)
    );
}

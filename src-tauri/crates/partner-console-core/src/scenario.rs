//! Scenarios: named, scripted webhook flows, each a short TOML file of steps with a caption
//! apiece, played on the embedded sandbox (`services::scenarios`) from the Demo screen and by
//! `partner demo run`.
//!
//! Why a file format, not code: a presenter writes their own flow ("the receiver is slow on
//! Mondays") without building anything, and the built-in ones are the same kind of file (under
//! `scenarios/` in this crate, compiled in), so the README's description of the format is the
//! one the built-ins are checked against. A user's files live in the data folder's
//! `scenarios/`; a file that does not parse is reported with its line and kept as it is, never
//! dropped silently or rewritten.
//!
//! Parsing is strict (an unknown key is an error that names it): a typo such as `attemps`
//! must not quietly play a different flow in front of an audience.

use partner_api::ResponseStatus;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The built-in scenarios, by name, in the order the Demo screen lists them.
const BUILT_IN: &[(&str, &str)] = &[
    ("happy-path", include_str!("../scenarios/happy-path.toml")),
    (
        "failing-receiver",
        include_str!("../scenarios/failing-receiver.toml"),
    ),
    (
        "key-rotation",
        include_str!("../scenarios/key-rotation.toml"),
    ),
    (
        "offline-recovered",
        include_str!("../scenarios/offline-recovered.toml"),
    ),
    (
        "reserialised-json",
        include_str!("../scenarios/reserialised-json.toml"),
    ),
];

/// The most steps a scenario may have.
pub const MOST_STEPS: usize = 50;
/// The largest scenario file read.
pub const LARGEST_FILE: u64 = 64 * 1024;
/// The longest a caption may be, in characters.
pub const LONGEST_CAPTION: usize = 600;
/// The longest one `wait` may be: a day.
pub const LONGEST_WAIT_SECONDS: u64 = 24 * 60 * 60;
/// The most attempts a `receiver-fails` step may turn away.
pub const MOST_FAILED_ATTEMPTS: u32 = 10;

/// Where a user's own scenario files go, in the app's data folder (the app and `partner demo`
/// read the same one).
pub fn user_folder(data_dir: &Path) -> PathBuf {
    data_dir.join("scenarios")
}

/// A scenario, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Its name: a built-in's, or a user's file name without `.toml`.
    pub name: String,
    pub title: String,
    pub summary: String,
    pub steps: Vec<Step>,
    pub source: Source,
}

/// Where a scenario comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    BuiltIn,
    File(PathBuf),
}

impl Source {
    /// `built-in`, or the file's path.
    pub fn describe(&self) -> String {
        match self {
            Source::BuiltIn => "built-in".into(),
            Source::File(path) => path.display().to_string(),
        }
    }
}

/// One step: what happens, and the caption shown while it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub caption: String,
    pub action: Action,
}

/// What a step does. In a file, `do = "<kebab-case name>"` and the fields beside it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// The lender creates a transaction on `product` (its name or listing name; the product
    /// the listener is subscribed to when absent). It becomes the scenario's transaction.
    CreateTransaction { product: Option<String> },
    /// The lender updates the scenario's transaction.
    UpdateTransaction,
    /// The lender adds an event with `text` to the scenario's transaction.
    AddEvent { text: String },
    /// The listener answers `status` (503 when absent) to the first `attempts` attempts of
    /// each notification from now on.
    ReceiverFails { status: Option<u16>, attempts: u32 },
    /// The listener answers every attempt again (its test mode off).
    ReceiverRecovers,
    /// Time passes: the sandbox clock moves on at once, or the seconds really pass when the
    /// scenario is played in real time.
    Wait { seconds: u64 },
    /// The signing keys of the scenario product's subscriptions to the listener are rotated;
    /// the old ones keep verifying as the previous keys.
    RotateKey,
    /// The listener stops (its captures stay).
    StopListener,
    /// The listener starts again.
    StartListener,
    /// The missed-notification check runs, and what it found is sent again to the listener.
    RecoverMissed,
    /// The partner answers the scenario's transaction with `status`, and `note` as its
    /// partner status.
    Respond {
        status: ResponseStatus,
        note: Option<String>,
    },
    /// The newest notification of the scenario's transaction reaches the listener once more
    /// through a proxy that parses and re-writes its JSON (pretty-printed), with the signature
    /// the service made.
    ProxyReserialises,
    /// The signature debugger's diagnosis of the newest capture that failed verification.
    Diagnose,
}

impl Action {
    /// The step in a few words (the Demo screen's step list, `partner demo list`).
    pub fn describe(&self) -> String {
        match self {
            Action::CreateTransaction { product: Some(p) } => {
                format!("the lender creates a transaction on {p}")
            }
            Action::CreateTransaction { product: None } => {
                "the lender creates a transaction".into()
            }
            Action::UpdateTransaction => "the lender updates the transaction".into(),
            Action::AddEvent { text } => format!("the lender adds the event “{text}”"),
            Action::ReceiverFails { status, attempts } => format!(
                "the listener answers {} to each notification's first {attempts} attempt{}",
                status.unwrap_or(503),
                if *attempts == 1 { "" } else { "s" }
            ),
            Action::ReceiverRecovers => "the listener answers every attempt again".into(),
            Action::Wait { seconds } => format!("{seconds} s pass"),
            Action::RotateKey => "the signing keys are rotated".into(),
            Action::StopListener => "the listener stops".into(),
            Action::StartListener => "the listener starts".into(),
            Action::RecoverMissed => "missed notifications are found and sent again".into(),
            Action::Respond { status, .. } => format!("the partner answers {status}"),
            Action::ProxyReserialises => "a proxy re-serialises the notification's JSON".into(),
            Action::Diagnose => "the signature debugger diagnoses the failed check".into(),
        }
    }

    /// The resource type of the notification a lender step sends the console about (what
    /// the play then draws); `None` for a step of anyone else.
    pub fn notifies_about(&self) -> Option<&'static str> {
        match self {
            Action::CreateTransaction { .. } | Action::UpdateTransaction => {
                Some("urn:svc:partner:transaction")
            }
            Action::AddEvent { .. } => Some("urn:svc:partner:transaction:event"),
            _ => None,
        }
    }

    /// Whether the step needs the scenario's transaction (a `create-transaction` before it).
    pub fn needs_transaction(&self) -> bool {
        matches!(
            self,
            Action::UpdateTransaction
                | Action::AddEvent { .. }
                | Action::Respond { .. }
                | Action::ProxyReserialises
        )
    }
}

/// A scenario file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    title: String,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    steps: Vec<toml::Table>,
}

/// Reads scenario `name` from `text`, checking every rule; the error names the step and what
/// is wrong with it.
pub fn parse(name: &str, text: &str, source: Source) -> Result<Scenario, String> {
    let written: Written = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
    let title = written.title.trim().to_string();
    if title.is_empty() {
        return Err("the title is empty".into());
    }
    if written.steps.is_empty() {
        return Err("it has no steps: add at least one [[steps]] table".into());
    }
    if written.steps.len() > MOST_STEPS {
        return Err(format!(
            "it has {} steps; a scenario has at most {MOST_STEPS}",
            written.steps.len()
        ));
    }
    let mut steps = Vec::with_capacity(written.steps.len());
    let mut has_transaction = false;
    for (index, mut table) in written.steps.into_iter().enumerate() {
        let number = index + 1;
        let caption = match table.remove("caption") {
            Some(toml::Value::String(caption)) => caption.trim().to_string(),
            Some(_) => return Err(format!("step {number}: `caption` must be text")),
            None => return Err(format!("step {number}: it has no `caption`")),
        };
        if caption.is_empty() {
            return Err(format!("step {number}: its caption is empty"));
        }
        if caption.chars().count() > LONGEST_CAPTION {
            return Err(format!(
                "step {number}: its caption is longer than {LONGEST_CAPTION} characters"
            ));
        }
        if !table.contains_key("do") {
            return Err(format!(
                "step {number}: it has no `do` (what happens, such as \"create-transaction\")"
            ));
        }
        let action = Action::deserialize(toml::Value::Table(table))
            .map_err(|e| format!("step {number}: {}", one_line(&e.to_string())))?;
        check_action(&action).map_err(|why| format!("step {number}: {why}"))?;
        if action.needs_transaction() && !has_transaction {
            return Err(format!(
                "step {number}: {} needs a transaction; put a `create-transaction` step before it",
                action.describe()
            ));
        }
        has_transaction |= matches!(action, Action::CreateTransaction { .. });
        steps.push(Step { caption, action });
    }
    Ok(Scenario {
        name: name.to_string(),
        title,
        summary: written.summary.trim().to_string(),
        steps,
        source,
    })
}

fn check_action(action: &Action) -> Result<(), String> {
    match action {
        Action::Wait { seconds } if *seconds == 0 || *seconds > LONGEST_WAIT_SECONDS => Err(
            format!("`seconds` must be 1 to {LONGEST_WAIT_SECONDS} (a day)"),
        ),
        Action::ReceiverFails { attempts, .. }
            if *attempts == 0 || *attempts > MOST_FAILED_ATTEMPTS =>
        {
            Err(format!("`attempts` must be 1 to {MOST_FAILED_ATTEMPTS}"))
        }
        Action::ReceiverFails {
            status: Some(status),
            ..
        } if !(400..=599).contains(status) => Err(format!(
            "`status` {status} is not a failure; use 400 to 599"
        )),
        Action::AddEvent { text } if text.trim().is_empty() => Err("`text` is empty".into()),
        Action::CreateTransaction { product: Some(p) } if p.trim().is_empty() => {
            Err("`product` is empty; leave it out for the listener's product".into())
        }
        _ => Ok(()),
    }
}

/// TOML's errors quote the offending line over several lines; one line reads better in a list.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '|' || c == '^' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The built-in scenarios.
pub fn built_ins() -> Vec<Scenario> {
    BUILT_IN
        .iter()
        .filter_map(|(name, text)| {
            // The built-ins are checked by a test; one that did not parse would be a bug.
            parse(name, text, Source::BuiltIn)
                .inspect_err(|why| tracing::error!(name, why, "a built-in scenario is broken"))
                .ok()
        })
        .collect()
}

/// A user's scenario file that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    pub error: String,
}

/// Every scenario: the built-ins, then the user's from `folder` (by name), with the files that
/// could not be read.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    pub scenarios: Vec<Scenario>,
    pub problems: Vec<Problem>,
}

impl Catalogue {
    /// The built-ins and the `.toml` files of `folder` (a missing folder holds none).
    pub fn load(folder: Option<&Path>) -> Self {
        let mut catalogue = Catalogue {
            scenarios: built_ins(),
            problems: Vec::new(),
        };
        let Some(folder) = folder else {
            return catalogue;
        };
        let entries = match std::fs::read_dir(folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return catalogue,
            Err(e) => {
                catalogue.problems.push(Problem {
                    file: folder.to_path_buf(),
                    error: format!("the folder could not be read: {e}"),
                });
                return catalogue;
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            match read_file(&file) {
                Ok(scenario) if catalogue.named(&scenario.name).is_some() => {
                    catalogue.problems.push(Problem {
                        error: format!(
                            "another scenario is already called `{}`; rename the file",
                            scenario.name
                        ),
                        file,
                    })
                }
                Ok(scenario) => catalogue.scenarios.push(scenario),
                Err(error) => catalogue.problems.push(Problem { file, error }),
            }
        }
        catalogue
    }

    /// The scenario called `name`.
    pub fn named(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    /// The scenario `name_or_file` names: one of the catalogue's by name, else a file by its path.
    pub fn find(&self, name_or_file: &str) -> Result<Scenario, String> {
        if let Some(found) = self.named(name_or_file) {
            return Ok(found.clone());
        }
        let path = Path::new(name_or_file);
        if name_or_file.ends_with(".toml") || path.components().count() > 1 {
            return read_file(path).map_err(|why| format!("{}: {why}", path.display()));
        }
        let known: Vec<&str> = self.scenarios.iter().map(|s| s.name.as_str()).collect();
        Err(format!(
            "there is no scenario called `{name_or_file}`; there are: {}",
            known.join(", ")
        ))
    }
}

/// Reads a scenario file; its name is the file's name without `.toml`.
pub fn read_file(path: &Path) -> Result<Scenario, String> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| "the file name is not usable as a scenario's name".to_string())?;
    let size = std::fs::metadata(path)
        .map_err(|e| format!("it could not be read: {e}"))?
        .len();
    if size > LARGEST_FILE {
        return Err(format!(
            "it is {size} bytes; a scenario file is at most {LARGEST_FILE}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("it could not be read: {e}"))?;
    parse(&name, &text, Source::File(path.to_path_buf()))
}

/// A scenario being played: how far it is, and what its steps have made so far.
#[derive(Debug, Clone)]
pub struct Play {
    pub scenario: Scenario,
    /// Waits really pass, instead of the sandbox clock moving on.
    pub real_time: bool,
    /// The index of the next step to play (`steps.len()` once played to its end).
    pub next: usize,
    /// What each step played so far did, in words.
    pub outcomes: Vec<String>,
    /// The transaction the last `create-transaction` made.
    pub transaction_id: Option<String>,
    /// The product it was made on.
    pub product_id: Option<String>,
    /// When the play started (the sandbox's clock): its notifications are the ones queued
    /// since.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The play stopped the listener (it is started again when the play ends).
    pub stopped_listener: bool,
    /// The listener's test mode before the play first changed it (put back when the play
    /// ends).
    pub test_mode_before: Option<crate::bridge::TestMode>,
    /// The notification the play is about: the one the last lender step sent to the console
    /// (what its picture draws, and what the proxy passes on).
    pub focus: Option<crate::bridge::PictureOf>,
}

impl Play {
    pub fn new(
        scenario: Scenario,
        real_time: bool,
        started_at: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        Self {
            scenario,
            real_time,
            next: 0,
            outcomes: Vec::new(),
            transaction_id: None,
            product_id: None,
            started_at,
            stopped_listener: false,
            test_mode_before: None,
            focus: None,
        }
    }

    /// The step to play next; `None` once played to its end.
    pub fn next_step(&self) -> Option<&Step> {
        self.scenario.steps.get(self.next)
    }

    pub fn finished(&self) -> bool {
        self.next >= self.scenario.steps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_parses() {
        assert_eq!(built_ins().len(), BUILT_IN.len());
        for scenario in built_ins() {
            assert!(!scenario.summary.is_empty(), "{}", scenario.name);
        }
    }

    #[test]
    fn a_step_reads_its_fields() {
        let scenario = parse(
            "x",
            r#"
title = "T"
[[steps]]
do = "receiver-fails"
attempts = 2
caption = "fails"
[[steps]]
do = "create-transaction"
product = "Acme Title Search"
caption = "go"
[[steps]]
do = "respond"
status = "inputRequired"
caption = "asks"
"#,
            Source::BuiltIn,
        )
        .expect("parses");
        assert_eq!(
            scenario.steps[0].action,
            Action::ReceiverFails {
                status: None,
                attempts: 2
            }
        );
        assert_eq!(
            scenario.steps[2].action,
            Action::Respond {
                status: ResponseStatus::InputRequired,
                note: None
            }
        );
    }

    fn error_of(steps: &str) -> String {
        parse("x", &format!("title = \"T\"\n{steps}"), Source::BuiltIn).expect_err("refused")
    }

    #[test]
    fn mistakes_are_named() {
        assert!(
            error_of("[[steps]]\ndo = \"receiver-fails\"\nattemps = 2\ncaption = \"c\"")
                .contains("step 1: unknown field `attemps`")
        );
        assert!(error_of("[[steps]]\ndo = \"fly\"\ncaption = \"c\"")
            .contains("step 1: unknown variant `fly`"));
        assert!(
            error_of("[[steps]]\ndo = \"wait\"\nseconds = 0\ncaption = \"c\"")
                .contains("step 1: `seconds` must be 1 to")
        );
        assert!(error_of("[[steps]]\ndo = \"wait\"\nseconds = 3")
            .contains("step 1: it has no `caption`"));
        assert!(error_of("[[steps]]\ncaption = \"c\"").contains("step 1: it has no `do`"));
        assert!(
            error_of("[[steps]]\ndo = \"respond\"\nstatus = \"completed\"\ncaption = \"c\"")
                .contains("needs a transaction")
        );
        assert!(error_of(
            "[[steps]]\ndo = \"receiver-fails\"\nstatus = 200\nattempts = 1\ncaption = \"c\""
        )
        .contains("not a failure"));
        assert!(error_of("").contains("no steps"));
        assert!(parse("x", "title = ", Source::BuiltIn).is_err());
        assert!(parse("x", "title = \"T\"\ncolour = 1", Source::BuiltIn)
            .expect_err("refused")
            .contains("unknown field `colour`"));
    }

    #[test]
    fn a_folder_adds_its_files_and_reports_the_broken_ones() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(
            dir.path().join("mine.toml"),
            "title = \"Mine\"\n[[steps]]\ndo = \"create-transaction\"\ncaption = \"c\"\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("broken.toml"), "title = \"B\"\n[[steps]]\n")
            .expect("write");
        std::fs::write(
            dir.path().join("happy-path.toml"),
            "title = \"Mine\"\n[[steps]]\ndo = \"stop-listener\"\ncaption = \"c\"\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("notes.txt"), "not a scenario").expect("write");
        let catalogue = Catalogue::load(Some(dir.path()));
        assert_eq!(catalogue.scenarios.len(), BUILT_IN.len() + 1);
        assert_eq!(
            catalogue.named("mine").map(|s| s.title.as_str()),
            Some("Mine")
        );
        assert_eq!(catalogue.problems.len(), 2, "{:?}", catalogue.problems);
        assert!(catalogue.problems[0].error.contains("step 1"));
        assert!(catalogue.problems[1]
            .error
            .contains("already called `happy-path`"));
        // The broken file is left as it was.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("broken.toml")).expect("read"),
            "title = \"B\"\n[[steps]]\n"
        );
        let by_path = catalogue
            .find(&dir.path().join("mine.toml").display().to_string())
            .expect("found by path");
        assert_eq!(by_path.name, "mine");
        assert!(catalogue
            .find("nope")
            .expect_err("none")
            .contains("happy-path"));
    }
}

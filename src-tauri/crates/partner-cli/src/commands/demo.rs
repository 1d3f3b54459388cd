//! `partner demo`: the Demo screen's scenarios without the window. `list` shows the built-in
//! ones and the user's (the app's data folder's `scenarios/`, with any file that does not
//! parse and why); `run NAME` plays one to its end, printing each step's caption and what it
//! did, and the life of the notification the scenario is about, as the picture draws it.
//!
//! `run` starts the app's own services headless (`partner_console_core`, over a throwaway data
//! folder and an in-memory keychain): the embedded sandbox with its demo data, the listener on
//! a free loopback port, the demo product subscribed to it. So a scenario plays here exactly
//! as it plays in the app, through the same code, and touches nothing of the user's: the
//! connection the environment names (`PARTNER_BASE_URL`, `PARTNER_CLIENT_ID`,
//! `PARTNER_CLIENT_SECRET`, often exported for the real service) or `--connection` names is
//! never opened (`startup::first_run_on_sandbox`), so no request goes to a configured service.

use super::render::{OutputFormat, StdoutLines};
use crate::error::{CliError, Result};
use clap::{Args as ClapArgs, Subcommand};
use partner_console_core::bridge::{
    NotificationPicture, PictureFormat, PictureOf, ScenarioPlayView, StepPhase, StoryStep,
};
use partner_console_core::scenario::{user_folder, Catalogue, Scenario};
use partner_console_core::services::{picture, scenarios, startup};
use partner_console_core::{Console, FolderDialogs, RecordingSink};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    what: Demo,
}

#[derive(Debug, Subcommand)]
enum Demo {
    /// The scenarios there are: built-in, and your own in the app's data folder's `scenarios/`.
    List {
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
    /// Play a scenario to its end on a sandbox of its own, printing each step.
    Run {
        /// A scenario's name (`partner demo list`), or the path of a scenario file.
        scenario: String,
        /// Let waits really pass (by default the sandbox clock moves on at once).
        #[arg(long)]
        real_time: bool,
        /// Pause this long after each step, to read its caption.
        #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
        pace: f64,
        /// Also write the picture of the notification the scenario is about here (`.svg`, or `.png` at twice the size).
        #[arg(long, value_name = "FILE")]
        picture: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        output: OutputFormat,
    },
}

pub async fn run(args: Args) -> Result<()> {
    match args.what {
        Demo::List { output } => list(output),
        Demo::Run {
            scenario,
            real_time,
            pace,
            picture,
            output,
        } => {
            if !(pace.is_finite() && (0.0..=600.0).contains(&pace)) {
                return Err(CliError::Usage(
                    "--pace is seconds between steps, 0 to 600".into(),
                ));
            }
            let format = picture.as_deref().map(picture_format).transpose()?;
            let scenario = catalogue()?.find(&scenario).map_err(CliError::Usage)?;
            play(scenario, real_time, pace, picture.zip(format), output).await
        }
    }
}

/// The built-ins and the user's scenarios.
fn catalogue() -> Result<Catalogue> {
    let data = partner_local::paths::data_dir()?;
    Ok(Catalogue::load(Some(&user_folder(&data))))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    scenarios: Vec<partner_console_core::bridge::ScenarioSummary>,
    problems: Vec<Problem>,
    folder: String,
}

#[derive(Serialize)]
struct Problem {
    file: String,
    error: String,
}

fn list(output: OutputFormat) -> Result<()> {
    let catalogue = catalogue()?;
    let folder = user_folder(&partner_local::paths::data_dir()?);
    let listed = Listed {
        scenarios: catalogue.scenarios.iter().map(scenarios::summary).collect(),
        problems: catalogue
            .problems
            .iter()
            .map(|p| Problem {
                file: p.file.display().to_string(),
                error: p.error.clone(),
            })
            .collect(),
        folder: folder.display().to_string(),
    };
    let mut out = std::io::stdout().lock();
    if output == OutputFormat::Json {
        serde_json::to_writer_pretty(&mut out, &listed).map_err(|e| CliError::Output(e.into()))?;
        return writeln!(out).map_err(CliError::Output);
    }
    let rows: Vec<Vec<String>> = listed
        .scenarios
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.steps.to_string(),
                s.title.clone(),
                s.source.clone(),
            ]
        })
        .collect();
    super::render::write_table(&mut out, &["name", "steps", "title", "from"], &rows)?;
    let mut err = std::io::stderr().lock();
    for problem in &listed.problems {
        let _ = writeln!(err, "not usable: {}: {}", problem.file, problem.error);
    }
    let _ = writeln!(
        err,
        "Your own scenarios go in {} (the format is in the README).",
        listed.folder
    );
    Ok(())
}

fn picture_format(path: &Path) -> Result<PictureFormat> {
    match path
        .extension()
        .and_then(|x| x.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(x) if x == "svg" => Ok(PictureFormat::Svg),
        Some(x) if x == "png" => Ok(PictureFormat::Png),
        _ => Err(CliError::Usage(format!(
            "--picture {}: name a .svg or a .png file",
            path.display()
        ))),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Played<'a> {
    play: &'a ScenarioPlayView,
    notification: Option<&'a partner_console_core::bridge::NotificationStory>,
}

async fn play(
    scenario: Scenario,
    real_time: bool,
    pace: f64,
    picture_file: Option<(PathBuf, PictureFormat)>,
    output: OutputFormat,
) -> Result<()> {
    let table = output != OutputFormat::Json;
    let headless = Headless::start().await?;
    let console = &headless.console;
    let mut out = StdoutLines::default();
    if table {
        out.line(&scenario.title);
        if !scenario.summary.is_empty() {
            out.line(&scenario.summary);
        }
        out.line(format_args!(
            "({})\n",
            if real_time {
                "waits really pass"
            } else {
                "the sandbox clock moves on at once: --real-time to wait"
            }
        ));
    }
    let total = scenario.steps.len();
    let mut view = scenarios::begin(console, scenario, real_time).await?;
    while !view.finished {
        let index = view.next as usize;
        view = match scenarios::next(console).await {
            Ok(view) => view,
            Err(error) => {
                scenarios::stop(console).await;
                headless.stop().await;
                return Err(error.into());
            }
        };
        if table {
            let step = &view.steps[index];
            out.line(format_args!("{}/{total}  {}", index + 1, step.caption));
            out.line(format_args!(
                "      → {}",
                step.outcome.as_deref().unwrap_or("")
            ));
        }
        if pace > 0.0 && !view.finished {
            tokio::time::sleep(Duration::from_secs_f64(pace)).await;
        }
    }
    // The notification the play is about, else the transaction's newest.
    let drawn_of = view.picture.clone().or_else(|| {
        view.transaction_id
            .clone()
            .map(|transaction_id| PictureOf::NewestOfTransaction { transaction_id })
    });
    let drawn = match drawn_of.clone() {
        Some(of) => picture::draw(console, of).await?,
        None => None,
    };
    if table {
        print_story(&mut out, drawn.as_ref());
    } else {
        let played = Played {
            play: &view,
            notification: drawn.as_ref().map(|d| &d.story),
        };
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &played).map_err(|e| CliError::Output(e.into()))?;
        writeln!(out).map_err(CliError::Output)?;
    }
    if let Some((file, format)) = picture_file {
        let of = drawn_of.ok_or_else(|| {
            CliError::Usage(
                "the scenario made no transaction, so there is no notification to draw".into(),
            )
        })?;
        let bytes = picture::file_bytes(console, of, format)
            .await?
            .ok_or_else(|| {
                CliError::Usage("no notification of the scenario arrived to draw".into())
            })?;
        std::fs::write(&file, bytes)
            .map_err(|e| CliError::Usage(format!("could not write {}: {e}", file.display())))?;
        eprintln!("The picture is in {}.", file.display());
    }
    headless.stop().await;
    out.finish()
}

/// The life of the notification the play is about, a line per step, as the picture draws it.
fn print_story(out: &mut StdoutLines, drawn: Option<&NotificationPicture>) {
    let Some(drawn) = drawn else {
        out.line("\nNo notification of the scenario's transaction reached the console.");
        return;
    };
    let story = &drawn.story;
    out.line(format_args!(
        "\nThe notification: {} {} (event {}), {}",
        story.resource_type, story.event_type, story.event_id, story.outcome
    ));
    for entry in &story.entries {
        let mut line = format!(
            "  {}  {:<22}",
            entry.at.format("%H:%M:%S"),
            step_words(entry.step)
        );
        if let Some(attempt) = entry.attempt {
            line.push_str(&format!("  attempt {attempt}"));
        }
        if let Some(verdict) = entry.verdict {
            line.push_str(&format!("  {}", verdict.as_str()));
            if let Some(key) = entry.matched_key {
                line.push_str(&format!(" ({} key)", key.as_str()));
            }
        }
        if let Some(status) = entry.status {
            line.push_str(&format!("  answered {status}"));
        }
        if let Some(error) = &entry.error {
            line.push_str(&format!("  {error}"));
        }
        out.line(line);
    }
    out.line("  (service steps on the sandbox's clock, the listener's on this machine's)");
}

/// A step of a notification's story, in words.
fn step_words(step: StoryStep) -> &'static str {
    match step {
        StoryStep::ServiceAttempt => "the service sends",
        StoryStep::ServiceGaveUp => "the service gives up",
        StoryStep::Captured => "the listener receives",
        StoryStep::ReplayCaptured => "a replay arrives",
        StoryStep::RecoveryCaptured => "a recovery arrives",
        StoryStep::Forwarded => "forwarded to your app",
        StoryStep::Replayed => "sent again",
    }
}

/// The app's services without a window, over a throwaway data folder.
struct Headless {
    console: Console,
    _dir: tempfile::TempDir,
}

impl Headless {
    async fn start() -> Result<Self> {
        let dir = tempfile::tempdir()
            .map_err(|e| CliError::Usage(format!("could not make a temporary folder: {e}")))?;
        let secrets = Arc::new(partner_client::MemoryStore::new());
        let state = partner_console_core::state::headless_state(dir.path().join("data"), secrets);
        let console = Console::new(
            state,
            RecordingSink::new(),
            Arc::new(FolderDialogs {
                folder: dir.path().to_path_buf(),
            }),
            tokio::runtime::Handle::current(),
        );
        // The embedded sandbox only: never the connection `PARTNER_BASE_URL` & co. name.
        startup::first_run_on_sandbox(console.clone()).await;
        let headless = Self { console, _dir: dir };
        headless.demo_subscribed().await?;
        Ok(headless)
    }

    /// Waits for the demo product's subscription to the listener, which start-up makes.
    async fn demo_subscribed(&self) -> Result<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let status = self.console.status();
            if let Some(error) = status.startup_error.clone() {
                return Err(error.into());
            }
            match status.demo_subscription.as_ref().map(|d| (d.phase, d.error.clone())) {
                Some((StepPhase::Done, _)) => return Ok(()),
                Some((StepPhase::Failed, Some(error))) => return Err(error.into()),
                _ if tokio::time::Instant::now() >= deadline => {
                    return Err(CliError::Usage(
                        "the embedded sandbox's demo product was not subscribed to the listener within 30 s".into(),
                    ))
                }
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    async fn stop(self) {
        self.console.shutdown.cancel();
        startup::stop(self.console).await;
    }
}

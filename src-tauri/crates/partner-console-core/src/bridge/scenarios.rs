//! The Demo screen's scenarios: which there are, and one being played step by step.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A scenario the Demo screen offers.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioSummary {
    pub name: String,
    pub title: String,
    pub summary: String,
    pub steps: u32,
    /// `built-in`, or the file it was read from.
    pub source: String,
}

/// A scenario file that could not be used, and why (the file is left as it is).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioProblem {
    pub file: String,
    pub error: String,
}

/// Every scenario, with the user's folder and the files in it that could not be read.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioList {
    pub scenarios: Vec<ScenarioSummary>,
    pub problems: Vec<ScenarioProblem>,
    /// Where the user's own scenario files go.
    pub folder: String,
}

/// Which scenario to play, and how.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioStartForm {
    pub name: String,
    /// Waits really pass (the sandbox clock otherwise moves on at once).
    pub real_time: bool,
}

/// One step of a scenario being played.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlayStepView {
    pub caption: String,
    /// What the step does, in a few words.
    pub does: String,
    /// What it did, once played.
    pub outcome: Option<String>,
}

/// A scenario being played.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioPlayView {
    pub name: String,
    pub title: String,
    pub summary: String,
    pub real_time: bool,
    pub steps: Vec<PlayStepView>,
    /// The index of the next step (`steps.length` once played to its end).
    pub next: u32,
    pub finished: bool,
    /// The scenario's transaction, once a step made it.
    pub transaction_id: Option<String>,
    /// The notification the play is about, once a lender step sent one: what the Demo's
    /// picture draws.
    pub picture: Option<super::PictureOf>,
    /// The sandbox's clock after the last step.
    pub sandbox_now: String,
}

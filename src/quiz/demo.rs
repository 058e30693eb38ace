//! Demos: the calls a question's explanation runs through the compiler to show its point
//! ("run the same calls under each mode").
//!
//! In: a [`Demo`] from `questions.json` — preset models, modes, call shapes (`x=8,64`) and
//! optional `mark_dynamic` specs (`x:0`) and recompile limit. Out: per run, every call's
//! event and every entry with its inputs and guards. Invariant: what a demo shows comes from
//! the guard cache; the tests assert that each demo shows what its explanation claims.

use super::scenario::{Scenario, inputs_text};
use super::{QuizError, Text};
use crate::cache::{CallEvent, DimSpec};
use crate::config::{DEFAULT_RECOMPILE_LIMIT, DynamicMode};
use crate::spec;
use serde::{Deserialize, Deserializer, Serialize};

/// The preset models demos may name, by id.
const MODELS: [(&str, &str); 6] = [
    ("simplenet", include_str!("../../models/simplenet.py")),
    ("conv1d", include_str!("../../models/conv1d.py")),
    ("add_one", include_str!("../../models/add_one.py")),
    ("bert_block", include_str!("../../models/bert_block.py")),
    ("yolo_stack", include_str!("../../models/yolo_stack.py")),
    ("branch", include_str!("models/branch.py")),
];

/// The source of a preset model: the `models/` presets by file stem, and `branch` (a model
/// with an `if x.shape[0] > 16:` branch).
pub fn model_source(id: &str) -> Option<&'static str> {
    MODELS
        .iter()
        .find(|(name, _)| *name == id)
        .map(|(_, source)| *source)
}

/// Calls that show a question's point, possibly under several modes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demo {
    /// What to look at.
    pub caption: Text,
    /// The runs, each with a fresh cache.
    pub runs: Vec<DemoRun>,
}

/// One `torch.compile` wrapper of one model and its calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoRun {
    /// A preset model id (see [`model_source`]).
    pub model: String,
    /// `dynamic=`: `auto` (None), `true` or `false`.
    #[serde(deserialize_with = "mode_from_text")]
    pub mode: DynamicMode,
    /// Input shapes per call, `x=8,64`.
    pub calls: Vec<String>,
    /// `mark_dynamic` specs (`x:0`, `x:0:2:512`) applied to every call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mark_dynamic: Vec<String>,
    /// The recompile limit, when not PyTorch's 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompile_limit: Option<usize>,
}

fn mode_from_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DynamicMode, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// What one run did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DemoOutcome {
    /// The model id.
    pub model: String,
    /// The mode.
    pub mode: DynamicMode,
    /// One event per call.
    pub events: Vec<CallEvent>,
    /// How many entries were compiled.
    pub compiles: usize,
    /// The entries in compile order.
    pub entries: Vec<EntrySummary>,
}

/// A compiled entry as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EntrySummary {
    /// Compile order, from 0 (PyTorch's `0/N`).
    pub id: usize,
    /// Its inputs, `x=[s0, 64]`.
    pub inputs: String,
    /// Its input dims, static or symbolic with their ranges.
    pub dims: Vec<(String, Vec<DimSpec>)>,
    /// Its guards as PyTorch prints them.
    pub guards: Vec<String>,
}

impl Demo {
    /// Runs every run.
    pub fn run(&self) -> Result<Vec<DemoOutcome>, QuizError> {
        self.runs.iter().map(DemoRun::run).collect()
    }
}

impl DemoRun {
    /// Runs the calls through a fresh cache.
    pub fn run(&self) -> Result<DemoOutcome, QuizError> {
        let fail = |message: String| QuizError::Demo {
            model: self.model.clone(),
            message,
        };
        let source =
            model_source(&self.model).ok_or_else(|| QuizError::UnknownModel(self.model.clone()))?;
        let names = crate::session::load(source, None)
            .map_err(|e| fail(e.to_string()))?
            .entry_point()
            .inputs
            .clone();
        let calls = self
            .calls
            .iter()
            .map(|c| spec::parse_shapes(c, &names))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let marks = self
            .mark_dynamic
            .iter()
            .map(|m| spec::parse_mark(m, &names))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let scenario = Scenario {
            source: source.to_string(),
            mode: self.mode,
            limit: self.recompile_limit.unwrap_or(DEFAULT_RECOMPILE_LIMIT),
            marks,
            calls,
        };
        let cache = scenario.run().map_err(|e| fail(e.to_string()))?;
        Ok(DemoOutcome {
            model: self.model.clone(),
            mode: self.mode,
            events: cache.events.clone(),
            compiles: cache.compiles(),
            entries: cache
                .entries()
                .into_iter()
                .map(|entry| EntrySummary {
                    id: entry.id,
                    inputs: inputs_text(entry),
                    dims: entry.inputs.clone(),
                    guards: entry.guards.source_lines(),
                })
                .collect(),
        })
    }
}

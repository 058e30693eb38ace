//! The settings a learner gives: `torch.compile(…, dynamic=…, …)`'s configuration, the
//! per-call `mark_dynamic` / `mark_static` marks, and the `TORCH_LOGS` artifacts a script prints.
//!
//! A leaf of the house (it imports nothing of the crate): the front end reads these from the
//! user's Python, the cache applies them, the CLI and the page parse them from text. In: text
//! (`FromStr`) or values. Out: plain settings. Invariant: every default is PyTorch 2.15's
//! (`dynamic=None`, `recompile_limit` 8, no logs).

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// `torch.compile(…, dynamic=…)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicMode {
    /// `dynamic=None`, the default: static first, automatic dynamic after a size change.
    Auto,
    /// `dynamic=True`: every input dim symbolic from the start (duck sizing).
    True,
    /// `dynamic=False`: never dynamic on its own (explicit `mark_dynamic` still wins).
    False,
}

impl fmt::Display for DynamicMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DynamicMode::Auto => "None",
            DynamicMode::True => "True",
            DynamicMode::False => "False",
        })
    }
}

impl FromStr for DynamicMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "auto" | "none" => Ok(DynamicMode::Auto),
            "true" => Ok(DynamicMode::True),
            "false" => Ok(DynamicMode::False),
            other => Err(format!(
                "unknown dynamic mode '{other}' (expected auto, true or false)"
            )),
        }
    }
}

/// PyTorch's default `torch._dynamo.config.recompile_limit`.
pub const DEFAULT_RECOMPILE_LIMIT: usize = 8;

/// One `torch.compile(...)` wrapper's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CompileConfig {
    /// The `dynamic=` argument.
    pub dynamic: DynamicMode,
    /// Entries allowed before misses run eagerly.
    pub recompile_limit: usize,
}

impl Default for CompileConfig {
    fn default() -> Self {
        CompileConfig {
            dynamic: DynamicMode::Auto,
            recompile_limit: DEFAULT_RECOMPILE_LIMIT,
        }
    }
}

/// `torch._dynamo.mark_dynamic(x, dim, min=, max=)` on a call's input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MarkDynamic {
    /// Input name.
    pub input: String,
    /// Dimension.
    pub dim: usize,
    /// `min=`.
    pub min: Option<i64>,
    /// `max=`.
    pub max: Option<i64>,
}

/// The marks carried by one call's inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CallMarks {
    /// `mark_dynamic` calls.
    pub dynamic: Vec<MarkDynamic>,
    /// `mark_static` calls: (input, dim).
    pub fixed: Vec<(String, usize)>,
}

/// Which of PyTorch's `TORCH_LOGS` artifacts a script prints (`--logs recompiles,guards`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Logs {
    /// `recompiles`: why each recompilation happened (every entry's failing guard).
    pub recompiles: bool,
    /// `guards`: each new entry's guards.
    pub guards: bool,
    /// `dynamic`: the symbolic-shape events of each compilation (`create_symbol`, `eval`).
    pub dynamic: bool,
    /// `graph_breaks`: where and why each compilation's graph ended before the return.
    pub graph_breaks: bool,
}

/// The artifacts `Logs` knows, as `TORCH_LOGS` names them.
const LOG_NAMES: [&str; 4] = ["recompiles", "guards", "dynamic", "graph_breaks"];

impl FromStr for Logs {
    type Err = String;

    fn from_str(text: &str) -> Result<Logs, String> {
        let mut logs = Logs::default();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name.trim_start_matches('+') {
                "recompiles" => logs.recompiles = true,
                "guards" => logs.guards = true,
                "dynamic" => logs.dynamic = true,
                "graph_breaks" => logs.graph_breaks = true,
                other => {
                    return Err(format!(
                        "unknown log '{other}' (Tailor prints {})",
                        LOG_NAMES.join(", ")
                    ));
                }
            }
        }
        Ok(logs)
    }
}

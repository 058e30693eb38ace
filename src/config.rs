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

/// `torch.compile(…, backend=…)`: which back end compiles Dynamo's graphs. Tailor's own
/// kernels run whichever is named; what the choice changes is what PyTorch's back end does
/// around Dynamo that a learner can see: the wrapper's name in a `BACKEND_MATCH` reason, and
/// whether the graph runs through AOTAutograd, whose runtime wrapper stamps the dynamic dims
/// of the tensors it returns and saves for backward (`_dynamo_propagated_dynamic_indices`),
/// which the next compile of such a tensor reads as a weak `mark_dynamic`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompilerBackend {
    /// `"inductor"`, the default: through AOTAutograd.
    #[default]
    Inductor,
    /// `"aot_eager"` (and `"aot_eager_decomp_partition"`): through AOTAutograd, then the
    /// graph runs as it is.
    AotEager,
    /// `"eager"`: Dynamo's graph runs as it is, without AOTAutograd.
    Eager,
    /// A callable (`CompileCounter`, a learner's own function): without AOTAutograd.
    Callable {
        /// Its `__name__` (else its `str`), as PyTorch names it.
        name: String,
    },
}

impl CompilerBackend {
    /// The back end a `backend="…"` string names, or `None` for one Tailor does not know.
    pub fn named(name: &str) -> Option<CompilerBackend> {
        Some(match name {
            "inductor" => CompilerBackend::Inductor,
            "aot_eager" | "aot_eager_decomp_partition" => CompilerBackend::AotEager,
            "eager" => CompilerBackend::Eager,
            _ => return None,
        })
    }

    /// Whether Dynamo's graphs run through AOTAutograd (and its runtime wrapper's stamps).
    pub fn runs_aot_autograd(&self) -> bool {
        matches!(self, CompilerBackend::Inductor | CompilerBackend::AotEager)
    }

    /// The wrapper object `torch.compile` makes of this back end, as PyTorch 2.15 prints it
    /// in a `BACKEND_MATCH` reason.
    pub fn wrapper_text(&self, dynamic: DynamicMode) -> String {
        let compiler = match self {
            CompilerBackend::Inductor => return "_TorchCompileInductorWrapper".into(),
            CompilerBackend::AotEager => "aot_eager",
            CompilerBackend::Eager => "eager",
            CompilerBackend::Callable { name } => name,
        };
        format!("_TorchCompileWrapper(compiler='{compiler}', dynamic={dynamic})")
    }
}

/// PyTorch's default `torch._dynamo.config.recompile_limit`.
pub const DEFAULT_RECOMPILE_LIMIT: usize = 8;

/// One `torch.compile(...)` wrapper's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompileConfig {
    /// The `dynamic=` argument.
    pub dynamic: DynamicMode,
    /// Entries allowed before misses run eagerly.
    pub recompile_limit: usize,
    /// The `backend=` argument.
    pub backend: CompilerBackend,
    /// The rest of what PyTorch compares when it asks whether two wrappers' backends are
    /// equal (`BACKEND_MATCH`): which callable, `mode=` and `options=`, as a number (a hash
    /// in a script; 0 for the command line and the page, which have none of them). Two
    /// wrappers whose `backend`, `backend_settings` and `dynamic` are equal share entries,
    /// as PyTorch's `_TorchCompileWrapper.__eq__` makes them.
    pub backend_settings: u64,
}

impl CompileConfig {
    /// Whether PyTorch would take an entry compiled under `self` for a call under `other`'s
    /// wrapper (the same back end object, as `__eq__` compares them).
    pub fn same_backend(&self, other: &CompileConfig) -> bool {
        self.backend == other.backend
            && self.backend_settings == other.backend_settings
            && self.dynamic == other.dynamic
    }
}

impl Default for CompileConfig {
    fn default() -> Self {
        CompileConfig {
            dynamic: DynamicMode::Auto,
            recompile_limit: DEFAULT_RECOMPILE_LIMIT,
            backend: CompilerBackend::default(),
            backend_settings: 0,
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
    /// Dims an earlier compiled call stamped dynamic on the tensor (AOTAutograd's
    /// `_dynamo_propagated_dynamic_indices`): (input, dim). A weak mark: the dim gets a
    /// symbol of its own even under `dynamic=False` or `mark_static`, but nothing is
    /// guarded on the stamp and a guard may still specialise the dim.
    pub propagated: Vec<(String, usize)>,
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

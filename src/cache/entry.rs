//! One compiled entry of a cache: its graph, `ShapeEnv`, guards and kernels, and how its
//! input dims look (a size, or a symbol with its range).
//!
//! In: a capture and its compilation (`capture.rs`). Out: `Entry`, `DimSpec`,
//! `ValueSpec`. Invariant: an entry never changes after it is made, except its guards'
//! check order, which learns from failures as Dynamo's does.

use crate::compile::Compiled;
use crate::config::{CompileConfig, CompilerBackend};
use crate::frontend::{GradMode, GraphBreak, Stamps};
use crate::graph::{Graph, Op, RequiresGrad, saved_inputs};
use crate::guard::GuardSet;
use crate::shape::ShapeEnv;
use crate::symbolic::{Expr, SymbolNames};
use serde::Serialize;

/// How an input dim looks in an entry: a size or a symbol with its range.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DimSpec {
    /// A static size.
    Static(i64),
    /// A symbolic size.
    Dynamic {
        /// The symbol or expression.
        sym: String,
        /// Lower bound.
        min: Option<i64>,
        /// Upper bound (`None` = unbounded).
        max: Option<i64>,
    },
}

impl DimSpec {
    /// This dim with its symbols shown with `names` (the entry's sizes are printed with
    /// Tailor's numbers when compiled).
    pub fn named(&self, names: &SymbolNames) -> DimSpec {
        match self {
            DimSpec::Static(v) => DimSpec::Static(*v),
            DimSpec::Dynamic { sym, min, max } => DimSpec::Dynamic {
                sym: names.rename(sym),
                min: *min,
                max: *max,
            },
        }
    }
}

/// How a Python-value argument looks in an entry: an int as a constant or a symbol, a bool,
/// a float as a constant or symbolic.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ValueSpec {
    /// An int.
    Int(DimSpec),
    /// A bool (always specialised).
    Bool(bool),
    /// A float: the constant, or `None` when it is symbolic.
    Float(Option<f64>),
}

/// A compiled entry: the captured graph, the guards that say when it may be reused, and
/// its kernels (`compile::compile`).
#[derive(Clone, Debug)]
pub struct Entry {
    /// Compile order, from 0 (PyTorch's `frame/compile` id `0/N`).
    pub id: usize,
    /// The wrapper that compiled it; other wrappers never reuse it.
    pub wrapper: usize,
    /// That wrapper's settings (its mode, back end and recompile limit).
    pub config: CompileConfig,
    /// The graph, with final shapes.
    pub graph: Graph,
    /// The symbolic reasoning that produced it.
    pub env: ShapeEnv,
    /// Its guards.
    pub guards: GuardSet,
    /// Tensor arguments' dims as the entry sees them.
    pub inputs: Vec<(String, Vec<DimSpec>)>,
    /// Int and bool arguments as the entry sees them.
    pub values: Vec<(String, ValueSpec)>,
    /// The graph lowered for the ranges its guards promise, and its WGSL.
    pub compiled: Compiled,
    /// The graph break its graph ends at (`None`: it reaches the return).
    pub graph_break: Option<GraphBreak>,
    /// Dynamo's frame id of its code (0: the compiled function; else a resume function).
    pub frame: usize,
    pub(super) marked: Vec<bool>,
    /// Tensor ops its trace called (some add no node: a pad by zero).
    pub(super) ops_called: usize,
    /// For a resume function's entry, the positions of the arguments its graph used (the
    /// only ones it guards, as Dynamo guards only what the trace read).
    pub(super) used: Option<Vec<usize>>,
}

impl Entry {
    /// Whether the entry was compiled for a `mark_dynamic`-ed input `i`.
    pub fn was_marked(&self, input: usize) -> bool {
        self.marked.get(input).copied().unwrap_or(false)
    }

    /// Whether its trace recorded no op: no tensor op called, no graph break, and no size
    /// read as a guard (Dynamo's `count_calls` is 0, a symbolic size read being a
    /// `sym_size` call). Dynamo skips such a frame for good.
    pub fn traced_nothing(&self) -> bool {
        self.ops_called == 0 && self.graph_break.is_none() && self.env.guards().is_empty()
    }

    /// The dims AOTAutograd's runtime wrapper stamps dynamic after a run of this entry, whose
    /// function's arguments are `names`: each returned tensor's symbolic dims, and, with
    /// gradients on (`grad`), the symbolic dims of each argument `backend` saves for
    /// backward. Nothing without AOTAutograd (`backend="eager"`, a callable).
    pub fn stamps(
        &self,
        names: &[String],
        backend: &CompilerBackend,
        grad: Option<&GradMode>,
    ) -> Stamps {
        if !backend.runs_aot_autograd() {
            return Stamps::default();
        }
        let graph = &self.graph;
        let outputs = graph
            .output
            .map(|out| {
                graph.nodes[out.index()]
                    .inputs
                    .iter()
                    .map(|id| {
                        let shape = &graph.nodes[id.index()].shape;
                        (0..shape.len())
                            .filter(|&dim| shape[dim].as_int().is_none())
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let Some(grad) = grad else {
            return Stamps {
                outputs,
                args: Vec::new(),
            };
        };
        let arg_requires: Vec<String> = names
            .iter()
            .zip(&grad.args)
            .filter(|(_, requires)| **requires)
            .map(|(name, _)| name.clone())
            .collect();
        let requires = RequiresGrad {
            params: &grad.params,
            args: &arg_requires,
        };
        let args = saved_inputs(graph, &requires, *backend == CompilerBackend::Inductor)
            .into_iter()
            .filter_map(|id| match &graph.nodes[id.index()].op {
                Op::Input { name } => {
                    let position = names.iter().position(|n| n == name)?;
                    let (_, dims) = self.inputs.iter().find(|(n, _)| n == name)?;
                    let dynamic: Vec<usize> = dims
                        .iter()
                        .enumerate()
                        .filter(|(_, spec)| matches!(spec, DimSpec::Dynamic { .. }))
                        .map(|(dim, _)| dim)
                        .collect();
                    (!dynamic.is_empty()).then_some((position, dynamic))
                }
                _ => None,
            })
            .collect();
        Stamps { outputs, args }
    }
}

pub(super) fn dim_spec(env: &ShapeEnv, dim: &Expr) -> DimSpec {
    let dim = env.replace(dim);
    match dim.as_int() {
        Some(v) => DimSpec::Static(v),
        None => {
            let range = dim.bounds(&|s| env.range(s));
            DimSpec::Dynamic {
                sym: dim.to_string(),
                min: range.lo,
                max: range.hi,
            }
        }
    }
}

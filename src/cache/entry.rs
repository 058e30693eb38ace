//! One compiled entry of a cache: its graph, `ShapeEnv`, guards and kernels, and how its
//! input dims look (a size, or a symbol with its range).
//!
//! In: a capture and its compilation (`capture.rs`). Out: `Entry`, `DimSpec`,
//! `ValueSpec`. Invariant: an entry never changes after it is made, except its guards'
//! check order, which learns from failures as Dynamo's does.

use crate::compile::Compiled;
use crate::config::DynamicMode;
use crate::frontend::GraphBreak;
use crate::graph::Graph;
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
    /// That wrapper's mode.
    pub mode: DynamicMode,
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
    /// For a resume function's entry, the positions of the arguments its graph used (the
    /// only ones it guards, as Dynamo guards only what the trace read).
    pub(super) used: Option<Vec<usize>>,
}

impl Entry {
    /// Whether the entry was compiled for a `mark_dynamic`-ed input `i`.
    pub fn was_marked(&self, input: usize) -> bool {
        self.marked.get(input).copied().unwrap_or(false)
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

//! A scenario: one model, one `torch.compile` wrapper and a list of calls, run through the
//! real guard cache. Demos and every exercise kind are scenarios.
//!
//! In: Python source, the mode, the recompile limit, `mark_dynamic` marks applied to every
//! call, and the calls' sizes. Out: the `CodeCache` after the calls (its events and entries),
//! plus the Python text that shows the learner how the model is compiled and called.
//! Invariant: nothing here decides an outcome; every hit, recompile, guard and shape is
//! read from the cache.

use super::puzzle::Replay;
use crate::cache::{CallEvent, CodeCache, DimSpec, Entry};
use crate::config::{CallMarks, CompileConfig, DEFAULT_RECOMPILE_LIMIT, DynamicMode, MarkDynamic};
use crate::error::Error;
use crate::guard::{CallShapes, Failure};
/// A model, a wrapper and its calls.
#[derive(Clone, Debug)]
pub(crate) struct Scenario {
    /// The model's Python source.
    pub source: String,
    /// `dynamic=`.
    pub mode: DynamicMode,
    /// `torch._dynamo.config.recompile_limit`.
    pub limit: usize,
    /// `torch._dynamo.mark_dynamic` calls made on every call's inputs.
    pub marks: Vec<MarkDynamic>,
    /// The calls, in order.
    pub calls: Vec<CallShapes>,
}

impl Scenario {
    /// A scenario with the default limit and no marks.
    pub(crate) fn new(source: String, mode: DynamicMode, calls: Vec<CallShapes>) -> Scenario {
        Scenario {
            source,
            mode,
            limit: DEFAULT_RECOMPILE_LIMIT,
            marks: Vec::new(),
            calls,
        }
    }

    /// Loads the model and makes every call.
    pub(crate) fn run(&self) -> Result<CodeCache, Error> {
        let mut cache = crate::session::load(&self.source, None)?;
        for call in &self.calls {
            self.call(&mut cache, call);
        }
        Ok(cache)
    }

    /// Makes one more call through this scenario's wrapper.
    pub(crate) fn call(&self, cache: &mut CodeCache, call: &CallShapes) -> CallEvent {
        let config = CompileConfig {
            dynamic: self.mode,
            recompile_limit: self.limit,
            ..CompileConfig::default()
        };
        let marks = CallMarks {
            dynamic: self.marks.clone(),
            ..CallMarks::default()
        };
        cache.call(0, &config, call, &marks, &|| 0.0).clone()
    }

    /// Per input of `call`, whether it carries a `mark_dynamic`.
    pub(crate) fn marked(&self, call: &CallShapes) -> Vec<bool> {
        call.args
            .iter()
            .map(|(name, _)| self.marks.iter().any(|m| &m.input == name))
            .collect()
    }

    /// Whether `input`'s dim `dim` carries a `mark_dynamic`.
    fn is_marked(&self, input: &str, dim: usize) -> bool {
        self.marks.iter().any(|m| m.input == input && m.dim == dim)
    }

    /// The same scenario as data, for a page that replays it.
    pub(crate) fn replay(&self) -> Replay {
        Replay {
            mode: self.mode,
            recompile_limit: self.limit,
            mark_dynamic: self.marks.clone(),
            calls: self.calls.iter().map(CallShapes::to_spec).collect(),
        }
    }

    /// The Python that compiles and calls the model, as the learner would write it; the
    /// model's class (or function) is `entry`.
    pub(crate) fn python(&self, entry: &str, is_module: bool) -> String {
        let mut lines = Vec::new();
        if self.limit != DEFAULT_RECOMPILE_LIMIT {
            lines.push(format!(
                "torch._dynamo.config.recompile_limit = {}",
                self.limit
            ));
        }
        let target = if is_module {
            format!("{entry}()")
        } else {
            entry.to_string()
        };
        lines.push(format!(
            "model = torch.compile({target}, dynamic={})",
            self.mode
        ));
        for (number, call) in self.calls.iter().enumerate() {
            let mut arguments = Vec::new();
            for (name, dims) in call.tensors() {
                let sizes: Vec<String> = dims.iter().map(i64::to_string).collect();
                lines.push(format!("{name} = torch.randn({})", sizes.join(", ")));
                for dim in 0..dims.len() {
                    if self.is_marked(name, dim) {
                        lines.push(format!("torch._dynamo.mark_dynamic({name}, {dim})"));
                    }
                }
                arguments.push(name.to_string());
            }
            lines.push(format!(
                "model({})  # call {}",
                arguments.join(", "),
                number + 1
            ));
        }
        lines.join("\n")
    }
}

/// An entry's inputs as the learner reads them: `x=[s0, 64]`.
pub(crate) fn inputs_text(entry: &Entry) -> String {
    entry
        .inputs
        .iter()
        .map(|(name, dims)| {
            let dims: Vec<String> = dims.iter().map(dim_text).collect();
            format!("{name}=[{}]", dims.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A static size or the symbol.
pub(crate) fn dim_text(dim: &DimSpec) -> String {
    match dim {
        DimSpec::Static(value) => value.to_string(),
        DimSpec::Dynamic { sym, .. } => sym.clone(),
    }
}

/// The input dims that are symbolic in `entry`, as `(input, dim)`.
pub(crate) fn dynamic_dims(entry: &Entry) -> Vec<(String, usize)> {
    entry
        .inputs
        .iter()
        .flat_map(|(name, dims)| {
            dims.iter()
                .enumerate()
                .filter(|(_, d)| matches!(d, DimSpec::Dynamic { .. }))
                .map(move |(dim, _)| (name.clone(), dim))
        })
        .collect()
}

/// One call with one input.
pub(crate) fn call1(name: &str, dims: &[i64]) -> CallShapes {
    CallShapes::new(vec![(name.to_string(), dims.to_vec())])
}

/// `mark_dynamic(input, dim)` without bounds.
pub(crate) fn mark(input: &str, dim: usize) -> MarkDynamic {
    MarkDynamic {
        input: input.to_string(),
        dim,
        min: None,
        max: None,
    }
}

/// The first guard of `entry` that `call` fails, as an index into `source_lines()` (value
/// guards first, then tensor guards, the aliasing guard, attribute guards, then the printed
/// shape guards); `None` when every guard passes.
pub(crate) fn failing_line(entry: &Entry, call: &CallShapes, marked: &[bool]) -> Option<usize> {
    let guards = &entry.guards;
    match guards.check(call, marked) {
        Ok(()) => None,
        Err(Failure::Value(index)) => Some(index),
        Err(
            Failure::DType { input, .. }
            | Failure::Rank { input, .. }
            | Failure::Size { input, .. },
        ) => Some(guards.values.len() + input),
        Err(Failure::Type { name, .. }) => guards
            .values
            .iter()
            .position(|v| v.input == name)
            .or_else(|| {
                let tensor = guards.tensors.iter().position(|t| t.input == name)?;
                Some(guards.values.len() + tensor)
            }),
        Err(Failure::Arity { .. }) => Some(0),
        Err(Failure::Attribute(index)) => Some(guards.first_attribute_line() + index),
        Err(Failure::Shape(index)) => {
            let failed = &guards.shape[index];
            let position = guards
                .printed()
                .iter()
                .position(|g| *g == failed)
                .expect("every checked shape guard is printed");
            Some(guards.first_attribute_line() + guards.attributes.len() + position)
        }
    }
}

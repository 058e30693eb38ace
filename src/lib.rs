//! Tailor: a symbolic-shape compiler for a PyTorch subset, built to teach how
//! `torch.compile` handles dynamic shapes.
//!
//! The modules appear in pipeline order (see ARCHITECTURE.md): `frontend` parses Python
//! source and captures `forward` into a `graph` whose sizes are `symbolic` expressions;
//! `shape` holds the ShapeEnv and one rule per op; `guard` turns the facts learnt into
//! guards with a fast check; `cache` decides per call whether to hit, recompile or run
//! eagerly; `compile` lowers an entry to kernels and emits their WGSL; `runtime` runs
//! them (`runtime::executor` is the one way in); `trace` records every step for display.
#![warn(clippy::print_stdout)]

pub mod bench;
pub mod cache;
pub mod codegen;
pub mod compile;
pub mod error;
pub mod frontend;
pub mod graph;
pub mod guard;
pub mod lower;
pub mod message;
pub mod quiz;
pub mod runtime;
pub mod script;
pub mod shape;
pub mod spec;
pub mod symbolic;
pub mod trace;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod weights;

pub use cache::{Action, CallEvent, CallMarks, CodeCache, CompileConfig, DynamicMode, MarkDynamic};
pub use error::Error;
pub use guard::CallShapes;
pub use symbolic::SymbolNaming;
pub use trace::Trace;

/// The material's `SimpleNet` (its "Python 演示" section), as a learner would paste it.
pub const SIMPLENET_SOURCE: &str = include_str!("../models/simplenet.py");

/// What to compile and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Class or function to compile (default: the last `nn.Module` subclass).
    pub entry: Option<String>,
    /// The wrapper's settings.
    pub config: CompileConfig,
    /// Marks applied to the inputs of every call.
    pub marks: CallMarks,
    /// The names symbols are shown with in the trace.
    pub symbol_names: SymbolNaming,
}

/// Parses `source` and returns an empty cache for its entry.
pub fn load(source: &str, entry: Option<&str>) -> Result<CodeCache, Error> {
    load_in(frontend::Vm::fresh(), source, entry)
}

/// [`load`] in `vm` (a fresh one, or one warmed ahead of need, `frontend::Vm::warm`).
pub fn load_in(vm: frontend::Vm, source: &str, entry: Option<&str>) -> Result<CodeCache, Error> {
    let program = frontend::parse_in(vm, source)?;
    let point = program.entry(entry)?;
    Ok(CodeCache::new(program, point))
}

/// Compiles `source` once for `input_shapes` (`x=8,64`) and returns the trace.
pub fn explain(source: &str, input_shapes: &str, options: &Options) -> Result<Trace, Error> {
    let mut cache = load(source, options.entry.as_deref())?;
    let call = spec::parse_shapes(input_shapes, &cache.entry_point().inputs)?;
    spec::check_marks(&call, &options.marks.dynamic, &options.marks.fixed)?;
    let event = cache
        .call(0, &options.config, &call, &options.marks, &|| 0.0)
        .clone();
    match (event.action, event.entry) {
        (Action::Compile, Some(id)) => {
            let entry = cache.entry(id).expect("the entry was just compiled");
            Ok(Trace::of_entry(&cache, entry, options.symbol_names))
        }
        _ => Err(Error::Call {
            message: event
                .error
                .unwrap_or_else(|| "the call did not compile".into()),
            span: event.error_span,
        }),
    }
}

/// Compiles `source` for the inputs described by `input_shapes` (`x=8,64;y=3`) under the
/// default mode and returns the trace as text, or the error message.
pub fn explain_text(source: &str, input_shapes: &str) -> Result<String, String> {
    explain(source, input_shapes, &Options::default())
        .map(|t| t.to_string())
        .map_err(|e| e.to_string())
}

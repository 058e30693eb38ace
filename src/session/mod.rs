//! The session floor: what a caller (the page, the CLI, script mode, the benchmark) does
//! with a model file: load it into a guard cache, compile it once and explain the steps
//! (`explain`), and run its calls (`executor`).
//!
//! In: a model's Python text and the learner's settings (`Options`). Out: a `CodeCache`
//! ready for calls, or one compilation's `Trace`. Invariant: this floor imports every floor
//! below it and none imports it; everything above (`script`, `quiz`, `bench`, `web`, the CLI)
//! reaches the compiler through here or through the floors' own public types.

mod call;
pub mod executor;
mod explain;

pub use call::Session;
pub use explain::{explain, explain_text, trace_of};

use crate::cache::CodeCache;
use crate::config::{CallMarks, CompileConfig};
use crate::error::Error;
use crate::frontend;
use crate::symbolic::SymbolNaming;

/// The material's `SimpleNet` (its "Python 演示" section), as a learner would paste it.
pub const SIMPLENET_SOURCE: &str = include_str!("../../models/simplenet.py");

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

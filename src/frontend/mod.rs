//! Front end: a PyTorch model file to a captured `Graph`, on a real Python VM (RustPython).
//!
//! `parse` runs the file's module level in a fresh interpreter whose `torch` is the
//! Python package of `py/` (frozen into the binary: nothing is read from disk), skipping
//! driver code. `Program::entry` constructs the entry (the last `nn.Module` subclass by
//! default, with its default arguments, in eval mode) and names its parameters after
//! PyTorch's dotted paths. `capture` calls `forward` on tensor proxies of the native module
//! `_tailor` (`native.rs`), whose operations append graph nodes through `ops` and whose
//! sizes decide branches through `ShapeEnv::evaluate`, recording the guard where PyTorch's
//! `ShapeEnv.evaluate_expr` would; the module attributes it reads are guarded too
//! (`attributes.rs`).
//! Invariant: capture never looks at a concrete size except through the `ShapeEnv`, so every
//! size-dependent path it takes is guarded; a Python exception in the user's code is a
//! `FrontendError` with its line:col, never a panic.
//!
//! The files, from the ground up (each imports only files listed before it; this file only
//! names them): `errors`, `bounds`, `math`, `nesting` (how deep a text nests, before any
//! parser sees it); `source`, `ops`; `program` (a loaded file, its
//! entry, the `Vm` handle); `host` (the script host contract); `breaks`; `capture` (the
//! state of one capture); `objects` (the session state and the proxies Python holds);
//! `raised` (Python exceptions to `FrontendError`), `call/` (one call into `_tailor`),
//! `state`; `table`, `attributes`, `forward` (a run of `forward` under a plan), `budget`;
//! `load` (module level, entry, `capture`), `surface`; `script`; `native` (the `_tailor`
//! module); `vm` (interpreters with that module in them).

mod attributes;
mod bounds;
mod breaks;
mod budget;
mod call;
mod capture;
mod errors;
mod forward;
mod host;
mod load;
mod math;
mod native;
mod nesting;
mod objects;
mod ops;
mod program;
mod raised;
mod script;
mod source;
mod state;
mod surface;
mod table;
mod vm;

pub use attributes::read as read_attributes;
pub use breaks::{BreakPoint, BreakReason, GraphBreak, PROBE_MAX_ELEMENTS, Probed};
pub use capture::{ResumeTracer, Segment};
pub use errors::FrontendError;
pub use host::{
    CallArg, DimMark, GradMode, HostCall, Output, SCRIPT_TIME_LIMIT_MS, ScriptHost, ScriptOutcome,
    Stamps, Stream,
};
pub use load::{capture, capture_resume, parse_in, probe};
pub use program::{CodeKey, EntryPoint, Program, Skipped, Vm};
pub use script::run_script;
pub use source::MAX_SOURCE_BYTES;
pub use state::StateTensor;
pub use surface::{Surface, surface_in};
pub use table::{Lowering, OpEntry, OpRow, SchemaError, check_schemas, entries as op_entries};
pub use vm::parse;

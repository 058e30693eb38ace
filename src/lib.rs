//! Tailor: a symbolic-shape compiler for a PyTorch subset, built to teach how
//! `torch.compile` handles dynamic shapes.
//!
//! The modules are floors, listed here from the bottom up (ARCHITECTURE.md draws them; the
//! tidy test `imports_only_point_down` holds the table): `symbolic` expressions, the `config`
//! a learner gives, the `trace` and `message` records; the `graph` IR and the `shape` rules
//! over it; `guard`s; `lower`ing to kernels, `codegen` of their WGSL and the `compile`
//! pipeline; the `runtime`s that run kernels; the `frontend` that runs the user's Python and
//! captures `forward`; `weights`, `spec`, `torch_trace` (PyTorch's own trace, read) and the
//! crate's `error`; the guard `cache`; the `session` that loads, explains and runs calls; and
//! above it `script` mode, the `quiz`, the `compare`ison of a script's run with PyTorch's
//! trace, the `bench`mark and the page's `web` API. A floor imports only floors below it.
#![warn(clippy::print_stdout)]

// Floor 0, leaves: expressions over sizes, the learner's settings, the records the page shows.
pub mod config;
pub mod message;
pub mod symbolic;
pub mod trace;

// Floor 1, the IR.
pub mod graph;

// Floor 2, the ShapeEnv and the shape rules.
pub mod shape;

// Floor 3, guards; lowering to kernels.
pub mod guard;
pub mod lower;

// Floor 4, WGSL.
pub mod codegen;

// Floor 5, the compile pipeline; the CPU and GPU runtimes.
pub mod compile;
pub mod runtime;

// Floor 6, the user's Python, captured.
pub mod frontend;

// Floor 7, values, input specifications and PyTorch's traces from outside.
pub mod spec;
pub mod torch_trace;
pub mod weights;

// Floor 8, every floor's errors.
pub mod error;

// Floor 9, torch.compile's guard cache.
pub mod cache;

// Floor 10, load, explain and run calls.
pub mod session;

// Floor 11, script mode; the quiz.
pub mod quiz;
pub mod script;

// Floor 12, a PyTorch trace beside a script's run.
pub mod compare;

// Floor 13, the benchmark.
pub mod bench;

// Floor 14, the page's JS API.
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use cache::{Action, CallEvent, CodeCache};
pub use config::{CallMarks, CompileConfig, DynamicMode, MarkDynamic};
pub use error::Error;
pub use guard::CallShapes;
pub use session::{Options, SIMPLENET_SOURCE, explain, explain_text, load, load_in};
pub use symbolic::SymbolNaming;
pub use trace::Trace;

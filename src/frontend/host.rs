//! The contract between a script and its host: what a script's `torch.compile` and
//! compiled calls hand to the guard cache and executor above the front end
//! (`crate::script`), and what comes back.
//!
//! In: nothing of the front end's own machinery; these are the plain types both sides name
//! (a call's arguments, its marks, the script's output). Out: the [`ScriptHost`] trait and
//! its values. Invariant: a leaf of the front end: it imports no other front-end file, so
//! the session state (`objects.rs`) and the running script (`script.rs`) can both use it.

use super::errors::FrontendError;
use super::program::{CodeKey, EntryPoint, Program};
use crate::config::{CallMarks, CompileConfig};
use crate::graph::{DType, Returned, Span, Tensor};
/// How long a script may run, in ms of wall time (its compiled calls included).
pub const SCRIPT_TIME_LIMIT_MS: f64 = 30_000.0;

/// A `torch._dynamo.mark_dynamic` / `mark_static` carried by one input tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimMark {
    /// `mark_dynamic(x, dim, min=, max=)`.
    Dynamic {
        /// The dim.
        dim: usize,
        /// `min=`.
        min: Option<i64>,
        /// `max=`.
        max: Option<i64>,
    },
    /// `mark_static(x, dim)`.
    Static {
        /// The dim.
        dim: usize,
    },
    /// A dim a compiled call stamped dynamic on the tensor after running it through
    /// AOTAutograd (`_dynamo_propagated_dynamic_indices`): weak and unguarded.
    Propagated {
        /// The dim.
        dim: usize,
    },
}

/// What requires grad when a compiled call runs with gradients enabled (`None` for a call
/// under `torch.no_grad()`).
pub struct GradMode {
    /// The module's parameters whose `requires_grad` is set, by dotted path.
    pub params: Vec<String>,
    /// Per argument, whether it is a tensor whose `requires_grad` is set.
    pub args: Vec<bool>,
}

/// The dims AOTAutograd's runtime wrapper stamps dynamic after a call: on each returned
/// tensor, and on the arguments the graph saved for backward.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// Per returned tensor, its dynamic dims.
    pub outputs: Vec<Vec<usize>>,
    /// (argument position, its dynamic dims) for each argument saved for backward.
    pub args: Vec<(usize, Vec<usize>)>,
}

/// One call of a compiled wrapper, as the host ran it.
pub struct HostCall {
    /// The returned tensors.
    pub outputs: Vec<Tensor>,
    /// Their dtypes (float32 where the call ran without an entry's graph).
    pub dtypes: Vec<DType>,
    /// How `forward`'s return value is made of them.
    pub returned: Returned,
    /// What the call wrote, in order: `TORCH_LOGS`-style lines and warnings, and what
    /// Python printed between the graphs of a call through graph breaks.
    pub log: Vec<Output>,
    /// The dims the back end stamps dynamic on the returned and saved tensors.
    pub stamps: Stamps,
}

/// What a script's `torch.compile` and compiled calls go to.
pub trait ScriptHost {
    /// `torch.compile(target, dynamic=…)`: a new wrapper of the code `key` (whose entry and
    /// program are given in case this is the code's first wrapper); returns its id.
    fn compile(
        &mut self,
        key: CodeKey,
        program: Program,
        entry: EntryPoint,
        config: CompileConfig,
    ) -> usize;

    /// The input names of wrapper `wrapper`'s function.
    fn inputs(&self, wrapper: usize) -> Vec<String>;

    /// `torch._logging.set_logs(recompiles=, guards=, dynamic=, graph_breaks=)`.
    fn set_logs(&mut self, logs: crate::config::Logs);

    /// `torch._dynamo.reset()`: every cache forgets its entries and automatic-dynamic state.
    fn reset(&mut self);

    /// Calls wrapper `wrapper` with `args` (one per name of `inputs()`) carrying `marks`,
    /// with gradients enabled as `grad` says. `span` is the call's place in the script.
    fn call(
        &mut self,
        wrapper: usize,
        args: Vec<CallArg>,
        marks: CallMarks,
        grad: Option<GradMode>,
        span: Span,
    ) -> Result<HostCall, FrontendError>;
}

/// One argument of a compiled call in a script: a tensor's values, or a Python int or bool
/// (which the guards see as values, `L['n'] == 2`).
#[derive(Clone, Debug, PartialEq)]
pub enum CallArg {
    /// A tensor.
    Tensor(Tensor, DType),
    /// An int.
    Int(i64),
    /// A bool.
    Bool(bool),
    /// A float.
    Float(f64),
}

/// Where a piece of a script's output went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// `print` and `sys.stdout`.
    Stdout,
    /// `sys.stderr`.
    Stderr,
    /// `TORCH_LOGS`-style lines and PyTorch's warnings (stderr in PyTorch).
    Log,
}

/// A piece of a script's output, in the order it was written.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Output {
    /// Where it went.
    pub stream: Stream,
    /// The text, newlines included.
    pub text: String,
}

/// A finished script.
#[derive(Debug)]
pub struct ScriptOutcome {
    /// Everything written, in order.
    pub output: Vec<Output>,
    /// The error that stopped it.
    pub error: Option<FrontendError>,
}

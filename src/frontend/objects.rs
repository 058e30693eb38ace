//! The front end's objects inside the VM: the session state the native module `_tailor`
//! keeps (the user's file, the capture in progress, a script's host and output) and the
//! proxies Python holds (a tensor, a symbolic size, an undecided comparison of sizes).
//!
//! In: what `native.rs` and `call/` put there. Out: the state every front-end file reads.
//! Invariant: plain data and its accessors: nothing here runs Python or builds the graph,
//! so every file that does (`call/`, `script.rs`, `native.rs`) stands above this one.

use super::capture::{Capture, ForwardRun, Resume};
use super::errors::FrontendError;
use super::host::{DimMark, Output, ScriptHost, Stream};
use super::ops::TensorRef;
use super::source::UserSource;
use crate::graph::{Graph, Span};
use crate::shape::ShapeEnv;
use crate::symbolic::{Expr, Rel};
use rustpython_vm::builtins::PyTypeRef;
use rustpython_vm::{Interpreter, PyObjectRef, PyPayload, pyclass};
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

/// The Python classes the `torch` package registers: results are made of these.
#[derive(Debug, Clone)]
pub struct Classes {
    pub tensor: PyTypeRef,
    pub symint: PyTypeRef,
    pub symbool: PyTypeRef,
    pub symfloat: PyTypeRef,
    pub error: PyTypeRef,
}

/// The front end's state inside the VM: the registered classes, the user's file, the
/// capture in progress, and the errors raised into Python.
#[pyclass(module = "_tailor", name = "Session")]
#[derive(PyPayload, Default)]
pub struct Session {
    pub classes: RefCell<Option<Classes>>,
    pub source: RefCell<Option<Rc<UserSource>>>,
    pub capture: RefCell<Option<Capture>>,
    /// The run of forward in progress (graph breaks, `breaks.rs`).
    pub forward: RefCell<Option<ForwardRun>>,
    pub errors: RefCell<Vec<FrontendError>>,
    /// The names bound by module-level assignments that did not run, each with where and
    /// why: a later `NameError` says so.
    pub skipped_names: RefCell<Vec<(String, Span, String)>>,
    next_const: Cell<usize>,
    pub captures: Cell<u64>,
    /// Lines of the user's file executed in this run (see `trace`).
    pub steps: Cell<u64>,
    /// This session's bound `trace`, while a run is traced.
    pub tracer: RefCell<Option<PyObjectRef>>,
    /// Script mode: where `torch.compile`d calls go.
    pub host: RefCell<Option<Box<dyn ScriptHost>>>,
    /// Script mode: the running interpreter, for the programs of compiled functions.
    pub interpreter: RefCell<Weak<Interpreter>>,
    /// Script mode: what the script wrote and the host logged, in order.
    pub output: RefCell<Vec<Output>>,
    /// Script mode: the clock (ms) and the time the run must end by.
    pub clock: RefCell<Option<Rc<dyn Fn() -> f64>>>,
    pub deadline: Cell<Option<f64>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("captures", &self.captures)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Appends to the script's output, merging with the last piece of the same stream.
    pub fn write(&self, stream: Stream, text: &str) {
        let mut output = self.output.borrow_mut();
        match output.last_mut() {
            Some(last) if last.stream == stream => last.text.push_str(text),
            _ => output.push(Output {
                stream,
                text: text.to_string(),
            }),
        }
    }

    /// Whether a script's wall-time limit has passed.
    pub fn past_deadline(&self) -> bool {
        match (self.deadline.get(), &*self.clock.borrow()) {
            (Some(deadline), Some(clock)) => clock() > deadline,
            _ => false,
        }
    }

    /// A new constant's id: each constant gets one graph node per capture, found by it.
    pub fn new_const_id(&self) -> usize {
        let id = self.next_const.get();
        self.next_const.set(id + 1);
        id
    }

    /// Starts capturing `graph` in `env` (at forward's start, or after a break): the next
    /// capture number, so that proxies of another capture are refused.
    pub fn start_capture(&self, graph: Graph, env: ShapeEnv, resume: Option<Resume>) {
        let number = self.captures.get() + 1;
        self.captures.set(number);
        *self.capture.borrow_mut() = Some(Capture::new(graph, env, number, resume));
    }
}

/// A tensor: a node of the capture numbered `capture`, or a constant (capture 0).
#[pyclass(module = "_tailor", name = "TensorBase")]
#[derive(Debug, PyPayload)]
pub struct TensorBase {
    /// What the tensor is now: an in-place op rebinds it (`_tailor.rebind`).
    held: RefCell<TensorRef>,
    /// The capture its node belongs to.
    capture: Cell<u64>,
    /// Whether a view op made it inside `forward` (PyTorch's view shares its base's
    /// memory, so an in-place write would reach the base too).
    view: Cell<bool>,
    /// `requires_grad` where the model set it (`nn.Parameter(t, requires_grad=False)`,
    /// `t.requires_grad_()`); unset, a parameter requires it and anything else does not.
    requires_grad: Cell<Option<bool>>,
    /// `torch._dynamo.mark_dynamic` / `mark_static` on this tensor (script mode).
    pub marks: RefCell<Vec<DimMark>>,
}

#[pyclass(flags(BASETYPE))]
impl TensorBase {}

impl TensorBase {
    /// A proxy of `tensor`, a node of the capture numbered `capture` (0 for others).
    pub fn new(tensor: TensorRef, capture: u64) -> TensorBase {
        TensorBase {
            held: RefCell::new(tensor),
            capture: Cell::new(capture),
            view: Cell::new(false),
            requires_grad: Cell::new(None),
            marks: RefCell::default(),
        }
    }

    /// A proxy of a view op's result `tensor` inside `forward`.
    pub fn view(tensor: TensorRef, capture: u64) -> TensorBase {
        let proxy = TensorBase::new(tensor, capture);
        proxy.view.set(true);
        proxy
    }

    /// Whether a view op made it inside `forward` and no write has rebound it since.
    pub fn is_view(&self) -> bool {
        self.view.get()
    }

    /// The tensor the proxy holds now.
    pub fn tensor(&self) -> TensorRef {
        self.held.borrow().clone()
    }

    /// The capture its node belongs to (0 for a constant or a value).
    pub fn capture(&self) -> u64 {
        self.capture.get()
    }

    /// `requires_grad` where the model set it.
    pub fn requires_grad(&self) -> Option<bool> {
        self.requires_grad.get()
    }

    /// Sets `requires_grad` (`requires_grad_`, `nn.Parameter(…, requires_grad=)`).
    pub fn set_requires_grad(&self, value: bool) {
        self.requires_grad.set(Some(value));
    }

    /// Makes the proxy hold `tensor` of capture `capture`: what an in-place op leaves,
    /// seen through every Python reference to the same tensor object.
    pub fn rebind(&self, tensor: TensorRef, capture: u64) {
        *self.held.borrow_mut() = tensor;
        self.capture.set(capture);
        self.view.set(false);
    }
}

/// A symbolic size of the capture numbered `capture`.
#[pyclass(module = "_tailor", name = "SymIntBase")]
#[derive(Debug, PyPayload)]
pub struct SymIntBase {
    pub expr: Expr,
    pub capture: u64,
}

#[pyclass(flags(BASETYPE))]
impl SymIntBase {}

/// A comparison of sizes of the capture numbered `capture`, not yet decided.
#[pyclass(module = "_tailor", name = "SymBoolBase")]
#[derive(Debug, PyPayload)]
pub struct SymBoolBase {
    pub rel: Rel,
    pub capture: u64,
}

#[pyclass(flags(BASETYPE))]
impl SymBoolBase {}

//! One call from Python into `_tailor`: the session, the user's position, reading Python
//! arguments as the ops' Rust values, making proxies, and raising errors into Python.
//!
//! Input: the VM inside a `_tailor` function. Output: operands (`TensorRef`, `Expr`,
//! `Scalar`, ints), proxies of the registered `torch` classes, and exceptions: a
//! `FrontendError` is kept in the session and raised as `TailorError(message, index)`.
//! Invariant: a proxy of an earlier capture is never used as an operand (its node ids and
//! symbols belong to another graph and `ShapeEnv`).
//!
//! Here: the call itself, its errors and the capture it runs in. `arguments.rs`: reading
//! Python arguments; `graph_break.rs`: breaks met in a call; `proxies.rs`: making proxies;
//! `decide.rs`: deciding sizes; `in_place.rs`: in-place ops, rebinding a proxy.

mod arguments;
mod decide;
mod graph_break;
mod in_place;
mod proxies;

use crate::frontend::errors::FrontendError;
use crate::frontend::host::CallArg;
use crate::frontend::objects::{Session, SymBoolBase, SymIntBase, TensorBase};
use crate::frontend::ops::{Ops, TensorRef, Tracing};
use crate::frontend::source::{FILE_NAME, instruction_position};
use crate::graph::{
    DType, DTypeError, EvalError, Graph, NodeId, Op, Returned, ReturnedItem, Span, Tensor,
};
use crate::shape::ShapeEnv;
use crate::shape::rules::OpCtx;
use crate::symbolic::{Bindings, Expr};
use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode, PyDict, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyRef, PyResult, VirtualMachine};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Why a `_tailor` function fails: a front-end error, or a Python exception already made.
pub(super) enum Raise {
    Frontend(FrontendError),
    Python(PyBaseExceptionRef),
}

impl From<FrontendError> for Raise {
    fn from(err: FrontendError) -> Raise {
        Raise::Frontend(err)
    }
}

impl From<PyBaseExceptionRef> for Raise {
    fn from(exc: PyBaseExceptionRef) -> Raise {
        Raise::Python(exc)
    }
}

impl From<crate::shape::ShapeError> for Raise {
    fn from(err: crate::shape::ShapeError) -> Raise {
        Raise::Frontend(err.into())
    }
}

type Result<T> = std::result::Result<T, Raise>;

/// The innermost frame running the user's file, and the VM position (1-based line and
/// UTF-8 column) of its current instruction.
pub(super) fn user_frame(vm: &VirtualMachine) -> Option<(PyObjectRef, usize, usize)> {
    let mut frame: Option<PyObjectRef> = vm.current_frame().map(Into::into);
    while let Some(current) = frame {
        let code = current
            .get_attr("f_code", vm)
            .ok()?
            .downcast::<PyCode>()
            .ok()?;
        if code.source_path().as_str() == FILE_NAME {
            let lasti: usize = current
                .get_attr("f_lasti", vm)
                .ok()?
                .try_into_value(vm)
                .ok()?;
            let (line, col) = instruction_position(&code, lasti)?;
            return Some((current, line, col));
        }
        frame = current
            .get_attr("f_back", vm)
            .ok()
            .filter(|back| !vm.is_none(back));
    }
    None
}

/// How many frames of the user's file are running.
pub(super) fn user_frame_count(vm: &VirtualMachine) -> usize {
    user_frames(vm).len()
}

/// The frames of the user's file that are running, innermost first.
pub(super) fn user_frames(vm: &VirtualMachine) -> Vec<PyObjectRef> {
    user_frames_from(vm, vm.current_frame().map(Into::into))
}

/// The frames of the user's file from `frame` outwards, innermost first.
pub(super) fn user_frames_from(
    vm: &VirtualMachine,
    frame: Option<PyObjectRef>,
) -> Vec<PyObjectRef> {
    let mut frames = Vec::new();
    let mut frame = frame;
    while let Some(current) = frame {
        let is_user = current
            .get_attr("f_code", vm)
            .ok()
            .and_then(|code| code.downcast::<PyCode>().ok())
            .is_some_and(|code| code.source_path().as_str() == FILE_NAME);
        frame = current
            .get_attr("f_back", vm)
            .ok()
            .filter(|back| !vm.is_none(back));
        if is_user {
            frames.push(current);
        }
    }
    frames
}

/// One argument of a capture's call of `forward`.
pub(super) enum Argument {
    /// A tensor argument: its `Input` node.
    Tensor(NodeId),
    /// An int argument: a constant, or a symbol when it is dynamic.
    Int(Expr),
    /// A bool argument.
    Bool(bool),
    /// A tensor's values: a call run eagerly (a probe, or the way to a graph after a break).
    Values(Rc<Tensor>, DType),
    /// An int's value, in such a call.
    IntValue(i64),
    /// A float that is a constant, or given by value.
    FloatValue(f64),
    /// A symbolic float: its 0-dimensional input node.
    SymFloat(NodeId),
}

impl Argument {
    /// A call's argument given by value.
    pub fn value(arg: &CallArg) -> Argument {
        match arg {
            CallArg::Tensor(tensor, dtype) => Argument::Values(Rc::new(tensor.clone()), *dtype),
            CallArg::Int(int) => Argument::IntValue(*int),
            CallArg::Bool(b) => Argument::Bool(*b),
            CallArg::Float(value) => Argument::FloatValue(*value),
        }
    }
}

/// A `_tailor` call in progress.
pub(super) struct Call<'vm> {
    vm: &'vm VirtualMachine,
    session: PyRef<Session>,
    frame: Option<PyObjectRef>,
    position: Option<(usize, usize)>,
    /// Where in the user's file the call happens (1:1 when no user frame is running).
    pub span: Span,
}

impl<'vm> Call<'vm> {
    /// The session of this VM. Read from `sys.modules` once `_tailor` is loaded, not by an
    /// import: an import looks `__import__` up in the running frame's builtins, and code a
    /// file runs with none (`collections.namedtuple`'s generated `__new__`, an `eval` with
    /// `{'__builtins__': {}}`) reaches `_tailor` too.
    pub fn session(vm: &VirtualMachine) -> PyResult<PyRef<Session>> {
        let loaded = vm
            .sys_module
            .get_attr("modules", vm)
            .and_then(|modules| modules.get_item("_tailor", vm));
        let module = match loaded {
            Ok(module) => module,
            Err(_) => vm.import("_tailor", 0)?,
        };
        module
            .get_attr("session", vm)?
            .downcast::<Session>()
            .map_err(|_| vm.new_runtime_error("_tailor.session is not a Session"))
    }

    fn new(vm: &'vm VirtualMachine) -> PyResult<Call<'vm>> {
        let session = Call::session(vm)?;
        let (frame, position) = match user_frame(vm) {
            Some((frame, line, col)) => (Some(frame), Some((line, col))),
            None => (None, None),
        };
        let span = match (&*session.source.borrow(), position) {
            (Some(source), Some((line, col))) => source.span(line, col),
            _ => Span { line: 1, col: 1 },
        };
        Ok(Call {
            vm,
            session,
            frame,
            position,
            span,
        })
    }

    /// The VM the call runs in.
    pub fn vm(&self) -> &'vm VirtualMachine {
        self.vm
    }

    /// Runs `body` as one call, raising its error into Python.
    pub fn run_with<T>(
        vm: &VirtualMachine,
        body: impl FnOnce(&Call<'_>) -> Result<T>,
    ) -> PyResult<T> {
        let call = Call::new(vm)?;
        body(&call).map_err(|raise| match raise {
            Raise::Python(exc) => exc,
            Raise::Frontend(err) => call.raise(err),
        })
    }

    /// `run_with` for calls that return a Python object.
    pub fn run(
        vm: &VirtualMachine,
        body: impl FnOnce(&Call<'_>) -> Result<PyObjectRef>,
    ) -> PyResult {
        Call::run_with(vm, body)
    }

    fn raise(&self, err: FrontendError) -> PyBaseExceptionRef {
        if let FrontendError::DType { error, .. } = &err {
            // PyTorch raises these as RuntimeError (a missing bool kernel as its subclass
            // NotImplementedError), which a script may catch; uncaught, it is reported at the
            // user's line like any Python exception.
            let class = match error {
                DTypeError::NoBoolKernel { .. } => self.vm.ctx.exceptions.not_implemented_error,
                _ => self.vm.ctx.exceptions.runtime_error,
            };
            return self
                .vm
                .new_exception_msg(class.to_owned(), error.to_string().into());
        }
        if let FrontendError::Eager { error, .. } = &err
            && matches!(**error, EvalError::IdOutOfRange { .. })
        {
            // PyTorch's eager embedding raises IndexError, which a script may catch.
            return self.vm.new_index_error("index out of range in self");
        }
        let message = err.to_string();
        let mut errors = self.session.errors.borrow_mut();
        errors.push(err);
        let index = errors.len() - 1;
        match &*self.session.classes.borrow() {
            Some(classes) => self.vm.new_exception(
                classes.error.clone(),
                vec![
                    self.vm.ctx.new_str(message).into(),
                    self.vm.ctx.new_int(index).into(),
                ],
            ),
            None => self.vm.new_runtime_error(message),
        }
    }

    // ---- errors ----------------------------------------------------------------------------

    /// A type error at the user's line.
    pub fn type_error(&self, message: impl Into<String>) -> Raise {
        crate::frontend::ops::type_error(self.span, message).into()
    }

    /// An `Unsupported` error at the user's line.
    pub fn unsupported(&self, construct: impl Into<String>, note: impl Into<String>) -> Raise {
        crate::frontend::ops::unsupported(self.span, construct, note).into()
    }

    /// The run's step budget ran out at the user's line.
    pub fn budget_exceeded(&self, limit: u64) -> Raise {
        FrontendError::Budget {
            span: self.span,
            limit,
        }
        .into()
    }

    /// A script's wall-time limit ran out at the user's line.
    pub fn time_exceeded(&self, seconds: f64) -> Raise {
        FrontendError::Deadline {
            span: self.span,
            seconds,
        }
        .into()
    }

    /// The session of this call.
    pub fn session_ref(&self) -> &PyRef<Session> {
        &self.session
    }

    /// The op context of a shape rule called directly (`size`).
    pub fn op_ctx(&self, what: &str) -> OpCtx {
        OpCtx {
            what: what.to_string(),
            span: self.span,
        }
    }

    /// Python's name of an object's type.
    pub fn type_name(&self, value: &PyObjectRef) -> String {
        if value.downcast_ref::<TensorBase>().is_some() {
            return "Tensor".into();
        }
        if value.downcast_ref::<SymIntBase>().is_some() {
            return "SymInt".into();
        }
        value.class().name().to_string()
    }

    // ---- the capture -----------------------------------------------------------------------

    /// Whether a capture is in progress (inside `forward`).
    pub fn is_capturing(&self) -> bool {
        self.session.capture.borrow().is_some()
    }

    pub(crate) fn capture_number(&self) -> Option<u64> {
        self.session.capture.borrow().as_ref().map(|c| c.number)
    }

    /// The dtype of an operand.
    pub fn dtype_of(&self, tensor: &TensorRef) -> DType {
        self.with_ops(|ops| ops.dtype_of(tensor))
    }

    /// The dtype of a tensor proxy, read without using it as an operand (`x.dtype` makes no
    /// input of a tensor held across a graph break, and names no constant).
    pub fn proxy_dtype(&self, value: &PyObjectRef) -> Result<DType> {
        let Some(proxy) = value.downcast_ref::<TensorBase>() else {
            return Err(
                self.type_error(format!("expected a Tensor, got {}", self.type_name(value)))
            );
        };
        if matches!(proxy.tensor(), TensorRef::Node(_))
            && Some(proxy.capture()) != self.capture_number()
        {
            return Err(self.unsupported(
                "a tensor of an earlier capture",
                "a graph tensor was kept after forward returned (on self or in a global)",
            ));
        }
        Ok(self.dtype_of(&proxy.tensor()))
    }

    /// Runs `op` on the tensor operations of the capture in progress (or outside it).
    fn with_ops<T>(&self, op: impl FnOnce(&mut Ops<'_>) -> T) -> T {
        let mut capture = self.session.capture.borrow_mut();
        let tracing = capture.as_mut().map(|c| Tracing {
            graph: &mut c.graph,
            env: &mut c.env,
            const_nodes: &mut c.const_nodes,
            holders: &c.holders,
            strides: &mut c.strides,
            fed: None,
        });
        op(&mut Ops::new(tracing))
    }

    /// Counts one tensor op of the trace, if one runs (`Capture::ops_called`).
    pub fn record_call(&self) {
        if let Some(capture) = self.session.capture.borrow_mut().as_mut() {
            capture.ops_called += 1;
        }
    }

    /// Whether tensor operations run eagerly: outside `forward` (module level, `__init__`,
    /// a script), as Python would run them.
    pub fn is_eager(&self) -> bool {
        !self.is_capturing()
    }

    /// Runs one tensor operation at the user's span and wraps its result: a node of the
    /// capture, or, run eagerly outside `forward` in a script, a computed value.
    pub fn tensor_op(
        &self,
        op: impl FnOnce(&mut Ops<'_>, Span) -> std::result::Result<TensorRef, FrontendError>,
    ) -> Result<PyObjectRef> {
        if self.is_eager() {
            return self.eager_op(op);
        }
        self.record_call();
        let tensor = self.with_ops(|ops| op(ops, self.span))?;
        self.wrap_tensor(tensor)
    }

    /// An op run eagerly: built as a graph of its own, whose inputs are the values it
    /// reads, and run by the CPU reference (`graph::eval`) at static sizes.
    fn eager_op(
        &self,
        op: impl FnOnce(&mut Ops<'_>, Span) -> std::result::Result<TensorRef, FrontendError>,
    ) -> Result<PyObjectRef> {
        let mut graph = Graph::default();
        let mut env = ShapeEnv::new();
        let mut const_nodes = BTreeMap::new();
        let mut strides = BTreeMap::new();
        let mut fed = Vec::new();
        let holders = BTreeMap::new();
        let tracing = Tracing {
            graph: &mut graph,
            env: &mut env,
            const_nodes: &mut const_nodes,
            holders: &holders,
            strides: &mut strides,
            fed: Some(&mut fed),
        };
        let result = op(&mut Ops::new(Some(tracing)), self.span)?;
        let TensorRef::Node(id) = result else {
            return self.wrap_tensor(result);
        };
        graph.push("output", Op::Output, vec![id], vec![], None);
        let inputs: Vec<Tensor> = fed.iter().map(|(_, v)| Tensor::clone(v)).collect();
        let mut outputs =
            crate::graph::eval(&graph, &Bindings::new(), &inputs).map_err(|error| {
                FrontendError::Eager {
                    span: self.span,
                    op: graph.node(id).op.name(),
                    error: Box::new(error),
                }
            })?;
        let dtype = graph.node(id).dtype;
        self.wrap_tensor(TensorRef::Value(Rc::new(outputs.remove(0)), dtype))
    }

    /// `expr` with the capture's replacements applied (as size arithmetic does).
    pub fn replace(&self, expr: &Expr) -> Expr {
        match &*self.session.capture.borrow() {
            Some(capture) => capture.env.replace(expr),
            None => expr.clone(),
        }
    }

    /// The arguments `forward` is called with: a proxy per input node, a Python int or a
    /// `SymInt` per int, a bool per bool.
    pub fn input_proxies(vm: &VirtualMachine, inputs: &[Argument]) -> PyResult<Vec<PyObjectRef>> {
        Call::run_with(vm, |call| {
            inputs
                .iter()
                .map(|arg| match arg {
                    Argument::Tensor(id) => call.wrap_tensor(TensorRef::Node(*id)),
                    Argument::Values(values, dtype) => {
                        call.wrap_tensor(TensorRef::Value(values.clone(), *dtype))
                    }
                    Argument::Int(expr) => call.wrap_size(expr.clone()),
                    Argument::IntValue(int) => Ok(call.vm.ctx.new_int(*int).into()),
                    Argument::FloatValue(value) => Ok(call.vm.ctx.new_float(*value).into()),
                    Argument::SymFloat(id) => call.wrap_sym_float(*id),
                    Argument::Bool(b) => Ok(call.vm.ctx.new_bool(*b).into()),
                })
                .collect()
        })
    }

    /// The nodes of what `forward` returned (a tensor, or tuples, lists and string-keyed
    /// dicts of tensors and `None`s, nested), and how the return value is made of them.
    pub fn output_nodes(
        vm: &VirtualMachine,
        value: &PyObjectRef,
    ) -> PyResult<(Vec<NodeId>, Returned)> {
        Call::run_with(vm, |call| {
            let mut nodes = Vec::new();
            if call.is_tensor(value) {
                call.returned_item(value, &mut nodes, 0)?;
                return Ok((nodes, Returned::Tensor));
            }
            let tree = call.returned_item(value, &mut nodes, 0)?;
            if matches!(tree, ReturnedItem::Output(_) | ReturnedItem::None) {
                return Err(self_returning(call, value));
            }
            Ok((nodes, Returned::Tree(tree)))
        })
    }

    /// One item of what `forward` returned, its tensors' nodes appended to `nodes`.
    fn returned_item(
        &self,
        value: &PyObjectRef,
        nodes: &mut Vec<NodeId>,
        depth: usize,
    ) -> Result<ReturnedItem> {
        // Deeper than any model's outputs: a self-referencing list, not a structure.
        const MAX_DEPTH: usize = 32;
        if self.is_tensor(value) {
            let tensor = self.tensor(value)?;
            nodes.push(self.with_ops(|ops| ops.node_of(&tensor, self.span))?);
            return Ok(ReturnedItem::Output(nodes.len() - 1));
        }
        if self.vm.is_none(value) {
            return Ok(ReturnedItem::None);
        }
        if depth >= MAX_DEPTH {
            return Err(self_returning(self, value));
        }
        if let Some(dict) = value.downcast_ref::<PyDict>() {
            let mut items = Vec::new();
            for (key, item) in dict {
                let Some(key) = key.downcast_ref::<PyStr>() else {
                    return Err(self_returning(self, value));
                };
                let key = key.to_string_lossy().into_owned();
                items.push((key, self.returned_item(&item, nodes, depth + 1)?));
            }
            return Ok(ReturnedItem::Dict(items));
        }
        let is_tuple = value.downcast_ref::<PyTuple>().is_some();
        if !is_tuple && value.downcast_ref::<PyList>().is_none() {
            return Err(self_returning(self, value));
        }
        let elements: Vec<PyObjectRef> = self.vm.extract_elements_with(value, Ok)?;
        let items = elements
            .iter()
            .map(|item| self.returned_item(item, nodes, depth + 1))
            .collect::<Result<Vec<_>>>()?;
        Ok(if is_tuple {
            ReturnedItem::Tuple(items)
        } else {
            ReturnedItem::List(items)
        })
    }

    /// `repr` of a proxy.
    pub fn describe(&self, value: &PyObjectRef) -> String {
        if let Some(sym) = value.downcast_ref::<SymIntBase>() {
            return sym.expr.to_string();
        }
        if let Some(b) = value.downcast_ref::<SymBoolBase>() {
            return b.rel.to_string();
        }
        match self.shape_of(value) {
            Ok(shape) => format!("tensor(f32{})", crate::graph::shape_to_string(&shape)),
            Err(_) => "tensor(<earlier capture>)".into(),
        }
    }
}

/// `forward` returned `value`, which is not a tensor or a structure of tensors.
fn self_returning(call: &Call<'_>, value: &PyObjectRef) -> Raise {
    call.unsupported(
        format!(
            "returning {} from forward",
            with_article(&call.type_name(value))
        ),
        "return a tensor, or tuples, lists and dicts (with string keys) of tensors and None",
    )
}

/// `a list`, `an int`: a type name with its indefinite article.
fn with_article(name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

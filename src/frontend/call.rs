//! One call from Python into `_tailor`: the session, the user's position, reading Python
//! arguments as the ops' Rust values, making proxies, and raising errors into Python.
//!
//! Input: the VM inside a `_tailor` function. Output: operands (`TensorRef`, `Expr`,
//! `Scalar`, ints), proxies of the registered `torch` classes, and exceptions: a
//! `FrontendError` is kept in the session and raised as `TailorError(message, index)`.
//! Invariant: a proxy of an earlier capture is never used as an operand (its node ids and
//! symbols belong to another graph and `ShapeEnv`).

use super::breaks::{BreakPoint, BreakReason, GraphBreak, stack_name};
use super::capture::{Resume, start_capture};
use super::native::{Classes, Session, SymBoolBase, SymIntBase, TensorBase};
use super::script::CallArg;
use super::source::{Decision, FILE_NAME};
use crate::frontend::FrontendError;
use crate::frontend::ops::ConstTensor;
use crate::frontend::ops::{IndexItem, Ops, TensorRef, Tracing};
use crate::graph::{
    DType, DTypeError, EvalError, Graph, Init, MAX_ELEMENTS, NodeId, Op, Returned, Scalar, Shape,
    Span, Tensor, TracedArg, element_count,
};
use crate::shape::ShapeEnv;
use crate::shape::rules::OpCtx;
use crate::shape::{Asker, Origin};
use crate::symbolic::{Bindings, CmpOp, Expr, Rel};
use rustpython_vm::builtins::{
    PyBaseExceptionRef, PyCode, PyFloat, PyInt, PyList, PySlice, PyTuple, PyTypeRef,
};
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine};
use std::cell::RefCell;
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
    let mut frames = Vec::new();
    let mut frame: Option<PyObjectRef> = vm.current_frame().map(Into::into);
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

/// The position of the instruction at byte offset `lasti` of `code`.
pub(super) fn instruction_position(code: &PyCode, lasti: usize) -> Option<(usize, usize)> {
    let (start, _) = code.code.locations.get(lasti / 2)?;
    Some((start.line.get(), start.character_offset.get()))
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
    /// The session of this VM.
    pub fn session(vm: &VirtualMachine) -> PyResult<PyRef<Session>> {
        vm.import("_tailor", 0)?
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

    fn capture_number(&self) -> Option<u64> {
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
        if matches!(proxy.tensor, TensorRef::Node(_))
            && Some(proxy.capture) != self.capture_number()
        {
            return Err(self.unsupported(
                "a tensor of an earlier capture",
                "a graph tensor was kept after forward returned (on self or in a global)",
            ));
        }
        Ok(self.dtype_of(&proxy.tensor))
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

    // ---- reading arguments ---------------------------------------------------------------

    /// Whether `value` is a tensor proxy.
    pub fn is_tensor(&self, value: &PyObjectRef) -> bool {
        value.downcast_ref::<TensorBase>().is_some()
    }

    /// A tensor operand; a constant without a name yet is named after the variable of the
    /// user's frame that holds it (as Dynamo names a global it lifts).
    pub fn tensor(&self, value: &PyObjectRef) -> Result<TensorRef> {
        let Some(proxy) = value.downcast_ref::<TensorBase>() else {
            return Err(
                self.type_error(format!("expected a Tensor, got {}", self.type_name(value)))
            );
        };
        match &proxy.tensor {
            TensorRef::Node(_) if Some(proxy.capture) != self.capture_number() => Err(self
                .unsupported(
                    "a tensor of an earlier capture",
                    "a graph tensor was kept after forward returned (on self or in a global)",
                )),
            TensorRef::Const(c) => {
                self.name_constant(value, c);
                Ok(proxy.tensor.clone())
            }
            TensorRef::Value(value, _) => Ok(self
                .resume_input(value)?
                .map_or_else(|| proxy.tensor.clone(), TensorRef::Node)),
            TensorRef::Node(_) => Ok(proxy.tensor.clone()),
        }
    }

    /// A graph break at the user's line (see `breaks.rs`): in the graph being captured it
    /// ends the graph there (Python stops, by an exception only the capture sees); on the
    /// way to that graph, or in a probe, Python passes it with real values, and the capture
    /// of the graph after it starts there. Outside a run of forward (module level, a
    /// script's own code) nothing breaks. `held` is the tensor the break reads.
    ///
    /// `stack` is the float the break hands back to Python (`.item()`'s); where the graph
    /// after the break starts here and traces it as a symbol, the `SymFloat` to hand back
    /// instead is returned.
    pub fn graph_break(
        &self,
        reason: BreakReason,
        held: Option<&PyObjectRef>,
        taken: Option<bool>,
        stack: Option<f64>,
    ) -> Result<Option<PyObjectRef>> {
        let mut forward = self.session.forward.borrow_mut();
        let Some(run) = forward.as_mut() else {
            return Ok(None);
        };
        let frames = user_frames(self.vm);
        if frames.len() != run.outer_frames + 1 {
            return Err(FrontendError::Break {
                span: self.span,
                what: "inside a function that forward calls".into(),
                note: "Dynamo compiles that function's frame on its own, with graphs and resume functions of its own".into(),
            }
            .into());
        }
        let graph_break = GraphBreak {
            reason,
            span: self.span,
            function: run.function.clone(),
            taken,
        };
        if self.is_capturing() {
            let held = self.held_nodes(&frames[0], held);
            run.ended = Some((graph_break, held));
            let stop = self.vm.ctx.exceptions.base_exception_type.to_owned();
            return Err(Raise::Python(self.vm.new_exception_empty(stop)));
        }
        let mut point = self.break_point(&frames[0], graph_break)?;
        point.stack = stack.map(|v| (stack_name(0), v)).into_iter().collect();
        run.points.push(point.clone());
        if run.target != Some(run.points.len()) {
            return Ok(None);
        }
        let Some((mut env, tracer)) = run.start.take() else {
            return Ok(None);
        };
        drop(forward);
        let mut resume = Resume {
            tensors: point
                .tensors
                .into_iter()
                .map(|(name, value, _)| (name, value, None))
                .collect(),
            tracer,
            traced: Vec::new(),
        };
        // Ints and floats are plain Python numbers in the frame, so they are traced (and
        // guarded) now, as the constants the graph will use.
        let mut graph = Graph::default();
        let numbers = point.ints.iter().map(|(name, _)| name);
        for name in numbers.chain(point.floats.iter().map(|(name, _)| name)) {
            let traced = (resume.tracer)(&mut env, name)?;
            if let TracedArg::Int(expr) = &traced {
                graph.int_inputs.push((name.clone(), expr.clone()));
            }
            resume.traced.push((name.clone(), traced));
        }
        // The value handed back may be a symbol: a 0-dimensional input of the graph.
        let mut handed_back = None;
        let mut floats = BTreeMap::new();
        for (name, _) in &point.stack {
            let traced = (resume.tracer)(&mut env, name)?;
            if let TracedArg::Float {
                value,
                symbolic: true,
            } = traced
            {
                let id = graph.push(name, Op::Input { name: name.clone() }, vec![], vec![], None);
                floats.insert(id, (name.clone(), value));
                handed_back = Some(id);
            }
            resume.traced.push((name.clone(), traced));
        }
        start_capture(&self.session, graph, env, Some(resume));
        if let Some(capture) = self.session.capture.borrow_mut().as_mut() {
            capture.floats = floats;
        }
        handed_back.map(|id| self.wrap_sym_float(id)).transpose()
    }

    /// The nodes of the graph being captured that Python holds at its break: the tensors in
    /// forward's locals and the one the break reads, in graph order (inputs excluded: the
    /// next graph gets those from the caller).
    fn held_nodes(&self, frame: &PyObjectRef, held: Option<&PyObjectRef>) -> Vec<NodeId> {
        let capture = self.session.capture.borrow();
        let Some(capture) = capture.as_ref() else {
            return Vec::new();
        };
        let mut nodes: Vec<NodeId> = self
            .frame_locals(frame)
            .iter()
            .map(|(_, value)| value)
            .chain(held)
            .filter_map(|value| {
                let proxy = value.downcast_ref::<TensorBase>()?;
                match &proxy.tensor {
                    TensorRef::Node(id)
                        if proxy.capture == capture.number
                            && !matches!(capture.graph.node(*id).op, Op::Input { .. }) =>
                    {
                        Some(*id)
                    }
                    _ => None,
                }
            })
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes
    }

    /// What forward's frame holds at a break Python passes with real values.
    fn break_point(&self, frame: &PyObjectRef, graph_break: GraphBreak) -> Result<BreakPoint> {
        let mut point = BreakPoint {
            graph_break,
            tensors: Vec::new(),
            ints: Vec::new(),
            floats: Vec::new(),
            stack: Vec::new(),
        };
        for (name, value) in self.frame_locals(frame) {
            if let Some(proxy) = value.downcast_ref::<TensorBase>() {
                if let TensorRef::Value(values, dtype) = &proxy.tensor {
                    point.tensors.push((name, values.clone(), *dtype));
                }
            } else if value.class().is(self.vm.ctx.types.bool_type) {
                continue;
            } else if let Some(int) = self.small_int(&value) {
                point.ints.push((name, int?));
            } else if let Some(float) = value.downcast_ref::<PyFloat>() {
                point.floats.push((name, float.to_f64()));
            }
        }
        Ok(point)
    }

    /// A frame's local variables, in the frame's order.
    fn frame_locals(&self, frame: &PyObjectRef) -> Vec<(String, PyObjectRef)> {
        let vm = self.vm;
        let Ok(mapping) = frame.get_attr("f_locals", vm) else {
            return Vec::new();
        };
        let Ok(items) = vm.call_method(&mapping, "items", ()) else {
            return Vec::new();
        };
        let items: Vec<PyObjectRef> = vm.extract_elements_with(&items, Ok).unwrap_or_default();
        items
            .iter()
            .filter_map(|item| {
                let pair: Vec<PyObjectRef> = vm.extract_elements_with(item, Ok).ok()?;
                match pair.as_slice() {
                    [name, value] => Some((
                        name.str(vm).ok()?.to_string_lossy().into_owned(),
                        value.clone(),
                    )),
                    _ => None,
                }
            })
            .collect()
    }

    /// In the capture of a graph after a break, the input node of a tensor Python held at
    /// the break, made (and its sizes traced) when the graph first uses it.
    fn resume_input(&self, value: &Rc<Tensor>) -> Result<Option<NodeId>> {
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Ok(None);
        };
        let Some(resume) = capture.resume.as_mut() else {
            return Ok(None);
        };
        let Some(held) = resume
            .tensors
            .iter_mut()
            .find(|(_, held, _)| Rc::ptr_eq(held, value))
        else {
            return Err(self.unsupported(
                "a tensor kept across a graph break outside forward's variables",
                "Dynamo hands a resume function the frame's locals and value stack; Tailor hands it the locals: assign the tensor to a variable before the break",
            ));
        };
        if let Some(id) = held.2 {
            return Ok(Some(id));
        }
        let name = held.0.clone();
        let traced = (resume.tracer)(&mut capture.env, &name)?;
        let TracedArg::Tensor(shape, dtype) = &traced else {
            return Err(self.type_error(format!("'{name}' was a tensor at the graph break")));
        };
        let id = capture.graph.push_typed(
            &name,
            Op::Input { name: name.clone() },
            vec![],
            shape.clone(),
            None,
            *dtype,
        );
        held.2 = Some(id);
        resume.traced.push((name, traced));
        Ok(Some(id))
    }

    fn name_constant(&self, value: &PyObjectRef, constant: &ConstTensor) {
        let unnamed = !constant.is_param && constant.name.borrow().is_empty();
        let has_node = match &*self.session.capture.borrow() {
            Some(capture) => capture.const_nodes.contains_key(&constant.id),
            None => true,
        };
        if !unnamed || has_node {
            return;
        }
        let Some(frame) = &self.frame else {
            return;
        };
        for scope in ["f_locals", "f_globals"] {
            if let Some(name) = self.name_in(frame, scope, value) {
                *constant.name.borrow_mut() = name;
                return;
            }
        }
    }

    /// The first variable of a frame's scope that holds `value`.
    fn name_in(
        &self,
        frame: &PyObjectRef,
        scope: &'static str,
        value: &PyObjectRef,
    ) -> Option<String> {
        let vm = self.vm;
        let mapping = frame.get_attr(scope, vm).ok()?;
        let items = vm.call_method(&mapping, "items", ()).ok()?;
        let items: Vec<PyObjectRef> = vm.extract_elements_with(&items, Ok).ok()?;
        items.iter().find_map(|item| {
            let pair: Vec<PyObjectRef> = vm.extract_elements_with(item, Ok).ok()?;
            match pair.as_slice() {
                [name, held] if held.is(value) => {
                    name.str(vm).ok().map(|s| s.to_string_lossy().into_owned())
                }
                _ => None,
            }
        })
    }

    /// A tensor operand, or a Python number as a 0-dimensional constant (`torch.where(c,
    /// x, 0.0)`, `masked_fill(mask, float('-inf'))`).
    pub fn tensor_or_number(&self, value: &PyObjectRef) -> Result<TensorRef> {
        if self.is_tensor(value) {
            return self.tensor(value);
        }
        // Its dtype is the number's: `where(mask, ids, 0)` stays int64, as in PyTorch.
        let (number, dtype) = match (value.downcast_ref::<PyFloat>(), self.small_int(value)) {
            (Some(float), _) => (float.to_f64(), DType::Float32),
            (None, Some(int)) if value.class().is(self.vm.ctx.types.bool_type) => {
                (int? as f64, DType::Bool)
            }
            (None, Some(int)) => (int? as f64, DType::Int64),
            (None, None) => {
                return Err(self.type_error(format!(
                    "expected a Tensor or a number, got {}",
                    self.type_name(value)
                )));
            }
        };
        let id = self.session.next_const.get();
        self.session.next_const.set(id + 1);
        Ok(TensorRef::Const(Rc::new(ConstTensor {
            id,
            shape: Vec::new(),
            init: RefCell::new(Init::Fill(number)),
            name: RefCell::new(String::new()),
            is_param: false,
            dtype,
        })))
    }

    /// A tensor operand or `None`.
    pub fn optional_tensor(&self, value: &PyObjectRef) -> Result<Option<TensorRef>> {
        if self.vm.is_none(value) {
            Ok(None)
        } else {
            self.tensor(value).map(Some)
        }
    }

    /// The shape of a tensor argument (reading it realises a traced call's argument).
    pub fn shape_of(&self, value: &PyObjectRef) -> Result<Shape> {
        let tensor = self.tensor(value)?;
        self.with_ops(|ops| {
            ops.realise(&tensor, self.span)?;
            Ok(ops.shape_of(&tensor))
        })
    }

    /// A Python int that fits in 64 bits (bools count), or `None`.
    fn small_int(&self, value: &PyObjectRef) -> Option<std::result::Result<i64, Raise>> {
        let int = value.downcast_ref::<PyInt>()?;
        Some(int.try_to_primitive::<i64>(self.vm).map_err(|_| {
            self.type_error(format!(
                "integer {} does not fit in 64 bits",
                int.as_bigint()
            ))
        }))
    }

    /// A constant int argument (sizes of layers, dims, …).
    pub fn int(&self, value: &PyObjectRef, name: &str) -> Result<i64> {
        if let Some(int) = self.small_int(value) {
            return int;
        }
        if let Some(expr) = self.size_expr(value) {
            return Err(self.unsupported(
                format!("a symbolic size ({expr}) as '{name}'"),
                "this argument must be a constant",
            ));
        }
        Err(self.type_error(format!(
            "argument '{name}' must be an int, not {}",
            self.type_name(value)
        )))
    }

    /// A list of constant ints.
    pub fn ints(&self, values: &[PyObjectRef], name: &str) -> Result<Vec<i64>> {
        values.iter().map(|v| self.int(v, name)).collect()
    }

    /// An int, bool or `SymInt` of this capture as a size expression.
    pub fn size_expr(&self, value: &PyObjectRef) -> Option<Expr> {
        if let Some(int) = self.small_int(value) {
            return int.ok().map(Expr::int);
        }
        let sym = value.downcast_ref::<SymIntBase>()?;
        (Some(sym.capture) == self.capture_number()).then(|| sym.expr.clone())
    }

    /// A size list for a view: `-1` is the inferred size (`None`).
    pub fn sizes(&self, values: &[PyObjectRef]) -> Result<Vec<Option<Expr>>> {
        values
            .iter()
            .map(|value| match self.small_int(value) {
                Some(Ok(-1)) => Ok(None),
                Some(Ok(i)) if i < -1 => {
                    Err(self.type_error(format!("invalid shape dimension {i}")))
                }
                _ => self.size_expr(value).map(Some).ok_or_else(|| {
                    self.type_error(format!(
                        "a size must be an int, not {}",
                        self.type_name(value)
                    ))
                }),
            })
            .collect()
    }

    /// Static sizes for a tensor made outside forward (`torch.randn(64, 32)`).
    pub fn static_sizes(&self, values: &[PyObjectRef]) -> Result<Vec<i64>> {
        self.sizes(values)?
            .iter()
            .map(|size| match size.as_ref().and_then(Expr::as_int) {
                Some(v) if v >= 0 => Ok(v),
                Some(v) => Err(self.type_error(format!("negative dimension {v}"))),
                None => Err(self.unsupported(
                    "creating a tensor whose size is symbolic",
                    "derive it from an input with an op instead",
                )),
            })
            .collect()
    }

    /// A number or size combined with a tensor.
    pub fn scalar(&self, value: &PyObjectRef) -> Option<Scalar> {
        if let Some(float) = value.downcast_ref::<PyFloat>() {
            return Some(Scalar::Number(float.to_f64()));
        }
        match self.small_int(value) {
            Some(Ok(i)) => Some(Scalar::Number(i as f64)),
            Some(Err(_)) => None,
            None => self.size_expr(value).map(Scalar::Size),
        }
    }

    /// A dims argument: `None` (every dim) or a list of ints.
    pub fn dims(&self, value: &PyObjectRef) -> Result<Option<Vec<i64>>> {
        if self.vm.is_none(value) {
            return Ok(None);
        }
        let items: Vec<PyObjectRef> = self.vm.extract_elements_with(value, Ok)?;
        items
            .iter()
            .map(|d| match self.small_int(d) {
                Some(d) => d,
                None => {
                    Err(self.type_error(format!("dims must be ints, not {}", self.type_name(d))))
                }
            })
            .collect::<Result<Vec<i64>>>()
            .map(Some)
    }

    /// A failure as a front-end error, for the ops that take an operand still to check
    /// (a Python exception there comes from reading a value, a type error of the call).
    pub fn frontend(&self, raise: Raise) -> FrontendError {
        match raise {
            Raise::Frontend(err) => err,
            Raise::Python(exc) => {
                let message = exc
                    .as_object()
                    .str(self.vm)
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                crate::frontend::ops::type_error(self.span, message)
            }
        }
    }

    /// One item of a tensor subscript.
    pub fn index_item(&self, value: &PyObjectRef) -> std::result::Result<IndexItem, FrontendError> {
        let vm = self.vm;
        let frontend = |raise: Raise| self.frontend(raise);
        if vm.is_none(value) {
            return Ok(IndexItem::NewAxis);
        }
        if value.is(&vm.ctx.ellipsis) {
            return Ok(IndexItem::Ellipsis);
        }
        if let Some(slice) = value.downcast_ref::<PySlice>() {
            let step = match &slice.step {
                Some(step) if !vm.is_none(step) => match self.small_int(step) {
                    Some(Ok(s)) => s,
                    _ => return Err(frontend(self.unsupported("a symbolic slice step", ""))),
                },
                _ => 1,
            };
            let bound = |v: Option<&PyObjectRef>| match v {
                None => Ok(None),
                Some(v) if vm.is_none(v) => Ok(None),
                Some(v) => self
                    .size_expr(v)
                    .map(Some)
                    .ok_or_else(|| frontend(self.type_error("slice indices must be integers"))),
            };
            return Ok(IndexItem::Slice {
                lower: bound(slice.start.as_ref())?,
                upper: bound(Some(&slice.stop))?,
                step,
            });
        }
        self.size_expr(value).map(IndexItem::Select).ok_or_else(|| {
            frontend(self.unsupported(
                format!("indexing a tensor with a {}", self.type_name(value)),
                "advanced indexing is not in the subset",
            ))
        })
    }

    // ---- making proxies ------------------------------------------------------------------

    fn class_of(&self, pick: impl Fn(&Classes) -> &PyTypeRef) -> Result<PyTypeRef> {
        match &*self.session.classes.borrow() {
            Some(classes) => Ok(pick(classes).clone()),
            None => Err(self
                .vm
                .new_runtime_error("the torch package is not loaded")
                .into()),
        }
    }

    /// A tensor proxy of the registered `torch.Tensor` class.
    pub fn wrap_tensor(&self, tensor: TensorRef) -> Result<PyObjectRef> {
        let capture = match tensor {
            TensorRef::Node(_) => self.capture_number().unwrap_or(0),
            TensorRef::Const(_) | TensorRef::Value(..) => 0,
        };
        let class = self.class_of(|c| &c.tensor)?;
        Ok(TensorBase {
            tensor,
            capture,
            marks: RefCell::default(),
        }
        .into_ref_with_type(self.vm, class)?
        .into())
    }

    /// The proxy of a symbolic float argument: a `SymFloat`, a 0-dimensional tensor of the
    /// capture whose comparisons with numbers are decided and guarded.
    fn wrap_sym_float(&self, id: NodeId) -> Result<PyObjectRef> {
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symfloat)?;
        Ok(TensorBase {
            tensor: TensorRef::Node(id),
            capture,
            marks: RefCell::default(),
        }
        .into_ref_with_type(self.vm, class)?
        .into())
    }

    /// The name and traced value of the symbolic float argument `f` is.
    fn float_argument(&self, f: &PyObjectRef) -> Result<(String, f64)> {
        let argument = match self.tensor(f)? {
            TensorRef::Node(id) => self
                .session
                .capture
                .borrow()
                .as_ref()
                .and_then(|capture| capture.floats.get(&id).cloned()),
            _ => None,
        };
        argument.ok_or_else(|| {
            self.unsupported(
                "a decision on a float computed from a symbolic float",
                "compare the float argument itself, or make it a constant (dynamic=False)",
            )
        })
    }

    /// `f op rhs` for a symbolic float argument, decided on its traced value; the relation
    /// that held becomes a guard of the entry.
    pub fn decide_float(&self, f: &PyObjectRef, op: CmpOp, rhs: f64) -> Result<bool> {
        let (name, value) = self.float_argument(f)?;
        let what = self.decision().map_or("condition", |d| d.what);
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Err(self.unsupported("a symbolic float outside forward", ""));
        };
        let origin = Origin {
            what: Asker::FloatCondition {
                construct: what,
                name: name.clone(),
            },
            span: Some(self.span),
        };
        Ok(capture.env.decide_float(&name, value, op, rhs, origin))
    }

    /// `float(f)` of a symbolic float argument: its traced value, guarded to stay it.
    pub fn specialize_float(&self, f: &PyObjectRef) -> Result<f64> {
        let (_, value) = self.float_argument(f)?;
        self.decide_float(f, CmpOp::Eq, value)?;
        Ok(value)
    }

    /// A size: an int when constant, else a `SymInt`.
    pub fn wrap_size(&self, expr: Expr) -> Result<PyObjectRef> {
        if let Some(value) = expr.as_int() {
            return Ok(self.vm.ctx.new_int(value).into());
        }
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symint)?;
        Ok(SymIntBase { expr, capture }
            .into_ref_with_type(self.vm, class)?
            .into())
    }

    /// A comparison of sizes: a bool when both sides are known numbers, else a `SymBool`.
    pub fn wrap_rel(&self, rel: Rel) -> Result<PyObjectRef> {
        let constant = rel.lhs.free_syms().is_empty() && rel.rhs.free_syms().is_empty();
        if let (true, Some(known)) = (constant, rel.eval(&Bindings::new())) {
            return Ok(self.vm.ctx.new_bool(known).into());
        }
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symbool)?;
        Ok(SymBoolBase { rel, capture }
            .into_ref_with_type(self.vm, class)?
            .into())
    }

    /// A new constant tensor (parameter, buffer or global), refused where it is made when it
    /// is larger than the runtimes hold: its values are made only when a kernel needs them.
    pub fn new_constant(
        &self,
        shape: Vec<i64>,
        init: Init,
        is_param: bool,
        dtype: DType,
    ) -> Result<PyObjectRef> {
        let elements = element_count(&shape);
        if elements > MAX_ELEMENTS as u128 {
            return Err(FrontendError::TooLarge {
                span: self.span,
                shape,
                elements,
                limit: MAX_ELEMENTS,
            }
            .into());
        }
        let id = self.session.next_const.get();
        self.session.next_const.set(id + 1);
        self.wrap_tensor(TensorRef::Const(Rc::new(ConstTensor {
            id,
            shape,
            init: RefCell::new(init),
            name: RefCell::new(String::new()),
            is_param,
            dtype,
        })))
    }

    /// Tensor arithmetic outside forward: scaling a constant's fill by a number
    /// (`torch.randn(...) * 0.02`) is a new constant (`None`: anything else, an op to run
    /// eagerly).
    pub fn outside_forward(
        &self,
        name: &str,
        lhs: &PyObjectRef,
        rhs: &PyObjectRef,
    ) -> Result<Option<PyObjectRef>> {
        // In a script every op on values runs eagerly, so the same tensor always shows the
        // same values; scaling a fill by a number is for a model file's parameters (which
        // may be too large to draw at module level).
        let script = self.session.interpreter.borrow().upgrade().is_some();
        let scaled = match (lhs.downcast_ref::<TensorBase>(), name, self.scalar(rhs)) {
            _ if script => None,
            (Some(proxy), "mul", Some(Scalar::Number(k))) => match &proxy.tensor {
                TensorRef::Const(c) => match &*c.init.borrow() {
                    Init::Normal { std } => Some((c.clone(), Init::Normal { std: std * k })),
                    Init::Uniform { bound } => Some((
                        c.clone(),
                        Init::Uniform {
                            bound: bound * k.abs(),
                        },
                    )),
                    Init::Fill(v) => Some((c.clone(), Init::Fill(v * k))),
                    _ => None,
                },
                TensorRef::Node(_) | TensorRef::Value(..) => None,
            },
            _ => None,
        };
        match scaled {
            Some((c, init)) => self
                .new_constant(c.shape.clone(), init, c.is_param, c.dtype)
                .map(Some),
            None if self.is_eager() => Ok(None),
            None => Err(self.unsupported(
                "tensor arithmetic outside forward",
                "create parameters with torch.randn/zeros/ones, optionally scaled by a number",
            )),
        }
    }

    // ---- deciding sizes ------------------------------------------------------------------

    /// The relation whose truth a `SymInt` (`!= 0`) or `SymBool` stands for.
    pub fn rel_of(&self, value: &PyObjectRef) -> Result<Rel> {
        let current = self.capture_number();
        if let Some(b) = value.downcast_ref::<SymBoolBase>() {
            if Some(b.capture) == current {
                return Ok(b.rel.clone());
            }
        }
        if let Some(expr) = self.size_expr(value) {
            return Ok(Rel::new(expr, CmpOp::Ne, Expr::int(0)));
        }
        Err(self.unsupported(
            "a size of an earlier capture",
            "a symbolic size was kept after forward returned",
        ))
    }

    /// The construct around the user's current instruction that asks for a truth value.
    pub fn decision(&self) -> Option<Decision> {
        let (line, col) = self.position?;
        self.session
            .source
            .borrow()
            .as_ref()?
            .decision_at(line, col)
    }

    /// Decides `rel` for the sizes seen now; the `ShapeEnv` records the guard.
    pub fn decide(&self, rel: &Rel) -> Result<bool> {
        let decision = self.decision().unwrap_or(Decision {
            what: "condition",
            span: self.span,
        });
        self.evaluate(rel, decision.what, decision.span)
    }

    fn evaluate(&self, rel: &Rel, what: &'static str, span: Span) -> Result<bool> {
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Err(self.unsupported("a condition on a tensor size outside forward", ""));
        };
        capture.env.node_cursor = capture.graph.nodes.len();
        let origin = Origin {
            what: Asker::SizeCondition(what),
            span: Some(span),
        };
        Ok(capture.env.evaluate(rel, &origin))
    }

    /// A `SymInt` as the int it is now, guarded to stay that int.
    pub fn specialize(&self, value: &PyObjectRef) -> Result<i64> {
        let expr = self.size_expr(value).ok_or_else(|| {
            self.unsupported(
                "a size of an earlier capture",
                "a symbolic size was kept after forward returned",
            )
        })?;
        let hint = match &*self.session.capture.borrow() {
            Some(capture) => capture.env.hint(&expr),
            None => None,
        };
        let hint = hint.ok_or_else(|| self.unsupported(format!("int() of the size {expr}"), ""))?;
        self.evaluate(
            &Rel::new(expr, CmpOp::Eq, Expr::int(hint)),
            "int()",
            self.span,
        )?;
        Ok(hint)
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

    /// The nodes of what `forward` returned (a tensor, or a tuple or list of tensors and
    /// `None`s), and how the return value is made of them.
    pub fn output_nodes(
        vm: &VirtualMachine,
        value: &PyObjectRef,
    ) -> PyResult<(Vec<NodeId>, Returned)> {
        Call::run_with(vm, |call| {
            let returning = |value: &PyObjectRef, note: &str| {
                call.unsupported(
                    format!(
                        "returning {} from forward",
                        with_article(&call.type_name(value))
                    ),
                    note,
                )
            };
            if call.is_tensor(value) {
                let tensor = call.tensor(value)?;
                let node = call.with_ops(|ops| ops.node_of(&tensor, call.span))?;
                return Ok((vec![node], Returned::Tensor));
            }
            if value.downcast_ref::<PyTuple>().is_none() && value.downcast_ref::<PyList>().is_none()
            {
                return Err(returning(value, "return a tensor or a tuple of tensors"));
            }
            let items: Vec<PyObjectRef> = vm.extract_elements_with(value, Ok)?;
            let mut nodes = Vec::with_capacity(items.len());
            let mut layout = Vec::with_capacity(items.len());
            for item in &items {
                if vm.is_none(item) {
                    layout.push(None);
                    continue;
                }
                if !call.is_tensor(item) {
                    return Err(returning(item, "return tensors (or None) only"));
                }
                let tensor = call.tensor(item)?;
                layout.push(Some(nodes.len()));
                nodes.push(call.with_ops(|ops| ops.node_of(&tensor, call.span))?);
            }
            Ok((nodes, Returned::Tuple(layout)))
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

/// `a list`, `an int`: a type name with its indefinite article.
fn with_article(name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

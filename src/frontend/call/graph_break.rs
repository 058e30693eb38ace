//! A graph break met inside a `_tailor` call, or around a call Dynamo does not trace (an
//! RNN module's): where the graph being captured ends, the break point (the tensors, ints
//! and floats Python holds there, and the tensors such a call returned) the next graph
//! resumes from, and the resume function's inputs.
//!
//! A break inside a call forward's frame made ends forward's graph at that call: while
//! the graph is captured, by starting the run again with the graph ending as the call
//! starts (`frame_event`, from the run's trace function); with real values, the call
//! runs eagerly to its end and its return is forward's break point.
//!
//! In: the user's frame at the break. Out: a `GraphBreak` raised into the capture, or a
//! `BreakPoint`. Invariant: outside a run of forward nothing breaks.

use super::*;
use crate::frontend::breaks::{BreakPoint, BreakReason, GraphBreak, stack_name};
use crate::frontend::capture::{Resume, ResumeTracer};
use crate::frontend::errors::FrontendError;
use crate::frontend::objects::TensorBase;
use crate::frontend::ops::ConstTensor;
use crate::frontend::ops::TensorRef;
use crate::graph::{DType, Graph, NodeId, Op, Tensor, TracedArg};
use crate::shape::ShapeEnv;
use rustpython_vm::builtins::{PyFloat, PyList, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef};
use std::collections::BTreeMap;
use std::rc::Rc;

impl<'vm> Call<'vm> {
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
        let held: Vec<PyObjectRef> = held.into_iter().cloned().collect();
        let Some(mut point) = self.meet_break(reason, &held, taken)? else {
            return Ok(None);
        };
        point.stack = stack.map(|v| (stack_name(0), v)).into_iter().collect();
        match self.pass_break(point) {
            Some((point, env, tracer)) => Ok(self
                .start_resume(point, env, tracer)?
                .into_iter()
                .next()
                .map(|(_, symbol)| symbol)),
            None => Ok(None),
        }
    }

    /// `x.tolist()` in a run of forward: a graph break whose list Python gets back on its
    /// stack (`___stack0`), each item an argument of the resume function by its place
    /// (`___stack0[0]`, Dynamo's `L['___stack0'][0]`): an int guarded by its value (the
    /// graph after the break bakes it in), a float as `.item()`'s (a `SymFloat` where that
    /// graph makes it symbolic). `values` are the tensor's, flattened (none while the graph
    /// being captured ends here). Returns the items to hand Python, or `None` where
    /// nothing breaks (outside forward) or Python gets the plain values.
    pub fn graph_break_list(
        &self,
        x: &PyObjectRef,
        integer: bool,
        values: Option<&[f32]>,
    ) -> Result<Option<Vec<PyObjectRef>>> {
        /// Past this many items a list is not handed on item by item.
        const MAX_ITEMS: usize = 1024;
        let reason = BreakReason::ToList { integer };
        let Some(mut point) = self.meet_break(reason, std::slice::from_ref(x), None)? else {
            return Ok(None);
        };
        let values = values.unwrap_or_default();
        if values.len() > MAX_ITEMS {
            return Err(self.unsupported(
                format!("a graph break at .tolist() of {} values", values.len()),
                format!(
                    "Tailor hands the resume function at most {MAX_ITEMS} values, each an argument; keep the values in a tensor"
                ),
            ));
        }
        let name = |i: usize| format!("{}[{i}]", stack_name(0));
        if integer {
            point
                .ints
                .extend(values.iter().enumerate().map(|(i, &v)| (name(i), v as i64)));
        } else {
            point.stack = values
                .iter()
                .enumerate()
                .map(|(i, &v)| (name(i), f64::from(v)))
                .collect();
        }
        let Some((point, env, tracer)) = self.pass_break(point) else {
            return Ok(None);
        };
        let symbols = self.start_resume(point, env, tracer)?;
        let items = values
            .iter()
            .enumerate()
            .map(
                |(i, &v)| match symbols.iter().find(|(held, _)| *held == name(i)) {
                    Some((_, symbol)) => symbol.clone(),
                    None if integer => self.vm.ctx.new_int(v as i64).into(),
                    None => self.vm.ctx.new_float(f64::from(v)).into(),
                },
            )
            .collect();
        Ok(Some(items))
    }

    /// A break met in a run of forward (`None` outside one, where nothing breaks): in the
    /// graph being captured it ends the graph (an exception only the capture sees, with the
    /// nodes Python holds: forward's locals and `held`); passed with real values, what
    /// forward's frame holds there.
    fn meet_break(
        &self,
        reason: BreakReason,
        held: &[PyObjectRef],
        taken: Option<bool>,
    ) -> Result<Option<BreakPoint>> {
        let mut forward = self.session.forward.borrow_mut();
        let Some(run) = forward.as_mut() else {
            return Ok(None);
        };
        let frames = user_frames(self.vm);
        let Some(forward_frame) = frames.len().checked_sub(run.outer_frames + 1) else {
            return Ok(None);
        };
        let mut graph_break = GraphBreak {
            reason,
            span: self.span,
            function: run.function.clone(),
            taken,
            call_line: None,
        };
        if forward_frame > 0 {
            // Inside a call forward's frame made: forward's graph ends at that call.
            let Some(call) = run.active_call else {
                return Err(FrontendError::Break {
                    span: self.span,
                    what: "inside a function that forward calls from outside a call of its own (a comprehension's or a generator's frame)".into(),
                    note: "Dynamo ends forward's graph at the call that leads to the break".into(),
                }
                .into());
            };
            graph_break.call_line = self.frame_line(&frames[forward_frame]);
            if self.is_capturing() {
                // Dynamo restarts the frame's analysis, ending its graph before the call.
                if run.stop_call.is_some() {
                    return Err(FrontendError::Replay {
                        breaks: run.points.len(),
                        target: run.target.unwrap_or(0),
                    }
                    .into());
                }
                run.restart = Some((call, graph_break));
                return Err(self.stop_python());
            }
            if run.pending.is_none() {
                let point = self.break_point(&frames[forward_frame], graph_break)?;
                run.pending = Some((call, point));
            }
            // The call runs on eagerly, its other breaks included.
            return Ok(None);
        }
        if self.is_capturing() {
            let held = self.held_nodes(&frames[0], held);
            run.ended = Some((graph_break, held));
            return Err(self.stop_python());
        }
        self.break_point(&frames[0], graph_break).map(Some)
    }

    /// The exception that stops Python where the graph being captured ends: a
    /// `BaseException` only the capture sees.
    fn stop_python(&self) -> Raise {
        let stop = self.vm.ctx.exceptions.base_exception_type.to_owned();
        Raise::Python(self.vm.new_exception_empty(stop))
    }

    /// The line a frame of the user's file is at.
    fn frame_line(&self, frame: &PyObjectRef) -> Option<u32> {
        frame
            .get_attr("f_lineno", self.vm)
            .ok()?
            .try_into_value(self.vm)
            .ok()
    }

    /// A frame of the user's file starting (`call`) or returning (`return`, `value` what it
    /// returns), seen by the run's trace function. A call from forward's own frame is
    /// counted; where the graph being captured ends before it (`stop_call`), Python stops
    /// as the frame starts, the graph holding forward's locals and the call's arguments.
    /// Where a break was met inside it with real values, its return passes forward's
    /// break at it, what it returned being the resume function's `___stack0`.
    pub fn frame_event(&self, frame: &PyObjectRef, event: &str, value: &PyObjectRef) -> Result<()> {
        let mut forward = self.session.forward.borrow_mut();
        let Some(run) = forward.as_mut() else {
            return Ok(());
        };
        let frames = user_frames_from(self.vm, Some(frame.clone()));
        if frames.len() != run.outer_frames + 2 || self.is_generator(frame) {
            return Ok(());
        }
        match event {
            "call" => {
                run.calls += 1;
                run.active_call = Some(run.calls);
                let stop = match &run.stop_call {
                    Some((call, graph_break)) if *call == run.calls && self.is_capturing() => {
                        graph_break.clone()
                    }
                    _ => return Ok(()),
                };
                let arguments: Vec<PyObjectRef> = self
                    .frame_locals(frame)
                    .into_iter()
                    .map(|(_, value)| value)
                    .collect();
                let held = self.held_nodes(&frames[1], &arguments);
                run.ended = Some((stop, held));
                Err(self.stop_python())
            }
            "return" => {
                let call = run.active_call.take();
                let Some((_, mut point)) =
                    run.pending.take_if(|(pending, _)| Some(*pending) == call)
                else {
                    return Ok(());
                };
                drop(forward);
                self.stack_tensors(value, stack_name(0), &mut point.tensors);
                if let Some((point, env, tracer)) = self.pass_break(point) {
                    self.start_resume(point, env, tracer)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether a frame runs a generator's or a coroutine's code, which starts and returns
    /// at each resumption and yield.
    fn is_generator(&self, frame: &PyObjectRef) -> bool {
        const GENERATOR_FLAGS: u32 = 0x20 | 0x80 | 0x200;
        frame
            .get_attr("f_code", self.vm)
            .and_then(|code| code.get_attr("co_flags", self.vm))
            .and_then(|flags| flags.try_into_value::<u32>(self.vm))
            .is_ok_and(|flags| flags & GENERATOR_FLAGS != 0)
    }

    /// Records a break Python passed; where the graph being captured starts after it, the
    /// point with the environment and tracer to start it in.
    fn pass_break(&self, point: BreakPoint) -> Option<(BreakPoint, ShapeEnv, ResumeTracer)> {
        let mut forward = self.session.forward.borrow_mut();
        let run = forward.as_mut()?;
        run.points.push(point.clone());
        if run.target != Some(run.points.len()) {
            return None;
        }
        let (env, tracer) = run.start.take()?;
        Some((point, env, tracer))
    }

    /// A call Dynamo does not trace (an RNN module's, `run`), as a graph break around the
    /// whole call: in the graph being captured it ends the graph before the call (Python
    /// stops there); on the way to that graph, or in a probe, the call runs eagerly on real
    /// values, and the tensors it returned are the break's values on Python's stack
    /// (`___stack0[0]`, …), which the graph after it takes as inputs. Outside a run of
    /// forward the call just runs. `args` are the call's arguments, which the graph before
    /// it hands on.
    pub fn call_break(
        &self,
        reason: BreakReason,
        args: &[PyObjectRef],
        run: &dyn Fn() -> PyResult,
    ) -> Result<PyObjectRef> {
        let Some(mut point) = self.meet_break(reason, args, None)? else {
            return Ok(run()?);
        };
        // No capture runs here: the call's ops run eagerly.
        let value = run()?;
        self.stack_tensors(&value, stack_name(0), &mut point.tensors);
        if let Some((point, env, tracer)) = self.pass_break(point) {
            self.start_resume(point, env, tracer)?;
        }
        Ok(value)
    }

    /// How Dynamo names a module forward calls: by its path from the compiled module
    /// (`L['self']._modules['lstm']._modules['rnn']`), else by the variable of forward's
    /// frame or the global that holds it.
    pub fn module_source(&self, module: &PyObjectRef) -> String {
        let vm = self.vm;
        let root = self
            .session
            .forward
            .borrow()
            .as_ref()
            .and_then(|run| run.root.clone());
        let path = root.and_then(|root| {
            let named = vm.call_method(&root, "named_modules", ()).ok()?;
            let items: Vec<PyObjectRef> = vm.extract_elements_with(&named, Ok).ok()?;
            items.iter().find_map(|item| {
                let pair: Vec<PyObjectRef> = vm.extract_elements_with(item, Ok).ok()?;
                match pair.as_slice() {
                    [name, held] if held.is(module) => {
                        name.str(vm).ok().map(|s| s.to_string_lossy().into_owned())
                    }
                    _ => None,
                }
            })
        });
        if let Some(path) = path {
            return std::iter::once("L['self']".to_string())
                .chain(
                    path.split('.')
                        .filter(|part| !part.is_empty())
                        .map(|part| format!("._modules['{part}']")),
                )
                .collect();
        }
        let frame = user_frames(vm).into_iter().next();
        let named = |scope| frame.as_ref().and_then(|f| self.name_in(f, scope, module));
        match (named("f_locals"), named("f_globals")) {
            (Some(local), _) => format!("L['{local}']"),
            (None, Some(global)) => format!("G['{global}']"),
            (None, None) => self.type_name(module),
        }
    }

    /// The tensors in what a call returned, each named by its place in it (`___stack0[1][0]`
    /// for the first of a tuple in a tuple), in order.
    fn stack_tensors(
        &self,
        value: &PyObjectRef,
        name: String,
        tensors: &mut Vec<(String, Rc<Tensor>, DType)>,
    ) {
        if let Some(proxy) = value.downcast_ref::<TensorBase>() {
            if let TensorRef::Value(values, dtype) = &proxy.tensor() {
                tensors.push((name, values.clone(), *dtype));
            }
            return;
        }
        let is_sequence =
            value.downcast_ref::<PyTuple>().is_some() || value.downcast_ref::<PyList>().is_some();
        if !is_sequence {
            return;
        }
        let items: Vec<PyObjectRef> = self.vm.extract_elements_with(value, Ok).unwrap_or_default();
        for (index, item) in items.iter().enumerate() {
            self.stack_tensors(item, format!("{name}[{index}]"), tensors);
        }
    }

    /// Starts the capture of the graph after the break at `point`, in `env`, its arguments
    /// traced by `tracer`: a `SymFloat` to hand Python back, by name, for each value on the
    /// stack that is one.
    fn start_resume(
        &self,
        point: BreakPoint,
        mut env: ShapeEnv,
        tracer: ResumeTracer,
    ) -> Result<Vec<(String, PyObjectRef)>> {
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
        // A value handed back may be a symbol: a 0-dimensional input of the graph.
        let mut handed_back = Vec::new();
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
                handed_back.push((name.clone(), id));
            }
            resume.traced.push((name.clone(), traced));
        }
        self.session.start_capture(graph, env, Some(resume));
        if let Some(capture) = self.session.capture.borrow_mut().as_mut() {
            capture.floats = floats;
        }
        handed_back
            .into_iter()
            .map(|(name, id)| Ok((name, self.wrap_sym_float(id)?)))
            .collect()
    }

    /// The nodes of the graph being captured that Python holds at its break: the tensors in
    /// forward's locals and the one the break reads, in graph order (inputs excluded: the
    /// next graph gets those from the caller).
    fn held_nodes(&self, frame: &PyObjectRef, held: &[PyObjectRef]) -> Vec<NodeId> {
        let capture = self.session.capture.borrow();
        let Some(capture) = capture.as_ref() else {
            return Vec::new();
        };
        let mut values: Vec<PyObjectRef> = Vec::new();
        for value in self
            .frame_locals(frame)
            .into_iter()
            .map(|(_, value)| value)
            .chain(held.iter().cloned())
        {
            self.flatten(value, &mut values);
        }
        let mut nodes: Vec<NodeId> = values
            .iter()
            .filter_map(|value| {
                let proxy = value.downcast_ref::<TensorBase>()?;
                match &proxy.tensor() {
                    TensorRef::Node(id)
                        if proxy.capture() == capture.number
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

    /// `value`, or the items of a list or tuple, theirs too, in order.
    fn flatten(&self, value: PyObjectRef, into: &mut Vec<PyObjectRef>) {
        let is_sequence =
            value.downcast_ref::<PyTuple>().is_some() || value.downcast_ref::<PyList>().is_some();
        if !is_sequence {
            into.push(value);
            return;
        }
        let items: Vec<PyObjectRef> = self
            .vm
            .extract_elements_with(&value, Ok)
            .unwrap_or_default();
        for item in items {
            self.flatten(item, into);
        }
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
                if let TensorRef::Value(values, dtype) = &proxy.tensor() {
                    point.tensors.push((name, values.clone(), *dtype));
                }
            } else if value.downcast_ref::<PyList>().is_some()
                || value.downcast_ref::<PyTuple>().is_some()
            {
                // Dynamo hands the resume function a list's tensors by their place in it
                // (`skips[0]`).
                self.stack_tensors(&value, name, &mut point.tensors);
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
    pub(super) fn resume_input(&self, value: &Rc<Tensor>) -> Result<Option<NodeId>> {
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

    pub(super) fn name_constant(&self, value: &PyObjectRef, constant: &ConstTensor) {
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
}

//! One capture on the Python VM: the graph and `ShapeEnv` move into the session for a run
//! of `forward`, and come back out with the graph's outputs: what it returned, or, where the
//! graph ended at a graph break (`breaks.rs`), the tensors Python still holds there.
//!
//! Input: the entry (a module instance or a function), a plan (forward's first graph from
//! traced arguments; the graph after a given break, the run going there eagerly on the
//! call's values; or a probe that runs the whole forward eagerly) and the cache's
//! `ShapeEnv`. Output: the finished `Graph` (output node, `mark_dynamic` violations checked,
//! final replacements applied) and the break that ended it, or a probe's break points.
//! Invariant: the `ShapeEnv` is given back to the caller whatever happens, and the session
//! holds the capture and forward run it held before (none, or a script's) afterwards.

use super::EntryPoint;
use super::breaks::{BreakPoint, GraphBreak};
use super::call::{Argument, Call};
use super::errors::frontend_error;
use super::native::Session;
use super::script::{CallArg, Output};
use crate::frontend::FrontendError;
use crate::graph::{
    Graph, Holder, NodeId, Op, Returned, ReturnedItem, Shape, Span, Tensor, TracedArg,
};
use crate::guard::{ArgValue, AttributePath};
use crate::shape::{ShapeEnv, ShapeError};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Traces one argument of a resume function on first use: its name gives the policy
/// (automatic dynamic, the mode) the cache chose for that argument.
pub type ResumeTracer = Box<dyn FnMut(&mut ShapeEnv, &str) -> Result<TracedArg, ShapeError>>;

/// The state of a capture in progress, owned by the session while `forward` runs.
pub(crate) struct Capture {
    /// The graph under construction.
    pub graph: Graph,
    /// The cache's shape environment, moved in for the call.
    pub env: ShapeEnv,
    /// The node of each constant used so far.
    pub const_nodes: BTreeMap<usize, NodeId>,
    /// The strides of each view that is not laid out contiguously (`Ops::strides_of`).
    pub strides: BTreeMap<NodeId, Shape>,
    /// Which capture of this session it is: proxies of another one are refused.
    pub number: u64,
    /// For the graph after a break: the tensors Python held there.
    pub resume: Option<Resume>,
    /// The symbolic float arguments' input nodes, with their names and traced values.
    pub floats: BTreeMap<NodeId, (String, f64)>,
    /// The module attributes the trace read, each once, with the value it saw.
    pub attributes: Vec<(AttributePath, ArgValue)>,
    /// Where the trace first read each constant that is a module's plain tensor
    /// attribute, by constant id (`attributes::record`).
    pub holders: BTreeMap<usize, Holder>,
    /// The tensors an in-place op wrote through a view of, with where: PyTorch's write
    /// reaches them, a rebinding does not, so reading one later is an error
    /// (`call/in_place.rs`).
    pub stale: BTreeMap<NodeId, Span>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("number", &self.number)
            .finish_non_exhaustive()
    }
}

/// The arguments of the resume function a capture traces: the break's tensors, each made
/// an `Input` node when the trace first uses it, and its ints, traced when it starts.
pub(crate) struct Resume {
    /// The break's tensors, by name, with their input node once used.
    pub tensors: Vec<(String, Rc<Tensor>, Option<NodeId>)>,
    /// How each argument is traced.
    pub tracer: ResumeTracer,
    /// The arguments traced so far, in the order they were.
    pub traced: Vec<(String, TracedArg)>,
}

/// What a run of `forward` is for.
pub(crate) enum Plan<'a> {
    /// Forward's first graph, traced from these arguments; it ends at the first break.
    First(&'a [(String, TracedArg)]),
    /// The graph after break `index - 1`: the call runs eagerly on `values` to that break,
    /// then traces with the resume arguments `tracer` gives, to the next break or the end.
    Resume {
        /// The call's arguments.
        values: &'a [CallArg],
        /// Which graph (1 is the one after the first break).
        index: usize,
        /// How the resume arguments are traced.
        tracer: ResumeTracer,
    },
    /// The whole forward, eagerly on `values`, recording each break.
    Probe(&'a [CallArg]),
}

/// The state of a run of `forward` that may meet graph breaks, held by the session.
pub(crate) struct ForwardRun {
    /// The graph being captured (`None`: a probe, eager to the end).
    pub target: Option<usize>,
    /// The breaks passed so far, with what Python held at each.
    pub points: Vec<BreakPoint>,
    /// How many of the user's frames were running when forward was called (a script's
    /// module level): forward's own frame is the next one.
    pub outer_frames: usize,
    /// The compiled function's name, for resume names.
    pub function: String,
    /// Whether what Python prints is dropped (a replay that only traces).
    pub mute: bool,
    /// A probe's output, each piece with the number of breaks passed before it.
    pub printed: Vec<(usize, Output)>,
    /// Where the target graph starts after a break: its environment and tracer, until then.
    pub start: Option<(ShapeEnv, ResumeTracer)>,
    /// The break that ended the target graph, and the nodes Python held there.
    pub ended: Option<(GraphBreak, Vec<NodeId>)>,
    /// The module whose `forward` runs (`None` for a function): attribute paths start here.
    pub root: Option<PyObjectRef>,
}

/// A captured graph, and the break that ended it (`None`: forward returned).
#[derive(Debug)]
pub struct Segment {
    /// The graph.
    pub graph: Graph,
    /// The break it ended at.
    pub graph_break: Option<GraphBreak>,
    /// For a graph after a break: the resume arguments it traced, in tracing order.
    pub resume_args: Vec<(String, TracedArg)>,
    /// The module attributes it read, in reading order, with the values it saw.
    pub attributes: Vec<(AttributePath, ArgValue)>,
}

/// What a run gave: a segment, or a probe's break points.
pub(crate) enum Ran {
    Segment(Box<Segment>),
    Probe(Vec<BreakPoint>, Vec<(usize, Output)>),
}

/// Runs `entry` under `plan` and returns the finished graph, or the probe's break points.
pub(super) fn run(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    plan: Plan<'_>,
    env: &mut ShapeEnv,
) -> Result<Ran, FrontendError> {
    let outer_capture = session.capture.borrow_mut().take();
    let outer_forward = session.forward.borrow_mut().take();
    let result = run_plan(vm, session, entry, plan, env);
    *session.capture.borrow_mut() = outer_capture;
    *session.forward.borrow_mut() = outer_forward;
    result
}

fn run_plan(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    plan: Plan<'_>,
    env: &mut ShapeEnv,
) -> Result<Ran, FrontendError> {
    let mut forward = ForwardRun {
        target: Some(0),
        points: Vec::new(),
        outer_frames: super::call::user_frame_count(vm),
        function: entry.function.0.clone(),
        mute: false,
        printed: Vec::new(),
        start: None,
        ended: None,
        root: entry.module.clone(),
    };
    session.errors.borrow_mut().clear();
    let inputs = match plan {
        Plan::First(args) => {
            let mut graph = Graph::default();
            let mut inputs = Vec::new();
            let mut floats = BTreeMap::new();
            for (name, arg) in args {
                inputs.push(match arg {
                    TracedArg::Tensor(shape, dtype) => Argument::Tensor(graph.push_typed(
                        name,
                        Op::Input { name: name.clone() },
                        vec![],
                        shape.clone(),
                        None,
                        *dtype,
                    )),
                    TracedArg::Int(expr) => {
                        graph.int_inputs.push((name.clone(), expr.clone()));
                        Argument::Int(expr.clone())
                    }
                    TracedArg::Bool(b) => Argument::Bool(*b),
                    TracedArg::Float {
                        value,
                        symbolic: false,
                    } => Argument::FloatValue(*value),
                    TracedArg::Float {
                        value,
                        symbolic: true,
                    } => {
                        let node = graph.push(
                            name,
                            Op::Input { name: name.clone() },
                            vec![],
                            vec![],
                            None,
                        );
                        floats.insert(node, (name.clone(), *value));
                        Argument::SymFloat(node)
                    }
                });
            }
            start_capture(session, graph, std::mem::take(env), None);
            if let Some(capture) = session.capture.borrow_mut().as_mut() {
                capture.floats = floats;
            }
            inputs
        }
        Plan::Resume {
            values,
            index,
            tracer,
        } => {
            forward.target = Some(index);
            forward.mute = true;
            forward.start = Some((std::mem::take(env), tracer));
            values.iter().map(Argument::value).collect()
        }
        Plan::Probe(values) => {
            forward.target = None;
            values.iter().map(Argument::value).collect()
        }
    };
    let probing = forward.target.is_none();
    *session.forward.borrow_mut() = Some(forward);
    let python = |exc| frontend_error(vm, session, exc);
    let result = call_entry(vm, session, entry, &inputs).and_then(|value| {
        if probing {
            Ok((Vec::new(), Returned::Tensor))
        } else {
            Call::output_nodes(vm, &value).map_err(python)
        }
    });
    let forward = session
        .forward
        .borrow_mut()
        .take()
        .expect("only this function ends a forward run");
    let capture = session.capture.borrow_mut().take();
    // The environment goes back whatever happened: from the capture, or unused.
    let (capture, resume_args) = match (capture, forward.start) {
        (Some(mut capture), _) => {
            *env = std::mem::take(&mut capture.env);
            let traced = capture
                .resume
                .take()
                .map(|resume| resume.traced)
                .unwrap_or_default();
            (Some(capture), traced)
        }
        (None, Some((start, _))) => {
            *env = start;
            (None, Vec::new())
        }
        (None, None) => (None, Vec::new()),
    };
    if probing {
        result?;
        return Ok(Ran::Probe(forward.points, forward.printed));
    }
    let Some(mut capture) = capture else {
        result?;
        return Err(FrontendError::Replay {
            breaks: forward.points.len(),
            target: forward.target.unwrap_or(0),
        });
    };
    let (outputs, returned, graph_break) = match forward.ended {
        Some((graph_break, held)) => {
            let returned = Returned::Tree(ReturnedItem::Tuple(
                (0..held.len()).map(ReturnedItem::Output).collect(),
            ));
            (held, returned, Some(graph_break))
        }
        None => {
            let (outputs, returned) = result?;
            (outputs, returned, None)
        }
    };
    let mut graph = std::mem::take(&mut capture.graph);
    graph.push("output", Op::Output, outputs, vec![], None);
    graph.returned = returned;
    if let Some(violation) = env.take_violations().into_iter().next() {
        return Err(violation.into());
    }
    graph.map_exprs(|e| env.replace(e));
    Ok(Ran::Segment(Box::new(Segment {
        graph,
        graph_break,
        resume_args,
        attributes: std::mem::take(&mut capture.attributes),
    })))
}

/// Starts capturing `graph` in `env` (at forward's start, or after a break).
pub(super) fn start_capture(
    session: &Session,
    graph: Graph,
    env: ShapeEnv,
    resume: Option<Resume>,
) {
    let number = session.captures.get() + 1;
    session.captures.set(number);
    *session.capture.borrow_mut() = Some(Capture {
        graph,
        env,
        const_nodes: BTreeMap::new(),
        strides: BTreeMap::new(),
        number,
        resume,
        floats: BTreeMap::new(),
        attributes: Vec::new(),
        holders: BTreeMap::new(),
        stale: BTreeMap::new(),
    });
}

fn call_entry(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    inputs: &[Argument],
) -> Result<PyObjectRef, FrontendError> {
    let python = |exc| frontend_error(vm, session, exc);
    let args: Vec<PyObjectRef> = Call::input_proxies(vm, inputs).map_err(python)?;
    // Keyword-only inputs go by name; a call of another arity (a script's) goes as it came,
    // for Python to say what is missing.
    let keyword = if args.len() == entry.inputs.len() {
        entry.keyword
    } else {
        0
    };
    let names = entry.inputs[entry.inputs.len() - keyword..].iter().cloned();
    let args = FuncArgs::with_kwargs_names(args.into_iter(), names);
    entry.callable.call(args, vm).map_err(python)
}

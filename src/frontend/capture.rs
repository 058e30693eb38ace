//! The state of one capture and of one run of `forward`: the graph under construction with
//! its `ShapeEnv`, the plan a run follows (forward's first graph, the graph after a break,
//! or an eager probe), and what a run gives back (a finished segment, or a probe's break
//! points).
//!
//! In: nothing but the graph and shape floors' types. Out: the plain state the session
//! (`objects.rs`) holds while `forward` runs, and `forward.rs` drives. Invariant: one
//! capture's nodes carry its number, so proxies of another capture are refused.

use super::breaks::{BreakPoint, GraphBreak};
use super::host::{CallArg, Output};
use crate::graph::{Graph, Holder, NodeId, Shape, Span, Tensor, TracedArg};
use crate::guard::{ArgValue, AttributePath};
use crate::shape::{ShapeEnv, ShapeError};
use rustpython_vm::PyObjectRef;
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
    /// Tensor ops the trace called, those that add no node included (a pad by zero, a
    /// reshape to the same shape): Dynamo records a call for each.
    pub ops_called: usize,
}

impl Capture {
    /// An empty capture of `graph` in `env`, numbered `number`.
    pub fn new(graph: Graph, env: ShapeEnv, number: u64, resume: Option<Resume>) -> Capture {
        Capture {
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
            ops_called: 0,
        }
    }
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
    /// The calls forward's frame made into functions of the user's file so far (a
    /// helper's, a submodule's `forward`), counted as they start: the n-th is the same
    /// call in every run of the same call.
    pub calls: usize,
    /// The number of the call forward's frame is in, while it is in one.
    pub active_call: Option<usize>,
    /// Where the graph being captured ends before a call that breaks inside: the call's
    /// number and the break (Dynamo's restart of the frame's analysis, which then ends
    /// the graph at the call).
    pub stop_call: Option<(usize, GraphBreak)>,
    /// A break met inside a call while the graph was being captured: the run starts again
    /// with it as `stop_call`.
    pub restart: Option<(usize, GraphBreak)>,
    /// A break met inside a call with real values: forward's break point at that call,
    /// passed when the call returns (what it returned is the resume function's
    /// `___stack0`). The call runs eagerly to its end, its other breaks included.
    pub pending: Option<(usize, BreakPoint)>,
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
    /// Tensor ops the trace called (`Capture::ops_called`).
    pub ops_called: usize,
}

/// What a run gave: a segment, or a probe's break points.
pub(crate) enum Ran {
    Segment(Box<Segment>),
    Probe(Vec<BreakPoint>, Vec<(usize, Output)>),
}

//! One capture on the Python VM: the graph and `ShapeEnv` move into the session for the
//! call of `forward`, and come back out with the returned tensors as the graph's outputs.
//!
//! Input: the entry (a module instance or a function), the input shapes and the cache's
//! `ShapeEnv`. Output: the finished `Graph` (output node, `mark_dynamic` violations checked,
//! final replacements applied). Invariant: the `ShapeEnv` is given
//! back to the caller whatever happens, and the session holds no capture afterwards.

use super::EntryPoint;
use super::call::{Argument, Call};
use super::errors::frontend_error;
use super::native::Session;
use crate::frontend::FrontendError;
use crate::graph::{Graph, NodeId, Op, Returned, TracedArg};
use crate::shape::ShapeEnv;
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};
use std::collections::BTreeMap;

/// The state of a capture in progress, owned by the session while `forward` runs.
#[derive(Debug)]
pub(crate) struct Capture {
    /// The graph under construction.
    pub graph: Graph,
    /// The cache's shape environment, moved in for the call.
    pub env: ShapeEnv,
    /// The node of each constant used so far.
    pub const_nodes: BTreeMap<usize, NodeId>,
    /// Which capture of this session it is: proxies of another one are refused.
    pub number: u64,
}

/// Runs `entry` on `args` (tensor proxies of their shapes, ints as constants or `SymInt`s,
/// bools) and returns the finished graph.
pub(super) fn run(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    args: &[(String, TracedArg)],
    env: &mut ShapeEnv,
) -> Result<Graph, FrontendError> {
    let mut graph = Graph::default();
    let mut inputs = Vec::new();
    for (name, arg) in args {
        inputs.push(match arg {
            TracedArg::Tensor(shape) => Argument::Tensor(graph.push(
                name,
                Op::Input { name: name.clone() },
                vec![],
                shape.clone(),
                None,
            )),
            TracedArg::Int(expr) => {
                graph.int_inputs.push((name.clone(), expr.clone()));
                Argument::Int(expr.clone())
            }
            TracedArg::Bool(b) => Argument::Bool(*b),
        });
    }
    let number = session.captures.get() + 1;
    session.captures.set(number);
    session.errors.borrow_mut().clear();
    *session.capture.borrow_mut() = Some(Capture {
        graph,
        env: std::mem::take(env),
        const_nodes: BTreeMap::new(),
        number,
    });
    let outputs = call_entry(vm, session, entry, &inputs);
    let Some(capture) = session.capture.borrow_mut().take() else {
        unreachable!("only this function starts and ends a capture")
    };
    *env = capture.env;
    let mut graph = capture.graph;
    let (outputs, returned) = outputs?;
    graph.push("output", Op::Output, outputs, vec![], None);
    graph.returned = returned;
    if let Some(violation) = env.take_violations().into_iter().next() {
        return Err(violation.into());
    }
    graph.map_exprs(|e| env.replace(e));
    Ok(graph)
}

fn call_entry(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    inputs: &[Argument],
) -> Result<(Vec<NodeId>, Returned), FrontendError> {
    let python = |exc| frontend_error(vm, session, exc);
    let args: Vec<PyObjectRef> = Call::input_proxies(vm, inputs).map_err(python)?;
    let result = entry.callable.call(args, vm).map_err(python)?;
    Call::output_nodes(vm, &result).map_err(python)
}

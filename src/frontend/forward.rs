//! A run of `forward` on the VM under a plan: the capture's state moves into the session,
//! the entry is called on proxies or values, and the graph comes back finished.
//!
//! In: the entry, a `Plan` (`capture.rs`) and the cache's `ShapeEnv`. Out: a `Ran`: the
//! finished segment, or a probe's break points. Invariant: the session holds the capture
//! and forward run it held before (none, or a script's) afterwards, whatever happens.
use super::breaks::GraphBreak;
use super::call::{Argument, Call};
use super::capture::{ForwardRun, Plan, Ran, ResumeTracer, Segment};
use super::objects::Session;
use super::program::EntryPoint;
use super::raised::frontend_error;
use crate::frontend::errors::FrontendError;
use crate::graph::{Graph, Op, Returned, ReturnedItem, Span, TracedArg};
use crate::shape::ShapeEnv;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyRef, VirtualMachine};
use std::collections::BTreeMap;

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
    retrace(vm, session)?;
    result
}

/// What one run gave: the plan's result, or a break met inside a call of forward's frame
/// while capturing, after which the run starts again (`run_plan`).
enum Once {
    Ran(Ran),
    Restart {
        /// The call's number and the break.
        stop_call: (usize, GraphBreak),
        /// The resume arguments' tracer, given back for the next run.
        tracer: Option<ResumeTracer>,
    },
}

/// Runs `plan`; where the graph being captured meets a break inside a call forward's frame
/// made, runs it again from the same environment, the graph ending where that call starts
/// (Dynamo restarts the frame's analysis the same way).
fn run_plan(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    mut plan: Plan<'_>,
    env: &mut ShapeEnv,
) -> Result<Ran, FrontendError> {
    let start = env.clone();
    let mut stop_call = None;
    loop {
        let first = match &plan {
            Plan::First(args) => Some(*args),
            _ => None,
        };
        let resume = match &plan {
            Plan::Resume { values, index, .. } => Some((*values, *index)),
            _ => None,
        };
        match run_once(vm, session, entry, plan, env, stop_call.take())? {
            Once::Ran(ran) => return Ok(ran),
            Once::Restart {
                stop_call: stop,
                tracer,
            } => {
                *env = start.clone();
                plan = match (first, resume, tracer) {
                    (Some(args), _, _) => Plan::First(args),
                    (None, Some((values, index)), Some(tracer)) => Plan::Resume {
                        values,
                        index,
                        tracer,
                    },
                    _ => {
                        return Err(FrontendError::Replay {
                            breaks: 0,
                            target: stop.0,
                        });
                    }
                };
                stop_call = Some(stop);
            }
        }
    }
}

/// Switches the run's trace function on again: a trace function that raises (to end the
/// graph as a call starts) is switched off by the VM.
fn retrace(vm: &VirtualMachine, session: &PyRef<Session>) -> Result<(), FrontendError> {
    let Some(trace) = session.tracer.borrow().clone() else {
        return Ok(());
    };
    vm.sys_module
        .get_attr("settrace", vm)
        .and_then(|settrace| settrace.call((trace,), vm))
        .map(drop)
        .map_err(|exc| frontend_error(vm, session, exc))
}

fn run_once(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    entry: &EntryPoint,
    plan: Plan<'_>,
    env: &mut ShapeEnv,
    stop_call: Option<(usize, GraphBreak)>,
) -> Result<Once, FrontendError> {
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
        calls: 0,
        active_call: None,
        stop_call,
        restart: None,
        pending: None,
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
            session.start_capture(graph, std::mem::take(env), None);
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
            // What forward returned is read after its frame ended: an error about it with
            // no line of the file is at forward's `def`.
            Call::output_nodes(vm, &value).map_err(|exc| match python(exc) {
                FrontendError::Unsupported {
                    span: Span { line: 1, col: 1 },
                    construct,
                    note,
                } => FrontendError::Unsupported {
                    span: Span {
                        line: entry.function.1,
                        col: 1,
                    },
                    construct,
                    note,
                },
                err => err,
            })
        }
    });
    let forward = session
        .forward
        .borrow_mut()
        .take()
        .expect("only this function ends a forward run");
    let capture = session.capture.borrow_mut().take();
    if let Some(stop_call) = forward.restart {
        // The environment is the caller's to restore: the run starts again from it.
        let tracer = capture
            .and_then(|mut capture| capture.resume.take())
            .map(|resume| resume.tracer);
        return Ok(Once::Restart { stop_call, tracer });
    }
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
        return Ok(Once::Ran(Ran::Probe(forward.points, forward.printed)));
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
    Ok(Once::Ran(Ran::Segment(Box::new(Segment {
        graph,
        graph_break,
        resume_args,
        attributes: std::mem::take(&mut capture.attributes),
        ops_called: capture.ops_called,
    }))))
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

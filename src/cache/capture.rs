//! The front half of compiling an entry: each argument's dims and ints given their policy
//! (`mark_dynamic`, `mark_static`, automatic dynamic, the mode's default), the trace of the
//! function or of a resume function, its guards, and the compile pipeline's kernels; and
//! the capture of an eager call past the recompile limit.
//!
//! In: a call and the cache's automatic-dynamic memory. Out: a new `Entry`, or the error
//! that stops it. Invariant: a compilation that fails adds no entry.

use super::*;
use crate::compile::{self, CompileOptions};
use crate::config::{CallMarks, CompileConfig, DynamicMode};
use crate::frontend::{self, CallArg, FrontendError};
use crate::graph::{Graph, TracedArg};
use crate::guard::{ArgValue, CallShapes, GuardSet, LiftedArg};
use crate::shape::{DimPolicy, DimSource, Mark, ShapeEnv, ShapeError};

impl CodeCache {
    /// Traces the function for these sizes under `config` and produces its guards.
    pub(super) fn compile(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        marked: &[bool],
    ) -> Result<Entry, FrontendError> {
        // PyTorch merges an input into the automatic-dynamic memory when the trace first
        // looks at it: all of them for a trace that finishes, only those looked at before the
        // failure for one that raises. (Whether the Python read an int before failing is not
        // seen here, so a failed trace leaves the ints' memory as it was.)
        let merged = self.frames[0].merged(call);
        let mut env = ShapeEnv::new();
        if config.dynamic == DynamicMode::True {
            env.lift_dynamic();
        }
        let traced = match trace_args(&mut env, &merged, call, marks, config.dynamic) {
            Ok(traced) => traced,
            Err((failing, err)) => {
                self.frames[0].remember(&merged, |i, _| i <= failing);
                return Err(err.into());
            }
        };
        let segment = match frontend::capture(&self.program, &self.entry, &traced, &mut env) {
            Ok(segment) => segment,
            Err(err) => {
                let looked_at = env.realised();
                self.frames[0].remember(&merged, |_, name| looked_at.contains(name));
                return Err(err);
            }
        };
        self.frames[0].remember(&merged, |_, _| true);
        Ok(self.new_entry(0, wrapper, config, segment, env, traced, marked, None))
    }

    /// Traces the graph after break `index - 1` (a resume function's, frame `frame`) for
    /// its arguments `call`, forward running eagerly on the call's `values` to the break.
    /// Tensors are traced as the mode and automatic dynamic say when the graph first uses
    /// them; ints are constants (Python holds them as plain ints across the break).
    pub(super) fn compile_resume(
        &mut self,
        frame: usize,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        values: &[CallArg],
        index: usize,
    ) -> Result<Entry, FrontendError> {
        let function = self.frames[frame].function.clone();
        let merged: Vec<ArgState> = call
            .args
            .iter()
            .map(|(name, value)| {
                let state = self.resume_states.get(&(function.clone(), name.clone()));
                merge_state(state, value)
            })
            .collect();
        let args = call.args.clone();
        let states = merged.clone();
        let stacks: Vec<String> = self
            .last_points
            .get(index - 1)
            .map(|point| point.stack.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default();
        let dynamic = config.dynamic;
        let tracer: frontend::ResumeTracer = Box::new(move |env, name| {
            let position = args
                .iter()
                .position(|(arg, _)| arg == name)
                .expect("the break's arguments are the frame's");
            let (name, value) = &args[position];
            // Python holds the frame's numbers as plain ints and floats, which the graph
            // bakes in; the value a break hands back (`___stack0`) may be a symbol.
            let on_stack = stacks.contains(name);
            let dynamic = match value {
                ArgValue::Int(_) | ArgValue::Float(_) if !on_stack => DynamicMode::False,
                _ => dynamic,
            };
            trace_arg(
                env,
                &states[position],
                name,
                value,
                &CallMarks::default(),
                dynamic,
            )
        });
        let mut env = ShapeEnv::new();
        if dynamic == DynamicMode::True {
            env.lift_dynamic();
        }
        let segment = match frontend::capture_resume(
            &self.program,
            &self.entry,
            values,
            index,
            tracer,
            &mut env,
        ) {
            Ok(segment) => segment,
            Err(err) => {
                let looked_at = env.realised();
                self.remember_resume(&function, call, &merged, |name| looked_at.contains(name));
                return Err(err);
            }
        };
        let used_names: Vec<&str> = segment
            .resume_args
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        self.remember_resume(&function, call, &merged, |name| used_names.contains(&name));
        let mut used = Vec::new();
        let mut traced = Vec::new();
        for (position, (name, _)) in call.args.iter().enumerate() {
            if let Some((_, arg)) = segment.resume_args.iter().find(|(n, _)| n == name) {
                used.push(position);
                traced.push((name.clone(), arg.clone()));
            }
        }
        let marked = vec![false; traced.len()];
        Ok(self.new_entry(
            frame,
            wrapper,
            config,
            segment,
            env,
            traced,
            &marked,
            Some(used),
        ))
    }

    /// Keeps `merged` as the automatic-dynamic memory of resume function `function`'s
    /// arguments that `keep` selects by name.
    fn remember_resume(
        &mut self,
        function: &str,
        call: &CallShapes,
        merged: &[ArgState],
        keep: impl Fn(&str) -> bool,
    ) {
        for ((name, _), state) in call.args.iter().zip(merged) {
            if keep(name) {
                self.resume_states
                    .insert((function.to_string(), name.clone()), state.clone());
            }
        }
    }

    /// A new entry of frame `frame` from its traced graph: guards, kernels, and how its
    /// arguments look.
    #[expect(
        clippy::too_many_arguments,
        reason = "an entry is made of all of these"
    )]
    fn new_entry(
        &mut self,
        frame: usize,
        wrapper: usize,
        config: &CompileConfig,
        segment: frontend::Segment,
        env: ShapeEnv,
        traced: Vec<(String, TracedArg)>,
        marked: &[bool],
        used: Option<Vec<usize>>,
    ) -> Entry {
        let graph = segment.graph;
        let lifted: Vec<LiftedArg> = graph
            .lifted
            .iter()
            .map(|lifted| LiftedArg {
                holder: lifted.holder.clone(),
                shape: graph.shape(lifted.node).clone(),
                sizes: lifted.sizes.clone(),
                dtype: graph.node(lifted.node).dtype,
            })
            .collect();
        let guards =
            GuardSet::produce(&env, &traced, &lifted, marked).with_attributes(&segment.attributes);
        let compiled = compile::compile(&graph, &|sym| env.range(sym), &CompileOptions::ENTRY);
        let mut inputs = Vec::new();
        let mut values = Vec::new();
        for (name, arg) in &traced {
            match arg {
                TracedArg::Tensor(shape, _) => inputs.push((
                    name.clone(),
                    shape.iter().map(|d| dim_spec(&env, d)).collect(),
                )),
                TracedArg::Int(expr) => {
                    values.push((name.clone(), ValueSpec::Int(dim_spec(&env, expr))))
                }
                TracedArg::Bool(b) => values.push((name.clone(), ValueSpec::Bool(*b))),
                TracedArg::Float { value, symbolic } => values.push((
                    name.clone(),
                    ValueSpec::Float((!symbolic).then_some(*value)),
                )),
            }
        }
        let code = &mut self.frames[frame];
        let id = code.attempts;
        code.compiled += 1;
        Entry {
            id,
            wrapper,
            config: config.clone(),
            graph,
            env,
            guards,
            inputs,
            values,
            compiled,
            graph_break: segment.graph_break,
            frame,
            marked: marked.to_vec(),
            ops_called: segment.ops_called,
            used,
        }
    }

    /// Captures a graph for an eager call (recompile limit reached), not cached: with every
    /// input dim symbolic when `symbolic` (so its kernels serve any later eager call with the
    /// same ops), else at the call's static sizes. Returns the graph and the `ShapeEnv`
    /// whose ranges it was traced under.
    pub fn eager_capture(
        &self,
        call: &CallShapes,
        symbolic: bool,
    ) -> Result<(Graph, ShapeEnv), FrontendError> {
        let policy = if symbolic {
            DimPolicy::Dynamic
        } else {
            DimPolicy::Static
        };
        let mut env = ShapeEnv::new();
        let mut traced = Vec::with_capacity(call.args.len());
        for (name, value) in &call.args {
            let arg = match value {
                ArgValue::Tensor(dims, dtype) => {
                    let mut shape = Vec::with_capacity(dims.len());
                    for (dim, &size) in dims.iter().enumerate() {
                        let source = DimSource::dim(name, dim);
                        shape.push(env.add_input_dim(source, size, policy, None, "eager")?);
                    }
                    TracedArg::Tensor(shape, *dtype)
                }
                ArgValue::Int(int) => {
                    TracedArg::Int(env.add_input_int(name, *int, symbolic, "eager"))
                }
                ArgValue::Bool(b) => TracedArg::Bool(*b),
                ArgValue::Float(value) => TracedArg::Float {
                    value: *value,
                    symbolic: false,
                },
            };
            traced.push((name.clone(), arg));
        }
        let segment = frontend::capture(&self.program, &self.entry, &traced, &mut env)?;
        if let Some(graph_break) = segment.graph_break {
            // PyTorch runs the whole function eagerly here, Python between the graphs
            // included; Tailor's eager kernels are one graph's.
            return Err(FrontendError::Break {
                span: graph_break.span,
                what: "in a call past the recompile limit".into(),
                note: "PyTorch runs such a call eagerly, through its breaks; Tailor's eager run covers a function without breaks".into(),
            });
        }
        Ok((segment.graph, env))
    }
}

/// The arguments of a call as the trace receives them, each dim or int given its policy:
/// `mark_dynamic`, `mark_static`, automatic dynamic (from `merged`, the memory with this
/// call merged in) or the mode's default. On an error, the argument it happened at.
fn trace_args(
    env: &mut ShapeEnv,
    merged: &[ArgState],
    call: &CallShapes,
    marks: &CallMarks,
    dynamic: DynamicMode,
) -> Result<Vec<(String, TracedArg)>, (usize, ShapeError)> {
    call.args
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            trace_arg(env, &merged[i], name, value, marks, dynamic)
                .map(|arg| (name.clone(), arg))
                .map_err(|err| (i, err))
        })
        .collect()
}

/// One argument of [`trace_args`], with its automatic-dynamic memory `merged`.
fn trace_arg(
    env: &mut ShapeEnv,
    merged: &ArgState,
    name: &str,
    value: &ArgValue,
    marks: &CallMarks,
    dynamic: DynamicMode,
) -> Result<TracedArg, ShapeError> {
    let automatic = dynamic != DynamicMode::False;
    Ok(match value {
        ArgValue::Tensor(dims, dtype) => {
            let mut shape = Vec::with_capacity(dims.len());
            for (dim, &size) in dims.iter().enumerate() {
                let mark = marks
                    .dynamic
                    .iter()
                    .find(|m| m.input == name && m.dim == dim);
                let fixed = marks.fixed.iter().any(|(n, d)| n == name && *d == dim);
                let propagated = marks.propagated.iter().any(|(n, d)| n == name && *d == dim);
                let changed = matches!(
                    merged,
                    ArgState::Tensor(dims) if dims[dim] == DimState::Dynamic
                );
                // PyTorch's order: a strong mark, then a weak one (which wins over
                // mark_static and the mode), then mark_static, then the mode's policy.
                let (policy, why) = if mark.is_some() {
                    (DimPolicy::Dynamic, "mark_dynamic")
                } else if propagated {
                    (
                        DimPolicy::Dynamic,
                        "an earlier compiled call stamped this dim dynamic on the tensor (AOTAutograd's _dynamo_propagated_dynamic_indices)",
                    )
                } else if fixed {
                    (DimPolicy::Static, "mark_static")
                } else if automatic && changed {
                    (
                        DimPolicy::Dynamic,
                        "automatic dynamic: this size changed between compilations",
                    )
                } else if dynamic == DynamicMode::True {
                    (DimPolicy::Duck, "dynamic=True")
                } else if dynamic == DynamicMode::False {
                    (DimPolicy::Static, "dynamic=False")
                } else {
                    (
                        DimPolicy::Static,
                        "dynamic=None: static until this size changes",
                    )
                };
                let mark = mark.map(|m| Mark {
                    min: m.min,
                    max: m.max,
                });
                let source = DimSource::dim(name, dim);
                shape.push(env.add_input_dim(source, size, policy, mark, why)?);
            }
            TracedArg::Tensor(shape, *dtype)
        }
        ArgValue::Int(int) => {
            let changed = *merged == ArgState::Int(DimState::Dynamic);
            let (dynamic, why) = if automatic && changed {
                (
                    true,
                    "automatic dynamic: this int changed between compilations",
                )
            } else {
                match dynamic {
                    DynamicMode::True => (true, "dynamic=True"),
                    DynamicMode::False => (false, "dynamic=False"),
                    DynamicMode::Auto => {
                        (false, "dynamic=None: an int is a constant until it changes")
                    }
                }
            };
            TracedArg::Int(env.add_input_int(name, *int, dynamic, why))
        }
        ArgValue::Bool(b) => TracedArg::Bool(*b),
        // As an int: a constant until it changes (automatic dynamic), or under
        // dynamic=True, a symbolic float, which the graph takes as a 0-d input.
        ArgValue::Float(value) => {
            let changed = *merged == ArgState::Float(DimState::Dynamic);
            let symbolic = dynamic == DynamicMode::True || (automatic && changed);
            TracedArg::Float {
                value: *value,
                symbolic,
            }
        }
    })
}

/// Seeded random values of a call's sizes: what Python runs on between the graphs of a
/// function that breaks when the caller gives sizes only.
pub(super) fn random_values(call: &CallShapes) -> Vec<CallArg> {
    call.args
        .iter()
        .map(|(name, value)| match value {
            ArgValue::Tensor(dims, dtype) => {
                let shape: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
                let tensor = crate::graph::random_inputs(&[(name.clone(), shape)], 0).remove(0);
                CallArg::Tensor(tensor.as_random(*dtype), *dtype)
            }
            ArgValue::Int(v) => CallArg::Int(*v),
            ArgValue::Bool(b) => CallArg::Bool(*b),
            ArgValue::Float(v) => CallArg::Float(*v),
        })
        .collect()
}

//! The executor: the one place a call's kernels are chosen, built, run and checked. It sits on
//! the session floor, above the cache and the runtimes (`runtime::cpu`, `runtime::gpu`) it drives.
//!
//! In: a [`Device`] choice (`auto|gpu|cpu`, parsed only here), then calls the guard cache has
//! decided (`CallEvent`: an entry's id, or eager) with their input tensors, or runs of an
//! entry's kernels in a chosen WGSL mode. Out: per run an [`Outcome`] — the outputs read back,
//! the time spent building (parameter upload, pipelines) and running, per-kernel times when
//! asked, and with `check` the CPU reference's outputs and the largest difference from them.
//! The CLI, the page and the benchmark call this and nothing else, so they cannot disagree on
//! how a call runs.
//!
//! Invariants: an entry's kernels are built once per mode (and, for static code of a
//! symbolic schedule, per size) and kept; an eager call (past the recompile limit) runs
//! per-op kernels with dynamic sizes, compiled from a capture whose input dims are symbolic,
//! and kept by their schedule's text, so a later eager call whatever its sizes runs the
//! same kernels instead of building new ones, as PyTorch's eager mode runs precompiled
//! library kernels. The backends sit behind one interface (`backend.rs`: the CPU's in
//! `cpu.rs`, the GPU's in `gpu.rs`), so nothing here has an arm per backend; a run owns its
//! kernels while it is in flight, so the page can await it without holding a borrow of the
//! executor.

mod backend;
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;

pub use backend::{Backend, Device, NO_GPU_RUNTIME, ProductRun};

use crate::cache::{Action, CallEvent, CodeCache, Entry};
use crate::codegen::Mode;
use crate::compile::{self, CompileOptions, Compiled};
use crate::error::Error;
use crate::frontend::{BreakPoint, CallArg};
use crate::graph::{self, DType, Graph, Op, Tensor};
use crate::guard::{ArgValue, CallShapes};
use crate::lower::Schedule;
use crate::runtime::{RunError, bind};
use crate::symbolic::Bindings;
use backend::Kernels;
use std::collections::HashMap;
use std::rc::Rc;

/// Which kept kernels a run uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KernelKey {
    /// A cache entry's kernels in `mode`; `sizes` is the call static code of a symbolic
    /// schedule was specialised for (`x=8,64`), empty otherwise.
    Entry {
        /// The entry's frame (0: the compiled function; else a resume function).
        frame: usize,
        /// The entry's compile id.
        id: usize,
        /// How sizes reach the kernels.
        mode: Mode,
        /// The sizes baked into static code.
        sizes: String,
    },
    /// An eager call's per-op kernels, by the text of the schedule they run.
    Eager(String),
    /// Kernels a caller names itself (a benchmark's variant of a schedule).
    Named(String),
}

/// What a run is asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Compare the outputs with the CPU reference (`graph::eval`).
    pub check: bool,
    /// Measure each kernel's time (GPU only).
    pub timing: bool,
}

/// A run whose kernels are ready for the backend. It owns them until it is kept again.
pub struct Job {
    key: KernelKey,
    kernels: Box<dyn Kernels>,
    /// Preparing the kernels on the host (WGSL of a new specialisation; for an eager call,
    /// its capture and lowering), in ms.
    prepare_ms: f64,
    eager: bool,
    inputs: Vec<Tensor>,
    /// The call's int arguments, in order.
    ints: Vec<i64>,
    expected: Option<Vec<Tensor>>,
    reference_ms: f64,
    timing: bool,
}

/// A finished run: its outcome, and the kernels to keep for the next one.
pub struct Finished {
    key: KernelKey,
    kernels: Box<dyn Kernels>,
    /// What the run gave.
    pub outcome: Result<Outcome, Error>,
}

/// What one run gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The returned tensors, read back.
    pub outputs: Vec<Tensor>,
    /// Building kernels for this run: parameter upload and pipeline creation, plus WGSL
    /// of a specialisation not emitted before (0 once they exist), in ms.
    pub build_ms: f64,
    /// Upload, kernels and read-back, in ms (without `build_ms`); for an eager call also
    /// its capture and lowering, which eager mode pays on every call.
    pub run_ms: f64,
    /// The CPU reference's time, when checked, in ms.
    pub reference_ms: f64,
    /// The CPU reference's outputs, when checked.
    pub expected: Option<Vec<Tensor>>,
    /// The largest difference from the CPU reference, when checked.
    pub max_abs_err: Option<f32>,
    /// Each kernel's time, when asked for and measured.
    pub kernel_ms: Vec<(String, f64)>,
    /// How `kernel_ms` was measured: `timestamps`, `submit_to_done`, or `off`.
    pub timing: &'static str,
    /// On the GPU, each product kernel and the strategy it ran with at this call's sizes
    /// (`GemmStrategy::for_sizes`), and the large form building meanwhile (tiers); empty on
    /// the CPU backend, whose products are its own.
    pub products: Vec<ProductRun>,
    /// The host CPU's part of `run_ms`: on the GPU, finding or making the call's buffers and
    /// bind groups, writing inputs, recording and submitting (the rest is the device's work
    /// and read-back); on the CPU backend, all of it.
    pub host_ms: f64,
    /// On the CPU backend, what the program's arena holds after the run: the memory plan's
    /// buffers at the largest sizes it has run (`Sizes::planned_elems`), in bytes; 0 on the
    /// GPU, whose buffers `Backend::stats` counts.
    pub arena_bytes: usize,
    /// On the CPU backend, the products' tiles and packed operands the program keeps
    /// between calls, in bytes; 0 on the GPU.
    pub scratch_bytes: usize,
}

impl Outcome {
    /// This run followed by the run of the graph after its break: the later one's outputs,
    /// the times added, kernels and products listed in order, the worse error.
    pub fn then(mut self, later: Outcome) -> Outcome {
        self.outputs = later.outputs;
        self.build_ms += later.build_ms;
        self.run_ms += later.run_ms;
        self.reference_ms += later.reference_ms;
        self.expected = later.expected;
        self.max_abs_err = match (self.max_abs_err, later.max_abs_err) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.kernel_ms.extend(later.kernel_ms);
        self.products.extend(later.products);
        self.host_ms += later.host_ms;
        // Each graph's program keeps its own arena and scratch.
        self.arena_bytes += later.arena_bytes;
        self.scratch_bytes += later.scratch_bytes;
        self
    }
}

/// Runs calls on one backend and keeps every entry's kernels.
pub struct Executor {
    backend: Rc<Backend>,
    kept: HashMap<KernelKey, Box<dyn Kernels>>,
    clock: Rc<dyn Fn() -> f64>,
}

impl Executor {
    /// An executor with no kernels yet; `clock` gives milliseconds.
    pub fn new(backend: Rc<Backend>, clock: Rc<dyn Fn() -> f64>) -> Executor {
        Executor {
            backend,
            kept: HashMap::new(),
            clock,
        }
    }

    /// The backend runs go to.
    pub fn backend(&self) -> &Rc<Backend> {
        &self.backend
    }

    /// Drops every kept kernel (the model's cache was reset).
    pub fn clear(&mut self) {
        self.kept.clear();
    }

    /// The run of a call the cache has decided: the entry's kernels for a compile or a
    /// hit, per-op kernels for an eager call. `inputs` are the call's tensors.
    pub fn start_call(
        &mut self,
        cache: &CodeCache,
        event: &CallEvent,
        call: &CallShapes,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> Result<Job, Error> {
        match (event.action, event.entry.and_then(|id| cache.entry(id))) {
            (Action::Compile | Action::Hit, Some(entry)) => {
                let mode = entry
                    .compiled
                    .mode()
                    .map_err(|err| Error::from(err.clone()))?;
                self.start_entry(entry, mode, call, inputs, options)
            }
            (Action::Eager, _) => self.start_eager(cache, call, inputs, options),
            _ => Err(Error::Call {
                message: format!(
                    "call {} has no kernels to run ({})",
                    call.to_spec(),
                    event.error.as_deref().unwrap_or(&event.action.to_string())
                ),
                span: event.error_span,
            }),
        }
    }

    /// The runs of the resume functions' entries a call went through (its graph breaks), in
    /// order, each on the tensors and ints Python held at its break (those it computed while
    /// running on to the return, as a lazy-tensor runtime materialises them).
    pub fn start_resumes(
        &mut self,
        cache: &CodeCache,
        event: &CallEvent,
        options: RunOptions,
    ) -> Result<Vec<Job>, Error> {
        let points = cache.last_break_points();
        let mut jobs = Vec::with_capacity(event.breaks.len());
        for (resume, point) in event.breaks.iter().zip(points) {
            let call = &resume.call;
            let entry = match (call.action, call.entry) {
                (Action::Compile | Action::Hit, Some(id)) => cache.frame_entry(call.frame, id),
                _ => None,
            };
            let Some(entry) = entry else {
                return Err(Error::Call {
                    message: format!(
                        "{} has no kernels to run ({})",
                        resume.function,
                        call.error.as_deref().unwrap_or(&call.action.to_string())
                    ),
                    span: call.error_span,
                });
            };
            let (shapes, inputs) = resume_inputs(&entry.graph, point);
            let mode = entry
                .compiled
                .mode()
                .map_err(|err| Error::from(err.clone()))?;
            jobs.push(self.start_entry(entry, mode, &shapes, inputs, options)?);
        }
        Ok(jobs)
    }

    /// A run of `entry`'s kernels in `mode` (the page's mode switch, the benchmark).
    pub fn start_entry(
        &mut self,
        entry: &Entry,
        mode: Mode,
        call: &CallShapes,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> Result<Job, Error> {
        let floats = call
            .args
            .iter()
            .any(|(_, value)| matches!(value, ArgValue::Float(_)));
        let (call, inputs) = if floats {
            float_inputs(&entry.graph, call, inputs)
        } else {
            (call.clone(), inputs)
        };
        let call = &call;
        let symbolic_static =
            mode == Mode::Static && entry.compiled.mode().is_ok_and(|m| m != Mode::Static);
        let key = KernelKey::Entry {
            frame: entry.frame,
            id: entry.id,
            mode,
            sizes: if symbolic_static {
                call.to_spec()
            } else {
                String::new()
            },
        };
        self.start(
            key,
            &entry.compiled,
            &entry.graph,
            mode,
            call,
            inputs,
            options,
        )
    }

    /// A run of kernels compiled by the caller (`compile::compile` with its own options),
    /// kept under `key`.
    #[expect(
        clippy::too_many_arguments,
        reason = "a run is all of these, none optional"
    )]
    pub fn start(
        &mut self,
        key: KernelKey,
        compiled: &Compiled,
        graph: &Graph,
        mode: Mode,
        call: &CallShapes,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> Result<Job, Error> {
        graph::check_embedding_ids(graph, &inputs)?;
        let (expected, reference_ms) = self.reference_if(options.check, graph, call, &inputs)?;
        // Kept kernels cost nothing to prepare, whatever a coarse clock (the page's
        // `performance.now()` ticks in 0.1 ms) reads around taking them.
        let (kernels, prepare_ms) = match self.kept.remove(&key) {
            Some(kernels) => (kernels, 0.0),
            None => {
                let started = (self.clock)();
                let bindings = match compiled.schedule() {
                    Ok(schedule) if mode == Mode::Static => call_bindings(schedule, call)?,
                    _ => Bindings::new(),
                };
                let kernels = self.backend.kernels(compiled, mode, &bindings)?;
                (kernels, (self.clock)() - started)
            }
        };
        Ok(Job {
            key,
            kernels,
            prepare_ms,
            eager: false,
            inputs,
            ints: call.ints(),
            expected,
            reference_ms,
            timing: options.timing,
        })
    }

    /// An eager call: captured with symbolic input dims where the program allows (else at
    /// its static sizes), compiled to per-op kernels, which are kept by their schedule.
    fn start_eager(
        &mut self,
        cache: &CodeCache,
        call: &CallShapes,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> Result<Job, Error> {
        let started = (self.clock)();
        let compile_eager = |symbolic: bool| -> Result<(Graph, Compiled), Error> {
            let (graph, env) = cache.eager_capture(call, symbolic)?;
            let compiled = compile::compile(&graph, &|s| env.range(s), &CompileOptions::EAGER);
            Ok((graph, compiled))
        };
        let (graph, compiled) = match compile_eager(true) {
            Ok((graph, compiled)) if compiled.schedule().is_ok() => (graph, compiled),
            _ => compile_eager(false)?,
        };
        let schedule = compiled
            .schedule()
            .map_err(|err| Error::from(err.clone()))?;
        let key = KernelKey::Eager(schedule.to_string());
        let mode = compiled.mode().map_err(|err| Error::from(err.clone()))?;
        let capture_ms = (self.clock)() - started;
        let mut job = self.start(key, &compiled, &graph, mode, call, inputs, options)?;
        job.prepare_ms += capture_ms;
        job.eager = true;
        Ok(job)
    }

    /// The CPU reference's outputs and time, with `check`.
    fn reference_if(
        &self,
        check: bool,
        graph: &Graph,
        call: &CallShapes,
        inputs: &[Tensor],
    ) -> Result<(Option<Vec<Tensor>>, f64), Error> {
        if !check {
            return Ok((None, 0.0));
        }
        let started = (self.clock)();
        let expected = reference(graph, call, inputs)?;
        Ok((Some(expected), (self.clock)() - started))
    }

    /// Runs `job` on the backend that built its kernels; borrows no executor, so a page can
    /// await it while other calls start. Give the result to [`Executor::keep`] to keep the
    /// kernels.
    pub async fn run(clock: &dyn Fn() -> f64, job: Job) -> Finished {
        let Job {
            key,
            mut kernels,
            prepare_ms,
            eager,
            inputs,
            ints,
            expected,
            reference_ms,
            timing,
        } = job;
        let ran = kernels.run(&inputs, &ints, timing, clock).await;
        let outcome = ran.map(|ran| {
            let max_abs_err = expected.as_ref().map(|e| max_abs_err(&ran.outputs, e));
            // Eager mode captures and dispatches op by op on every call: that is running.
            let (build_ms, run_ms) = if eager {
                (ran.build_ms, ran.run_ms + prepare_ms)
            } else {
                (ran.build_ms + prepare_ms, ran.run_ms)
            };
            Outcome {
                outputs: ran.outputs,
                build_ms,
                run_ms,
                reference_ms,
                expected,
                max_abs_err,
                kernel_ms: ran.kernel_ms,
                timing: ran.timing,
                products: ran.products,
                host_ms: ran.host_ms,
                arena_bytes: ran.arena_bytes,
                scratch_bytes: ran.scratch_bytes,
            }
        });
        Finished {
            key,
            kernels,
            outcome,
        }
    }

    /// Keeps a finished run's kernels for the next run with the same key.
    pub fn keep(&mut self, finished: Finished) -> Result<Outcome, Error> {
        self.kept.insert(finished.key, finished.kernels);
        finished.outcome
    }

    /// Starts, runs and keeps one job: for callers that can wait (the CLI, the benchmark).
    pub async fn execute(&mut self, job: Job) -> Result<Outcome, Error> {
        let clock = Rc::clone(&self.clock);
        let finished = Executor::run(&*clock, job).await;
        self.keep(finished)
    }
}

/// A call's arguments as `graph` takes them: its tensors, and each symbolic float
/// argument (a 0-dimensional input of the graph) as a 0-dimensional tensor of its value,
/// in the graph's input order; ints as they are.
fn float_inputs(
    graph: &Graph,
    call: &CallShapes,
    inputs: Vec<Tensor>,
) -> (CallShapes, Vec<Tensor>) {
    let mut tensors: Vec<(&str, &[i64], Tensor)> = call
        .tensors()
        .zip(inputs)
        .map(|((name, dims), tensor)| (name, dims, tensor))
        .collect();
    let mut args = Vec::new();
    let mut ordered = Vec::new();
    for &id in &graph.inputs {
        let Op::Input { name } = &graph.node(id).op else {
            continue;
        };
        if let Some(at) = tensors.iter().position(|(held, _, _)| held == name) {
            let (_, dims, tensor) = tensors.remove(at);
            let dtype = graph.node(id).dtype;
            args.push((name.clone(), ArgValue::Tensor(dims.to_vec(), dtype)));
            ordered.push(tensor);
        } else if let Some((_, ArgValue::Float(value))) =
            call.args.iter().find(|(held, _)| held == name)
        {
            args.push((name.clone(), ArgValue::Tensor(Vec::new(), DType::Float32)));
            ordered.push(Tensor {
                shape: Vec::new(),
                data: vec![*value as f32],
            });
        }
    }
    args.extend(
        call.args
            .iter()
            .filter(|(_, value)| matches!(value, ArgValue::Int(_)))
            .cloned(),
    );
    (CallShapes::with_args(args), ordered)
}

/// The arguments of a resume function's graph at a break: its input tensors (by name,
/// in the graph's order) and ints, and their values.
fn resume_inputs(graph: &Graph, point: &BreakPoint) -> (CallShapes, Vec<Tensor>) {
    let mut args = Vec::new();
    let mut inputs = Vec::new();
    for &id in &graph.inputs {
        let Op::Input { name } = &graph.node(id).op else {
            continue;
        };
        if let Some((_, tensor, dtype)) = point.tensors.iter().find(|(held, ..)| held == name) {
            let dims = tensor.shape.iter().map(|&d| d as i64).collect();
            args.push((name.clone(), ArgValue::Tensor(dims, *dtype)));
            inputs.push(Tensor::clone(tensor));
        } else if let Some((_, value)) = point.stack.iter().find(|(held, _)| held == name) {
            // A symbolic float handed back by the break: a 0-dimensional input.
            args.push((name.clone(), ArgValue::Tensor(Vec::new(), DType::Float32)));
            inputs.push(Tensor {
                shape: Vec::new(),
                data: vec![*value as f32],
            });
        }
    }
    for (name, _) in &graph.int_inputs {
        if let Some((_, value)) = point.ints.iter().find(|(held, _)| held == name) {
            args.push((name.clone(), ArgValue::Int(*value)));
        }
    }
    (CallShapes::with_args(args), inputs)
}

/// The symbol values of `call` in `schedule` (what static code bakes in).
pub fn call_bindings(schedule: &Schedule, call: &CallShapes) -> Result<Bindings, RunError> {
    let sizes: Vec<Vec<usize>> = call
        .tensors()
        .map(|(_, dims)| dims.iter().map(|&d| d as usize).collect())
        .collect();
    bind(schedule, &sizes, &call.ints()).map(|sizes| sizes.bindings)
}

/// The CPU reference (`graph::eval`, op by op) of `graph` on `inputs`, its symbols bound
/// from the call's sizes.
pub fn reference(
    graph: &Graph,
    call: &CallShapes,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, Error> {
    let mut bindings = Bindings::new();
    graph.bind_lifted(&mut bindings);
    for (&id, (_, dims)) in graph.inputs.iter().zip(call.tensors()) {
        for (expr, &value) in graph.shape(id).iter().zip(dims) {
            if let Some(sym) = expr.as_sym() {
                bindings.set(sym, value);
            }
        }
    }
    for ((_, expr), value) in graph.int_inputs.iter().zip(call.ints()) {
        if let Some(sym) = expr.as_sym() {
            bindings.set(sym, value);
        }
    }
    Ok(graph::eval(graph, &bindings, inputs)?)
}

/// Refuses a call whose input tensor the runtimes could not hold (or that has a negative
/// size), naming the input, before anything is allocated (sizes multiplied in `u128`, so
/// none overflows).
pub fn check_input_sizes(call: &CallShapes) -> Result<(), RunError> {
    for (name, dims) in call.tensors() {
        if let Some((dim, &size)) = dims.iter().enumerate().find(|(_, size)| **size < 0) {
            return Err(RunError::NegativeSize {
                input: name.to_string(),
                dim,
                size,
            });
        }
        let elements = graph::element_count(dims);
        let limit = graph::max_elements();
        if elements > limit as u128 {
            return Err(RunError::InputTooLarge {
                input: name.to_string(),
                elements,
                limit,
                budget: graph::memory_budget(),
            });
        }
    }
    Ok(())
}

/// The tensor inputs of a call: `data` where the caller passed it, else seeded random values
/// (only those are generated), after [`check_input_sizes`].
pub fn call_inputs(
    call: &CallShapes,
    data: Vec<Option<Vec<f32>>>,
    seed: u64,
) -> Result<Vec<Tensor>, RunError> {
    check_input_sizes(call)?;
    let mut data = data.into_iter();
    call.args
        .iter()
        .filter_map(|(name, value)| match value {
            ArgValue::Tensor(dims, dtype) => Some((name, dims, *dtype)),
            _ => None,
        })
        .map(|(name, dims, dtype)| {
            let shape: Vec<usize> = dims.iter().map(|&v| v as usize).collect();
            match data.next().flatten() {
                Some(values) => {
                    if let Some(&value) = values.iter().find(|&&v| !dtype.carries(f64::from(v))) {
                        return Err(RunError::NotCarried {
                            input: name.clone(),
                            dtype,
                            value: f64::from(value),
                        });
                    }
                    Ok(Tensor {
                        shape,
                        data: values,
                    })
                }
                None => Ok(graph::random_inputs(&[(name.to_string(), shape)], seed)
                    .remove(0)
                    .as_random(dtype)),
            }
        })
        .collect()
}

/// A call's arguments as values: its tensors' `inputs` (in order), its ints and bools.
pub fn call_values(call: &CallShapes, inputs: &[Tensor]) -> Vec<CallArg> {
    let mut tensors = inputs.iter();
    call.args
        .iter()
        .filter_map(|(_, value)| match value {
            ArgValue::Tensor(_, dtype) => tensors
                .next()
                .cloned()
                .map(|tensor| CallArg::Tensor(tensor, *dtype)),
            ArgValue::Int(v) => Some(CallArg::Int(*v)),
            ArgValue::Bool(b) => Some(CallArg::Bool(*b)),
            ArgValue::Float(v) => Some(CallArg::Float(*v)),
        })
        .collect()
}

/// The largest absolute difference between two lists of tensors (infinite when their
/// shapes differ, NaN-aware: a NaN on either side counts as infinite).
pub fn max_abs_err(actual: &[Tensor], expected: &[Tensor]) -> f32 {
    if actual.len() != expected.len() {
        return f32::INFINITY;
    }
    let mut worst = 0.0f32;
    for (a, e) in actual.iter().zip(expected) {
        if a.shape != e.shape {
            return f32::INFINITY;
        }
        for (x, y) in a.data.iter().zip(&e.data) {
            let diff = (x - y).abs();
            worst = if diff.is_nan() {
                f32::INFINITY
            } else {
                worst.max(diff)
            };
        }
    }
    worst
}

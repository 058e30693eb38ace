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
//! library kernels. One GPU run at a time: the wgpu runtime is `&mut` across its awaits, so
//! a run takes the `Gpu` out of its slot and puts it back when done (a small async lock
//! that yields, never blocks); a run owns its kernels while it is in flight, so the page
//! can await it without holding a borrow of the executor.

use crate::cache::{Action, CallEvent, CodeCache, Entry};
use crate::codegen::Mode;
use crate::compile::{self, CompileOptions, Compiled};
use crate::error::Error;
use crate::frontend::{BreakPoint, CallArg};
use crate::graph::{self, DType, Graph, Op, Tensor};
use crate::guard::{ArgValue, CallShapes};
use crate::lower::{GemmStrategy, Schedule};
use crate::runtime::{RunError, bind};
use crate::symbolic::Bindings;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

#[cfg(feature = "gpu")]
use crate::runtime::gpu::{AdapterSummary, Gpu, GpuStats, Program};
#[cfg(feature = "gpu")]
use std::cell::RefCell;
#[cfg(feature = "gpu")]
use std::task::Poll;

/// Where a caller asks kernels to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// The GPU when an adapter works, else the CPU.
    #[default]
    Auto,
    /// The GPU, or an error saying why not.
    Gpu,
    /// The CPU backend.
    Cpu,
}

impl FromStr for Device {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Device::Auto),
            "gpu" => Ok(Device::Gpu),
            "cpu" => Ok(Device::Cpu),
            other => Err(format!("expected 'auto', 'gpu' or 'cpu', got '{other}'")),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Auto => "auto",
            Device::Gpu => "gpu",
            Device::Cpu => "cpu",
        })
    }
}

/// What `gpu` says on a build without the GPU runtime.
pub const NO_GPU_RUNTIME: &str = "this build has no GPU runtime (the crate's 'gpu' feature is off)";

/// The GPU and the runs waiting for it.
#[cfg(feature = "gpu")]
struct GpuSlot {
    /// `None` while a run holds it.
    gpu: RefCell<Option<Gpu>>,
    waiting: RefCell<Vec<std::task::Waker>>,
    adapter: AdapterSummary,
}

/// The GPU, taken out of its slot for one run; dropping it puts it back.
#[cfg(feature = "gpu")]
struct Held<'a> {
    slot: &'a GpuSlot,
    gpu: Option<Gpu>,
}

#[cfg(feature = "gpu")]
impl Held<'_> {
    fn gpu(&mut self) -> &mut Gpu {
        self.gpu.as_mut().expect("held until dropped")
    }
}

#[cfg(feature = "gpu")]
impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.slot.gpu.borrow_mut() = self.gpu.take();
        // Taken out before waking: a woken run may look at the list at once.
        let waiting = std::mem::take(&mut *self.slot.waiting.borrow_mut());
        for waker in waiting {
            waker.wake();
        }
    }
}

#[cfg(feature = "gpu")]
impl GpuSlot {
    /// Waits until no other run holds the GPU, then holds it.
    async fn hold(&self) -> Held<'_> {
        std::future::poll_fn(|cx| match self.gpu.borrow_mut().take() {
            Some(gpu) => Poll::Ready(Held {
                slot: self,
                gpu: Some(gpu),
            }),
            None => {
                self.waiting.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// What kernels run on: the CPU backend, or one GPU shared by every executor of a
/// process (or of a page).
pub struct Backend {
    #[cfg(feature = "gpu")]
    gpu: Option<GpuSlot>,
}

/// An entry's (or an eager call's) kernels, ready for the backend that built them.
enum Kernels {
    /// For the CPU backend: the schedule with its bound kernels and buffers.
    Cpu(Box<crate::runtime::cpu::Program>),
    /// For the wgpu runtime: WGSL, pipelines, uploaded parameters.
    #[cfg(feature = "gpu")]
    Gpu(Box<Program>),
}

/// One run on the backend.
struct Ran {
    outputs: Vec<Tensor>,
    build_ms: f64,
    run_ms: f64,
    kernel_ms: Vec<(String, f64)>,
    timing: &'static str,
    products: Vec<ProductRun>,
    host_ms: f64,
    arena_bytes: usize,
    scratch_bytes: usize,
}

/// A product kernel of a GPU call: the form it ran with at the call's sizes, and the large
/// form that was building off the call's path while it ran naive (tiers).
#[derive(Clone, Debug, PartialEq)]
pub struct ProductRun {
    /// The product kernel.
    pub kernel: String,
    /// The form it ran with.
    pub strategy: GemmStrategy,
    /// The form building in the background, when this call ran the naive tier for it.
    pub building: Option<GemmStrategy>,
}

impl Backend {
    /// The CPU backend.
    pub fn cpu() -> Backend {
        Backend {
            #[cfg(feature = "gpu")]
            gpu: None,
        }
    }

    /// An opened GPU.
    #[cfg(feature = "gpu")]
    pub fn gpu(gpu: Gpu) -> Backend {
        Backend {
            gpu: Some(GpuSlot {
                adapter: gpu.adapter().clone(),
                gpu: RefCell::new(Some(gpu)),
                waiting: RefCell::new(Vec::new()),
            }),
        }
    }

    /// Opens what `device` asks for (natively; the page probes WebGPU first and uses
    /// [`Backend::gpu`] or [`Backend::cpu`]). `clock` gives milliseconds to the GPU runtime.
    #[cfg(not(target_arch = "wasm32"))]
    pub async fn open(
        device: Device,
        clock: Box<dyn Fn() -> f64 + Send + Sync>,
    ) -> Result<Backend, Error> {
        if device == Device::Cpu {
            return Ok(Backend::cpu());
        }
        #[cfg(feature = "gpu")]
        {
            match Gpu::new(clock).await {
                Ok(gpu) => Ok(Backend::gpu(gpu)),
                Err(_) if device == Device::Auto => Ok(Backend::cpu()),
                Err(err) => Err(err.into()),
            }
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = clock;
            match device {
                Device::Gpu => Err(Error::Call {
                    message: format!("device 'gpu': {NO_GPU_RUNTIME}"),
                    span: None,
                }),
                _ => Ok(Backend::cpu()),
            }
        }
    }

    /// `gpu` or `cpu`.
    pub fn name(&self) -> &'static str {
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            return "gpu";
        }
        "cpu"
    }

    /// The wgpu adapter calls run on, when on the GPU.
    #[cfg(feature = "gpu")]
    pub fn adapter(&self) -> Option<&AdapterSummary> {
        self.gpu.as_ref().map(|slot| &slot.adapter)
    }

    /// The GPU runtime's counters (pipelines created, bytes held), when on the GPU.
    #[cfg(feature = "gpu")]
    pub async fn stats(&self) -> Option<GpuStats> {
        match &self.gpu {
            Some(slot) => Some(slot.hold().await.gpu().stats()),
            None => None,
        }
    }

    /// Runs every product lowered as tiled with `strategy` on the GPU (the benchmark
    /// measures each form); `None` chooses per call by its sizes again.
    #[cfg(feature = "gpu")]
    pub async fn force_product_strategy(&self, strategy: Option<GemmStrategy>) {
        if let Some(slot) = &self.gpu {
            slot.hold().await.gpu().force_product_strategy(strategy);
        }
    }

    /// Turns tiers on or off on the GPU (`Gpu::set_tiers`: a product runs naive while its
    /// large form builds off the call's path); returns whether they were on. The benchmark
    /// measures both ways.
    #[cfg(feature = "gpu")]
    pub async fn set_tiers(&self, on: bool) -> bool {
        match &self.gpu {
            Some(slot) => {
                let mut held = slot.hold().await;
                let was = held.gpu().tiers();
                held.gpu().set_tiers(on);
                was
            }
            None => false,
        }
    }

    /// Turns the page's read-back nudges on or off on the GPU (`Gpu::set_nudges`: an empty
    /// command list 1 ms after a call's submit where the mapping is still pending, twice for
    /// a call that created buffers); returns whether they were on. The steady benchmark
    /// measures both ways.
    #[cfg(feature = "gpu")]
    pub async fn set_nudges(&self, on: bool) -> bool {
        match &self.gpu {
            Some(slot) => slot.hold().await.gpu().set_nudges(on),
            None => false,
        }
    }

    /// Turns the subgroup forms of row reductions on or off on the GPU
    /// (`Gpu::set_subgroups`); returns whether they are on now (never where the adapter has
    /// no subgroups). The benchmark measures both ways.
    #[cfg(feature = "gpu")]
    pub async fn set_subgroups(&self, on: bool) -> bool {
        match &self.gpu {
            Some(slot) => {
                let mut held = slot.hold().await;
                held.gpu().set_subgroups(on);
                held.gpu().subgroups()
            }
            None => false,
        }
    }

    /// Waits until the GPU's background builds are in its pipeline cache.
    #[cfg(feature = "gpu")]
    pub async fn wait_for_builds(&self) -> Result<(), Error> {
        if let Some(slot) = &self.gpu {
            slot.hold().await.gpu().wait_for_builds().await?;
        }
        Ok(())
    }

    /// Drops the GPU's cached pipelines and pooled buffers, so the next builds pay what a
    /// fresh process pays (kept kernels rebuild their pipelines on their next run).
    pub async fn clear_cache(&self) {
        #[cfg(feature = "gpu")]
        if let Some(slot) = &self.gpu {
            slot.hold().await.gpu().clear_cache();
        }
    }

    /// The kernels of `compiled` in `mode` for this backend; `bindings` fixes the sizes of
    /// static code.
    fn kernels(
        &self,
        compiled: &Compiled,
        mode: Mode,
        bindings: &Bindings,
    ) -> Result<Kernels, Error> {
        let schedule = compiled
            .schedule()
            .map_err(|err| Error::from(err.clone()))?;
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            let wgsl = compiled.wgsl(mode, bindings)?.into_owned();
            let fixed = (mode == Mode::Static).then(|| bindings.clone());
            return Ok(Kernels::Gpu(Box::new(Program::from_wgsl(
                schedule.clone(),
                mode,
                wgsl,
                fixed,
            ))));
        }
        let _ = (mode, bindings);
        Ok(Kernels::Cpu(Box::new(crate::runtime::cpu::Program::new(
            schedule.clone(),
        ))))
    }

    /// Runs `kernels` on `inputs`; `timing` asks for per-kernel times (GPU only).
    async fn run(
        &self,
        kernels: &mut Kernels,
        inputs: &[Tensor],
        ints: &[i64],
        timing: bool,
        clock: &dyn Fn() -> f64,
    ) -> Result<Ran, Error> {
        match kernels {
            Kernels::Cpu(program) => {
                // The CPU backend runs kernels back to back and does not time them one by one.
                let _ = timing;
                let started = clock();
                let outputs = program.run(inputs, ints)?;
                let run_ms = clock() - started;
                Ok(Ran {
                    outputs,
                    build_ms: 0.0,
                    run_ms,
                    kernel_ms: Vec::new(),
                    timing: "off",
                    products: Vec::new(),
                    host_ms: run_ms,
                    arena_bytes: program.arena_elems() * size_of::<f32>(),
                    scratch_bytes: program.scratch_elems() * size_of::<f32>(),
                })
            }
            #[cfg(feature = "gpu")]
            Kernels::Gpu(program) => {
                let slot = self
                    .gpu
                    .as_ref()
                    .expect("GPU kernels are made only by a GPU backend");
                let mut held = slot.hold().await;
                let gpu = held.gpu();
                let before = gpu.stats();
                let started = clock();
                gpu.prepare(program).await?;
                let prepared = clock();
                let after = gpu.stats();
                // `prepare` returns at once for a program already on the device: then
                // nothing was built, whatever the (coarse) clock says.
                let built = after.pipelines_created != before.pipelines_created
                    || after.bytes_held != before.bytes_held;
                let prepare_ms = if built { prepared - started } else { 0.0 };
                // Override code creates a pipeline per new shape inside `run`: count it as
                // building, not running.
                let pipelines_before = gpu.stats().pipeline_ms;
                let run = gpu.run(program, inputs, ints, timing).await?;
                let finished = clock();
                let pipeline_ms = gpu.stats().pipeline_ms - pipelines_before;
                Ok(Ran {
                    outputs: run.outputs,
                    build_ms: prepare_ms + pipeline_ms,
                    run_ms: (finished - prepared - pipeline_ms).max(0.0),
                    kernel_ms: run.kernel_ms,
                    timing: run.timing.name(),
                    products: run
                        .products
                        .into_iter()
                        .map(|(kernel, strategy)| ProductRun {
                            building: run
                                .building
                                .iter()
                                .find(|b| b.kernel == kernel)
                                .map(|b| b.strategy),
                            kernel,
                            strategy,
                        })
                        .collect(),
                    host_ms: run.host_ms,
                    arena_bytes: 0,
                    scratch_bytes: 0,
                })
            }
        }
    }
}

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
    kernels: Kernels,
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
    kernels: Kernels,
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
    kept: HashMap<KernelKey, Kernels>,
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

    /// Runs `job` on `backend`; borrows no executor, so a page can await it while other
    /// calls start. Give the result to [`Executor::keep`] to keep the kernels.
    pub async fn run(backend: &Backend, clock: &dyn Fn() -> f64, job: Job) -> Finished {
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
        let ran = backend
            .run(&mut kernels, &inputs, &ints, timing, clock)
            .await;
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
        let backend = Rc::clone(&self.backend);
        let clock = Rc::clone(&self.clock);
        let finished = Executor::run(&backend, &*clock, job).await;
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
        if elements > graph::MAX_ELEMENTS as u128 {
            return Err(RunError::InputTooLarge {
                input: name.to_string(),
                elements,
                limit: graph::MAX_ELEMENTS,
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

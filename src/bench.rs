//! Benchmarks of the compiler and its kernels, reported as medians (`tailor bench`).
//!
//! Input: a clock in milliseconds (injected: the CLI uses `Instant`, the page
//! `performance.now()`) and, for the GPU figures, a GPU `Backend`; every run goes through
//! `session::executor`, as the CLI's and the page's calls do (the CPU figures on a CPU
//! `Backend` of their own, `CpuBench`, which the page also drives sample by sample).
//! Output: named metrics such as `compile_us.simplenet` (a fresh interpreter: load,
//! capture, guards, lowering, WGSL), `recompile_us.simplenet` (the same in a warm one),
//! `steady_us.simplenet_b8.dynamic`, `cpu_gflops.bigmlp` with `cpu_peak_bytes.bigmlp` (the
//! memory plan's peak), or `first_call_ms.simplenet_b8.static` and `gpu_gflops.bigmlp`.
//! Invariant: nothing here asserts a speed; figures are reported, and compared as ratios —
//! each CPU figure with `graph::eval` (the op-by-op reference) timed in the same run, as
//! `cpu_speedup_vs_eval.*`. Every GPU figure includes what a caller pays (upload,
//! dispatch, read-back), except `matmul_gflops.*`, which times the kernel alone.

use crate::cache::Clock;

use crate::config::{CallMarks, CompileConfig, DynamicMode};
use crate::error::Error;
use crate::guard::CallShapes;
use crate::session::SIMPLENET_SOURCE;
use std::collections::BTreeMap;
use std::hint::black_box;

/// Named results; each value is a median in the unit its name ends with.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BenchReport {
    /// `compile_us.simplenet`, `guard_check_ns.simplenet`, …
    pub metrics: BTreeMap<String, f64>,
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn simplenet_call(batch: i64) -> CallShapes {
    CallShapes::new(vec![("x".into(), vec![batch, 64])])
}

/// Capture → WGSL for SimpleNet at `x=8,64`: parse, construct, trace, produce guards,
/// lower, emit every kernel (a compile through the guard cache does all of these).
fn compile_us(clock: Clock<'_>, rounds: usize) -> f64 {
    let samples = (0..rounds)
        .map(|_| {
            let start = clock();
            let mut cache = crate::session::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
            compile_entry(&mut cache, &CompileConfig::default(), &simplenet_call(8));
            (clock() - start) * 1e3
        })
        .collect();
    median(samples)
}

/// Calls SimpleNet's cache once, which must compile, and keeps its schedule alive.
fn compile_entry(cache: &mut crate::cache::CodeCache, config: &CompileConfig, call: &CallShapes) {
    let id = cache
        .call(0, config, call, &CallMarks::default(), &|| 0.0)
        .entry
        .expect("SimpleNet compiles");
    let entry = cache.entry(id).expect("the entry exists");
    black_box(entry.compiled.schedule().expect("SimpleNet lowers"));
}

/// A recompile of SimpleNet in a warm interpreter: the cache of `load` already holds a
/// static entry for batch 8, and batch 9 under `dynamic=False` captures, produces guards,
/// lowers and emits again (the capture → WGSL a learner waits for after the first compile).
fn recompile_us(clock: Clock<'_>, rounds: usize) -> f64 {
    let config = CompileConfig {
        dynamic: DynamicMode::False,
        recompile_limit: usize::MAX,
        ..CompileConfig::default()
    };
    let mut cache = crate::session::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    compile_entry(&mut cache, &config, &simplenet_call(8));
    let samples = (0..rounds)
        .map(|round| {
            let call = simplenet_call(9 + round as i64);
            let start = clock();
            compile_entry(&mut cache, &config, &call);
            (clock() - start) * 1e3
        })
        .collect();
    median(samples)
}

/// One guard check of SimpleNet's dynamic entry (a hit at batch 16).
fn guard_check_ns(clock: Clock<'_>, rounds: usize) -> f64 {
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let mut cache = crate::session::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    compile_entry(&mut cache, &config, &simplenet_call(8));
    let entry = &cache.entries_mru()[0];
    let call = simplenet_call(16);
    let marked = [false];
    const CHECKS_PER_ROUND: usize = 100_000;
    let samples = (0..rounds)
        .map(|_| {
            let start = clock();
            for _ in 0..CHECKS_PER_ROUND {
                black_box(entry.guards.check(black_box(&call), black_box(&marked)))
                    .expect("batch 16 passes");
            }
            (clock() - start) * 1e6 / CHECKS_PER_ROUND as f64
        })
        .collect();
    median(samples)
}

/// Runs the compiler benchmarks; `rounds` samples each (the median is reported).
pub fn run(clock: Clock<'_>, rounds: usize) -> BenchReport {
    let rounds = rounds.max(1);
    let mut metrics = BTreeMap::new();
    metrics.insert(
        "compile_us.simplenet".to_string(),
        compile_us(clock, rounds),
    );
    metrics.insert(
        "recompile_us.simplenet".to_string(),
        recompile_us(clock, rounds),
    );
    metrics.insert(
        "guard_check_ns.simplenet".to_string(),
        guard_check_ns(clock, rounds),
    );
    cpu_metrics(clock, rounds, &mut metrics);
    BenchReport { metrics }
}

/// A model the CPU figures run: its source, the call the kernels are timed at, the call
/// `graph::eval` is timed at (the same, or fewer rows where the op-by-op reference would
/// take seconds), and the floating-point operations of one call at each (`None`: the
/// figure is a time per call, and both calls are the same).
pub struct CpuWorkload {
    /// The metric's suffix: `bigmlp`, `conv`, `simplenet_b8`, …
    pub name: &'static str,
    /// The model, as a learner would paste it.
    pub source: &'static str,
    inputs: &'static [(&'static str, &'static [i64])],
    reference_inputs: &'static [(&'static str, &'static [i64])],
    /// Operations of one call at `inputs`.
    pub flops: Option<f64>,
    /// Operations of one call at `reference_inputs`.
    pub reference_flops: Option<f64>,
}

impl CpuWorkload {
    /// The call the kernels are timed at.
    pub fn call(&self) -> CallShapes {
        call_of(self.inputs)
    }

    /// The call `graph::eval` is timed at.
    pub fn reference_call(&self) -> CallShapes {
        call_of(self.reference_inputs)
    }

    /// How many times faster the kernels are than the reference: the ratio of throughputs
    /// where the reference runs a smaller call, else of times per call.
    pub fn speedup(&self, ms: f64, reference_ms: f64) -> f64 {
        match (self.flops, self.reference_flops) {
            (Some(flops), Some(reference_flops)) => (flops / ms) / (reference_flops / reference_ms),
            _ => reference_ms / ms,
        }
    }
}

fn call_of(inputs: &[(&str, &[i64])]) -> CallShapes {
    CallShapes::new(
        inputs
            .iter()
            .map(|(name, dims)| (name.to_string(), dims.to_vec()))
            .collect(),
    )
}

/// An MLP of the size numpy and torch reach 145-162 GFLOP/s on, on this class of machine.
const BIGMLP_SOURCE: &str = "import torch\nimport torch.nn as nn\n\n\nclass BigMLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))\n\n    def forward(self, x):\n        return self.layers(x)\n";

/// One convolution at a detector's input resolution.
const CONV_SOURCE: &str = "import torch\nimport torch.nn as nn\n\n\nclass Conv(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)\n\n    def forward(self, x):\n        return self.conv(x)\n";

/// The page's convolution: issue 10's in-browser target (3 to 16 channels at 64x64).
const CONV16_SOURCE: &str = "import torch\nimport torch.nn as nn\n\n\nclass Conv(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 16, kernel_size=3, padding=1)\n\n    def forward(self, x):\n        return self.conv(x)\n";

/// Two products of `rows`x1024 by 1024x1024, a multiply and an add per term.
const fn bigmlp_flops(rows: f64) -> f64 {
    2.0 * 2.0 * rows * 1024.0 * 1024.0
}

/// `tailor bench`'s CPU workloads (native: threads and the host's SIMD).
pub const CPU_WORKLOADS: [CpuWorkload; 3] = [
    CpuWorkload {
        name: "bigmlp",
        source: BIGMLP_SOURCE,
        inputs: &[("x", &[256, 1024])],
        reference_inputs: &[("x", &[256, 1024])],
        flops: Some(bigmlp_flops(256.0)),
        reference_flops: Some(bigmlp_flops(256.0)),
    },
    CpuWorkload {
        name: "conv",
        source: CONV_SOURCE,
        inputs: &[("x", &[1, 3, 640, 640])],
        reference_inputs: &[("x", &[1, 3, 640, 640])],
        // 8 channels x 640x640 positions x 27 taps.
        flops: Some(2.0 * 8.0 * 640.0 * 640.0 * 27.0),
        reference_flops: Some(2.0 * 8.0 * 640.0 * 640.0 * 27.0),
    },
    CpuWorkload {
        name: "simplenet_b8",
        source: SIMPLENET_SOURCE,
        inputs: &[("x", &[8, 64])],
        reference_inputs: &[("x", &[8, 64])],
        flops: None,
        reference_flops: None,
    },
];

/// The page's CPU workloads (wasm32: one thread, simd128): issue 10's in-browser targets.
/// The MLP's reference runs 32 rows, not 256, so that one call of `graph::eval` blocks the
/// page for a fraction of a second; its figure is compared as GFLOP/s.
pub const PAGE_CPU_WORKLOADS: [CpuWorkload; 3] = [
    CpuWorkload {
        name: "simplenet_b8",
        source: SIMPLENET_SOURCE,
        inputs: &[("x", &[8, 64])],
        reference_inputs: &[("x", &[8, 64])],
        flops: None,
        reference_flops: None,
    },
    CpuWorkload {
        name: "conv16_64",
        source: CONV16_SOURCE,
        inputs: &[("x", &[1, 3, 64, 64])],
        reference_inputs: &[("x", &[1, 3, 64, 64])],
        flops: None,
        reference_flops: None,
    },
    CpuWorkload {
        name: "bigmlp",
        source: BIGMLP_SOURCE,
        inputs: &[("x", &[256, 1024])],
        reference_inputs: &[("x", &[32, 1024])],
        flops: Some(bigmlp_flops(256.0)),
        reference_flops: Some(bigmlp_flops(32.0)),
    },
];

/// One workload compiled (a static entry) on a CPU backend of its own, with its inputs:
/// what the CLI's and the page's CPU figures time, call by call, so that the page can
/// yield between samples.
pub struct CpuBench {
    workload: &'static CpuWorkload,
    cache: crate::cache::CodeCache,
    entry: usize,
    reference_entry: usize,
    executor: crate::session::executor::Executor,
    call: CallShapes,
    inputs: Vec<crate::graph::Tensor>,
    reference_call: CallShapes,
    reference_inputs: Vec<crate::graph::Tensor>,
    /// What the program held after the last call: arena and scratch, bytes.
    held: (usize, usize),
}

impl CpuBench {
    /// Loads and compiles `workload` (and, where it differs, its reference's call); runs
    /// nothing yet.
    pub fn new(workload: &'static CpuWorkload) -> Result<CpuBench, Error> {
        use crate::session::executor::{self, Backend, Executor};
        use std::rc::Rc;
        let config = CompileConfig {
            dynamic: DynamicMode::False,
            ..CompileConfig::default()
        };
        let mut cache = crate::session::load(workload.source, None)?;
        let mut compile = |call: &CallShapes| {
            let event = cache.call(0, &config, call, &CallMarks::default(), &|| 0.0);
            match (&event.error, event.entry) {
                (None, Some(id)) => Ok(id),
                (error, _) => Err(Error::Call {
                    message: error.clone().unwrap_or_else(|| event.action.to_string()),
                    span: event.error_span,
                }),
            }
        };
        let call = workload.call();
        let reference_call = workload.reference_call();
        let entry = compile(&call)?;
        let reference_entry = compile(&reference_call)?;
        let inputs = executor::call_inputs(&call, Vec::new(), 0)?;
        let reference_inputs = executor::call_inputs(&reference_call, Vec::new(), 0)?;
        Ok(CpuBench {
            workload,
            cache,
            entry,
            reference_entry,
            // Its own CPU backend, whatever the caller runs on: these are the CPU figures.
            executor: Executor::new(Rc::new(Backend::cpu()), Rc::new(|| 0.0)),
            call,
            inputs,
            reference_call,
            reference_inputs,
            held: (0, 0),
        })
    }

    /// The workload it runs.
    pub fn workload(&self) -> &'static CpuWorkload {
        self.workload
    }

    /// Milliseconds per call of the compiled kernels through the executor: calls repeat
    /// until `min_ms` have passed (one call at least), so that a coarse clock still
    /// resolves a call of a few microseconds. The first call binds the kernels.
    pub fn time_calls(&mut self, clock: Clock<'_>, min_ms: f64) -> Result<f64, Error> {
        use crate::session::executor::RunOptions;
        let entry = self.cache.entry(self.entry).expect("the entry exists");
        let mode = entry
            .compiled
            .mode()
            .map_err(|err| Error::from(err.clone()))?;
        let start = clock();
        let mut calls = 0;
        loop {
            let job = self.executor.start_entry(
                entry,
                mode,
                &self.call,
                self.inputs.clone(),
                RunOptions::default(),
            )?;
            let outcome = ready(self.executor.execute(job))?;
            self.held = (outcome.arena_bytes, outcome.scratch_bytes);
            calls += 1;
            let elapsed = clock() - start;
            if elapsed >= min_ms {
                return Ok(elapsed / f64::from(calls));
            }
        }
    }

    /// Milliseconds per call of `graph::eval` (the op-by-op reference) at the reference's
    /// call, repeated as [`CpuBench::time_calls`] is.
    pub fn time_reference(&self, clock: Clock<'_>, min_ms: f64) -> Result<f64, Error> {
        let entry = self
            .cache
            .entry(self.reference_entry)
            .expect("the entry exists");
        let start = clock();
        let mut calls = 0;
        loop {
            black_box(crate::session::executor::reference(
                &entry.graph,
                &self.reference_call,
                &self.reference_inputs,
            )?);
            calls += 1;
            let elapsed = clock() - start;
            if elapsed >= min_ms {
                return Ok(elapsed / f64::from(calls));
            }
        }
    }

    /// Bytes of the memory plan's buffers at the timed call: its peak (outputs and shared
    /// temporaries; inputs and parameters are read in place).
    pub fn planned_bytes(&self) -> Result<usize, Error> {
        let entry = self.cache.entry(self.entry).expect("the entry exists");
        let schedule = entry
            .compiled
            .schedule()
            .map_err(|err| Error::from(err.clone()))?;
        let shapes: Vec<Vec<usize>> = self
            .inputs
            .iter()
            .map(|tensor| tensor.shape.clone())
            .collect();
        let sizes = crate::runtime::bind(schedule, &shapes, &self.call.ints())?;
        Ok(sizes.planned_elems(schedule) * size_of::<f32>())
    }

    /// What the program held after the last timed call, in bytes: its arena (the memory
    /// plan's buffers) and its products' scratch; zeros before the first.
    pub fn held_bytes(&self) -> (usize, usize) {
        self.held
    }
}

/// The CPU backend's figures: `cpu_gflops.bigmlp`, `cpu_gflops.conv` and
/// `cpu_us.simplenet_b8` (one static entry's call through the executor, after a warm-up
/// call that binds the kernels), each with `cpu_speedup_vs_eval.*`: how many times faster
/// than `graph::eval` on the same inputs in the same run; and the memory each call uses,
/// `cpu_peak_bytes.*` (the memory plan's peak, which is all the arena holds) and
/// `cpu_scratch_bytes.*` (the products' working space kept between calls).
fn cpu_metrics(clock: Clock<'_>, rounds: usize, metrics: &mut BTreeMap<String, f64>) {
    for workload in &CPU_WORKLOADS {
        let name = workload.name;
        let mut bench = CpuBench::new(workload).expect("the benchmark's models compile");
        bench.time_calls(clock, 0.0).expect("the kernels run");
        let ms = median(
            (0..rounds)
                .map(|_| bench.time_calls(clock, 0.0).expect("the kernels run"))
                .collect(),
        );
        let reference_ms = median(
            (0..rounds.min(3))
                .map(|_| {
                    bench
                        .time_reference(clock, 0.0)
                        .expect("the reference runs")
                })
                .collect(),
        );
        match workload.flops {
            Some(flops) => metrics.insert(format!("cpu_gflops.{name}"), flops / (ms * 1e6)),
            None => metrics.insert(format!("cpu_us.{name}"), ms * 1e3),
        };
        metrics.insert(
            format!("cpu_speedup_vs_eval.{name}"),
            workload.speedup(ms, reference_ms),
        );
        let planned = bench.planned_bytes().expect("the benchmark's models bind");
        metrics.insert(format!("cpu_peak_bytes.{name}"), planned as f64);
        metrics.insert(
            format!("cpu_scratch_bytes.{name}"),
            bench.held_bytes().1 as f64,
        );
    }
}

/// The output of a future that never waits (a run on the CPU backend).
fn ready<T>(future: impl std::future::Future<Output = T>) -> T {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("a run on the CPU backend finishes without waiting"),
    }
}

#[cfg(feature = "gpu")]
pub use gpu::{DemoReport, SharedClock, demo, run_gpu};

#[cfg(feature = "gpu")]
mod gpu {
    use super::{median, simplenet_call};
    use crate::cache::Action;
    use crate::codegen::Mode;
    use crate::compile::{self, CompileOptions};
    use crate::config::{CallMarks, CompileConfig, DynamicMode};
    use crate::error::Error;
    use crate::graph;
    use crate::guard::CallShapes;
    use crate::lower::GemmStrategy;
    use crate::runtime::gpu::GpuStats;
    use crate::session::executor::{self, Backend, Executor, KernelKey, RunOptions};
    use crate::session::{SIMPLENET_SOURCE, Session};
    use std::collections::BTreeMap;
    use std::rc::Rc;

    /// A clock in milliseconds that executors can keep.
    pub type SharedClock = Rc<dyn Fn() -> f64>;

    /// The material's demo ("Python 演示"): two warm-up calls at batch 8, then batches
    /// 8, 16, 32, 16, 8, 64, 16, 8, three calls each.
    pub const DEMO_WARM_UP: [i64; 2] = [8, 8];
    /// The demo's batch sizes after the warm-up.
    pub const DEMO_BATCHES: [i64; 8] = [8, 16, 32, 16, 8, 64, 16, 8];
    /// Calls per batch size.
    pub const DEMO_RUNS: usize = 3;

    /// One run of the demo sequence: `T_total = T_compile + Σ T_run + Σ T_recompile`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
    pub struct DemoReport {
        /// The first compilation (capture, lowering, WGSL, pipelines), ms.
        pub compile_ms: f64,
        /// Every later compilation, ms.
        pub recompile_ms: f64,
        /// Every call's guard check, upload, dispatch and read-back, ms.
        pub run_ms: f64,
        /// Calls timed after the warm-up only (what the material's script prints), ms.
        pub measured_ms: f64,
        /// Entries compiled.
        pub compiles: usize,
        /// Pipelines created.
        pub pipelines: usize,
    }

    impl DemoReport {
        /// `T_compile + Σ T_run + Σ T_recompile`.
        pub fn total_ms(&self) -> f64 {
            self.compile_ms + self.run_ms + self.recompile_ms
        }
    }

    /// Pipelines the GPU has created so far.
    async fn pipelines_created(backend: &Backend) -> usize {
        backend.stats().await.map_or(0, |s| s.pipelines_created)
    }

    /// Runs the demo sequence through the guard cache under `dynamic`, from a cold GPU
    /// cache; each compile includes lowering, WGSL and pipeline creation.
    pub async fn demo(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        dynamic: DynamicMode,
    ) -> Result<DemoReport, Error> {
        backend.clear_cache().await;
        let pipelines_before = pipelines_created(backend).await;
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let mut session = simplenet_session(backend, clock)?;
        let mut report = DemoReport::default();
        let calls = DEMO_WARM_UP.iter().map(|&b| (b, false)).chain(
            DEMO_BATCHES
                .iter()
                .flat_map(|&b| std::iter::repeat_n((b, true), DEMO_RUNS)),
        );
        for (n, (batch, measured)) in calls.enumerate() {
            let call = simplenet_call(batch);
            let inputs = executor::call_inputs(&call, Vec::new(), n as u64)?;
            let start = clock();
            let event = session
                .decide(0, &config, &call, &CallMarks::default(), &inputs)
                .clone();
            let called = clock();
            let jobs = session.start_runs(&event, &call, inputs, RunOptions::default())?;
            let outcome = session.finish(jobs).await?;
            let end = clock();
            let compiled = event.action == Action::Compile;
            // A compile is the capture, lowering and WGSL in `cache.call` plus the pipelines
            // its first run builds; the rest of that run is running.
            let compile_ms = (called - start) + outcome.build_ms;
            match (compiled, report.compiles) {
                (true, 0) => report.compile_ms += compile_ms,
                (true, _) => report.recompile_ms += compile_ms,
                (false, _) => {}
            }
            report.compiles += usize::from(compiled);
            report.run_ms += if compiled {
                end - start - compile_ms
            } else {
                end - start
            };
            if measured {
                report.measured_ms += end - start;
            }
        }
        report.pipelines = pipelines_created(backend).await - pipelines_before;
        Ok(report)
    }

    /// Compiles `source` once for `call` under `dynamic` and returns the cache holding it.
    fn compiled_cache(
        source: &str,
        call: &CallShapes,
        dynamic: DynamicMode,
    ) -> Result<crate::cache::CodeCache, Error> {
        let mut cache = crate::session::load(source, None)?;
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let event = cache.call(0, &config, call, &CallMarks::default(), &|| 0.0);
        match &event.error {
            Some(message) => Err(Error::Call {
                message: message.clone(),
                span: event.error_span,
            }),
            None => Ok(cache),
        }
    }

    /// Pipeline creation of SimpleNet's first compile, from a cold GPU cache, ms.
    async fn pipeline_ms(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
    ) -> Result<f64, Error> {
        let mut samples = Vec::new();
        for _ in 0..rounds.min(5) {
            backend.clear_cache().await;
            let call = simplenet_call(8);
            let mut session = simplenet_session(backend, clock)?;
            let inputs = executor::call_inputs(&call, Vec::new(), 0)?;
            let event = session
                .decide(
                    0,
                    &CompileConfig::default(),
                    &call,
                    &CallMarks::default(),
                    &inputs,
                )
                .clone();
            let before = backend.stats().await.map_or(0.0, |s| s.pipeline_ms);
            let jobs = session.start_runs(&event, &call, inputs, RunOptions::default())?;
            session.finish(jobs).await?;
            let after = backend.stats().await.map_or(0.0, |s| s.pipeline_ms);
            samples.push(after - before);
        }
        Ok(median(samples))
    }

    /// Steady-state calls of SimpleNet's dynamic entry (compiled at batch 8) in each WGSL
    /// mode the device runs (immediate code only where it has immediates), µs; rounds
    /// interleave the modes, so a change in machine load hits every mode.
    async fn steady_us(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
    ) -> Result<Vec<(Mode, f64)>, Error> {
        let call = simplenet_call(8);
        let cache = compiled_cache(SIMPLENET_SOURCE, &call, DynamicMode::True)?;
        let entry = &cache.entries_mru()[0];
        let inputs = executor::call_inputs(&call, Vec::new(), 0)?;
        let mut executor = Executor::new(Rc::clone(backend), Rc::clone(clock));
        let immediates = backend.adapter().is_some_and(|adapter| adapter.immediates);
        let modes: Vec<Mode> = Mode::ALL
            .into_iter()
            .filter(|&mode| mode != Mode::Immediate || immediates)
            .collect();
        let mut samples = vec![Vec::with_capacity(rounds); modes.len()];
        for round in 0..rounds + 3 {
            for (&mode, samples) in modes.iter().zip(&mut samples) {
                let start = clock();
                let job = executor.start_entry(
                    entry,
                    mode,
                    &call,
                    inputs.clone(),
                    RunOptions::default(),
                )?;
                executor.execute(job).await?;
                if round >= 3 {
                    samples.push((clock() - start) * 1e3);
                }
            }
        }
        Ok(modes
            .into_iter()
            .zip(samples.into_iter().map(median))
            .collect())
    }

    /// A function compiled as a static entry, whose kernels are run and timed alone
    /// (`tailor bench`'s kernel figures), call after call.
    struct KernelTimer {
        cache: crate::cache::CodeCache,
        compiled: compile::Compiled,
        call: CallShapes,
        inputs: Vec<graph::Tensor>,
        executor: Executor,
    }

    impl KernelTimer {
        /// `source`'s function compiled for these input shapes, its inputs seeded random.
        fn new(
            backend: &Rc<Backend>,
            clock: &SharedClock,
            source: &str,
            shapes: &[(&str, Vec<usize>)],
        ) -> Result<KernelTimer, Error> {
            let call = CallShapes::new(
                shapes
                    .iter()
                    .map(|(name, dims)| {
                        (name.to_string(), dims.iter().map(|&d| d as i64).collect())
                    })
                    .collect(),
            );
            let cache = compiled_cache(source, &call, DynamicMode::False)?;
            let entry = &cache.entries_mru()[0];
            let compiled = compile::compile(
                &entry.graph,
                &|s| entry.env.range(s),
                &CompileOptions::ENTRY,
            );
            let named: Vec<(String, Vec<usize>)> = shapes
                .iter()
                .map(|(name, dims)| (name.to_string(), dims.clone()))
                .collect();
            Ok(KernelTimer {
                compiled,
                call,
                inputs: graph::random_inputs(&named, 0),
                executor: Executor::new(Rc::clone(backend), Rc::clone(clock)),
                cache,
            })
        }

        /// One run of the kernels kept under `key`: their measured times added up, in ms
        /// (the first run of a key builds its pipelines too).
        async fn kernel_ms(&mut self, key: &str) -> Result<f64, Error> {
            let timed = RunOptions {
                check: false,
                timing: true,
            };
            let entry = &self.cache.entries_mru()[0];
            let job = self.executor.start(
                KernelKey::Named(key.into()),
                &self.compiled,
                &entry.graph,
                Mode::Static,
                &self.call,
                self.inputs.clone(),
                timed,
            )?;
            let outcome = self.executor.execute(job).await?;
            Ok(outcome.kernel_ms.iter().map(|(_, ms)| ms).sum())
        }

        /// The median kernel time of each of `ways` (`set` makes the backend run it):
        /// rounds go over every way in turn, so that a busy moment of the machine slows one
        /// sample of each rather than all of one way's (the ratios between ways are what
        /// the benchmark reports); the first round, which builds the pipelines, is not
        /// timed.
        async fn alternating<W: Copy>(
            &mut self,
            ways: &[(&'static str, W)],
            rounds: usize,
            set: impl AsyncFn(W),
        ) -> Result<Vec<(&'static str, f64)>, Error> {
            let mut samples = vec![Vec::new(); ways.len()];
            for round in 0..rounds.min(5) + 1 {
                for (&(name, way), samples) in ways.iter().zip(&mut samples) {
                    set(way).await;
                    let ms = self.kernel_ms(name).await?;
                    if round > 0 {
                        samples.push(ms);
                    }
                }
            }
            Ok(ways
                .iter()
                .zip(samples)
                .map(|(&(name, _), samples)| (name, median(samples)))
                .collect())
        }
    }

    /// `a @ b` for `a: [256, 1024]`, `b: [1024, 1024]`, static, with each product strategy,
    /// all without subgroup operations, and where the adapter has them the blocked form with
    /// them too (`blocked_subgroups`; the same kernel as `blocked` where subgroups have fewer
    /// lanes than a block has rows): GFLOP/s of the kernel alone (its measured time).
    async fn matmul_gflops(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
    ) -> Result<Vec<(&'static str, f64)>, Error> {
        let source = "import torch\n\ndef f(a, b):\n    return a @ b\n";
        let shapes = [("a", vec![256, 1024]), ("b", vec![1024, 1024])];
        let mut timer = KernelTimer::new(backend, clock, source, &shapes)?;
        let flops = 2.0 * 256.0 * 1024.0 * 1024.0;
        let mut ways: Vec<(&'static str, (GemmStrategy, bool))> = GemmStrategy::ALL
            .map(|strategy| (strategy.name(), (strategy, false)))
            .to_vec();
        if backend.set_subgroups(true).await {
            ways.push(("blocked_subgroups", (GemmStrategy::Blocked, true)));
        }
        let force = async |(strategy, subgroups)| {
            backend.set_subgroups(subgroups).await;
            backend.force_product_strategy(Some(strategy)).await;
        };
        let ms = timer.alternating(&ways, rounds, force).await;
        // The next benchmark chooses by sizes again, with subgroups wherever the adapter has
        // them, whether or not this one ran.
        backend.force_product_strategy(None).await;
        backend.set_subgroups(true).await;
        Ok(ms?
            .into_iter()
            .map(|(name, ms)| (name, flops / (ms * 1e6)))
            .collect())
    }

    /// `softmax(layer_norm(x))` for `x: [4096, 1024]`, static: the row reductions' kernel
    /// time in ms, with their threads' parts combined through workgroup memory
    /// (`workgroup`) and, where the adapter has subgroup operations, by subgroup
    /// (`subgroups`).
    async fn rows_ms(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
    ) -> Result<Vec<(&'static str, f64)>, Error> {
        let source = "import torch\nimport torch.nn.functional as F\n\n\
                      def f(x, w, b):\n    \
                      return torch.softmax(F.layer_norm(x, (1024,), w, b), dim=-1)\n";
        let shapes = [
            ("x", vec![4096, 1024]),
            ("w", vec![1024]),
            ("b", vec![1024]),
        ];
        let mut timer = KernelTimer::new(backend, clock, source, &shapes)?;
        let available = backend.set_subgroups(true).await;
        let ways: &[(&'static str, bool)] = if available {
            &[("workgroup", false), ("subgroups", true)]
        } else {
            &[("workgroup", false)]
        };
        let set = async |on| {
            backend.set_subgroups(on).await;
        };
        let ms = timer.alternating(ways, rounds, set).await;
        // Back to the default: subgroups wherever the adapter has them.
        backend.set_subgroups(true).await;
        ms
    }

    /// One call through the guard cache and the executor, timed from the call to the
    /// outputs read back (a compile, when the cache compiles, included).
    async fn timed_call(
        session: &mut Session,
        config: &CompileConfig,
        call: &CallShapes,
        clock: &SharedClock,
    ) -> Result<(f64, executor::Outcome), Error> {
        let inputs = executor::call_inputs(call, Vec::new(), 0)?;
        let start = clock();
        let marks = CallMarks::default();
        let (_, ran) = session
            .call(0, config, call, &marks, inputs, RunOptions::default())
            .await;
        Ok((clock() - start, ran?))
    }

    /// SimpleNet loaded afresh, in a session of its own on `backend`.
    fn simplenet_session(backend: &Rc<Backend>, clock: &SharedClock) -> Result<Session, Error> {
        let cache = crate::session::load(SIMPLENET_SOURCE, None)?;
        Ok(Session::new(cache, Rc::clone(backend), Rc::clone(clock)))
    }

    /// The median of `rounds` steady calls, ms.
    async fn steady_ms(
        session: &mut Session,
        config: &CompileConfig,
        call: &CallShapes,
        clock: &SharedClock,
        rounds: usize,
    ) -> Result<f64, Error> {
        let mut samples = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            samples.push(timed_call(session, config, call, clock).await?.0);
        }
        Ok(median(samples))
    }

    /// First calls at a new batch under a dynamic entry, each under a fresh model's entry
    /// compiled at batch 8 (the GPU's pipeline cache kept), whose median is reported: one
    /// such call is one sample of a few milliseconds (in the page, one that may end just
    /// before a read-back nudge or just after it, a coin toss).
    const NEW_BATCH_MODELS: usize = 5;

    /// What a learner waits for (issue 11), each call end to end through the cache, from
    /// a cold GPU cache per policy: SimpleNet's first call at batch 8 (`first_call_ms.*`,
    /// compile and pipelines included), its steady call (`steady_ms.simplenet_b8.*`), under
    /// the dynamic entry a new batch size (`new_batch_ms.simplenet_b16.dynamic`, the median
    /// of [`NEW_BATCH_MODELS`] such first calls, and the pipelines they created,
    /// `new_batch_pipelines.*`, which should be 0) and its steady call; then the
    /// 256x1024->1024->1024 MLP's first call and steady GFLOP/s (`gpu_gflops.bigmlp`).
    async fn calls(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
        metrics: &mut BTreeMap<String, f64>,
    ) -> Result<(), Error> {
        for (name, dynamic) in [
            ("static", DynamicMode::False),
            ("dynamic", DynamicMode::True),
            ("auto", DynamicMode::Auto),
        ] {
            backend.clear_cache().await;
            let config = CompileConfig {
                dynamic,
                ..CompileConfig::default()
            };
            let mut session = simplenet_session(backend, clock)?;
            let b8 = simplenet_call(8);
            let (first, _) = timed_call(&mut session, &config, &b8, clock).await?;
            metrics.insert(format!("first_call_ms.simplenet_b8.{name}"), first);
            let steady = steady_ms(&mut session, &config, &b8, clock, rounds).await?;
            metrics.insert(format!("steady_ms.simplenet_b8.{name}"), steady);
            if dynamic != DynamicMode::True {
                continue;
            }
            let b16 = simplenet_call(16);
            let before = pipelines_created(backend).await;
            let (fresh, _) = timed_call(&mut session, &config, &b16, clock).await?;
            let mut samples = vec![fresh];
            let mut created = pipelines_created(backend).await - before;
            // More new batches, each under a fresh model's entry compiled at batch 8.
            while samples.len() < NEW_BATCH_MODELS {
                let mut session = simplenet_session(backend, clock)?;
                timed_call(&mut session, &config, &b8, clock).await?;
                let before = pipelines_created(backend).await;
                samples.push(timed_call(&mut session, &config, &b16, clock).await?.0);
                created += pipelines_created(backend).await - before;
            }
            metrics.insert(
                format!("new_batch_ms.simplenet_b16.{name}"),
                median(samples),
            );
            metrics.insert(
                format!("new_batch_pipelines.simplenet_b16.{name}"),
                created as f64,
            );
            let steady = steady_ms(&mut session, &config, &b16, clock, rounds).await?;
            metrics.insert(format!("steady_ms.simplenet_b16.{name}"), steady);
        }
        let mut mlp = cold_bigmlp(backend, clock).await?;
        let (first, _) = mlp.call(clock).await?;
        metrics.insert("first_call_ms.bigmlp".into(), first);
        let steady = steady_ms(
            &mut mlp.session,
            &mlp.config,
            &mlp.call,
            clock,
            rounds.min(5),
        )
        .await?;
        metrics.insert("steady_ms.bigmlp".into(), steady);
        metrics.insert(
            "gpu_gflops.bigmlp".into(),
            super::bigmlp_flops(256.0) / (steady * 1e6),
        );
        tiered_first_call(backend, clock, metrics).await?;
        Ok(())
    }

    /// A model loaded afresh in a session of its own, and the call to time.
    struct Cold {
        session: Session,
        config: CompileConfig,
        call: CallShapes,
    }

    impl Cold {
        /// One timed call.
        async fn call(&mut self, clock: &SharedClock) -> Result<(f64, executor::Outcome), Error> {
            let Cold {
                session,
                config,
                call,
            } = self;
            timed_call(session, config, call, clock).await
        }
    }

    /// The 256x1024->1024->1024 MLP from a cold GPU cache, `dynamic=False`.
    async fn cold_bigmlp(backend: &Rc<Backend>, clock: &SharedClock) -> Result<Cold, Error> {
        backend.clear_cache().await;
        Ok(Cold {
            session: Session::new(
                crate::session::load(super::BIGMLP_SOURCE, None)?,
                Rc::clone(backend),
                Rc::clone(clock),
            ),
            config: CompileConfig {
                dynamic: DynamicMode::False,
                ..CompileConfig::default()
            },
            call: CallShapes::new(vec![("x".into(), vec![256, 1024])]),
        })
    }

    /// The MLP's first call with tiers on, from a cold GPU cache: the call runs its products
    /// naive while their large forms build on another thread (`first_call_ms.bigmlp.tiered`),
    /// the time from that call's start until both large pipelines are ready
    /// (`tier_ready_ms.bigmlp`) and their build time (`background_build_ms.bigmlp`), and the
    /// next call, the first in the large form (`tuned_call_ms.bigmlp`).
    async fn tiered_first_call(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        metrics: &mut BTreeMap<String, f64>,
    ) -> Result<(), Error> {
        let mut mlp = cold_bigmlp(backend, clock).await?;
        let was = backend.set_tiers(true).await;
        let background = |stats: Option<GpuStats>| stats.map_or(0.0, |s| s.background_ms);
        let before = background(backend.stats().await);
        let started = clock();
        let measured = async {
            let (first, _) = mlp.call(clock).await?;
            backend.wait_for_builds().await?;
            let ready = clock() - started;
            let (tuned, _) = mlp.call(clock).await?;
            Ok::<_, Error>((first, ready, tuned))
        }
        .await;
        backend.set_tiers(was).await;
        let (first, ready, tuned) = measured?;
        metrics.insert("first_call_ms.bigmlp.tiered".into(), first);
        metrics.insert("tier_ready_ms.bigmlp".into(), ready);
        metrics.insert(
            "background_build_ms.bigmlp".into(),
            background(backend.stats().await) - before,
        );
        metrics.insert("tuned_call_ms.bigmlp".into(), tuned);
        Ok(())
    }

    /// Adds the GPU metrics to `metrics`: pipeline creation, steady-state calls in each
    /// mode, first calls, a new batch under a dynamic entry and the MLP's throughput end to
    /// end (`calls`), matmul throughput in each product form (tiled, blocked, naive), and the demo's total time per policy.
    pub async fn run_gpu(
        backend: &Rc<Backend>,
        clock: &SharedClock,
        rounds: usize,
        metrics: &mut BTreeMap<String, f64>,
    ) -> Result<(), Error> {
        let rounds = rounds.max(1);
        metrics.insert(
            "pipeline_ms.simplenet".into(),
            pipeline_ms(backend, clock, rounds).await?,
        );
        for (mode, us) in steady_us(backend, clock, rounds).await? {
            metrics.insert(format!("steady_us.simplenet_b8.{}", mode.name()), us);
        }
        calls(backend, clock, rounds, metrics).await?;
        for (name, gflops) in matmul_gflops(backend, clock, rounds).await? {
            metrics.insert(format!("matmul_gflops.{name}"), gflops);
        }
        for (name, ms) in rows_ms(backend, clock, rounds).await? {
            metrics.insert(format!("rows_ms.layernorm_softmax.{name}"), ms);
        }
        for (name, dynamic) in [
            ("static", DynamicMode::False),
            ("dynamic", DynamicMode::True),
            ("auto", DynamicMode::Auto),
        ] {
            let mut samples = Vec::new();
            for _ in 0..rounds.min(3) {
                samples.push(demo(backend, clock, dynamic).await?.total_ms());
            }
            metrics.insert(format!("demo_total_ms.{name}"), median(samples));
        }
        Ok(())
    }
}

//! Benchmarks of the compiler and its kernels, reported as medians (`tailor bench`).
//!
//! Input: a clock in milliseconds (injected: the CLI uses `Instant`, the page
//! `performance.now()`) and, for the GPU figures, a `runtime::gpu::Gpu`. Output: named
//! metrics such as `compile_us.simplenet` or `steady_us.simplenet_b8.dynamic`.
//! Invariant: nothing here asserts a speed; figures are reported, and compared as ratios.
//! Every GPU figure includes what a caller pays (upload, dispatch, read-back), except
//! `matmul_gflops.*`, which times the kernel alone.

use crate::cache::{Clock, CompileConfig, DynamicMode};
use crate::guard::CallShapes;
use crate::{CallMarks, SIMPLENET_SOURCE};
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
/// lower, emit every kernel.
fn compile_us(clock: Clock<'_>, rounds: usize) -> f64 {
    let samples = (0..rounds)
        .map(|_| {
            let start = clock();
            let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
            let id = cache
                .call(
                    0,
                    &CompileConfig::default(),
                    &simplenet_call(8),
                    &CallMarks::default(),
                    &|| 0.0,
                )
                .entry
                .expect("SimpleNet compiles");
            let entry = cache.entry(id).expect("the entry exists");
            let schedule = crate::lower::lower(&entry.graph, &|s| entry.env.range(s))
                .expect("SimpleNet lowers");
            let none = crate::symbolic::Bindings::new();
            let spec = crate::codegen::Specialization::Static(&none);
            black_box(crate::codegen::emit_schedule(&schedule, &spec));
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
    let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    cache.call(
        0,
        &config,
        &simplenet_call(8),
        &CallMarks::default(),
        &|| 0.0,
    );
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
        "guard_check_ns.simplenet".to_string(),
        guard_check_ns(clock, rounds),
    );
    BenchReport { metrics }
}

#[cfg(feature = "gpu")]
pub use gpu::{DemoReport, demo, run_gpu};

#[cfg(feature = "gpu")]
mod gpu {
    use super::{median, simplenet_call};
    use crate::cache::{Action, Clock, CompileConfig, DynamicMode};
    use crate::codegen::{self, Mode};
    use crate::graph::{self, Tensor};
    use crate::lower::{self, GemmStrategy, Schedule};
    use crate::runtime::gpu::{Gpu, GpuError, Program};
    use crate::symbolic::Bindings;
    use crate::{CallMarks, CodeCache, SIMPLENET_SOURCE};
    use std::collections::BTreeMap;

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

    fn simplenet_inputs(batch: i64, seed: u64) -> Vec<Tensor> {
        graph::random_inputs(&[("x".into(), vec![batch as usize, 64])], seed)
    }

    /// Lowers entry `id` of `cache` into a program in the entry's own mode.
    fn entry_program(cache: &CodeCache, id: usize) -> Program {
        let entry = cache.entry(id).expect("the entry exists");
        let schedule =
            lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("SimpleNet lowers");
        let mode = codegen::entry_mode(&schedule);
        Program::new(schedule, mode, &Bindings::new())
    }

    /// Runs the demo sequence through the guard cache under `dynamic`, from a cold GPU
    /// cache; each compile includes lowering, WGSL and pipeline creation.
    pub async fn demo(
        gpu: &mut Gpu,
        clock: Clock<'_>,
        dynamic: DynamicMode,
    ) -> Result<DemoReport, GpuError> {
        gpu.clear_cache();
        let pipelines_before = gpu.stats().pipelines_created;
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
        let mut programs: BTreeMap<usize, Program> = BTreeMap::new();
        let mut report = DemoReport::default();
        let calls = DEMO_WARM_UP.iter().map(|&b| (b, false)).chain(
            DEMO_BATCHES
                .iter()
                .flat_map(|&b| std::iter::repeat_n((b, true), DEMO_RUNS)),
        );
        for (n, (batch, measured)) in calls.enumerate() {
            let inputs = simplenet_inputs(batch, n as u64);
            let start = clock();
            let event = cache.call(
                0,
                &config,
                &simplenet_call(batch),
                &CallMarks::default(),
                clock,
            );
            let id = event.entry.expect("SimpleNet compiles");
            let compiled = event.action == Action::Compile;
            if compiled {
                let mut program = entry_program(&cache, id);
                gpu.prepare(&mut program).await?;
                programs.insert(id, program);
            }
            let ran = clock();
            let program = programs.get_mut(&id).expect("every entry has a program");
            gpu.run(program, &inputs, false).await?;
            let end = clock();
            match (compiled, report.compiles) {
                (true, 0) => report.compile_ms += ran - start,
                (true, _) => report.recompile_ms += ran - start,
                (false, _) => {}
            }
            report.compiles += usize::from(compiled);
            report.run_ms += if compiled { end - ran } else { end - start };
            if measured {
                report.measured_ms += end - start;
            }
        }
        report.pipelines = gpu.stats().pipelines_created - pipelines_before;
        Ok(report)
    }

    /// SimpleNet's dynamic schedule (lowered once at batch 8).
    fn simplenet_dynamic() -> Schedule {
        let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
        let config = CompileConfig {
            dynamic: DynamicMode::True,
            ..CompileConfig::default()
        };
        let id = cache
            .call(
                0,
                &config,
                &simplenet_call(8),
                &CallMarks::default(),
                &|| 0.0,
            )
            .entry
            .expect("SimpleNet compiles");
        let entry = cache.entry(id).expect("the entry exists");
        lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("SimpleNet lowers")
    }

    /// `a @ b` for `a: [256, 1024]`, `b: [1024, 1024]`, static, with the product `strategy`.
    fn matmul_program(strategy: GemmStrategy) -> Program {
        let source = "import torch\n\ndef f(a, b):\n    return a @ b\n";
        let mut cache = crate::load(source, None).expect("the matmul loads");
        let call = crate::CallShapes::new(vec![
            ("a".into(), vec![256, 1024]),
            ("b".into(), vec![1024, 1024]),
        ]);
        let config = CompileConfig {
            dynamic: DynamicMode::False,
            ..CompileConfig::default()
        };
        let id = cache
            .call(0, &config, &call, &CallMarks::default(), &|| 0.0)
            .entry
            .expect("the matmul compiles");
        let entry = cache.entry(id).expect("the entry exists");
        let mut schedule =
            lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("the matmul lowers");
        schedule.kernels = schedule
            .kernels
            .iter()
            .map(|k| k.with_strategy(strategy))
            .collect();
        Program::new(schedule, Mode::Static, &Bindings::new())
    }

    /// Adds the GPU metrics to `metrics`: pipeline creation, steady-state calls in each
    /// mode, tiled and naive matmul throughput, and the demo's total time per policy.
    pub async fn run_gpu(
        gpu: &mut Gpu,
        clock: Clock<'_>,
        rounds: usize,
        metrics: &mut BTreeMap<String, f64>,
    ) -> Result<(), GpuError> {
        let rounds = rounds.max(1);

        let mut samples = Vec::new();
        for _ in 0..rounds.min(5) {
            gpu.clear_cache();
            let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
            let id = cache
                .call(
                    0,
                    &CompileConfig::default(),
                    &simplenet_call(8),
                    &CallMarks::default(),
                    &|| 0.0,
                )
                .entry
                .expect("SimpleNet compiles");
            let mut program = entry_program(&cache, id);
            let before = gpu.stats().pipeline_ms;
            gpu.prepare(&mut program).await?;
            samples.push(gpu.stats().pipeline_ms - before);
        }
        metrics.insert("pipeline_ms.simplenet".into(), median(samples));

        let schedule = simplenet_dynamic();
        let inputs = simplenet_inputs(8, 0);
        let eight: Bindings = schedule
            .input_shapes
            .first()
            .and_then(|shape| shape[0].as_sym())
            .map(|sym| [(sym, 8)].into_iter().collect())
            .unwrap_or_default();
        // Rounds interleave the modes, so a change in machine load hits all three alike.
        let mut programs: Vec<Program> = Mode::ALL
            .iter()
            .map(|&mode| Program::new(schedule.clone(), mode, &eight))
            .collect();
        let mut samples = vec![Vec::with_capacity(rounds); programs.len()];
        for round in 0..rounds + 3 {
            for (program, samples) in programs.iter_mut().zip(&mut samples) {
                let start = clock();
                gpu.run(program, &inputs, false).await?;
                if round >= 3 {
                    samples.push((clock() - start) * 1e3);
                }
            }
        }
        for (mode, samples) in Mode::ALL.iter().zip(samples) {
            metrics.insert(
                format!("steady_us.simplenet_b8.{}", mode.name()),
                median(samples),
            );
        }

        let inputs = graph::random_inputs(
            &[
                ("a".into(), vec![256, 1024]),
                ("b".into(), vec![1024, 1024]),
            ],
            0,
        );
        let flops = 2.0 * 256.0 * 1024.0 * 1024.0;
        for (name, strategy) in [
            ("tiled", GemmStrategy::Tiled),
            ("naive", GemmStrategy::Naive),
        ] {
            let mut program = matmul_program(strategy);
            gpu.run(&mut program, &inputs, true).await?;
            let mut samples = Vec::new();
            for _ in 0..rounds.min(5) {
                let run = gpu.run(&mut program, &inputs, true).await?;
                let ms: f64 = run.kernel_ms.iter().map(|(_, ms)| ms).sum();
                samples.push(flops / (ms * 1e6));
            }
            metrics.insert(format!("matmul_gflops.{name}"), median(samples));
        }

        for (name, dynamic) in [
            ("static", DynamicMode::False),
            ("dynamic", DynamicMode::True),
            ("auto", DynamicMode::Auto),
        ] {
            let mut samples = Vec::new();
            for _ in 0..rounds.min(3) {
                samples.push(demo(gpu, clock, dynamic).await?.total_ms());
            }
            metrics.insert(format!("demo_total_ms.{name}"), median(samples));
        }
        Ok(())
    }
}

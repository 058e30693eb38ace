//! The middle floor: the compile pipeline (`compile::compile`) and the executor
//! (`session::executor`) that the CLI, the page and the benchmark share.
//!
//! In: presets and call sequences through the guard cache. Out: checks that an entry owns
//! its schedule and WGSL (the trace prints them, every mode emits), that the executor's
//! results match the CPU reference for compiled and eager calls on the CPU and the GPU,
//! and that eager calls past the recompile limit reuse their per-op kernels instead of
//! building new ones. Invariant: GPU checks print a note and pass where no adapter exists.

use std::rc::Rc;
use std::time::Instant;
use tailor::cache::{Action, CodeCache};
use tailor::codegen::Mode;
use tailor::compile::{self, CompileOptions};
use tailor::config::{CallMarks, CompileConfig, DynamicMode};
use tailor::guard::ArgValue;
use tailor::session::executor::{self, Backend, Device, Executor, Outcome, RunOptions};
use tailor::symbolic::Bindings;
use tailor::{CallShapes, Error, SIMPLENET_SOURCE, spec};

fn batch(b: i64) -> CallShapes {
    CallShapes::new(vec![("x".into(), vec![b, 64])])
}

fn config(dynamic: DynamicMode, recompile_limit: usize) -> CompileConfig {
    CompileConfig {
        dynamic,
        recompile_limit,
        ..CompileConfig::default()
    }
}

fn clock() -> Rc<dyn Fn() -> f64> {
    let start = Instant::now();
    Rc::new(move || start.elapsed().as_secs_f64() * 1e3)
}

/// Opens `device`; `None` where the GPU has no adapter (`crate::no_adapter`).
fn backend(device: Device) -> Option<Rc<Backend>> {
    let start = Instant::now();
    let clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    match pollster::block_on(Backend::open(device, clock)) {
        Ok(backend) => Some(Rc::new(backend)),
        Err(err) => {
            crate::no_adapter(&err);
            None
        }
    }
}

/// Calls SimpleNet at each batch size through the cache and the executor, checked.
fn run_sequence(
    backend: &Rc<Backend>,
    config: &CompileConfig,
    batches: &[i64],
) -> (CodeCache, Vec<(Action, Outcome)>) {
    let mut cache = tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    let mut executor = Executor::new(Rc::clone(backend), clock());
    let mut results = Vec::new();
    for (seed, &b) in batches.iter().enumerate() {
        let call = batch(b);
        let event = cache
            .call(0, config, &call, &CallMarks::default(), &|| 0.0)
            .clone();
        let inputs = executor::call_inputs(&call, Vec::new(), seed as u64).unwrap();
        let options = RunOptions {
            check: true,
            timing: false,
        };
        let job = executor
            .start_call(&cache, &event, &call, inputs, options)
            .unwrap_or_else(|err| panic!("batch {b}: {err}"));
        let outcome = pollster::block_on(executor.execute(job))
            .unwrap_or_else(|err| panic!("batch {b}: {err}"));
        results.push((event.action, outcome));
    }
    (cache, results)
}

#[test]
fn the_device_choice_is_parsed_in_one_place() {
    assert_eq!("auto".parse::<Device>(), Ok(Device::Auto));
    assert_eq!("gpu".parse::<Device>(), Ok(Device::Gpu));
    assert_eq!("cpu".parse::<Device>(), Ok(Device::Cpu));
    assert_eq!(
        "tpu".parse::<Device>(),
        Err("expected 'auto', 'gpu' or 'cpu', got 'tpu'".to_string())
    );
    for device in [Device::Auto, Device::Gpu, Device::Cpu] {
        assert_eq!(device.to_string().parse::<Device>(), Ok(device));
    }
}

#[test]
fn an_entry_owns_its_schedule_and_every_mode_of_its_wgsl() {
    let mut cache = tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    let config = config(DynamicMode::True, 8);
    cache.call(0, &config, &batch(8), &CallMarks::default(), &|| 0.0);
    let entry = &cache.entries_mru()[0];
    let schedule = entry.compiled.schedule().expect("SimpleNet lowers");
    assert_eq!(entry.compiled.mode(), Ok(Mode::Dynamic));
    let trace = tailor::session::trace_of(&cache, entry, tailor::SymbolNaming::Tailor);
    let kernels = trace
        .stages
        .iter()
        .find(|stage| stage.id == "kernels")
        .expect("a kernels stage");
    assert!(kernels.text.starts_with(&schedule.to_string()));
    let s0 = schedule.input_shapes[0][0]
        .as_sym()
        .expect("the batch is symbolic");
    let eight: Bindings = [(s0, 8)].into_iter().collect();
    for mode in Mode::ALL {
        let wgsl = entry.compiled.wgsl(mode, &eight).expect("emits");
        assert_eq!(wgsl.len(), schedule.kernels.len(), "{}", mode.name());
        for shader in wgsl.iter() {
            assert_eq!(shader.mode, mode);
            let module = naga::front::wgsl::parse_str(&shader.source)
                .unwrap_or_else(|e| panic!("{} {}: {e}", shader.kernel, mode.name()));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{} {}: {e:?}", shader.kernel, mode.name()));
        }
    }
    let static_code = entry.compiled.wgsl(Mode::Static, &eight).expect("emits");
    assert!(
        static_code[0].source.contains("8"),
        "static code bakes in the batch"
    );
}

#[test]
fn eager_calls_are_compiled_per_op_with_symbolic_sizes() {
    let cache = tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    let (graph, env) = cache.eager_capture(&batch(16), true).expect("captures");
    let eager = compile::compile(&graph, &|s| env.range(s), &CompileOptions::EAGER);
    let fused = compile::compile(&graph, &|s| env.range(s), &CompileOptions::ENTRY);
    let eager = eager.schedule().expect("lowers per op");
    let fused = fused.schedule().expect("lowers fused");
    // Linear, ReLU, Linear: three library kernels in eager mode, two fused.
    assert_eq!(eager.kernels.len(), 3, "{eager}");
    assert_eq!(fused.kernels.len(), 2, "{fused}");
    assert!(
        !eager.shape_syms().is_empty(),
        "one schedule for every batch"
    );
}

#[test]
fn compiled_and_eager_calls_match_the_reference_on_the_cpu() {
    let backend = backend(Device::Cpu).expect("the CPU always opens");
    assert_eq!(backend.name(), "cpu");
    let (cache, results) =
        run_sequence(&backend, &config(DynamicMode::False, 2), &[8, 16, 32, 8, 3]);
    let actions: Vec<Action> = results.iter().map(|(action, _)| *action).collect();
    assert_eq!(
        actions,
        [
            Action::Compile,
            Action::Compile,
            Action::Eager,
            Action::Hit,
            Action::Eager
        ]
    );
    assert_eq!(cache.compiles(), 2);
    for ((_, outcome), b) in results.iter().zip([8, 16, 32, 8, 3]) {
        assert_eq!(outcome.outputs[0].shape, vec![b as usize, 64]);
        let err = outcome.max_abs_err.expect("checked");
        assert!(err < 1e-4, "batch {b}: max_abs_err {err}");
    }
}

#[test]
fn eager_calls_on_the_gpu_reuse_their_kernels() {
    let Some(backend) = backend(Device::Gpu) else {
        return;
    };
    let pipelines = || {
        pollster::block_on(backend.stats())
            .expect("a GPU backend has stats")
            .pipelines_created
    };
    let before = pipelines();
    let (_, results) = run_sequence(&backend, &config(DynamicMode::False, 1), &[8, 16, 32, 64]);
    let after = pipelines();
    let actions: Vec<Action> = results.iter().map(|(action, _)| *action).collect();
    assert_eq!(
        actions,
        [Action::Compile, Action::Eager, Action::Eager, Action::Eager]
    );
    for (action, outcome) in &results {
        let err = outcome.max_abs_err.expect("checked");
        assert!(err < 2e-3, "{action}: max_abs_err {err}");
    }
    // The first eager call builds its per-op kernels; the later ones, at other sizes,
    // run them as they are.
    for (_, outcome) in &results[2..] {
        assert_eq!(outcome.build_ms, 0.0, "an eager call rebuilt its kernels");
    }
    // Two static kernels for the entry, three per-op kernels for every eager call.
    assert_eq!(after - before, 2 + 3);
}

#[test]
fn a_call_that_failed_to_compile_has_nothing_to_run() {
    let backend = backend(Device::Cpu).expect("the CPU always opens");
    let mut cache = tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    let call = CallShapes::new(vec![("x".into(), vec![8, 63])]);
    let event = cache
        .call(
            0,
            &CompileConfig::default(),
            &call,
            &CallMarks::default(),
            &|| 0.0,
        )
        .clone();
    assert_eq!(event.action, Action::Error);
    let mut executor = Executor::new(backend, clock());
    let inputs = executor::call_inputs(&call, Vec::new(), 0).unwrap();
    let job = executor.start_call(&cache, &event, &call, inputs, RunOptions::default());
    assert!(matches!(job, Err(Error::Call { .. })));
}

#[test]
fn a_cat_of_a_cat_with_symbolic_sizes_lowers_and_runs() {
    // Each part of a cat is its own kernel; the offset of a later part once named a derived
    // size of the earlier part's kernel, and lowering panicked.
    let source = "import torch\n\ndef f(x):\n    y = torch.cat([x, x], dim=1)\n    return torch.relu(torch.cat([y, x], dim=1))\n";
    let backend = backend(Device::Cpu).expect("the CPU always opens");
    let mut cache = tailor::load(source, None).expect("loads");
    let call = CallShapes::new(vec![("x".into(), vec![2, 3, 4])]);
    let config = config(DynamicMode::True, 8);
    let event = cache
        .call(0, &config, &call, &CallMarks::default(), &|| 0.0)
        .clone();
    let mut executor = Executor::new(backend, clock());
    let inputs = executor::call_inputs(&call, Vec::new(), 0).unwrap();
    let options = RunOptions {
        check: true,
        timing: false,
    };
    let job = executor
        .start_call(&cache, &event, &call, inputs, options)
        .expect("lowers");
    let outcome = pollster::block_on(executor.execute(job)).expect("runs");
    assert_eq!(outcome.outputs[0].shape, vec![2, 9, 4]);
    assert_eq!(outcome.max_abs_err, Some(0.0));
}

#[test]
fn the_page_cpu_workloads_hold_their_memory_plan_through_the_executor() {
    // The page's CPU figures (`bench::CpuBench`) run through the executor, which keeps each
    // entry's program: what the program holds after each call is the memory plan's peak,
    // the same after every call, and the plan's peak is the outputs plus shared temporaries.
    let now = clock();
    let mut planned = Vec::new();
    for workload in tailor::bench::PAGE_CPU_WORKLOADS
        .iter()
        .filter(|w| w.name != "bigmlp")
    {
        let mut bench = tailor::bench::CpuBench::new(workload).expect("the workload compiles");
        assert_eq!(bench.held_bytes(), (0, 0), "nothing before the first call");
        bench.time_calls(&*now, 0.0).expect("the kernels run");
        let held = bench.held_bytes();
        let plan = bench.planned_bytes().expect("the call binds");
        assert_eq!(held.0, plan, "{}: the arena is the plan", workload.name);
        for _ in 0..3 {
            let ms = bench.time_calls(&*now, 0.0).expect("the kernels run");
            assert!(ms.is_finite() && ms >= 0.0);
            assert_eq!(
                bench.held_bytes(),
                held,
                "{}: a later call allocated",
                workload.name
            );
        }
        assert!(
            bench
                .time_reference(&*now, 0.0)
                .expect("the reference runs")
                >= 0.0
        );
        planned.push(format!("{} {plan}", workload.name));
    }
    // SimpleNet b8: its output (8x64) and one temporary (8x128); the conv: its output only.
    assert_eq!(planned, ["simplenet_b8 6144", "conv16_64 262144"]);
}

/// An id outside its embedding's table is PyTorch's `IndexError` before any kernel runs,
/// on every backend, when the ids come straight from an input (here through a reshape); a
/// call with every id inside runs. Compiled kernels read ids unchecked, so without this
/// check the call would read another row.
#[test]
fn an_embedding_id_outside_its_table_is_an_index_error_before_the_kernels() {
    let source = "import torch.nn as nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = nn.Embedding(10, 4)\n\n    def forward(self, idx):\n        return self.embed(idx.reshape(-1)).relu()\n";
    for device in [Device::Cpu, Device::Gpu] {
        let Some(backend) = backend(device) else {
            continue;
        };
        let mut cache = tailor::load(source, None).expect("the tagger loads");
        let mut executor = Executor::new(Rc::clone(&backend), clock());
        let call = CallShapes::with_args(vec![(
            "idx".into(),
            ArgValue::Tensor(vec![2, 3], tailor::graph::DType::Int64),
        )]);
        let event = cache
            .call(
                0,
                &config(DynamicMode::True, 8),
                &call,
                &CallMarks::default(),
                &|| 0.0,
            )
            .clone();
        let options = RunOptions {
            check: false,
            timing: false,
        };
        let run = |executor: &mut Executor, ids: Vec<f32>| {
            let inputs = executor::call_inputs(&call, vec![Some(ids)], 0).expect("inputs");
            executor
                .start_call(&cache, &event, &call, inputs, options)
                .and_then(|job| pollster::block_on(executor.execute(job)))
        };
        let inside = run(&mut executor, vec![0.0, 9.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(inside.is_ok(), "{}: {inside:?}", backend.name());
        for id in [10.0, -1.0] {
            let err = run(&mut executor, vec![0.0, 1.0, id, 3.0, 4.0, 5.0])
                .expect_err("an id outside the table");
            assert_eq!(
                err.to_string(),
                format!(
                    "node 'embedding': id {id} is outside the embedding's 10 rows (IndexError: index out of range in self)"
                ),
                "{}",
                backend.name()
            );
        }
    }
}

/// A call's values (copies of its inputs) are made only where Python runs on through a
/// graph break: SimpleNet's calls never make them, a call of a function that breaks makes
/// them once.
#[test]
fn a_calls_values_are_made_only_for_a_graph_break() {
    let breaking = "import torch\n\ndef f(x):\n    h = x.relu()\n    if h.sum() > 1.0:\n        h = h * 2\n    return h + 1\n";
    for (source, shapes, made) in [(SIMPLENET_SOURCE, "x=8,64", 0), (breaking, "x=4,4", 1)] {
        let mut cache = tailor::load(source, None).expect("loads");
        let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes");
        let inputs = executor::call_inputs(&call, vec![None], 0).expect("inputs");
        let asked = std::cell::Cell::new(0);
        let values = || {
            asked.set(asked.get() + 1);
            executor::call_values(&call, &inputs)
        };
        for _ in 0..2 {
            let config = config(DynamicMode::True, 8);
            let event = cache.call_values(
                0,
                &config,
                &call,
                &CallMarks::default(),
                Some(&values),
                &|| 0.0,
            );
            assert_eq!(event.error, None, "{shapes}");
        }
        assert_eq!(asked.get(), 2 * made, "{shapes}");
    }
}

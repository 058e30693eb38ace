//! The course material's "Python 演示", in Rust: the same SimpleNet compiled twice — with
//! `dynamic=True` and `dynamic=False` — then called with a sequence of batch sizes, three
//! times each, timing the whole sequence. On the GPU when there is an adapter (lavapipe
//! counts), else on the CPU kernel interpreter.
//!
//! ```text
//! cargo run --release --example simplenet
//! ```
//!
//! The Python original, for comparison:
//!
//! ```python
//! model_dynamic = torch.compile(base, dynamic=True)
//! model_static = torch.compile(base, dynamic=False)
//! sizes = [8, 16, 32, 16, 8, 64, 16, 8]
//! benchmark(model_dynamic, [8], runs=2)   # warm-up
//! benchmark(model_static, [8], runs=2)
//! t_dyn = benchmark(model_dynamic, sizes)
//! t_sta = benchmark(model_static, sizes)
//! ```

use std::collections::BTreeMap;
use std::time::Instant;
use tailor::cache::{Action, CodeCache, CompileConfig, DynamicMode};
use tailor::codegen;
use tailor::graph::{self, Tensor};
use tailor::lower::{self, Schedule};
use tailor::runtime::{self, gpu::Gpu, gpu::Program};
use tailor::symbolic::Bindings;
use tailor::{CallMarks, CallShapes, SIMPLENET_SOURCE};

/// Where the kernels run.
enum Device {
    Gpu(Box<Gpu>),
    Cpu,
}

/// `torch.compile(base, dynamic=…)`: a guard cache plus each entry's compiled kernels.
struct Compiled {
    cache: CodeCache,
    config: CompileConfig,
    /// Entry id → its schedule and, on the GPU, its pipelines.
    entries: BTreeMap<usize, (Schedule, Option<Program>)>,
    /// Milliseconds spent compiling (capture, lowering, WGSL, pipelines).
    compile_ms: f64,
}

impl Compiled {
    fn new(dynamic: DynamicMode) -> Compiled {
        Compiled {
            cache: tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads"),
            config: CompileConfig {
                dynamic,
                ..CompileConfig::default()
            },
            entries: BTreeMap::new(),
            compile_ms: 0.0,
        }
    }

    /// `model(x)`: checks guards, compiles on a miss, runs the entry's kernels.
    fn call(&mut self, device: &mut Device, x: &Tensor) -> Vec<Tensor> {
        let started = Instant::now();
        let shapes = CallShapes::new(vec![(
            "x".into(),
            x.shape.iter().map(|&d| d as i64).collect(),
        )]);
        let event = self
            .cache
            .call(0, &self.config, &shapes, &CallMarks::default(), &|| 0.0);
        let id = event.entry.expect("SimpleNet compiles");
        if event.action == Action::Compile {
            let entry = self.cache.entry(id).expect("just compiled");
            let schedule = lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("lowers");
            let program = match device {
                Device::Gpu(gpu) => {
                    let mode = codegen::entry_mode(&schedule);
                    let mut program = Program::new(schedule.clone(), mode, &Bindings::new());
                    pollster::block_on(gpu.prepare(&mut program)).expect("pipelines build");
                    Some(program)
                }
                Device::Cpu => None,
            };
            self.entries.insert(id, (schedule, program));
            self.compile_ms += started.elapsed().as_secs_f64() * 1e3;
        }
        let (schedule, program) = self.entries.get_mut(&id).expect("compiled above");
        let inputs = std::slice::from_ref(x);
        match (device, program) {
            (Device::Gpu(gpu), Some(program)) => {
                pollster::block_on(gpu.run(program, inputs, false))
                    .expect("the kernels run")
                    .outputs
            }
            _ => runtime::cpu::run(schedule, inputs).expect("the kernels run"),
        }
    }
}

/// The material's `benchmark`: total seconds of `runs` calls per batch size.
fn benchmark(model: &mut Compiled, device: &mut Device, batches: &[usize], runs: usize) -> f64 {
    let mut total = 0.0;
    for &batch in batches {
        let x = graph::random_inputs(&[("x".into(), vec![batch, 64])], batch as u64).remove(0);
        for _ in 0..runs {
            let t0 = Instant::now();
            model.call(device, &x);
            total += t0.elapsed().as_secs_f64();
        }
    }
    total
}

fn main() {
    let start = Instant::now();
    let clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let mut device = match pollster::block_on(Gpu::new(clock)) {
        Ok(gpu) => {
            let adapter = gpu.adapter();
            println!("设备 device: GPU — {} ({})", adapter.name, adapter.backend);
            Device::Gpu(Box::new(gpu))
        }
        Err(why) => {
            println!("设备 device: CPU kernel interpreter ({why})");
            Device::Cpu
        }
    };

    let mut model_dynamic = Compiled::new(DynamicMode::True);
    let mut model_static = Compiled::new(DynamicMode::False);

    let sizes = [8, 16, 32, 16, 8, 64, 16, 8];
    benchmark(&mut model_dynamic, &mut device, &[8], 2);
    benchmark(&mut model_static, &mut device, &[8], 2);

    let t_dyn = benchmark(&mut model_dynamic, &mut device, &sizes, 3);
    let t_sta = benchmark(&mut model_static, &mut device, &sizes, 3);
    println!("动态形状总耗时: {t_dyn:.4}s   (dynamic=True, batches {sizes:?} x 3)");
    println!("静态形状总耗时: {t_sta:.4}s   (dynamic=False)");
    println!("静态/动态 = {:.2}x", t_sta / t_dyn.max(1e-9));
    for (name, model) in [("dynamic", &model_dynamic), ("static", &model_static)] {
        println!(
            "{name:>8}: {} compile(s), {:.1} ms compiling (capture, lowering, WGSL, pipelines)",
            model.cache.compiles(),
            model.compile_ms
        );
    }
    if let Device::Gpu(gpu) = &device {
        let stats = gpu.stats();
        println!(
            "pipelines created: {}, {:.1} ms; GPU memory held: {} KiB",
            stats.pipelines_created,
            stats.pipeline_ms,
            stats.bytes_held / 1024
        );
    }

    for batch in [3, 7, 11] {
        let x = graph::random_inputs(&[("x".into(), vec![batch, 64])], 99).remove(0);
        for model in [&mut model_dynamic, &mut model_static] {
            let y = model.call(&mut device, &x);
            assert_eq!(y[0].shape, [batch, 64]);
        }
    }
    println!("多种 batch size 下输出形状均正确 (batch 3, 7, 11 -> [batch, 64])");
    println!(
        "compiles after the checks: dynamic {}, static {}",
        model_dynamic.cache.compiles(),
        model_static.cache.compiles()
    );
}

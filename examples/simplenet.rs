//! The course material's "Python 演示", in Rust: the same SimpleNet compiled twice — with
//! `dynamic=True` and `dynamic=False` — then called with a sequence of batch sizes, three
//! times each, timing the whole sequence. On the GPU when there is an adapter (lavapipe
//! counts), else on the CPU kernel interpreter.
//!
//! Each compiled model is what the CLI runs: a `Session` whose guard cache decides each call
//! and whose executor builds and runs the entry's kernels (`Session::call`). Both models
//! share one backend, so the GPU counters at the end cover both.
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

use std::rc::Rc;
use std::time::Instant;
use tailor::config::{CompileConfig, DynamicMode};
use tailor::graph::{self, Tensor};
use tailor::session::Session;
use tailor::session::executor::{Backend, Device, RunOptions};
use tailor::{CallMarks, CallShapes, SIMPLENET_SOURCE};

/// Milliseconds since the example started.
type Clock = Rc<dyn Fn() -> f64>;

/// `torch.compile(base, dynamic=…)`: a session, whose guard cache decides each call and
/// whose executor keeps each entry's kernels.
struct Compiled {
    session: Session,
    config: CompileConfig,
    /// Milliseconds spent compiling: capture, lowering and WGSL in the cache, pipelines in
    /// the executor.
    compile_ms: f64,
}

impl Compiled {
    fn new(dynamic: DynamicMode, backend: &Rc<Backend>, clock: &Clock) -> Compiled {
        Compiled {
            session: Session::new(
                tailor::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads"),
                Rc::clone(backend),
                Rc::clone(clock),
            ),
            config: CompileConfig {
                dynamic,
                ..CompileConfig::default()
            },
            compile_ms: 0.0,
        }
    }

    /// `model(x)`: checks guards, compiles on a miss, runs the entry's kernels.
    fn call(&mut self, x: &Tensor) -> Vec<Tensor> {
        let shapes = CallShapes::new(vec![(
            "x".into(),
            x.shape.iter().map(|&d| d as i64).collect(),
        )]);
        let (event, ran) = pollster::block_on(self.session.call(
            0,
            &self.config,
            &shapes,
            &CallMarks::default(),
            vec![x.clone()],
            RunOptions::default(),
        ));
        let outcome = ran.expect("SimpleNet compiles and its kernels run");
        // Both are 0 on a hit whose kernels are built: only a compile (or a shape the
        // kernels have not seen) pays here.
        self.compile_ms += event.compile_ms + outcome.build_ms;
        outcome.outputs
    }
}

/// The material's `benchmark`: total seconds of `runs` calls per batch size.
fn benchmark(model: &mut Compiled, batches: &[usize], runs: usize) -> f64 {
    let mut total = 0.0;
    for &batch in batches {
        let x = graph::random_inputs(&[("x".into(), vec![batch, 64])], batch as u64).remove(0);
        for _ in 0..runs {
            let t0 = Instant::now();
            model.call(&x);
            total += t0.elapsed().as_secs_f64();
        }
    }
    total
}

fn main() {
    let start = Instant::now();
    let clock: Clock = Rc::new(move || start.elapsed().as_secs_f64() * 1e3);
    let gpu_clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    // `Device::Gpu` rather than `Auto`, so the fallback can say why there is no GPU.
    let backend = match pollster::block_on(Backend::open(Device::Gpu, gpu_clock)) {
        Ok(backend) => {
            let adapter = backend.adapter().expect("a GPU backend has an adapter");
            println!("设备 device: GPU — {} ({})", adapter.name, adapter.backend);
            backend
        }
        Err(why) => {
            println!("设备 device: CPU kernel interpreter ({why})");
            Backend::cpu()
        }
    };
    let backend = Rc::new(backend);

    let mut model_dynamic = Compiled::new(DynamicMode::True, &backend, &clock);
    let mut model_static = Compiled::new(DynamicMode::False, &backend, &clock);

    let sizes = [8, 16, 32, 16, 8, 64, 16, 8];
    benchmark(&mut model_dynamic, &[8], 2);
    benchmark(&mut model_static, &[8], 2);

    let t_dyn = benchmark(&mut model_dynamic, &sizes, 3);
    let t_sta = benchmark(&mut model_static, &sizes, 3);
    println!("动态形状总耗时: {t_dyn:.4}s   (dynamic=True, batches {sizes:?} x 3)");
    println!("静态形状总耗时: {t_sta:.4}s   (dynamic=False)");
    println!("静态/动态 = {:.2}x", t_sta / t_dyn.max(1e-9));
    for (name, model) in [("dynamic", &model_dynamic), ("static", &model_static)] {
        println!(
            "{name:>8}: {} compile(s), {:.1} ms compiling (capture, lowering, WGSL, pipelines)",
            model.session.cache.compiles(),
            model.compile_ms
        );
    }
    if let Some(stats) = pollster::block_on(backend.stats()) {
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
            let y = model.call(&x);
            assert_eq!(y[0].shape, [batch, 64]);
        }
    }
    println!("多种 batch size 下输出形状均正确 (batch 3, 7, 11 -> [batch, 64])");
    println!(
        "compiles after the checks: dynamic {}, static {}",
        model_dynamic.session.cache.compiles(),
        model_static.session.cache.compiles()
    );
}
